//! The inventory's long lists, after its headline: idle GPUs, graphs, workloads, nodes, routes
//! and namespaces, folded on GitHub when they have more than [`FOLD`] rows (the workloads cut to
//! what a terminal shows).

use super::page::{self, FOLD, percent};
use super::unknown::{fleet_figure, missing};
use crate::doc::{Doc, Table};
use crate::report::{Report, ShapeSource, WorkloadRow};

/// Rows of the workloads table a terminal shows.
const TERMINAL_WORKLOADS: usize = 25;

/// Everything after the headline: idle GPUs, graphs, workloads, nodes, routes, namespaces.
pub fn details(r: &Report) -> Doc {
    let f = &r.fleet;
    let fold = Some(FOLD);
    let mut d = Doc::new();
    d.section(
        "Requested but idle (largest gap first)",
        Table::new(&["tenant", ">requested", ">busy", ">idle"]).rows(&r.idle, |x| {
            vec![
                x.tenant.as_str().into(),
                x.gpus_requested.to_string().into(),
                x.gpus_used.to_string().into(),
                x.gpus_idle.to_string().into(),
            ]
        }),
        fold,
    );
    d.section(
        "GPU nodes without DCGM series (their GPUs are unknown, not idle)",
        Table::new(&["node", ">GPUs"]).rows(&f.no_metrics_nodes, |n| {
            vec![n.node.as_str().into(), n.gpus.to_string().into()]
        }),
        fold,
    );
    d.section(
        "GPUs whose activity is unknown",
        Table::new(&["node", "gpu", "why"]).rows(&f.unknown_gpus, |u| {
            vec![
                u.node.as_str().into(),
                u.gpu.as_str().into(),
                u.reason.as_str().into(),
            ]
        }),
        fold,
    );
    d.section(
        "Busy GPUs no pod of the fleet accounts for",
        Table::new(&["node", "gpu", ">activity", "why"]).rows(&f.unattributed_busy, |u| {
            vec![
                u.node.as_str().into(),
                u.gpu.as_str().into(),
                page::percent_whole(u.activity).into(),
                u.reason.as_str().into(),
            ]
        }),
        fold,
    );
    if r.product_lines.iter().any(|p| p.name.is_some()) {
        d.section(
            "Product lines",
            Table::new(&[
                "product line",
                ">requested",
                ">pending",
                ">share",
                ">workloads",
                "tenants",
            ])
            .rows(&r.product_lines, |p| {
                let unknown = missing(r, "pods");
                let n = |v: u64| {
                    if unknown {
                        "unknown".to_string()
                    } else {
                        v.to_string()
                    }
                };
                vec![
                    p.name.as_deref().unwrap_or("(none)").into(),
                    n(p.gpus_requested).into(),
                    n(p.gpus_pending).into(),
                    if unknown {
                        "unknown".into()
                    } else {
                        percent(p.share)
                    }
                    .into(),
                    p.workloads.to_string().into(),
                    p.tenants.join(", ").into(),
                ]
            }),
            fold,
        );
    }
    d.section(
        "Dynamo graphs",
        workload_table(r, "graph", &r.graphs, |w| match &w.cluster {
            Some(c) => format!("{c}:{}/{}", w.namespace, w.name),
            None => format!("{}/{}", w.namespace, w.name),
        }),
        fold,
    );
    d.section(
        "Workloads",
        workload_table(r, "workload", &r.workloads, workload_id).limit(TERMINAL_WORKLOADS),
        fold,
    );
    d.section(
        "GPU nodes not fully placeable",
        Table::new(&["node", ">capacity", ">placeable", "reason"]).rows(&f.excluded_nodes, |n| {
            vec![
                n.node.as_str().into(),
                n.capacity.to_string().into(),
                n.placeable.to_string().into(),
                n.reason.as_str().into(),
            ]
        }),
        fold,
    );
    d.section(
        "Pending pods that fit on no placeable node",
        Table::new(&["pod", ">GPUs", "workload"]).rows(&f.shortage.unplaceable, |p| {
            vec![
                format!("{}/{}", p.namespace, p.name).into(),
                p.gpus.to_string().into(),
                p.workload.as_str().into(),
            ]
        }),
        fold,
    );
    super::nodes::next_step(&mut d, &f.shortage, true);
    let shares = f
        .other_gpus
        .iter()
        .any(|o| o.resource == crate::k8s::gpus::FRACTION);
    let queued = f.other_gpus.iter().any(|o| o.queued > 0);
    d.section(
        if shares {
            "MIG slices, shared GPUs and KAI GPU shares (not counted as whole GPUs)"
        } else {
            "MIG slices and shared GPUs (not counted as whole GPUs)"
        },
        Table::new(&other_gpu_headers(queued)).rows(&f.other_gpus, |o| {
            let resource = match o.gpu_equivalents {
                Some(Some(g)) => format!(
                    "{} (= {} GPU)",
                    o.resource,
                    crate::report::queues::Amount(g)
                ),
                Some(None) => format!(
                    "{} (GPUs unknown: {})",
                    o.resource,
                    o.note.as_deref().unwrap_or("")
                ),
                None => o.resource.clone(),
            };
            let mut cells = vec![
                resource.into(),
                fleet_figure(r, "other_gpus.capacity", o.capacity).into(),
                fleet_figure(r, "other_gpus.allocatable", o.allocatable).into(),
                fleet_figure(r, "other_gpus.requested", o.requested).into(),
                fleet_figure(r, "other_gpus.pending", o.pending).into(),
            ];
            if queued {
                cells.push(o.queued.to_string().into());
            }
            cells
        }),
        fold,
    );
    super::dra::sections(&mut d, r, fold, workload_id);
    d.section(
        "Public routes",
        Table::new(&["kind", "host", "path", "tenants", ">GPUs", "why public"]).rows(
            &r.routes,
            |x| {
                vec![
                    x.kind.as_str().into(),
                    x.host.as_str().into(),
                    x.path.as_str().into(),
                    x.tenants.join(", ").into(),
                    x.gpus.to_string().into(),
                    x.public_because.as_str().into(),
                ]
            },
        ),
        fold,
    );
    d.section(
        "Namespaces",
        Table::new(&["namespace", "tenant", ">requested", ">pending"]).rows(&r.namespaces, |n| {
            vec![
                n.name.as_str().into(),
                n.tenant.as_str().into(),
                n.gpus_requested.to_string().into(),
                n.gpus_pending.to_string().into(),
            ]
        }),
        fold,
    );
    d
}

