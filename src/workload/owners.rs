//! From objects to workloads: walking owner references to the root, and assembling each workload's
//! pods, requests and shape.
//!
//! Each object's root is found once and memoised, so a fleet of 100,000 pods that share a few thousand
//! ReplicaSets costs one hash lookup per pod. Owners are looked up by UID (followed only when the
//! object with that UID agrees with the reference in kind, name and namespace), then by namespace +
//! kind + name. When an owner is missing from the input (a partial snapshot, an operator that creates
//! objects the dump did not include), the walk falls back to well-known labels (Dynamo graph,
//! LeaderWorkerSet, KServe) and then to the owner reference itself, so a pod is never left without
//! a workload; a ReplicaSet's missing Deployment is recovered from the `pod-template-hash` label.
//!
//! A pod holds its device-plugin request and the devices of its own DRA claims. A shared
//! ResourceClaim holds its devices once, for all the pods that use it: it is a GPU holder of its
//! own ([`Holder::Claim`]), bound once allocated and pending while a running consumer waits for
//! it, and its root (the claim itself, unless an owner made it) is the workload it counts for.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::k8s::gpus::Gpus;
use crate::k8s::object::{Body, Kind, Object};
use crate::util::date::Timestamp;
use crate::util::sum::{self, Named, Overflow, TooLarge};

use super::claims::{ClaimHow, ClaimSummary, ClaimUse, Devices, Dra, PodClaims, is_shared_claim};
use super::kinds::{declared_shape_with, shape_is_guess, template_role};
use super::labels;
use super::pods::pod_request;
use super::types::{DeviceDetail, GpuShape, LiveDevices, PodCounts, Role, Workload};

mod queued;
mod roots;
mod runtimes;

pub use roots::{Root, Roots};

/// Where a pod stands for counting: bound to a node, waiting for one, waiting for its queue's
/// quota, or done. A pod is in exactly one: a GPU waiting for quota is queued, never pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodState {
    Bound,
    Pending,
    /// Unbound and held by admission: Kueue's scheduling gate, or a KAI pod group its queue
    /// holds ([`crate::queues`]).
    Queued,
    Terminal,
}

impl PodState {
    /// Its state by itself: a KAI pod whose group the queue holds reads as pending here (its
    /// group's status says otherwise: [`build`] reads it).
    pub fn of(obj: &Object) -> PodState {
        let Body::Pod(p) = &obj.body else {
            return PodState::Terminal;
        };
        match p.status.phase.as_deref() {
            Some("Succeeded" | "Failed") => PodState::Terminal,
            _ if p.spec.node_name.as_deref().is_some_and(|n| !n.is_empty()) => PodState::Bound,
            _ if p.spec.admission_gated => PodState::Queued,
            _ => PodState::Pending,
        }
    }

    /// Not done: bound, or waiting (for a node or for quota).
    pub fn is_live(self) -> bool {
        self != PodState::Terminal
    }
}

/// A pod that requests GPUs, or a shared ResourceClaim that holds them.
#[derive(Debug, Clone)]
pub struct GpuPod {
    /// Index into the object list.
    pub object: usize,
    /// Whole GPUs and MIG slices, through the device plugin and DRA claims together.
    pub gpus: Gpus,
    pub state: PodState,
    /// Index into [`Workloads::list`]; `None` for terminal pods.
    pub workload: Option<usize>,
    pub holder: Holder,
    /// What it holds through DRA claims; `None` for a pod of plain device-plugin resources.
    pub dra: Option<Box<HeldDevices>>,
}

/// What holds a [`GpuPod`]'s GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    Pod,
    /// A shared ResourceClaim, on the node its allocation names (when it names one).
    Claim {
        node: Option<String>,
    },
}

impl GpuPod {
    /// The node its GPUs are on: a pod's node, an allocated claim's.
    pub fn node<'o>(&'o self, objects: &'o [Object]) -> Option<&'o str> {
        match &self.holder {
            Holder::Claim { node } => node.as_deref(),
            Holder::Pod => match &objects.get(self.object)?.body {
                Body::Pod(p) => p.spec.node_name.as_deref().filter(|n| !n.is_empty()),
                _ => None,
            },
        }
    }

    /// Of its whole GPUs, those that came through DRA claims.
    pub fn gpus_from_claims(&self) -> u64 {
        self.dra.as_ref().map_or(0, |d| d.from_claims)
    }
}

