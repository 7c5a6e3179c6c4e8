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

use std::collections::{BTreeMap, HashMap};

use crate::k8s::gpus::Gpus;
use crate::k8s::object::{Body, Kind, Object, group_of};
use crate::k8s::types::OwnerRef;
use crate::util::date::Timestamp;
use crate::util::sum::{Named, Overflow};

use super::kinds::{declared_shape_with, shape_is_guess, template_role};
use super::labels;
use super::pods::pod_request;
use super::types::{GpuShape, PodCounts, Role, Workload, WorkloadId};

/// Where a pod stands for counting: bound to a node, waiting for one, or done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodState {
    Bound,
    Pending,
    Terminal,
}

impl PodState {
    pub fn of(obj: &Object) -> PodState {
        let Body::Pod(p) = &obj.body else {
            return PodState::Terminal;
        };
        match p.status.phase.as_deref() {
            Some("Succeeded" | "Failed") => PodState::Terminal,
            _ if p.spec.node_name.as_deref().is_some_and(|n| !n.is_empty()) => PodState::Bound,
            _ => PodState::Pending,
        }
    }
}

/// A pod that requests GPUs.
#[derive(Debug, Clone)]
pub struct GpuPod {
    /// Index into the object list.
    pub object: usize,
    pub gpus: Gpus,
    pub state: PodState,
    /// Index into [`Workloads::list`]; `None` for terminal pods.
    pub workload: Option<usize>,
}

/// The root of an ownership chain.
#[derive(Debug, Clone)]
pub struct Root {
    pub id: WorkloadId,
    pub api_version: Option<String>,
    /// The root object, when it is in the input.
    pub object: Option<usize>,
    /// The topmost object of the chain that is in the input (the root itself when present).
    pub top: usize,
}

/// Memoised root resolution over one object list.
pub struct Roots<'a> {
    objects: &'a [Object],
    by_uid: HashMap<&'a str, usize>,
    by_key: HashMap<(&'a str, &'a str, &'a str), usize>,
    /// Each object's root once resolved (an index into `list`).
    memo: Vec<Option<usize>>,
    pub list: Vec<Root>,
    by_id: HashMap<WorkloadId, usize>,
}

const MAX_DEPTH: usize = 32;

