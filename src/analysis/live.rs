//! The live fleet as every analysis reads it, computed once per read: the GPU nodes with their
//! tiers, the workloads that hold GPUs (the owner walk, with each GPU pod), and for each workload
//! its tenant and product line (one tenancy resolution), its intent, the public routes that reach
//! it and the GPUs its pods keep busy.
//!
//! The inventory report is built from this model (`inventory::report`), and so are cost, serving
//! headroom, drift and the planner's pool: they read the same workloads, tenants and GPUs, never a
//! report's rows, so a figure cannot differ between sections or commands that read the same input,
//! and a change to how a report shows a figure changes no analysis.

use std::collections::BTreeMap;

use crate::config::{Config, IntentRule};
use crate::intent::{Intent, Problem};
use crate::k8s::object::Object;
use crate::util::sum::Overflow;
use crate::workload::owners::{self, Workloads};
use crate::workload::{Workload, WorkloadId};

use super::exposure::{self, Routes};
use super::nodes::{self, GpuNode};
use super::tenancy::Resolver;
pub use super::unread::Unread;
use super::usage::{Attribution, Metrics, Use, attribute};

/// Why `used` is unknown when no metrics source was given.
pub const NO_METRICS: &str =
    "no metrics source configured (GPU activity comes from DCGM metrics in Prometheus)";

/// The live fleet, read once.
pub struct LiveFleet<'a> {
    pub objects: &'a [Object],
    /// GPU nodes by name, with their tiers.
    pub nodes: BTreeMap<&'a str, GpuNode<'a>>,
    /// The owner walk: every live GPU workload and every GPU pod (with its workload).
    pub workloads: Workloads<'a>,
    /// What the fleet knows of each workload, parallel to `workloads.list`.
    pub about: Vec<About>,
    /// Tenant, product line and contacts, resolved one way for every section.
    pub tenancy: Resolver<'a>,
    pub routes: Routes,
    /// The live workload each object belongs to (by index into `workloads.list`): any object
    /// whose owner chain leads to one, a non-GPU pod of a GPU workload included.
    pub owner_of: Vec<Option<usize>>,
    /// GPU activity attributed to workloads; `None` when unknown ([`LiveFleet::used_unknown`]).
    pub usage: Option<Attribution>,
    /// Where GPU activity came from (Prometheus URL, window, busy threshold).
    pub metrics_source: Option<String>,
    /// Why GPU activity is unknown.
    pub used_unknown: Option<String>,
    /// What the input did not hold ([`LiveFleet::unread`]).
    pub unread: Unread,
    /// The admission queues and what waits in them (Kueue, KAI Scheduler).
    pub admission: crate::queues::Admission,
    /// Where each workload's queued GPUs wait, the queue rows and each tenant's quota.
    pub queues: super::queues::QueueFigures,
}

/// What the fleet knows of one workload besides its shape and pods.
#[derive(Debug, Clone)]
pub struct About {
    pub tenant: String,
    pub product_line: Option<String>,
    /// Its intent, from its annotations and the first `intent:` rule that matches; `None` when it
    /// declares none.
    pub intent: Option<Intent>,
    /// Intent values that do not parse.
    pub intent_problems: Vec<Problem>,
    /// Public routes that reach it.
    pub public_routes: u64,
    /// Busy GPUs of its pods; `None` when activity is unknown.
    pub used: Option<Use>,
}