/// What a GPU holder holds through DRA claims.
#[derive(Debug, Clone, Default)]
pub struct HeldDevices {
    /// Of its whole GPUs, those through claims (a DRA-served `nvidia.com/gpu` limit included).
    pub from_claims: u64,
    /// Up to this many more whole GPUs (claims with alternatives, not allocated).
    pub more: u64,
    /// DRA devices of other classes, by class.
    pub other: BTreeMap<String, u64>,
    pub unknown: Vec<String>,
    pub claims: Vec<ClaimUse>,
}

impl HeldDevices {
    /// The DRA side of a pod whose device-plugin request has `plugin_whole` whole GPUs, or
    /// `None` when it has none.
    fn of_pod(c: PodClaims, plugin_whole: u64) -> Option<Box<HeldDevices>> {
        let mut claims = c.claims;
        let mut from_claims = c.own.gpus.whole;
        if let Some(name) = c.extended {
            // The limit is served by DRA: counted once, by the device-plugin rule.
            from_claims = from_claims.saturating_add(plugin_whole);
            claims.push(ClaimUse {
                how: ClaimHow::ExtendedResource,
                name,
                allocated: Some(true),
                devices: Devices {
                    gpus: Gpus::whole(plugin_whole),
                    ..Devices::default()
                },
            });
        }
        let held = HeldDevices {
            from_claims,
            more: c.own.more.whole,
            other: c.own.other,
            unknown: c.own.unknown,
            claims,
        };
        (held.from_claims > 0
            || held.more > 0
            || !held.other.is_empty()
            || !held.unknown.is_empty()
            || !held.claims.is_empty())
        .then(|| Box::new(held))
    }

    /// Whether it holds anything that makes its holder a GPU holder besides its GPUs.
    fn counts(&self) -> bool {
        self.more > 0 || !self.other.is_empty() || !self.unknown.is_empty()
    }
}

/// All live workloads of an object list, with the GPU pods that belong to them.
pub struct Workloads<'a> {
    pub list: Vec<Workload>,
    pub pods: Vec<GpuPod>,
    pub roots: Roots<'a>,
    /// `list` index of each root, where the root is a workload.
    workload_of_root: HashMap<usize, usize>,
}

impl<'a> Workloads<'a> {
    /// The workload that object `i` (any object: a non-GPU frontend pod, a Service's backend) belongs
    /// to, if its root is a live GPU workload.
    pub fn workload_of_object(&mut self, i: usize) -> Option<usize> {
        let root = self.roots.resolve(i)?;
        self.workload_of_root.get(&root).copied()
    }
}

#[derive(Default)]
struct Builder {
    requested: Gpus,
    pending: Gpus,
    /// GPUs of its pods held by admission.
    queued_pods: Gpus,
    /// GPUs of its Kueue Workloads waiting for quota (used when no pod of it is queued: the pods
    /// of a Workload that has them are the same demand).
    queued_workloads: Gpus,
    pods: PodCounts,
    /// (role, GPUs per pod) → pods, for workloads whose root object is missing.
    pod_roles: BTreeMap<(String, u64), u64>,
    dra: LiveDevices,
}

impl Builder {
    /// Adds what a holder holds through DRA claims.
    fn held(&mut self, h: &HeldDevices, state: PodState) -> Result<(), TooLarge> {
        let d = &mut self.dra;
        match state {
            PodState::Bound => sum::add_to(&mut d.requested_from_claims, h.from_claims)?,
            PodState::Pending => sum::add_to(&mut d.pending_from_claims, h.from_claims)?,
            PodState::Queued | PodState::Terminal => {}
        }
        sum::add_to(&mut d.gpus_more, h.more)?;
        for (k, n) in &h.other {
            sum::add_to(d.other.entry(k.clone()).or_insert(0), *n)?;
        }
        for u in &h.unknown {
            if !d.unknown.contains(u) {
                d.unknown.push(u.clone());
            }
        }
        for c in &h.claims {
            ClaimSummary::add(&mut d.claims, c)?;
        }
        Ok(())
    }
}