impl<'a> Roots<'a> {
    pub fn new(objects: &'a [Object]) -> Roots<'a> {
        let mut by_uid = HashMap::new();
        let mut by_key = HashMap::new();
        for (i, o) in objects.iter().enumerate() {
            // Pods own nothing; leaving them out keeps the indexes small.
            if matches!(o.body, Body::Pod(_)) {
                continue;
            }
            if let Some(uid) = o.meta.uid.as_deref().filter(|u| !u.is_empty()) {
                by_uid.insert(uid, i);
            }
            by_key.insert((o.namespace(), o.kind.as_str(), o.meta.name.as_str()), i);
        }
        Roots {
            objects,
            by_uid,
            by_key,
            memo: vec![None; objects.len()],
            list: Vec::new(),
            by_id: HashMap::new(),
        }
    }

    fn owner_ref(o: &Object) -> Option<&OwnerRef> {
        let refs = &o.meta.owner_references;
        refs.iter()
            .find(|r| r.controller == Some(true))
            .or_else(|| refs.first())
    }

    fn find(&self, ns: &str, kind: &str, name: &str) -> Option<usize> {
        self.by_key.get(&(ns, kind, name)).copied()
    }

    /// The owner `r` names, by uid first. A uid is followed only when the object it belongs to agrees
    /// with the reference in kind and name and sits in the dependent's namespace (or is
    /// cluster-scoped): a reference whose uid points elsewhere is treated like one whose uid is not in
    /// the input, so a pod cannot move its GPUs onto another workload by borrowing its uid.
    fn find_owner(&self, o: &Object, r: &OwnerRef) -> Option<usize> {
        let agrees = |x: &Object| {
            x.kind == r.kind
                && x.meta.name == r.name
                && (x.namespace().is_empty() || x.namespace() == o.namespace())
        };
        if let Some(&i) = self.by_uid.get(r.uid.as_str())
            && self.objects.get(i).is_some_and(agrees)
        {
            return Some(i);
        }
        // Owners are namespaced like their dependents, or cluster-scoped.
        self.find(o.namespace(), &r.kind, &r.name)
            .or_else(|| self.find("", &r.kind, &r.name))
    }

    fn memo(&self, i: usize) -> Option<usize> {
        self.memo.get(i).copied().flatten()
    }

    /// The root of object `i`, as an index into [`Roots::list`]; `None` only when `i` is not an
    /// index into the object list.
    pub fn resolve(&mut self, i: usize) -> Option<usize> {
        if let Some(root) = self.memo(i) {
            return Some(root);
        }
        let objects = self.objects;
        let mut o = objects.get(i)?;
        let mut chain = vec![i];
        let mut cur = i;
        let root = loop {
            let Some(r) = Self::owner_ref(o) else {
                break self.intern_object(cur, o);
            };
            // The owner, or — when it is missing — the object its well-known labels name.
            let next = match self.find_owner(o, r) {
                Some(j) => Ok(j),
                None => self.missing_owner(cur, o, r),
            };
            match next {
                Ok(j) => {
                    if let Some(root) = self.memo(j) {
                        break root;
                    }
                    match objects.get(j) {
                        Some(owner) if !chain.contains(&j) && chain.len() < MAX_DEPTH => {
                            chain.push(j);
                            cur = j;
                            o = owner;
                        }
                        // A cycle (through owners or labels) or an absurdly deep chain: stop
                        // where we are.
                        _ => break self.intern_object(cur, o),
                    }
                }
                Err(root) => break root,
            }
        };
        for c in chain {
            if let Some(m) = self.memo.get_mut(c) {
                *m = Some(root);
            }
        }
        Some(root)
    }

    fn intern(&mut self, root: Root) -> usize {
        if let Some(&k) = self.by_id.get(&root.id) {
            return k;
        }
        let k = self.list.len();
        self.by_id.insert(root.id.clone(), k);
        self.list.push(root);
        k
    }

    /// Object `i` (which is `o`) as its own root.
    fn intern_object(&mut self, i: usize, o: &Object) -> usize {
        self.intern(Root {
            id: WorkloadId {
                namespace: o.namespace().to_string(),
                group: o.group().to_string(),
                kind: o.kind.clone(),
                name: o.meta.name.clone(),
            },
            api_version: Some(o.api_version.clone()),
            object: Some(i),
            top: i,
        })
    }

    /// The chain broke at `from`, whose owner `r` is not in the input: `Ok(j)` when a well-known
    /// label names an object that is present (the walk goes on from there, in the caller's loop so
    /// that its cycle guard applies), else `Err(root)` with the inferred root interned.
    fn missing_owner(&mut self, from: usize, o: &Object, r: &OwnerRef) -> Result<usize, usize> {
        let l = &o.meta.labels;
        let (group, kind, name) = if let Some(g) = l.get(labels::DYNAMO_GRAPH) {
            ("nvidia.com", "DynamoGraphDeployment", g.as_str())
        } else if let Some(n) = l.get(labels::LWS_NAME) {
            ("leaderworkerset.x-k8s.io", "LeaderWorkerSet", n.as_str())
        } else if let Some(n) = l.get(labels::KSERVE_ISVC) {
            ("serving.kserve.io", "InferenceService", n.as_str())
        } else if let Some(dep) = deployment_of_replicaset(r, l.get(labels::POD_TEMPLATE_HASH)) {
            ("apps", "Deployment", dep)
        } else {
            (group_of(&r.api_version), r.kind.as_str(), r.name.as_str())
        };
        if let Some(j) = self.find(o.namespace(), kind, name).filter(|&j| j != from) {
            return Ok(j);
        }
        let api_version = (kind == r.kind).then(|| r.api_version.clone());
        Err(self.intern(Root {
            id: WorkloadId {
                namespace: o.namespace().to_string(),
                group: group.to_string(),
                kind: kind.to_string(),
                name: name.to_string(),
            },
            api_version,
            object: None,
            top: from,
        }))
    }
}

/// `llama-7d9f8b6c4` with pod-template-hash `7d9f8b6c4` was made by Deployment `llama`.
fn deployment_of_replicaset<'r>(
    r: &'r OwnerRef,
    hash: Option<&crate::k8s::types::Text>,
) -> Option<&'r str> {
    if r.kind != "ReplicaSet" {
        return None;
    }
    let hash = hash?;
    r.name
        .strip_suffix(hash.as_str())
        .and_then(|n| n.strip_suffix('-'))
        .filter(|n| !n.is_empty())
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
    pods: PodCounts,
    /// (role, GPUs per pod) → pods, for workloads whose root object is missing.
    pod_roles: BTreeMap<(String, u64), u64>,
}