impl<'a> LiveFleet<'a> {
    /// Reads the fleet of `objects` with GPU activity from `metrics` (or why it is unknown).
    pub fn read(
        objects: &'a [Object],
        cfg: &'a Config,
        metrics: &Metrics,
    ) -> Result<LiveFleet<'a>, Overflow> {
        let nodes = nodes::gpu_nodes(objects, cfg);
        let mut workloads = owners::build(objects)?;
        let (usage, metrics_source, used_unknown) = match metrics {
            Metrics::Activity {
                read,
                threshold,
                source,
            } => {
                let gpu_nodes = nodes.values().map(|n| (n.name, n.capacity)).collect();
                match attribute(read, *threshold, &workloads.pods, objects, &gpu_nodes) {
                    Ok(a) => (Some(a), Some(source.clone()), None),
                    // Which series are this fleet's cannot be told: used is unknown.
                    Err(why) => (None, Some(source.clone()), Some(why)),
                }
            }
            Metrics::NotConfigured => (None, None, Some(NO_METRICS.to_string())),
            Metrics::Failed(reason) => (None, None, Some(reason.clone())),
        };
        let tenancy = Resolver::new(&cfg.tenancy, objects);
        let routes = exposure::public_routes(objects, cfg, &mut workloads, &tenancy)?;
        let owner_of: Vec<Option<usize>> = objects
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let namespaced = o.meta.namespace.is_some()
                    && o.typed_kind() != crate::k8s::object::Kind::Namespace;
                namespaced
                    .then(|| workloads.workload_of_object(i))
                    .flatten()
            })
            .collect();
        let about = workloads
            .list
            .iter()
            .enumerate()
            .map(|(i, w)| {
                about(
                    w,
                    &tenancy,
                    &cfg.intent,
                    routes.per_workload.get(&i).copied().unwrap_or(0),
                    // Unknown for a workload on a GPU without readable series, never 0.
                    usage
                        .as_ref()
                        .filter(|u| !u.unknown_workloads.contains(&i))
                        .map(|u| u.per_workload.get(&i).copied().unwrap_or_default()),
                )
            })
            .collect::<Vec<About>>();
        let admission = crate::queues::Admission::read(objects);
        let tenants: Vec<String> = about.iter().map(|a| a.tenant.clone()).collect();
        let queues = super::queues::figures(
            &admission,
            objects,
            &workloads.list,
            &tenants,
            &owner_of,
            &tenancy,
        );
        Ok(LiveFleet {
            objects,
            nodes,
            workloads,
            about,
            tenancy,
            routes,
            owner_of,
            usage,
            metrics_source,
            used_unknown,
            unread: Unread::default(),
            admission,
            queues,
        })
    }

    /// The same fleet, knowing what its input did not hold.
    pub fn unread(mut self, unread: Unread) -> LiveFleet<'a> {
        self.unread = unread;
        self
    }

    /// Each live workload with what the fleet knows of it.
    pub fn each(&self) -> impl Iterator<Item = (usize, &Workload, &About)> + '_ {
        self.workloads
            .list
            .iter()
            .zip(&self.about)
            .enumerate()
            .map(|(i, (w, a))| (i, w, a))
    }

    /// The index of the workload `id`.
    pub fn find(&self, id: &WorkloadId) -> Option<usize> {
        self.workloads.list.iter().position(|w| &w.id == id)
    }

    /// Per tenant: whole GPUs requested, and busy (`None` when activity is unknown).
    pub fn tenant_gpus(&self) -> BTreeMap<&str, (u64, Option<u64>)> {
        let mut out: BTreeMap<&str, (u64, Option<u64>)> = BTreeMap::new();
        for (_, w, a) in self.each() {
            let e = out
                .entry(a.tenant.as_str())
                .or_insert((0, a.used.map(|_| 0)));
            e.0 = e.0.saturating_add(w.requested.whole);
            e.1 = e.1.zip(a.used).map(|(t, u)| t.saturating_add(u.busy));
        }
        out
    }
}

/// What is known of workload `w` (live, or declared in Git: then with no routes and no activity):
/// its tenant and product line, and its intent.
pub fn about(
    w: &Workload,
    tenancy: &Resolver<'_>,
    rules: &[IntentRule],
    public_routes: u64,
    used: Option<Use>,
) -> About {
    let (intent, intent_problems) = intent_of(w, rules);
    About {
        tenant: tenancy.tenant(&w.labels, &w.id.namespace),
        product_line: tenancy.product_line(&w.labels, &w.id.namespace),
        intent,
        intent_problems,
        public_routes,
        used,
    }
}

/// A workload's intent: its annotations, with what the first matching `intent:` rule fills in.
fn intent_of(w: &Workload, rules: &[IntentRule]) -> (Option<Intent>, Vec<Problem>) {
    let rule = rules
        .iter()
        .enumerate()
        .find(|(_, r)| r.matches.matches(&w.id.namespace, &w.id.kind, &w.id.name))
        .map(|(i, r)| (format!("intent[{i}]"), r.values()));
    let (intent, problems) = crate::intent::read(
        &w.intent_annotations,
        rule.as_ref().map(|(at, v)| (at.as_str(), v)),
        w.intent_facts.cron,
    );
    ((!intent.is_empty()).then_some(intent), problems)
}
