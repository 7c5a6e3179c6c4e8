//! What the input did not hold, and the figures that are therefore unknown.
//!
//! A kubectl dump holds the kinds it holds: `kubectl get pods -A -o json` has no Node, so the
//! fleet's capacity, placeability and the capacity-vs-placement diagnosis are not known — not 0,
//! and never "capacity problem". A cluster read lacks the resources it was forbidden to list. The
//! inventory is computed from what was read; [`apply`] then names every figure that needs what was
//! not read in the report's `unknown` maps (the fleet's, paths from `fleet`; the report's, paths
//! from its root such as `tenants.gpus_requested`), and the JSON writer turns each into `null`
//! ([`crate::report::to_json`]). The text renderers read the same maps.

use crate::report::{Report, ShortageKind};

/// What the input did not hold, and why: a figure that needs it is unknown, never 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unread {
    /// No Node was read: the GPU tiers, placeability and the shortage diagnosis are unknown.
    pub nodes: Option<String>,
    /// No Pod was read: GPUs requested and pending, and every figure that needs pods.
    pub pods: Option<String>,
    /// No Service, Ingress, Gateway or HTTPRoute was read: public routes are unknown.
    pub routes: Option<String>,
    /// Queues exist but what waits in them (Kueue Workloads, KAI PodGroups) was not read: the
    /// queued tier is unknown, and so is whether a shortage is the queues'.
    pub queued: Option<String>,
}

impl Unread {
    pub fn is_empty(&self) -> bool {
        self == &Unread::default()
    }
}

/// Fleet figures that need the nodes.
const NEEDS_NODES: [&str; 12] = [
    "gpus.capacity",
    "gpus.allocatable",
    "gpus.placeable",
    "gpu_nodes",
    "utilisation",
    "models",
    "excluded_nodes",
    "shortage.free_placeable",
    "shortage.largest_free_block",
    "shortage.unplaceable",
    "other_gpus.capacity",
    "other_gpus.allocatable",
];

/// Fleet figures that need the pods.
const NEEDS_PODS: [&str; 15] = [
    "gpus.requested",
    "gpus.pending",
    "gpus.used",
    "gpu_equivalents_used",
    "utilisation",
    "gpu_namespaces",
    "top3_namespace_share",
    "intent_coverage",
    "shortage.pending",
    "shortage.free_placeable",
    "shortage.unplaceable",
    "other_gpus.requested",
    "other_gpus.pending",
    "shortage.largest_free_block",
    "models.requested",
];

/// Row figures (from the report's root) that need the pods.
const ROWS_NEED_PODS: [&str; 23] = [
    "namespaces",
    "tenants.gpus_requested",
    "tenants.gpus_pending",
    "tenants.gpus_used",
    "tenants.gpu_equivalents_used",
    "tenants.share",
    "tenants.public_routes",
    "product_lines.gpus_requested",
    "product_lines.gpus_pending",
    "product_lines.share",
    "workloads.gpus",
    "workloads.gpus_pending",
    "workloads.gpus_used",
    "workloads.gpu_equivalents_used",
    "workloads.pods_bound",
    "workloads.pods_pending",
    "workloads.public_routes",
    "graphs.gpus",
    "graphs.gpus_pending",
    "graphs.pods_bound",
    "graphs.pods_pending",
    "routes.workloads",
    "routes.gpus",
];

/// Names, in `report`'s unknown maps, every figure that needs what was not read.
pub fn apply(report: &mut Report, unread: &Unread) {
    dra(report, unread);
    if let Some(why) = &unread.queued {
        queued(report, why);
    }
    let fleet = &mut report.fleet;
    if let Some(why) = &unread.nodes {
        for k in NEEDS_NODES {
            fleet.unknown.set(k, why.clone());
        }
        fleet.nearly_full = None;
        fleet.utilisation = None;
        fleet.models.clear();
        fleet.excluded_nodes.clear();
    }
    if let Some(why) = &unread.pods {
        for k in NEEDS_PODS {
            fleet.unknown.set(k, why.clone());
        }
        for k in ROWS_NEED_PODS {
            report.unknown.set(k, why.clone());
        }
        fleet.nearly_full = None;
        fleet.utilisation = None;
        report.namespaces.clear();
        report.idle.clear();
    }
    if let Some(why) = unread.nodes.as_ref().or(unread.pods.as_ref()) {
        let s = &mut fleet.shortage;
        s.kind = ShortageKind::Unknown;
        s.unplaceable.clear();
        s.next_step = None;
        s.summary = format!("unknown: {why}");
    }
    if let Some(why) = &unread.routes {
        fleet.unknown.set("public_routes", why.clone());
        for k in ["routes", "tenants.public_routes", "workloads.public_routes"] {
            report.unknown.set(k, why.clone());
        }
        report.routes.clear();
    }
}

/// What waits for quota was not read: the queued figures are unknown, and a fleet whose pods are
/// not short of nodes may still be short of quota (never "no shortage").
fn queued(report: &mut Report, why: &str) {
    let fleet = &mut report.fleet;
    for k in ["gpus.queued", "models.queued"] {
        fleet.unknown.set(k, why);
    }
    for k in [
        "tenants.gpus_queued",
        "workloads.gpus_queued",
        "queues.queued",
        "queues.workloads_queued",
    ] {
        report.unknown.set(k, why);
    }
    let s = &mut fleet.shortage;
    if matches!(
        s.kind,
        ShortageKind::None | ShortageKind::Fits | ShortageKind::Quota
    ) {
        s.kind = ShortageKind::Unknown;
        s.quota = None;
        // The banner above the figures says why.
        s.summary =
            "unknown: no pod is short of a node, but what waits for queue quota was not read"
                .to_string();
    }
}

/// The DRA split of the tiers follows them: from slices needs the nodes, through claims the pods.
/// Named only where the report has a DRA section, so a fleet without DRA reads as before.
fn dra(report: &mut Report, unread: &Unread) {
    if report.fleet.dra.is_none() {
        return;
    }
    let fleet = &mut report.fleet;
    if let Some(why) = &unread.nodes {
        for k in [
            "dra.capacity_from_slices",
            "dra.allocatable_from_slices",
            "dra.placeable_from_slices",
        ] {
            fleet.unknown.set(k, why.clone());
        }
    }
    if let Some(why) = &unread.pods {
        for k in [
            "dra.requested_from_claims",
            "dra.pending_from_claims",
            "dra.claims",
            "dra.claims_allocated",
        ] {
            fleet.unknown.set(k, why.clone());
        }
        for k in [
            "workloads.dra.gpus_from_claims",
            "workloads.dra.gpus_pending_from_claims",
        ] {
            report.unknown.set(k, why.clone());
        }
    }
}
