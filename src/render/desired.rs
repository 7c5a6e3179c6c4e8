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

pub fn desired(r: &RenderReport) -> Doc {
    let d = &r.desired;
    let mut doc = Doc::new();
    doc.heading(2, format!("Desired GPU workloads ({})", d.at));
    let rendered = d
        .apps
        .iter()
        .filter(|a| a.status == AppStatus::Rendered)
        .count();
    // A failure leads: what did not render is unknown, never a smaller total.
    let errors = problems(r);
    if !errors.is_empty() {
        let failed = d.apps.len() - rendered;
        let mut lines = vec![Text::new().strong(format!(
            "{failed} of {} apps did not render: the GPUs they declare are unknown.",
            d.apps.len()
        ))];
        lines.extend(errors.into_iter().map(Text::from));
        doc.push(Block::Alert {
            kind: Alert::Caution,
            lines,
        });
        doc.paragraph(
            Text::new()
                .strong(d.gpus_declared.to_string())
                .plain(format!(
                    " GPUs declared by {} in the apps that rendered ({rendered} of {}); the rest is unknown.",
                    count(crate::util::sum::count(d.workloads.len()), "GPU workload"),
                    d.apps.len()
                )),
        );
    } else {
        doc.paragraph(
            Text::new()
                .strong(d.gpus_declared.to_string())
                .plain(format!(
                    " GPUs declared by {}; {rendered} of {} apps rendered.",
                    count(crate::util::sum::count(d.workloads.len()), "GPU workload"),
                    d.apps.len()
                )),
        );
    }
    if !d.tenants.is_empty() {
        doc.push(Block::Table(
            Table::new(&["tenant", ">GPUs", ">workloads", "apps"]).rows(&d.tenants, |x| {
                vec![
                    x.name.as_str().into(),
                    x.gpus_declared.to_string().into(),
                    x.workloads.to_string().into(),
                    x.apps.join(", ").into(),
                ]
            }),
        ));
    }
    if !d.workloads.is_empty() {
        doc.push(Block::Details {
            summary: format!("Workloads ({})", d.workloads.len()).into(),
            body: vec![Block::Table(
                Table::new(&["workload", "tenant", "app", "shape", ">GPUs", "source"]).rows(
                    &d.workloads,
                    |w| {
                        let x = &w.workload;
                        vec![
                            format!("{}/{}/{}", x.namespace, x.kind, x.name).into(),
                            x.tenant.as_str().into(),
                            w.app.as_str().into(),
                            super::inventory::shape_cell(x).into(),
                            x.gpus_declared.to_string().into(),
                            x.source.as_deref().unwrap_or("").into(),
                        ]
                    },
                ),
            )],
        });
    }
    if !d.apps.is_empty() {
        doc.push(Block::Details {
            summary: format!("Apps ({})", d.apps.len()).into(),
            body: vec![Block::Table(
                Table::new(&[
                    "app",
                    "kind",
                    "path",
                    "status",
                    ">objects",
                    ">GPUs",
                    "defined at",
                ])
                .rows(&d.apps, |a| {
                    vec![
                        a.name.as_str().into(),
                        a.kind.as_str().into(),
                        a.path.as_str().into(),
                        a.status.to_string().into(),
                        a.objects.to_string().into(),
                        a.gpus_declared.to_string().into(),
                        a.defined_at.as_str().into(),
                    ]
                }),
            )],
        });
    }
    let skipped: Vec<Text> = d
        .apps
        .iter()
        .filter(|a| a.status == AppStatus::NotRendered)
        .map(|a| {
            Text::from(format!(
                "{} {}: {}",
                a.kind,
                a.name,
                a.error.as_deref().unwrap_or("")
            ))
        })
        .collect();
    if !skipped.is_empty() {
        doc.heading(3, "Not rendered offline");
        doc.push(Block::List(skipped));
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
        doc.heading(3, "Rendered by several apps");
        doc.push(Block::List(
            d.duplicates
                .iter()
                .map(|dup| Text::from(format!("{}: {}", dup.object, dup.apps.join(", "))))
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
