//! The terminal rendering: the decision view first (four counts, shortage, tenants), details after.

use std::fmt::Write;

use super::text::Table;
use super::{count, percent};
use crate::report::Report;

const MAX_WORKLOADS: usize = 25;

pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let f = &r.fleet;
    let g = &f.gpus;
    let _ = writeln!(
        out,
        "GPU fleet: {} GPU nodes, utilisation {} (requested / placeable)",
        f.gpu_nodes,
        percent(f.utilisation)
    );
    out.push('\n');
    let mut t = Table::new(&["GPUs", ">count", "note"]);
    t.row(vec![
        "capacity".into(),
        g.capacity.to_string(),
        "physical GPUs on GPU nodes".into(),
    ]);
    t.row(vec![
        "allocatable".into(),
        g.allocatable.to_string(),
        "offered by the device plugins".into(),
    ]);
    t.row(vec![
        "placeable".into(),
        g.placeable.to_string(),
        format!("{} GPU nodes excluded", f.excluded_nodes.len()),
    ]);
    t.row(vec![
        "requested".into(),
        g.requested.to_string(),
        "by bound, running pods".into(),
    ]);
    t.row(vec![
        "pending".into(),
        g.pending.to_string(),
        "by pods waiting for a node".into(),
    ]);
    t.row(vec![
        "used".into(),
        count(g.used),
        f.unknown.get("gpus.used").cloned().unwrap_or_else(|| {
            format!(
                "busy; {} GPU-equivalents; {}",
                f.gpu_equivalents_used
                    .map_or("?".into(), |e| format!("{e:.1}")),
                f.metrics_source.clone().unwrap_or_default()
            )
        }),
    ]);
    t.render(&mut out);
    let _ = writeln!(out, "\nShortage: {}", f.shortage.summary);
    let _ = writeln!(
        out,
        "Namespaces with GPU pods: {} (top three hold {})",
        f.gpu_namespaces,
        percent(f.top3_namespace_share)
    );
    let _ = writeln!(out, "Public routes: {}", f.public_routes);

    if !r.clusters.is_empty() {
        out.push_str("\nClusters\n");
        let mut t = Table::new(&[
            "cluster",
            ">GPU nodes",
            ">capacity",
            ">placeable",
            ">requested",
            ">pending",
            ">util",
            "shortage",
        ]);
        for c in &r.clusters {
            let g = &c.fleet.gpus;
            t.row(vec![
                format!(
                    "{}{}",
                    c.name,
                    if c.complete { "" } else { " (incomplete)" }
                ),
                c.fleet.gpu_nodes.to_string(),
                g.capacity.to_string(),
                g.placeable.to_string(),
                g.requested.to_string(),
                g.pending.to_string(),
                percent(c.fleet.utilisation),
                format!("{:?}", c.fleet.shortage.kind).to_lowercase(),
            ]);
        }
        t.render(&mut out);
    }

    if !r.tenants.is_empty() {
        out.push_str("\nTenants\n");
        let mut t = Table::new(&[
            "tenant",
            ">requested",
            ">pending",
            ">used",
            ">share",
            ">workloads",
            ">routes",
            "product lines",
        ]);
        for x in &r.tenants {
            t.row(vec![
                x.name.clone(),
                x.gpus_requested.to_string(),
                x.gpus_pending.to_string(),
                count(x.gpus_used),
                percent(x.share),
                x.workloads.to_string(),
                x.public_routes.to_string(),
                x.product_lines.join(", "),
            ]);
        }
        t.render(&mut out);
    }

    if !r.idle.is_empty() {
        out.push_str("\nRequested but idle (largest gap first)\n");
        let mut t = Table::new(&["tenant", ">requested", ">busy", ">idle"]);
        for x in &r.idle {
            t.row(vec![
                x.tenant.clone(),
                x.gpus_requested.to_string(),
                x.gpus_used.to_string(),
                x.gpus_idle.to_string(),
            ]);
        }
        t.render(&mut out);
    }
    if !f.unattributed_busy.is_empty() {
        let _ = writeln!(
            out,
            "\nBusy GPUs no pod of the fleet accounts for: {}",
            f.unattributed_busy.len()
        );
        let mut t = Table::new(&["node", "gpu", ">activity", "why"]);
        for u in &f.unattributed_busy {
            t.row(vec![
                u.node.clone(),
                u.gpu.clone(),
                format!("{:.0}%", u.activity * 100.0),
                u.reason.clone(),
            ]);
        }
        t.render(&mut out);
    }

    if r.product_lines.iter().any(|p| p.name.is_some()) {
        out.push_str("\nProduct lines\n");
        let mut t = Table::new(&[
            "product line",
            ">requested",
            ">pending",
            ">share",
            ">workloads",
            "tenants",
        ]);
        for p in &r.product_lines {
            t.row(vec![
                p.name.clone().unwrap_or_else(|| "(none)".into()),
                p.gpus_requested.to_string(),
                p.gpus_pending.to_string(),
                percent(p.share),
                p.workloads.to_string(),
                p.tenants.join(", "),
            ]);
        }
        t.render(&mut out);
    }

    if !r.graphs.is_empty() {
        out.push_str("\nDynamo graphs\n");
        let mut t = Table::new(&["graph", "tenant", "shape", ">requested", ">pending"]);
        for w in &r.graphs {
            t.row(vec![
                format!("{}/{}", w.namespace, w.name),
                w.tenant.clone(),
                w.shape.clone(),
                w.gpus.to_string(),
                w.gpus_pending.to_string(),
            ]);
        }
        t.render(&mut out);
    }

    if !r.workloads.is_empty() {
        let _ = writeln!(
            out,
            "\nWorkloads ({}{})",
            r.workloads.len(),
            if r.workloads.len() > MAX_WORKLOADS {
                format!(", largest {MAX_WORKLOADS} shown; --format json for all")
            } else {
                String::new()
            }
        );
        let mut t = Table::new(&["workload", "tenant", "shape", ">requested", ">pending"]);
        for w in r.workloads.iter().take(MAX_WORKLOADS) {
            t.row(vec![
                workload_id(w),
                w.tenant.clone(),
                w.shape.clone(),
                w.gpus.to_string(),
                w.gpus_pending.to_string(),
            ]);
        }
        t.render(&mut out);
    }

    if !f.excluded_nodes.is_empty() {
        out.push_str("\nGPU nodes not fully placeable\n");
        let mut t = Table::new(&["node", ">capacity", ">placeable", "reason"]);
        for n in &f.excluded_nodes {
            t.row(vec![
                n.node.clone(),
                n.capacity.to_string(),
                n.placeable.to_string(),
                n.reason.clone(),
            ]);
        }
        t.render(&mut out);
    }

    if !f.shortage.unplaceable.is_empty() {
        out.push_str("\nPending pods that fit on no placeable node\n");
        let mut t = Table::new(&["pod", ">GPUs", "workload"]);
        for p in &f.shortage.unplaceable {
            t.row(vec![
                format!("{}/{}", p.namespace, p.name),
                p.gpus.to_string(),
                p.workload.clone(),
            ]);
        }
        t.render(&mut out);
    }

    if !f.other_gpus.is_empty() {
        out.push_str("\nMIG slices and shared GPUs (not counted as whole GPUs)\n");
        let mut t = Table::new(&[
            "resource",
            ">capacity",
            ">allocatable",
            ">requested",
            ">pending",
        ]);
        for o in &f.other_gpus {
            t.row(vec![
                o.resource.clone(),
                o.capacity.to_string(),
                o.allocatable.to_string(),
                o.requested.to_string(),
                o.pending.to_string(),
            ]);
        }
        t.render(&mut out);
    }

    if !r.routes.is_empty() {
        out.push_str("\nPublic routes\n");
        let mut t = Table::new(&["kind", "host", "path", "tenants", ">GPUs", "why public"]);
        for x in &r.routes {
            t.row(vec![
                x.kind.clone(),
                x.host.clone(),
                x.path.clone(),
                x.tenants.join(", "),
                x.gpus.to_string(),
                x.public_because.clone(),
            ]);
        }
        t.render(&mut out);
    }
    out
}

fn workload_id(w: &crate::report::WorkloadRow) -> String {
    match &w.cluster {
        Some(c) => format!("{c}:{}/{}/{}", w.namespace, w.kind, w.name),
        None => format!("{}/{}/{}", w.namespace, w.kind, w.name),
    }
}
