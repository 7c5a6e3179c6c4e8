//! The report as Prometheus text exposition (format 0.0.4): the fleet's own Prometheus keeps the
//! history, so gpuledger never has to remember anything between runs.
//!
//! Metric names are a public interface like the JSON report's fields: `gpuledger_…`, fixed once
//! published, only ever added to. Every family has HELP and TYPE lines; GPU counts are gauges
//! (`…_gpus`), shares are `…_ratio` in 0–1. Label cardinality is bounded by what the fleet has few
//! of — tiers, GPU models, tenants, product lines, Dynamo graphs and their roles, drift categories,
//! missing resources — never by pods; one series per workload comes only when asked for
//! ([`Options::workloads`]), since a fleet may run thousands. A figure that is unknown (GPUs used
//! without DCGM, requests when pods could not be read) has no sample at all, never a zero, and
//! `gpuledger_unknown{field}` names it, so an alert can tell "nothing" from "not known"; a figure
//! that is only a lower bound (GPUs used with a GPU node dark) keeps its sample and
//! `gpuledger_partial{field}` names it.

pub use super::exposition::{Exposition, Family};
use crate::report::series::{self, NO_PRODUCT_LINE};
use crate::report::{Drift, DriftRow, Report, ShortageKind};

/// What to expose beyond the bounded series.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// One series per live workload (`gpuledger_workload_gpus`): unbounded, off by default.
    pub workloads: bool,
}