/// Finds every live workload: the roots of non-terminal GPU pods, plus root objects that declare GPUs
/// and are not finished. Fails only when a workload's GPUs, summed over its pods, overflow.
pub fn build(objects: &[Object]) -> Result<Workloads<'_>, Overflow> {
    let runtimes = Runtimes::new(objects);
    let lookup = |kind: &str, ns: &str, name: &str| runtimes.find(kind, ns, name);
    let mut roots = Roots::new(objects);
    let mut builders: BTreeMap<usize, Builder> = BTreeMap::new();
    let mut pods = Vec::new();
    // Jobs that have pods, and whether any of them is still running.
    let mut job_pods: HashMap<usize, bool> = HashMap::new();

    for (i, o) in objects.iter().enumerate() {
        let Body::Pod(p) = &o.body else { continue };
        let state = PodState::of(o);
        let gpus = pod_request(&p.spec).named(o, "the GPUs its containers request")?;
        if let Some(job) = Roots::owner_ref(o)
            .filter(|r| r.kind == "Job")
            .and_then(|r| roots.find_owner(o, r))
        {
            *job_pods.entry(job).or_default() |= state != PodState::Terminal;
        }
        if gpus.is_zero() {
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
                _ => {
                    b.pending
                        .add(&gpus)
                        .named(id, "the GPUs its pending pods request")?;
                    b.pods.pending += 1;
                }
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
        });
    }

    // Root objects that declare GPUs but hold none: a graph scaled to zero, a Deployment whose pods
    // all wait, a CronJob between runs. Finished Jobs are history.
    for (i, o) in objects.iter().enumerate() {
        if matches!(o.body, Body::Pod(_)) || !o.meta.owner_references.is_empty() {
            continue;
        }
        let Some(shape) = declared_shape_with(o, &lookup)? else {
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
            Some(o) => declared_shape_with(o, &lookup)?,
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
            pods: b.pods,
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
    Ok(Workloads {
        list,
        pods,
        roots,
        workload_of_root: index_of_root,
    })
}

/// The Kubeflow Trainer runtimes of the input, which TrainJobs reference for their shape.
struct Runtimes<'a> {
    by_key: HashMap<(&'a str, &'a str, &'a str), &'a Object>,
}

impl<'a> Runtimes<'a> {
    fn new(objects: &'a [Object]) -> Runtimes<'a> {
        let by_key = objects
            .iter()
            .filter(|o| o.group() == "trainer.kubeflow.org")
            .filter(|o| {
                matches!(
                    o.kind.as_str(),
                    "TrainingRuntime" | "ClusterTrainingRuntime"
                )
            })
            .map(|o| {
                // A ClusterTrainingRuntime is cluster-scoped, but kustomize's `namespace:` sets one
                // on kinds it does not know: it is found by name alone.
                let ns = if o.kind == "ClusterTrainingRuntime" {
                    ""
                } else {
                    o.namespace()
                };
                ((o.kind.as_str(), ns, o.meta.name.as_str()), o)
            })
            .collect();
        Runtimes { by_key }
    }

    fn find(&self, kind: &str, ns: &str, name: &str) -> Option<&'a Object> {
        let ns = if kind == "ClusterTrainingRuntime" {
            ""
        } else {
            ns
        };
        self.by_key.get(&(kind, ns, name)).copied()
    }
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
}