fn workload_table(
    r: &Report,
    first: &str,
    rows: &[WorkloadRow],
    id: impl Fn(&WorkloadRow) -> String,
) -> Table {
    let no_pods = missing(r, "pods");
    let n = |v: u64| {
        if no_pods {
            "unknown".into()
        } else {
            v.to_string()
        }
    };
    // Where work waits for queue quota: how much, and in which queue (and why it never will).
    let queued = rows
        .iter()
        .any(|w| w.gpus_queued > 0 || w.queue_state.is_some());
    let queued_unknown = r.unknown.contains_key("workloads.gpus_queued");
    let mut headers = vec![first, "tenant", "shape", ">requested", ">pending"];
    if queued {
        headers.extend([">queued", "queue"]);
    }
    Table::new(&headers).rows(rows, |w| {
        let mut row = vec![
            id(w).into(),
            w.tenant.as_str().into(),
            shape_cell(w).into(),
            n(w.gpus).into(),
            n(w.gpus_pending).into(),
        ];
        if queued {
            row.push(
                if queued_unknown {
                    "unknown".to_string()
                } else {
                    n(w.gpus_queued)
                }
                .into(),
            );
            row.push(super::queues::queue_cell(w).into());
        }
        row
    })
}

/// A workload's shape, with the note that it is a guess when its kind is not modelled.
pub(super) fn shape_cell(w: &WorkloadRow) -> String {
    let shape = match super::dra::shape_note(w) {
        Some(note) => format!("{} ({note})", w.shape),
        None => w.shape.clone(),
    };
    match w.shape_source {
        ShapeSource::Guess => format!("{shape} (shape is a guess: unmodelled kind)"),
        ShapeSource::Spec | ShapeSource::Pods => shape,
    }
}

/// `namespace/Kind/name`, prefixed by the cluster in a multi-cluster report.
fn workload_id(w: &WorkloadRow) -> String {
    match &w.cluster {
        Some(c) => format!("{c}:{}/{}/{}", w.namespace, w.kind, w.name),
        None => format!("{}/{}/{}", w.namespace, w.kind, w.name),
    }
}

/// The MIG and share table's columns: `queued` only when a queue holds some (KAI shares).
fn other_gpu_headers(queued: bool) -> Vec<&'static str> {
    let mut h = vec![
        "resource",
        ">capacity",
        ">allocatable",
        ">requested",
        ">pending",
    ];
    if queued {
        h.push(">queued");
    }
    h
}