/// Finds every live workload: the roots of non-terminal GPU pods, plus root objects that declare GPUs
/// and are not finished. Fails only when a workload's GPUs, summed over its pods, overflow.
pub fn build(objects: &[Object]) -> Result<Workloads<'_>, Overflow> {
    let runtimes = runtimes::Runtimes::new(objects);
    let lookup = |kind: &str, ns: &str, name: &str| runtimes.find(kind, ns, name);
    let dra = Dra::new(objects);
    let mut roots = Roots::new(objects);
    let mut builders: BTreeMap<usize, Builder> = BTreeMap::new();
    let mut pods = Vec::new();
    // Jobs that have pods, and whether any of them is still running.
    let mut job_pods: HashMap<usize, bool> = HashMap::new();
    // The pods that use each shared claim.
    let mut consumers: BTreeMap<usize, Vec<(usize, PodState)>> = BTreeMap::new();

    // KAI pod groups their queue holds: their pods wait for quota, not for a node.
    let held_groups = queued::held_pod_groups(objects);
    for (i, o) in objects.iter().enumerate() {
        let Body::Pod(p) = &o.body else { continue };
        let mut state = PodState::of(o);
        if state == PodState::Pending && queued::in_held_group(o, &held_groups) {
            state = PodState::Queued;
        }
        let mut gpus = pod_request(&p.spec).named(o, "the GPUs its containers request")?;
        // A KAI GPU share asks for no nvidia.com/gpu: it is a share of its own, never 0.
        gpus.add(&crate::k8s::queue::kai_share(&o.meta.annotations))
            .named(o, "its KAI GPU shares")?;
        let claims = dra
            .pod(
                o.namespace(),
                &p.spec,
                Some((&p.status, o.meta.uid.as_deref())),
            )
            .named(o, "the devices of its claims")?;
        for &c in &claims.shared {
            consumers.entry(c).or_default().push((i, state));
        }
        let plugin_whole = gpus.whole;
        gpus.add(&claims.own.gpus)
            .named(o, "the GPUs its containers and claims request")?;
        let held = HeldDevices::of_pod(claims, plugin_whole);
        if let Some(job) = Roots::owner_ref(o)
            .filter(|r| r.kind == "Job")
            .and_then(|r| roots.find_owner(o, r))
        {
            *job_pods.entry(job).or_default() |= state != PodState::Terminal;
        }
        if gpus.is_zero() && !held.as_ref().is_some_and(|h| h.counts()) {
            continue;
        }
        let mut workload = None;
        if state != PodState::Terminal
            && let Some(root) = roots.resolve(i)
            && let Some(Root { id, .. }) = roots.list.get(root)
        {
            let b = builders.entry(root).or_default();
            match state {
                PodState::Bound => {
                    b.requested
                        .add(&gpus)
                        .named(id, "the GPUs its bound pods request")?;
                    b.pods.bound += 1;
                }
                PodState::Queued => {
                    b.queued_pods
                        .add(&gpus)
                        .named(id, "the GPUs its queued pods request")?;
                    b.pods.queued += 1;
                }
                _ => {
                    b.pending
                        .add(&gpus)
                        .named(id, "the GPUs its pending pods request")?;
                    b.pods.pending += 1;
                }
            }
            if let Some(h) = &held {
                b.held(h, state)
                    .named(id, "the devices its pods hold through claims")?;
            }
            let role = template_role(&o.meta.labels)
                .or_else(|| {
                    o.meta
                        .labels
                        .get(labels::DYNAMO_COMPONENT)
                        .map(crate::k8s::types::Text::as_str)
                })
                .unwrap_or("main");
            *b.pod_roles
                .entry((role.to_string(), gpus.whole))
                .or_default() += 1;
            workload = Some(root);
        }
        pods.push(GpuPod {
            object: i,
            gpus,
            state,
            workload,
            holder: Holder::Pod,
            dra: held,
        });
    }

    // Shared claims hold their devices once, for all their consumers: bound once allocated,
    // pending while a running consumer waits for them.
    let gpu_pods: std::collections::HashSet<usize> = pods.iter().map(|p| p.object).collect();
    let mut counted = std::collections::HashSet::new();
    for (i, o) in objects.iter().enumerate() {
        let Body::Claim(c) = &o.body else { continue };
        if !is_shared_claim(o) {
            continue;
        }
        let (devices, allocated) = dra.claim(o, c).named(o, "the devices it holds")?;
        if devices.is_empty() {
            continue;
        }
        let users = consumers.get(&i).map(Vec::as_slice).unwrap_or_default();
        let state = if allocated {
            PodState::Bound
        } else if users.iter().any(|(_, s)| *s != PodState::Terminal) {
            PodState::Pending
        } else {
            continue;
        };
        let node = c.status.allocation.as_ref().and_then(|a| {
            a.node_selector
                .as_ref()
                .and_then(|s| s.single_node())
                .map(str::to_string)
                .or_else(|| {
                    a.devices.results.iter().find_map(|r| {
                        dra.slices
                            .get(&r.driver, &r.pool, &r.device)
                            .and_then(|d| d.node)
                            .map(str::to_string)
                    })
                })
        });
        let held = HeldDevices {
            from_claims: devices.gpus.whole,
            more: devices.more.whole,
            other: devices.other.clone(),
            unknown: devices.unknown.clone(),
            claims: vec![ClaimUse {
                how: ClaimHow::Shared,
                name: o.meta.name.clone(),
                allocated: Some(allocated),
                devices: devices.clone(),
            }],
        };
        let mut workload = None;
        if let Some(root) = roots.resolve(i)
            && let Some(Root { id, .. }) = roots.list.get(root)
        {
            let b = builders.entry(root).or_default();
            let named = format_args!("{id}");
            match state {
                PodState::Bound => b
                    .requested
                    .add(&devices.gpus)
                    .named(named, "the GPUs its claims hold")?,
                _ => b
                    .pending
                    .add(&devices.gpus)
                    .named(named, "the GPUs its claims wait for")?,
            }
            b.held(&held, state)
                .named(id, "the devices its claims hold")?;
            // Its consumers are its pods, unless they are GPU pods of their own.
            for (p, s) in users.iter().filter(|(p, _)| !gpu_pods.contains(p)) {
                if counted.insert(*p) {
                    match s {
                        PodState::Bound => b.pods.bound += 1,
                        PodState::Pending => b.pods.pending += 1,
                        PodState::Queued => b.pods.queued += 1,
                        PodState::Terminal => {}
                    }
                }
            }
            let mut names: BTreeSet<String> = b.dra.consumers.iter().cloned().collect();
            names.extend(users.iter().filter_map(|(p, _)| {
                objects
                    .get(*p)
                    .map(|u| format!("{}/{}", u.namespace(), u.meta.name))
            }));
            b.dra.consumers = names.into_iter().collect();
            workload = Some(root);
        }
        pods.push(GpuPod {
            object: i,
            gpus: devices.gpus,
            state,
            workload,
            holder: Holder::Claim { node },
            dra: Some(Box::new(held)),
        });
    }

    add_waiting(objects, &mut roots, &mut builders)?;

    // Root objects that declare GPUs but hold none: a graph scaled to zero, a Deployment whose pods
    // all wait, a CronJob between runs. Finished Jobs are history.
    for (i, o) in objects.iter().enumerate() {
        if matches!(o.body, Body::Pod(_)) || !o.meta.owner_references.is_empty() {
            continue;
        }
        let Some(shape) = declared_shape_with(o, &lookup, &dra)? else {
            continue;
        };
        if !shape.declares_gpus() || job_finished(o, job_pods.get(&i).copied()) {
            continue;
        }
        if let Some(root) = roots.resolve(i) {
            builders.entry(root).or_default();
        }
    }

    let mut list = Vec::with_capacity(builders.len());
    let mut index_of_root = HashMap::new();
    for (root_idx, b) in builders {
        let Some(root) = roots.list.get(root_idx) else {
            continue;
        };
        let present = root.object.and_then(|j| objects.get(j));
        let declared = match present {
            Some(o) => declared_shape_with(o, &lookup, &dra)?,
            None => None,
        };
        let (shape, from_spec) = match declared {
            Some(s) => (s, true),
            None => {
                let s = shape_from_pods(&b.pod_roles);
                s.total()
                    .named(&root.id, "the GPUs of its pods (Σ pods × GPUs)")?;
                (s, false)
            }
        };
        let Some(top) = objects.get(root.top) else {
            continue;
        };
        index_of_root.insert(root_idx, list.len());
        let (intent_annotations, intent_facts) = intent_of(present, &root.id.kind);
        list.push(Workload {
            intent_annotations,
            intent_facts,
            id: root.id.clone(),
            api_version: root.api_version.clone(),
            object_present: present.is_some(),
            labels: top.meta.labels.clone(),
            shape,
            shape_from_spec: from_spec,
            shape_guessed: from_spec && present.is_some_and(shape_is_guess),
            requested: b.requested,
            pending: b.pending,
            queued: if b.queued_pods.is_zero() {
                b.queued_workloads
            } else {
                b.queued_pods
            },
            pods: b.pods,
            dra: b.dra,
            source: present.map(|o| o.source.clone()),
            created: top
                .meta
                .creation_timestamp
                .as_deref()
                .and_then(|t| Timestamp::parse(t).ok()),
        });
    }
    // Pods point at list indexes, not root indexes.
    for p in &mut pods {
        p.workload = p.workload.and_then(|r| index_of_root.get(&r).copied());
    }
    // Every workload has its root now: a root first named later owns none.
    roots.freeze();
    Ok(Workloads {
        list,
        pods,
        roots,
        workload_of_root: index_of_root,
    })
}

