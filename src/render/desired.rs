//! The desired state (`gpuledger render`) as blocks: the GPUs Git declares per tenant, then the
//! workloads, the apps and what became of each, and the problems.

use crate::doc::{Alert, Block, Doc, Table, Text};
use crate::report::{AppStatus, RenderReport};
use crate::util::text::count;

fn problems(r: &RenderReport) -> Vec<String> {
    let d = &r.desired;
    let mut out: Vec<String> = d.problems.clone();
    out.extend(
        d.apps
            .iter()
            .filter(|a| a.status == AppStatus::Error)
            .map(|a| {
                format!(
                    "{} {} ({}): {}",
                    a.kind,
                    a.name,
                    a.defined_at,
                    a.error.as_deref().unwrap_or("")
                )
            }),
    );
    out
}

fn tenant_table(tenants: &[crate::report::DesiredTenantRow]) -> Table {
    Table::new(&["tenant", ">GPUs", ">workloads", "apps"]).rows(tenants, |x| {
        vec![
            x.name.as_str().into(),
            super::page::count(x.gpus_declared).into(),
            x.workloads.to_string().into(),
            x.apps.join(", ").into(),
        ]
    })
}

/// An app's count, or what it is when the app did not render: a failed app's figures are
/// unknown, never 0; an app not rendered on purpose has none.
fn figure(a: &crate::report::AppRow, n: Option<u64>) -> String {
    match (a.status, n) {
        (AppStatus::Rendered, Some(n)) => n.to_string(),
        (AppStatus::Rendered, None) => "unknown".into(),
        (status, _) => match status {
            AppStatus::Rendered => "unknown".into(),
            AppStatus::Error | AppStatus::NotRendered => "unknown".into(),
            AppStatus::NotApplied => "—".into(),
        },
    }
}

/// A cluster column only says something when there are several.
fn cluster_cell(c: &Option<String>, several: bool) -> Text {
    match c {
        Some(c) if several => c.as_str().into(),
        _ => Text::new(),
    }
}