/// The content type a scrape is answered with.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The report as exposition text, every sample carrying `labels` too ([`Exposition::labelled`]):
/// `serve`'s `cluster`.
pub fn exposition_labelled(
    r: &Report,
    opts: Options,
    labels: Vec<(&'static str, String)>,
) -> String {
    let mut out = Exposition::labelled(labels);
    families(&mut out, r, opts);
    out.finish()
}

/// The `cluster` label of every series, so that the exporters of several clusters can share one
/// Prometheus (`serve` exports it; `inventory` and `drift` print the same): `--cluster`, else the
/// kubeconfig context(s) the report read (several joined by `+`, in the order read). None in a
/// pod: its context, `in-cluster`, names no cluster, and a label would stop the scraping
/// Prometheus's external label `cluster` from naming it (external labels never replace a label a
/// series has). None from a snapshot file, which names no context.
pub fn cluster_label(flag: Option<&str>, report: &Report) -> Option<String> {
    if let Some(name) = flag {
        return Some(name.to_string());
    }
    let mut contexts: Vec<&str> = Vec::new();
    for c in report
        .provenance
        .iter()
        .flat_map(|p| &p.live)
        .filter_map(|l| l.context.as_deref())
    {
        if c != "in-cluster" && !contexts.contains(&c) {
            contexts.push(c);
        }
    }
    (!contexts.is_empty()).then(|| contexts.join("+"))
}

/// The report as exposition text, every sample carrying its `cluster` label when it has one
/// ([`cluster_label`]): what `serve` exports, as `inventory` and `drift` print it.
pub fn exposition_of_cluster(r: &Report, opts: Options, cluster: Option<&str>) -> String {
    let labels = cluster_label(cluster, r)
        .map(|c| ("cluster", c))
        .into_iter()
        .collect();
    exposition_labelled(r, opts, labels)
}

/// A count as a sample value. GPU counts are far below 2^53, where f64 stops being exact.
#[allow(clippy::cast_precision_loss)]
fn f(n: u64) -> f64 {
    n as f64
}

fn families(out: &mut Exposition, r: &Report, opts: Options) {
    // A figure is unknown when the input did not hold what it needs, or it could not be listed.
    let (no_pods, no_nodes) = (
        super::unknown::missing(r, "pods"),
        super::unknown::missing(r, "nodes"),
    );
    let fl = &r.fleet;
    let g = &fl.gpus;
    let pods = |v: u64| (!no_pods).then_some(f(v));
    let nodes = |v: u64| (!no_nodes).then_some(f(v));

    let mut info = Family::gauge(
        "gpuledger_build_info",
        "The gpuledger version that computed the report (always 1).",
    );
    info.sample(&[("version", env!("CARGO_PKG_VERSION"))], 1.0);
    out.push(info);

    let mut complete = Family::gauge(
        "gpuledger_report_complete",
        "1 when every input was read, 0 when part of the cluster could not be read (figures under-count).",
    );
    complete.sample(&[], if r.complete { 1.0 } else { 0.0 });
    out.push(complete);

    let mut incomplete = Family::gauge(
        "gpuledger_report_incomplete_input",
        "1 for each resource that could not be read (e.g. forbidden by RBAC).",
    );
    for m in &r.incomplete {
        incomplete.sample(&[("resource", &m.resource)], 1.0);
    }
    out.push(incomplete);

    let mut unknown = Family::gauge(
        "gpuledger_unknown",
        "1 for each report figure that is unknown (it then has no sample, never a zero); field is its path in the JSON report.",
    );
    let mut fields: Vec<String> = fl.unknown.keys().map(|k| format!("fleet.{k}")).collect();
    if no_pods {
        fields.extend(["fleet.gpus.requested", "fleet.gpus.pending"].map(String::from));
    }
    if no_nodes {
        fields.extend(
            [
                "fleet.gpus.capacity",
                "fleet.gpus.allocatable",
                "fleet.gpus.placeable",
            ]
            .map(String::from),
        );
    }
    fields.sort();
    fields.dedup();
    for field in &fields {
        unknown.sample(&[("field", field)], 1.0);
    }
    out.push(unknown);

    let mut partial = Family::gauge(
        "gpuledger_partial",
        "1 for each report figure that is a lower bound (a GPU node without DCGM series, unreadable samples, a partial Prometheus answer); field is its path in the JSON report.",
    );
    for field in fl.partial.keys() {
        partial.sample(&[("field", &format!("fleet.{field}"))], 1.0);
    }
    out.push(partial);

    if let Some(t) = r
        .provenance
        .as_ref()
        .and_then(|p| p.live.iter().filter_map(|l| l.read_at).min())
    {
        let mut read = Family::gauge(
            "gpuledger_live_read_timestamp_seconds",
            "When the live state was read (the oldest source), Unix time.",
        );
        #[allow(clippy::cast_precision_loss)]
        read.sample(&[], t.unix() as f64);
        out.push(read);
    }

    let mut node_count = Family::gauge("gpuledger_fleet_gpu_nodes", "GPU nodes in the fleet.");
    node_count.sample(&[], nodes(fl.gpu_nodes));
    out.push(node_count);

    let mut tiers = Family::gauge(
        "gpuledger_fleet_gpus",
        "Whole GPUs by tier: capacity (bought), allocatable (offered by device plugins), placeable (schedulable nodes), requested (bound pods), pending (unbound pods), queued (waiting for queue quota: Kueue, KAI), used (busy per DCGM).",
    );
    let queued_unknown = no_pods || fl.unknown.contains_key("gpus.queued");
    tiers
        .sample(&[("tier", "capacity")], nodes(g.capacity))
        .sample(&[("tier", "allocatable")], nodes(g.allocatable))
        .sample(&[("tier", "placeable")], nodes(g.placeable))
        .sample(&[("tier", "requested")], pods(g.requested))
        .sample(&[("tier", "pending")], pods(g.pending))
        .sample(
            &[("tier", "queued")],
            (!queued_unknown).then_some(f(g.queued)),
        )
        .sample(&[("tier", "used")], g.used.filter(|_| !no_pods).map(f));
    out.push(tiers);

    let mut util = Family::gauge(
        "gpuledger_fleet_utilisation_ratio",
        "Requested GPUs / placeable GPUs.",
    );
    util.sample(&[], fl.utilisation.filter(|_| !no_pods && !no_nodes));
    out.push(util);

    let mut equiv = Family::gauge(
        "gpuledger_fleet_gpu_equivalents_used",
        "Sum of average DCGM activity of whole GPUs over the window (a GPU at 40% counts 0.4).",
    );
    equiv.sample(&[], fl.gpu_equivalents_used);
    out.push(equiv);

    let mut excluded = Family::gauge(
        "gpuledger_fleet_excluded_nodes",
        "GPU nodes that contribute fewer GPUs to placeable than to capacity (cordoned, not ready, tainted, broken device plugin).",
    );
    excluded.sample(&[], nodes(fl.excluded_nodes.len() as u64));
    out.push(excluded);

    let mut free = Family::gauge(
        "gpuledger_fleet_free_placeable_gpus",
        "Free GPUs on placeable nodes (allocatable minus requested, per node).",
    );
    free.sample(&[], pods(fl.shortage.free_placeable).filter(|_| !no_nodes));
    out.push(free);

    let mut block = Family::gauge(
        "gpuledger_fleet_largest_free_block_gpus",
        "The most free GPUs on any one placeable node.",
    );
    block.sample(
        &[],
        pods(fl.shortage.largest_free_block).filter(|_| !no_nodes),
    );
    out.push(block);

    let mut shortage = Family::gauge(
        "gpuledger_fleet_shortage",
        "1 for the fleet's shortage kind: none (nothing pending), fits, capacity (not enough free GPUs), placement (enough in total, no node fits) or quota (work waits for queue quota while GPUs it could use are free).",
    );
    if !no_pods && !no_nodes && fl.shortage.kind != ShortageKind::Unknown {
        for (kind, name) in [
            (ShortageKind::None, "none"),
            (ShortageKind::Fits, "fits"),
            (ShortageKind::Capacity, "capacity"),
            (ShortageKind::Placement, "placement"),
            (ShortageKind::Quota, "quota"),
        ] {
            shortage.sample(
                &[("kind", name)],
                if fl.shortage.kind == kind { 1.0 } else { 0.0 },
            );
        }
    }
    out.push(shortage);

    let mut namespaces = Family::gauge(
        "gpuledger_fleet_gpu_namespaces",
        "Namespaces holding at least one non-terminal pod that requests GPUs.",
    );
    namespaces.sample(&[], pods(fl.gpu_namespaces));
    out.push(namespaces);

    let mut routes = Family::gauge(
        "gpuledger_fleet_public_routes",
        "Routes by which the internet reaches the fleet (Ingress rules, public LoadBalancer Services, HTTPRoute matches).",
    );
    routes.sample(
        &[],
        (!fl.unknown.contains_key("public_routes")).then_some(f(fl.public_routes)),
    );
    out.push(routes);

    let mut intent = Family::gauge(
        "gpuledger_fleet_intent_coverage_ratio",
        "Requested GPUs of workloads that declare intent / all requested GPUs.",
    );
    intent.sample(&[], fl.intent_coverage.filter(|_| !no_pods));
    out.push(intent);

    let mut models = Family::gauge(
        "gpuledger_model_gpus",
        "Whole GPUs by model (GFD label nvidia.com/gpu.product) and tier.",
    );
    for m in &fl.models {
        for (tier, v) in [
            ("capacity", nodes(m.capacity)),
            ("allocatable", nodes(m.allocatable)),
            ("placeable", nodes(m.placeable)),
            ("requested", pods(m.requested).filter(|_| !no_nodes)),
            (
                "queued",
                (!queued_unknown && !no_nodes && super::queues::has_admission(r))
                    .then_some(f(m.queued)),
            ),
        ] {
            if tier == "queued" && v.is_none() && !super::queues::has_admission(r) {
                continue;
            }
            models.sample(&[("model", &m.model), ("tier", tier)], v);
        }
    }
    out.push(models);

    let mut other = Family::gauge(
        "gpuledger_other_gpus",
        "MIG slices and shared GPUs by resource and tier, never mixed into whole GPUs.",
    );
    for o in &fl.other_gpus {
        for (tier, v) in [
            ("capacity", nodes(o.capacity)),
            ("allocatable", nodes(o.allocatable)),
            ("requested", pods(o.requested)),
            ("pending", pods(o.pending)),
            ("used", o.used.filter(|_| !no_pods).map(f)),
        ] {
            other.sample(&[("resource", &o.resource), ("tier", tier)], v);
        }
    }
    out.push(other);
    for m in super::dra::metrics(r, no_pods, no_nodes) {
        let mut fam = Family::gauge(m.name, m.help);
        for (labels, v) in &m.samples {
            let labels: Vec<(&'static str, &str)> =
                labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            fam.sample(&labels, *v);
        }
        out.push(fam);
    }

    tenants(out, r, no_pods);
    product_lines(out, r, no_pods);
    super::queues::metrics(out, r);

    let mut roles = Family::gauge(
        "gpuledger_graph_role_gpus",
        "GPUs each role of a Dynamo graph declares (replicas × GPUs per replica).",
    );
    let mut replicas = Family::gauge(
        "gpuledger_graph_role_replicas",
        "Replicas each role of a Dynamo graph declares.",
    );
    for w in &r.graphs {
        for role in &w.roles {
            let labels = [
                ("cluster", w.cluster.as_deref().unwrap_or("")),
                ("namespace", w.namespace.as_str()),
                ("graph", w.name.as_str()),
                ("role", role.name.as_str()),
                ("tenant", w.tenant.as_str()),
            ];
            roles.sample(&labels, role.gpus().ok().map(f));
            replicas.sample(&labels, f(role.replicas));
        }
    }
    out.push(roles);
    out.push(replicas);

    let mut clusters = Family::gauge(
        "gpuledger_cluster_gpus",
        "Whole GPUs by cluster and tier, when several clusters were read as one fleet.",
    );
    for c in &r.clusters {
        for (tier, v) in [
            ("capacity", c.fleet.gpus.capacity),
            ("allocatable", c.fleet.gpus.allocatable),
            ("placeable", c.fleet.gpus.placeable),
            ("requested", c.fleet.gpus.requested),
            ("pending", c.fleet.gpus.pending),
        ] {
            clusters.sample(&[("cluster", &c.name), ("tier", tier)], f(v));
        }
    }
    out.push(clusters);

    if let Some(d) = &r.drift {
        drift(out, d);
    }

    if opts.workloads {
        let mut w = Family::gauge(
            "gpuledger_workload_gpus",
            "Whole GPUs per live workload: requested (bound pods), pending, declared (its spec), used (busy per DCGM).",
        );
        for x in &r.workloads {
            let cluster = x.cluster.as_deref().unwrap_or("");
            let product_line = x.product_line.as_deref().unwrap_or(NO_PRODUCT_LINE);
            for (state, v) in [
                ("requested", pods(x.gpus)),
                ("pending", pods(x.gpus_pending)),
                ("declared", x.gpus_declared.map(f)),
                ("used", x.gpus_used.map(f)),
            ] {
                let mut labels = vec![
                    ("namespace", x.namespace.as_str()),
                    ("kind", x.kind.as_str()),
                    ("name", x.name.as_str()),
                    ("tenant", x.tenant.as_str()),
                    ("product_line", product_line),
                    ("state", state),
                ];
                if !cluster.is_empty() {
                    labels.insert(0, ("cluster", cluster));
                }
                w.sample(&labels, v);
            }
        }
        out.push(w);
    }
}

fn tenants(out: &mut Exposition, r: &Report, no_pods: bool) {
    let pods = |v: u64| (!no_pods).then_some(f(v));
    let mut gpus = Family::gauge(
        series::TENANT_GPUS,
        "Whole GPUs per tenant: requested (bound pods), pending, queued (waiting for queue quota), declared (workload specs), used (busy per DCGM).",
    );
    let queued = (!no_pods && !r.unknown.contains_key("tenants.gpus_queued"))
        .then_some(())
        .filter(|_| super::queues::has_admission(r));
    let mut share = Family::gauge(
        "gpuledger_tenant_share_ratio",
        "A tenant's share of the fleet's requested GPUs.",
    );
    let mut workloads = Family::gauge(
        "gpuledger_tenant_workloads",
        "Live GPU workloads per tenant.",
    );
    for t in &r.tenants {
        let l = |state| [(series::TENANT, t.name.as_str()), (series::STATE, state)];
        gpus.sample(&l(series::REQUESTED), pods(t.gpus_requested))
            .sample(&l("pending"), pods(t.gpus_pending));
        if super::queues::has_admission(r) {
            gpus.sample(&l("queued"), queued.map(|()| f(t.gpus_queued)));
        }
        gpus.sample(&l("declared"), t.gpus_declared.map(f))
            .sample(&l(series::USED), t.gpus_used.map(f));
        share.sample(&[("tenant", &t.name)], t.share.filter(|_| !no_pods));
        workloads.sample(&[("tenant", &t.name)], Some(f(t.workloads)));
    }
    out.push(gpus);
    out.push(share);
    out.push(workloads);
}

fn product_lines(out: &mut Exposition, r: &Report, no_pods: bool) {
    let pods = |v: u64| (!no_pods).then_some(f(v));
    let mut gpus = Family::gauge(
        series::PRODUCT_LINE_GPUS,
        "Whole GPUs per product line: requested (bound pods), pending. Workloads without one are product_line=\"(none)\".",
    );
    let mut share = Family::gauge(
        "gpuledger_product_line_share_ratio",
        "A product line's share of the fleet's requested GPUs.",
    );
    for p in &r.product_lines {
        let name = p.name.as_deref().unwrap_or(NO_PRODUCT_LINE);
        gpus.sample(
            &[
                (series::PRODUCT_LINE, name),
                (series::STATE, series::REQUESTED),
            ],
            pods(p.gpus_requested),
        )
        .sample(
            &[(series::PRODUCT_LINE, name), (series::STATE, "pending")],
            pods(p.gpus_pending),
        );
        share.sample(&[("product_line", name)], p.share.filter(|_| !no_pods));
    }
    out.push(gpus);
    out.push(share);
}

fn drift(out: &mut Exposition, d: &Drift) {
    let cats: [(&str, &[DriftRow]); 7] = [
        ("unmanaged", &d.unmanaged),
        ("missing", &d.missing),
        ("changed", &d.changed),
        ("in_sync", &d.in_sync),
        ("queued", &d.queued),
        ("accepted", &d.accepted),
        ("unknown", &d.unknown),
    ];
    let mut workloads = Family::gauge(
        "gpuledger_drift_workloads",
        "Workloads per drift category against Git: unmanaged (live, not in Git), missing (in Git, not live), changed (GPU shape differs), in_sync, queued (in Git's shape, waiting for queue quota), accepted (by a rule), unknown (its app failed to render).",
    );
    let mut gpus = Family::gauge(
        "gpuledger_drift_gpus",
        "GPUs per drift category: live GPUs requested, except missing, which counts the GPUs Git declares.",
    );
    for (cat, rows) in cats {
        workloads.sample(&[("category", cat)], f(rows.len() as u64));
        // A missing workload whose Git GPUs cannot be counted makes the category's sum unknown.
        let sum: Option<u64> = rows
            .iter()
            .map(|x| {
                if cat == "missing" {
                    x.gpus_git
                } else {
                    Some(x.gpus)
                }
            })
            .try_fold(0, |a: u64, g| g.map(|g| a.saturating_add(g)));
        gpus.sample(&[("category", cat)], sum.map(f));
    }
    out.push(workloads);
    out.push(gpus);

    let mut coverage = Family::gauge(
        "gpuledger_drift_coverage_ratio",
        "GPUs requested by GitOps-managed workloads / all GPUs requested.",
    );
    coverage.sample(&[], d.coverage);
    out.push(coverage);

    let mut by_tenant = Family::gauge(
        "gpuledger_drift_tenant_coverage_ratio",
        "A tenant's GitOps coverage of its requested GPUs.",
    );
    for t in &d.coverage_by_tenant {
        by_tenant.sample(&[("tenant", &t.tenant)], t.coverage);
    }
    out.push(by_tenant);

    let mut expired = Family::gauge(
        "gpuledger_drift_expired_rules",
        "Accepted-drift rules past their date (they hide nothing).",
    );
    expired.sample(&[], f(d.expired.len() as u64));
    out.push(expired);

    let mut desired = Family::gauge(
        "gpuledger_drift_desired_complete",
        "1 when every app rendered, 0 when some failed (missing and unmanaged may be overstated).",
    );
    desired.sample(&[], if d.desired_incomplete { 0.0 } else { 1.0 });
    out.push(desired);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::exposition::number;

    #[test]
    fn label_values_cannot_break_out_of_their_quotes_or_line() {
        let mut e = Exposition::default();
        let mut fam = Family::gauge("gpuledger_x", "Help with a \\ and\na newline.");
        fam.sample(&[("tenant", "a\"b\\c\nd")], 1.0);
        e.push(fam);
        assert_eq!(
            e.finish(),
            "# HELP gpuledger_x Help with a \\\\ and\\na newline.\n# TYPE gpuledger_x gauge\ngpuledger_x{tenant=\"a\\\"b\\\\c\\nd\"} 1\n"
        );
    }

    #[test]
    fn an_unknown_figure_has_no_sample_and_an_empty_family_no_lines() {
        let mut e = Exposition::default();
        let mut fam = Family::gauge("gpuledger_y", "y");
        fam.sample(&[], None);
        e.push(fam);
        assert_eq!(e.finish(), "");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(42.0), "42");
    }

    #[test]
    fn constant_labels_come_first_and_give_way_to_a_samples_own_value() {
        let mut e = Exposition::labelled(vec![("cluster", "east".into())]);
        let mut fam = Family::gauge("gpuledger_z", "z");
        fam.sample(&[("tier", "capacity")], 1.0)
            .sample(&[("cluster", "west"), ("tier", "requested")], 2.0)
            .sample(&[("cluster", ""), ("tier", "pending")], 3.0)
            .sample(&[], 4.0);
        e.push(fam);
        assert_eq!(
            e.finish(),
            "# HELP gpuledger_z z\n# TYPE gpuledger_z gauge\n\
             gpuledger_z{cluster=\"east\",tier=\"capacity\"} 1\n\
             gpuledger_z{cluster=\"west\",tier=\"requested\"} 2\n\
             gpuledger_z{cluster=\"east\",tier=\"pending\"} 3\n\
             gpuledger_z{cluster=\"east\"} 4\n"
        );
        // No name: nothing added, an empty own value kept as it was.
        let mut e = Exposition::labelled(vec![("cluster", String::new())]);
        let mut fam = Family::gauge("gpuledger_z", "z");
        fam.sample(&[("cluster", ""), ("tier", "pending")], 3.0);
        e.push(fam);
        assert!(
            e.finish()
                .ends_with("gpuledger_z{cluster=\"\",tier=\"pending\"} 3\n")
        );
    }
}