/// Kueue Workloads waiting for quota: a suspended job has no pod, so its Workload's pod sets are
/// its demand, added to its root's builder.
fn add_waiting(
    objects: &[Object],
    roots: &mut Roots<'_>,
    builders: &mut BTreeMap<usize, Builder>,
) -> Result<(), Overflow> {
    for (i, sets) in queued::waiting_workloads(objects)? {
        if let Some(root) = roots.resolve(i)
            && let Some(Root { id, .. }) = roots.list.get(root)
        {
            let b = builders.entry(root).or_default();
            for ps in sets {
                let all = ps
                    .per_pod
                    .scaled(ps.count)
                    .named(id, "the GPUs its Kueue Workload waits for")?;
                b.queued_workloads
                    .add(&all)
                    .named(id, "the GPUs its Kueue Workloads wait for")?;
                if ps.per_pod.whole > 0 {
                    *b.pod_roles
                        .entry((ps.name.to_string(), ps.per_pod.whole))
                        .or_default() += ps.count;
                }
            }
        }
    }
    Ok(())
}

/// A Job is finished when a `Complete` or `Failed` condition is true, or when all its pods are done.
fn job_finished(o: &Object, has_running_pod: Option<bool>) -> bool {
    let Body::Job(j) = &o.body else { return false };
    let done = j
        .status
        .conditions
        .iter()
        .any(|c| matches!(c.type_.as_str(), "Complete" | "Failed") && c.status == "True");
    done || has_running_pod == Some(false)
}