pub fn desired(r: &RenderReport) -> Doc {
    let d = &r.desired;
    let mut doc = Doc::new();
    match &d.cluster {
        Some(c) => doc.heading(2, format!("Desired GPU workloads ({}) · cluster {c}", d.at)),
        None => doc.heading(2, format!("Desired GPU workloads ({})", d.at)),
    }
    let several = d.clusters.len() > 1;
    let rendered = d
        .apps
        .iter()
        .filter(|a| a.status == AppStatus::Rendered)
        .count();
    // App objects that no root applies are listed below, not counted as apps that did not render.
    let apps = d
        .apps
        .iter()
        .filter(|a| a.status != AppStatus::NotApplied)
        .count();
    // A failure leads: what did not render is unknown, never a smaller total.
    let errors = problems(r);
    let workloads = count(crate::util::sum::count(d.workloads.len()), "GPU workload");
    match d.gpus_declared {
        None => {
            let why = d
                .unknown
                .get("gpus_declared")
                .map_or("an app did not render", String::as_str);
            let mut lines = vec![Text::new().strong(format!("GPUs declared: unknown — {why}."))];
            lines.extend(errors.into_iter().map(Text::from));
            doc.push(Block::Alert {
                kind: Alert::Caution,
                lines,
            });
            doc.paragraph(
                Text::new()
                    .strong(d.gpus_declared_rendered.to_string())
                    .plain(format!(
                        " GPUs declared by {workloads} in the apps that rendered ({rendered} of \
                         {apps}); the rest is unknown."
                    )),
            );
        }
        Some(total) => {
            if !errors.is_empty() {
                let mut lines =
                    vec![Text::new().strong(
                        "The repository has problems: what they hide is unknown.".to_string(),
                    )];
                lines.extend(errors.into_iter().map(Text::from));
                doc.push(Block::Alert {
                    kind: Alert::Caution,
                    lines,
                });
            }
            doc.paragraph(Text::new().strong(total.to_string()).plain(format!(
                " GPUs declared by {workloads}{}; {rendered} of {apps} apps rendered.",
                if several {
                    format!(" in {} clusters", d.clusters.len())
                } else {
                    String::new()
                },
            )));
        }
    }
    // Each cluster is its own desired state: a section each, the total above.
    if several {
        for c in &d.clusters {
            doc.heading(3, format!("Cluster {}", c.name));
            let line = if let Some(total) = c.gpus_declared {
                Text::new().strong(total.to_string()).plain(format!(
                    " GPUs declared by {} in {}.",
                    count(c.workloads, "GPU workload"),
                    count(c.apps, "app")
                ))
            } else {
                Text::new()
                    .strong(format!(
                        "GPUs declared: unknown — {} of {} did not render",
                        c.failed_apps + c.not_rendered_apps,
                        count(c.apps, "app")
                    ))
                    .plain(format!(
                        "; {} GPUs declared by {} in the others.",
                        c.gpus_declared_rendered,
                        count(c.workloads, "GPU workload")
                    ))
            };
            doc.paragraph(line);
            if !c.tenants.is_empty() {
                doc.push(Block::Table(tenant_table(&c.tenants)));
            }
        }
    } else if !d.tenants.is_empty() {
        doc.push(Block::Table(tenant_table(&d.tenants)));
    }
    if !d.workloads.is_empty() {
        doc.push(Block::Details {
            summary: format!("Workloads ({})", d.workloads.len()).into(),
            body: vec![Block::Table(
                Table::new(&[
                    "cluster", "workload", "tenant", "app", "shape", ">GPUs", "source",
                ])
                .rows(&d.workloads, |w| {
                    let x = &w.workload;
                    vec![
                        cluster_cell(&w.cluster, several),
                        format!("{}/{}/{}", x.namespace, x.kind, x.name).into(),
                        x.tenant.as_str().into(),
                        w.app.as_str().into(),
                        super::lists::shape_cell(x).into(),
                        super::page::count(x.gpus_declared).into(),
                        x.source.as_deref().unwrap_or("").into(),
                    ]
                })
                .drop_empty_columns(),
            )],
        });
    }
    if !d.apps.is_empty() {
        doc.push(Block::Details {
            summary: format!("Apps ({})", d.apps.len()).into(),
            body: vec![Block::Table(
                Table::new(&[
                    "cluster",
                    "app",
                    "kind",
                    "path",
                    "status",
                    ">objects",
                    ">GPUs",
                    "applied by",
                    "defined at",
                ])
                .rows(&d.apps, |a| {
                    vec![
                        cluster_cell(&a.cluster, several),
                        a.name.as_str().into(),
                        a.kind.as_str().into(),
                        a.path.as_str().into(),
                        a.status.to_string().into(),
                        figure(a, a.objects).into(),
                        figure(a, a.gpus_declared).into(),
                        a.applied_by.as_deref().unwrap_or("").into(),
                        a.defined_at.as_str().into(),
                    ]
                })
                .drop_empty_columns(),
            )],
        });
    }
    let listed = |status: AppStatus| -> Vec<Text> {
        d.apps
            .iter()
            .filter(|a| a.status == status)
            .map(|a| {
                let why = a.error.as_deref().unwrap_or("");
                // The heading already says it.
                let why = why.strip_prefix("not applied by any root: ").unwrap_or(why);
                Text::from(format!("{} {} ({}): {why}", a.kind, a.name, a.defined_at))
            })
            .collect()
    };
    for (status, title) in [
        (AppStatus::NotRendered, "Not rendered offline"),
        (AppStatus::NotApplied, "Not applied by any root"),
    ] {
        let items = listed(status);
        if !items.is_empty() {
            doc.heading(3, title);
            doc.push(Block::List(items));
        }
    }
    let notes: Vec<Text> = d
        .apps
        .iter()
        .flat_map(|a| {
            a.notes
                .iter()
                .map(move |n| Text::from(format!("{} {}: {n}", a.kind, a.name)))
        })
        .collect();
    if !notes.is_empty() {
        doc.heading(3, "Notes");
        doc.push(Block::List(notes));
    }
    if !d.duplicates.is_empty() {
        // Within one cluster, two apps applying one object fight over it.
        doc.heading(3, "Applied by several apps (conflicts)");
        doc.push(Block::List(
            d.duplicates
                .iter()
                .map(|dup| {
                    Text::from(match &dup.cluster {
                        Some(c) if several => {
                            format!("{} in cluster {c}: {}", dup.object, dup.apps.join(", "))
                        }
                        _ => format!("{}: {}", dup.object, dup.apps.join(", ")),
                    })
                })
                .collect(),
        ));
    }
    if !d.not_deployed.is_empty() {
        doc.push(Block::Details {
            summary: format!("Not deployed by any app ({})", d.not_deployed.len()).into(),
            body: vec![Block::List(d.not_deployed.iter().map(Text::from).collect())],
        });
    }
    doc
}
