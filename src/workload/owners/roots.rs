//! The owner walk: from any object to the root of its ownership chain, memoised, by UID then by
//! namespace + kind + name, with the fallbacks for owners missing from the input (well-known
//! labels, the owner reference itself, a ReplicaSet's Deployment from `pod-template-hash`).

use std::collections::HashMap;

use foldhash::fast::RandomState;

use crate::k8s::object::{Body, Object, group_of};
use crate::k8s::types::OwnerRef;

use super::super::labels;
use super::super::types::WorkloadId;

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
    by_uid: HashMap<&'a str, usize, RandomState>,
    by_key: HashMap<(&'a str, &'a str, &'a str), usize, RandomState>,
    /// Each object's root once resolved (an index into `list`).
    memo: Vec<Option<usize>>,
    pub list: Vec<Root>,
    /// Each root's index in `list` by its id's strings, borrowed from the objects: a root is
    /// looked up once per pod whose owner is missing (every pod of a ReplicaSet that was not read),
    /// and found without making its id.
    by_name: HashMap<Name<'a>, usize, RandomState>,
    /// Set once the workloads are built ([`Roots::freeze`]): a root not named by then is not made.
    frozen: bool,
}

/// The root of a chain whose root was first named after [`Roots::freeze`]: in no list.
const UNNAMED: usize = usize::MAX;

/// A root's namespace, group, kind and name, borrowed from the objects.
type Name<'a> = (&'a str, &'a str, &'a str, &'a str);

const MAX_DEPTH: usize = 32;

impl<'a> Roots<'a> {
    pub fn new(objects: &'a [Object]) -> Roots<'a> {
        let mut by_uid = HashMap::default();
        let mut by_key = HashMap::default();
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
            by_name: HashMap::default(),
            frozen: false,
        }
    }

    /// From now on a walk that ends at a root not yet named resolves to no root in
    /// [`Roots::list`] instead of naming it: once the workloads are built, such a root is no
    /// workload's, and the objects asked about afterwards (every Service, every admitted Kueue
    /// Workload whose job was not read) need not each make one.
    pub fn freeze(&mut self) {
        self.frozen = true;
    }

    pub(super) fn owner_ref(o: &Object) -> Option<&OwnerRef> {
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
    pub(super) fn find_owner(&self, o: &Object, r: &OwnerRef) -> Option<usize> {
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

    /// The root of object `i`, as an index into [`Roots::list`]; `None` when `i` is not an index
    /// into the object list, or when its root was first named after [`Roots::freeze`].
    pub fn resolve(&mut self, i: usize) -> Option<usize> {
        if let Some(root) = self.memo(i) {
            return (root != UNNAMED).then_some(root);
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
        (root != UNNAMED).then_some(root)
    }

    /// The root named `name` (namespace, group, kind, name), interned the first time with its
    /// apiVersion (made only then), object and topmost object: the first to name a root gives it
    /// those.
    fn intern(
        &mut self,
        name: Name<'a>,
        api_version: impl FnOnce() -> Option<String>,
        (object, top): (Option<usize>, usize),
    ) -> usize {
        if let Some(&k) = self.by_name.get(&name) {
            return k;
        }
        if self.frozen {
            return UNNAMED;
        }
        let (namespace, group, kind, id_name) = name;
        let k = self.list.len();
        self.list.push(Root {
            id: WorkloadId {
                namespace: namespace.to_string(),
                group: group.to_string(),
                kind: kind.to_string(),
                name: id_name.to_string(),
            },
            api_version: api_version(),
            object,
            top,
        });
        self.by_name.insert(name, k);
        k
    }

    /// Object `i` (which is `o`) as its own root.
    fn intern_object(&mut self, i: usize, o: &'a Object) -> usize {
        let name = (
            o.namespace(),
            o.group(),
            o.kind.as_str(),
            o.meta.name.as_str(),
        );
        self.intern(name, || Some(o.api_version.to_string()), (Some(i), i))
    }

    /// The chain broke at `from`, whose owner `r` is not in the input: `Ok(j)` when a well-known
    /// label names an object that is present (the walk goes on from there, in the caller's loop so
    /// that its cycle guard applies), else `Err(root)` with the inferred root interned.
    fn missing_owner(
        &mut self,
        from: usize,
        o: &'a Object,
        r: &'a OwnerRef,
    ) -> Result<usize, usize> {
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
        Err(self.intern(
            (o.namespace(), group, kind, name),
            || (kind == r.kind).then(|| r.api_version.to_string()),
            (None, from),
        ))
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
