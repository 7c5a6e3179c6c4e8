//! Rendering the desired state (`gpuledger render`) as a table or markdown.

use std::fmt::Write;

use super::markdown::esc;
use super::text::Table;
use crate::report::RenderReport;

fn problems(r: &RenderReport) -> Vec<String> {
    let d = &r.desired;
    let mut out: Vec<String> = d.problems.clone();
    out.extend(d.apps.iter().filter(|a| a.status == "error").map(|a| {
        format!(
            "{} {} ({}): {}",
            a.kind,
            a.name,
            a.defined_at,
            a.error.as_deref().unwrap_or("")
        )
    }));
    out
}

pub fn table(r: &RenderReport) -> String {
    let d = &r.desired;
    let mut out = String::new();
    let rendered = d.apps.iter().filter(|a| a.status == "rendered").count();
    let _ = writeln!(
        out,
        "Desired state at {}: {} GPUs declared by {} GPU workloads; {rendered} of {} apps rendered",
        d.at,
        d.gpus_declared,
        d.workloads.len(),
        d.apps.len()
    );
    if !d.tenants.is_empty() {
        out.push_str("\nTenants\n");
        let mut t = Table::new(&["tenant", ">GPUs", ">workloads", "apps"]);
        for x in &d.tenants {
            t.row(vec![
                x.name.clone(),
                x.gpus_declared.to_string(),
                x.workloads.to_string(),
                x.apps.join(", "),
            ]);
        }
        t.render(&mut out);
    }
    if !d.workloads.is_empty() {
        out.push_str("\nWorkloads\n");
        let mut t = Table::new(&["workload", "tenant", "app", "shape", ">GPUs", "source"]);
        for w in &d.workloads {
            let x = &w.workload;
            t.row(vec![
                format!(
                    "{}/{}/{}",
                    if x.namespace.is_empty() {
                        "-"
                    } else {
                        &x.namespace
                    },
                    x.kind,
                    x.name
                ),
                x.tenant.clone(),
                w.app.clone(),
                x.shape.clone(),
                x.gpus_declared.to_string(),
                x.source.clone().unwrap_or_default(),
            ]);
        }
        t.render(&mut out);
    }
    out.push_str("\nApps\n");
    let mut t = Table::new(&[
        "app",
        "kind",
        "path",
        "status",
        ">objects",
        ">GPUs",
        "defined at",
    ]);
    for a in &d.apps {
        t.row(vec![
            a.name.clone(),
            a.kind.clone(),
            a.path.clone(),
            a.status.to_string(),
            a.objects.to_string(),
            a.gpus_declared.to_string(),
            a.defined_at.clone(),
        ]);
    }
    t.render(&mut out);
    let skipped: Vec<_> = d
        .apps
        .iter()
        .filter(|a| a.status == "not-rendered")
        .collect();
    if !skipped.is_empty() {
        out.push_str("\nNot rendered offline\n");
        for a in skipped {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                a.kind,
                a.name,
                a.error.as_deref().unwrap_or("")
            );
        }
    }
    for a in d.apps.iter().filter(|a| !a.notes.is_empty()) {
        for n in &a.notes {
            let _ = writeln!(out, "note: {} {}: {n}", a.kind, a.name);
        }
    }
    if !d.not_deployed.is_empty() {
        let _ = writeln!(out, "\nNot deployed by any app ({})", d.not_deployed.len());
        for f in &d.not_deployed {
            let _ = writeln!(out, "  {f}");
        }
    }
    for dup in &d.duplicates {
        let _ = writeln!(
            out,
            "warning: {} is rendered by several apps: {}",
            dup.object,
            dup.apps.join(", ")
        );
    }
    let errors = problems(r);
    if !errors.is_empty() {
        out.push_str("\nErrors\n");
        for e in errors {
            let _ = writeln!(out, "  {e}");
        }
    }
    out
}

pub fn markdown(r: &RenderReport) -> String {
    let d = &r.desired;
    let mut out = String::new();
    let _ = writeln!(out, "## Desired GPU workloads ({})\n", esc(&d.at));
    let _ = writeln!(
        out,
        "**{}** GPUs declared by {} GPU workloads.\n",
        d.gpus_declared,
        d.workloads.len()
    );
    if !d.tenants.is_empty() {
        out.push_str("| tenant | GPUs | workloads | apps |\n|---|---:|---:|---|\n");
        for x in &d.tenants {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                esc(&x.name),
                x.gpus_declared,
                x.workloads,
                esc(&x.apps.join(", "))
            );
        }
        out.push('\n');
    }
    if !d.workloads.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>Workloads ({})</summary>\n",
            d.workloads.len()
        );
        out.push_str(
            "| workload | tenant | app | shape | GPUs | source |\n|---|---|---|---|---:|---|\n",
        );
        for w in &d.workloads {
            let x = &w.workload;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                esc(&format!("{}/{}/{}", x.namespace, x.kind, x.name)),
                esc(&x.tenant),
                esc(&w.app),
                esc(&x.shape),
                x.gpus_declared,
                esc(x.source.as_deref().unwrap_or(""))
            );
        }
        out.push_str("\n</details>\n\n");
    }
    let errors = problems(r);
    if !errors.is_empty() {
        out.push_str("### Render errors\n\n");
        for e in errors {
            let _ = writeln!(out, "- {}", esc(&e));
        }
        out.push('\n');
    }
    let skipped: Vec<_> = d
        .apps
        .iter()
        .filter(|a| a.status == "not-rendered")
        .collect();
    if !skipped.is_empty() {
        out.push_str("### Not rendered offline\n\n");
        for a in skipped {
            let _ = writeln!(
                out,
                "- {} {}: {}",
                esc(&a.kind),
                esc(&a.name),
                esc(a.error.as_deref().unwrap_or(""))
            );
        }
        out.push('\n');
    }
    if !d.not_deployed.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>Not deployed by any app ({})</summary>\n",
            d.not_deployed.len()
        );
        for f in &d.not_deployed {
            let _ = writeln!(out, "- {}", esc(f));
        }
        out.push_str("\n</details>\n");
    }
    out
}