fn shape_from_pods(roles: &BTreeMap<(String, u64), u64>) -> GpuShape {
    GpuShape::new(
        roles
            .iter()
            .map(|((name, gpus), pods)| Role {
                name: name.clone(),
                replicas: *pods,
                gpus_per_replica: *gpus,
                nodes_per_replica: 1,
                autoscaled: false,
                devices: DeviceDetail::default(),
            })
            .collect(),
    )
}

/// Whether an object kind is one gpuledger derives a shape for.
pub fn is_workload_kind(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Deployment
            | Kind::ReplicaSet
            | Kind::StatefulSet
            | Kind::Job
            | Kind::CronJob
            | Kind::Pod
            | Kind::LeaderWorkerSet
            | Kind::DynamoGraphDeployment
            | Kind::InferenceService
    )
}

/// The root object's intent annotations and the ecosystem's keys about it ([`crate::intent`]).
fn intent_of(
    present: Option<&Object>,
    kind: &str,
) -> (crate::k8s::types::Labels, crate::intent::Facts) {
    let Some(o) = present else {
        return (
            Default::default(),
            crate::intent::Facts::read(kind, &Default::default(), &Default::default(), None, None),
        );
    };
    let annotations = o
        .meta
        .annotations
        .iter()
        .filter(|(k, _)| k.starts_with(crate::intent::PREFIX))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let job = match &o.body {
        crate::k8s::object::Body::Job(j) => Some(&j.spec),
        crate::k8s::object::Body::CronJob(c) => Some(&c.job_template.spec),
        _ => None,
    };
    let facts = crate::intent::Facts::read(
        kind,
        &o.meta.annotations,
        &o.meta.labels,
        job.map(|j| &j.template.metadata.labels),
        job.and_then(|j| j.active_deadline_seconds),
    );
    (annotations, facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    #[test]
    fn a_cycle_through_a_label_fallback_ends() {
        // Deployment `a` (owner missing, labelled as part of graph `b`); graph `b` owned by `a`.
        let objs = read_str(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n  namespace: ns\n  uid: ua\n  labels: {nvidia.com/dynamo-graph-deployment-name: b}\n  ownerReferences: [{apiVersion: x/v1, kind: Gone, name: g, uid: ug}]\n---\napiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata:\n  name: b\n  namespace: ns\n  uid: ub\n  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: a, uid: ua}]\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: a, uid: ua}]\nspec:\n  nodeName: n\n  containers: [{resources: {limits: {nvidia.com/gpu: 1}}}]\n",
            "t",
        )
        .unwrap();
        let w = build(&objs).unwrap();
        assert_eq!(w.list.len(), 1);
        assert_eq!(w.list[0].requested.whole, 1);
    }

    const RCT: &str = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one, namespace: ml}\nspec:\n  spec:\n    devices:\n      requests:\n      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}\n---\n";

    fn pod(name: &str, node: Option<&str>, claims: &str) -> String {
        let node = node
            .map(|n| format!("  nodeName: {n}\n"))
            .unwrap_or_default();
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml, uid: {name}-uid}}\nspec:\n{node}  containers: [{{name: c}}]\n  resourceClaims: [{claims}]\n---\n"
        )
    }

    #[test]
    fn template_claims_are_the_pods_and_a_shared_claim_counts_once() {
        let shared = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, namespace: ml}\nspec:\n  devices:\n    requests:\n    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\nstatus:\n  allocation:\n    devices:\n      results:\n      - {request: gpu, driver: gpu.nvidia.com, pool: n1, device: gpu-0}\n      - {request: gpu, driver: gpu.nvidia.com, pool: n1, device: gpu-1}\n    nodeSelector:\n      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]\n---\n";
        let docs = format!(
            "{RCT}{shared}{}{}{}",
            pod(
                "a",
                Some("n1"),
                "{name: gpu, resourceClaimTemplateName: one}"
            ),
            pod("b", None, "{name: gpu, resourceClaimTemplateName: one}"),
            pod("c", Some("n1"), "{name: g, resourceClaimName: shared}")
                + &pod("d", Some("n1"), "{name: g, resourceClaimName: shared}"),
        );
        let objs = read_str(&docs, "t").unwrap();
        let w = build(&objs).unwrap();
        let row = |kind: &str, name: &str| {
            w.list
                .iter()
                .find(|x| x.id.kind == kind && x.id.name == name)
                .unwrap_or_else(|| panic!("{kind}/{name} in {:?}", w.list))
        };
        // Each pod's own claim: one GPU each, bound or pending with its pod.
        let a = row("Pod", "a");
        assert_eq!((a.requested.whole, a.dra.requested_from_claims), (1, 1));
        assert_eq!(a.dra.claims[0].how, ClaimHow::Template);
        assert_eq!(
            (
                row("Pod", "b").pending.whole,
                row("Pod", "b").dra.pending_from_claims
            ),
            (1, 1)
        );
        // The shared claim: two GPUs once, on its own row, with its consumers; they hold none.
        let s = row("ResourceClaim", "shared");
        assert_eq!((s.requested.whole, s.pods.bound), (2, 2));
        assert_eq!(s.dra.consumers, ["ml/c", "ml/d"]);
        assert!(w.list.iter().all(|x| x.id.name != "c" && x.id.name != "d"));
        let held = w.pods.iter().find(|p| p.holder != Holder::Pod).unwrap();
        assert_eq!(held.node(&objs), Some("n1"));
        let total: u64 = w
            .list
            .iter()
            .map(|x| x.requested.whole + x.pending.whole)
            .sum();
        assert_eq!(total, 4);
    }

    #[test]
    fn an_extended_resource_claim_is_the_limit_counted_once() {
        let docs = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml, uid: p-uid}\nspec:\n  nodeName: n1\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]\nstatus:\n  extendedResourceClaimStatus:\n    resourceClaimName: p-extended-resources-x\n    requestMappings: [{containerName: c, resourceName: nvidia.com/gpu, requestName: container-0-request-0}]\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: p-extended-resources-x\n  namespace: ml\n  annotations: {resource.kubernetes.io/extended-resource-claim: \"true\"}\n  ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: p-uid, controller: true}]\nspec:\n  devices:\n    requests:\n    - {name: container-0-request-0, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 2}}\nstatus:\n  allocation:\n    devices:\n      results:\n      - {request: container-0-request-0, driver: gpu.nvidia.com, pool: n1, device: gpu-0}\n      - {request: container-0-request-0, driver: gpu.nvidia.com, pool: n1, device: gpu-1}\n";
        let objs = read_str(docs, "t").unwrap();
        let w = build(&objs).unwrap();
        assert_eq!(w.list.len(), 1, "{:?}", w.list);
        let p = &w.list[0];
        assert_eq!((p.requested.whole, p.dra.requested_from_claims), (2, 2));
        assert_eq!(p.dra.claims[0].how, ClaimHow::ExtendedResource);
        assert_eq!(p.dra.claims[0].name, "p-extended-resources-x");
    }
}
