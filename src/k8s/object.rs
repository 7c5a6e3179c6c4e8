//! One Kubernetes object as gpuledger holds it: type, metadata, a lean typed body, and its source.
//!
//! Objects come from snapshot files today and from the API server and rendered manifests later; the
//! analyses see the same [`Object`] whatever the origin. The body is chosen by the object's kind while
//! parsing: a custom deserializer reads `apiVersion` and `kind` (which kubectl and almost every manifest
//! write first), then parses `spec` and `status` straight into the struct for that kind. Should `spec`
//! come before `kind`, it is buffered as a JSON value and parsed once the kind is known, so key order
//! changes speed, never results. A `List` contributes its items, recursively.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::types::*;

/// Where an object came from: a file (and line, when the format tells it) or a cluster resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub file: Arc<str>,
    pub line: Option<u32>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}", self.file),
            None => write!(f, "{}", self.file),
        }
    }
}

/// The kinds whose bodies gpuledger reads as typed structs. Everything else keeps its metadata
/// (enough to walk owner references through it, e.g. a DynamoComponentDeployment or a Grove
/// PodClique) and its spec as JSON, for the custom GPU kinds `workload::kinds` reads from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Pod,
    Node,
    Namespace,
    Deployment,
    ReplicaSet,
    StatefulSet,
    Job,
    CronJob,
    LeaderWorkerSet,
    DynamoGraphDeployment,
    InferenceService,
    Ingress,
    Service,
    Gateway,
    HttpRoute,
    HorizontalPodAutoscaler,
    /// Argo CD and Flux objects: their specs are kept as JSON and read by `desired::apps`.
    Application,
    ApplicationSet,
    FluxKustomization,
    HelmRelease,
    GitRepository,
    /// A Kueue ClusterQueue: its GPU quota is a pool for the planner (spec and status as JSON).
    ClusterQueue,
    /// A Kueue LocalQueue: the namespace's door to a ClusterQueue (spec and status as JSON).
    LocalQueue,
    /// A Kueue Workload: a job's claim on quota, admitted or waiting (spec and status as JSON).
    /// Its pod sets repeat the job's pods, so it is never a GPU workload of its own.
    KueueWorkload,
    List,
    Other,
}

impl Kind {
    pub fn of(api_version: &str, kind: &str) -> Kind {
        let group = group_of(api_version);
        match (group, kind) {
            ("", "Pod") => Kind::Pod,
            ("", "Node") => Kind::Node,
            ("", "Namespace") => Kind::Namespace,
            ("", "Service") => Kind::Service,
            ("apps" | "extensions", "Deployment") => Kind::Deployment,
            ("apps" | "extensions", "ReplicaSet") => Kind::ReplicaSet,
            ("apps", "StatefulSet") => Kind::StatefulSet,
            ("batch", "Job") => Kind::Job,
            ("batch", "CronJob") => Kind::CronJob,
            ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") => Kind::LeaderWorkerSet,
            ("nvidia.com", "DynamoGraphDeployment") => Kind::DynamoGraphDeployment,
            ("serving.kserve.io", "InferenceService") => Kind::InferenceService,
            ("networking.k8s.io" | "extensions", "Ingress") => Kind::Ingress,
            ("gateway.networking.k8s.io", "Gateway") => Kind::Gateway,
            ("gateway.networking.k8s.io", "HTTPRoute") => Kind::HttpRoute,
            ("autoscaling", "HorizontalPodAutoscaler") => Kind::HorizontalPodAutoscaler,
            ("argoproj.io", "Application") => Kind::Application,
            ("argoproj.io", "ApplicationSet") => Kind::ApplicationSet,
            ("kustomize.toolkit.fluxcd.io", "Kustomization") => Kind::FluxKustomization,
            ("helm.toolkit.fluxcd.io", "HelmRelease") => Kind::HelmRelease,
            ("source.toolkit.fluxcd.io", "GitRepository") => Kind::GitRepository,
            ("kueue.x-k8s.io", "ClusterQueue") => Kind::ClusterQueue,
            ("kueue.x-k8s.io", "LocalQueue") => Kind::LocalQueue,
            ("kueue.x-k8s.io", "Workload") => Kind::KueueWorkload,
            (_, k) if k == "List" || (k.ends_with("List") && group.is_empty()) => Kind::List,
            _ => Kind::Other,
        }
    }
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → ``).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

#[derive(Debug, Clone, Default)]
pub struct PodBody {
    pub spec: PodSpec,
    pub status: PodStatus,
}

#[derive(Debug, Clone, Default)]
pub struct NodeBody {
    pub spec: NodeSpec,
    pub status: NodeStatus,
}

#[derive(Debug, Clone, Default)]
pub struct JobBody {
    pub spec: JobSpec,
    pub status: JobStatus,
}

/// The typed body of an object, by kind.
#[derive(Debug, Clone)]
///
/// Pods and nodes, most of any fleet, are kept inline; the other kinds are boxed, so that an
/// object costs the size of a pod's body, not of the largest spec (a LeaderWorkerSet's two pod
/// templates).
pub enum Body {
    Pod(PodBody),
    Node(NodeBody),
    Replicated(Box<ReplicatedSpec>),
    Job(Box<JobBody>),
    CronJob(Box<CronJobSpec>),
    LeaderWorkerSet(Box<LwsSpec>),
    DynamoGraph(Box<DynamoGraphSpec>),
    InferenceService(Box<InferenceServiceSpec>),
    Ingress(Box<IngressSpec>),
    Service(Box<ServiceSpec>),
    HttpRoute(Box<HttpRouteSpec>),
    Hpa(Box<HpaSpec>),
    /// The spec of a GitOps object (Argo CD, Flux), as JSON: its shape varies by version and it may
    /// carry arbitrary Helm values.
    Raw(serde_json::Value),
    /// Spec and status as JSON (a Kueue ClusterQueue: its quota and its usage).
    WithStatus(serde_json::Value, serde_json::Value),
    /// Kinds read for their metadata only (Namespace, Gateway, lists).
    None,
}

impl Body {
    fn empty(kind: Kind) -> Body {
        match kind {
            Kind::Pod => Body::Pod(PodBody::default()),
            Kind::Node => Body::Node(NodeBody::default()),
            Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet => {
                Body::Replicated(Box::default())
            }
            Kind::Job => Body::Job(Box::default()),
            Kind::CronJob => Body::CronJob(Box::default()),
            Kind::LeaderWorkerSet => Body::LeaderWorkerSet(Box::default()),
            Kind::DynamoGraphDeployment => Body::DynamoGraph(Box::default()),
            Kind::InferenceService => Body::InferenceService(Box::default()),
            Kind::Ingress => Body::Ingress(Box::default()),
            Kind::Service => Body::Service(Box::default()),
            Kind::HttpRoute => Body::HttpRoute(Box::default()),
            Kind::HorizontalPodAutoscaler => Body::Hpa(Box::default()),
            Kind::Application
            | Kind::ApplicationSet
            | Kind::FluxKustomization
            | Kind::HelmRelease
            | Kind::GitRepository => Body::Raw(serde_json::Value::Null),
            // Any other kind keeps its spec as JSON: `workload::kinds` models the GPU kinds it
            // knows (Ray, Kubeflow, JobSet, LLMInferenceService) from it and looks for pod
            // templates requesting GPUs in the rest, so a GPU workload of an unknown kind is
            // never silent.
            Kind::Other => Body::Raw(serde_json::Value::Null),
            Kind::ClusterQueue | Kind::LocalQueue | Kind::KueueWorkload => {
                Body::WithStatus(serde_json::Value::Null, serde_json::Value::Null)
            }
            Kind::Namespace | Kind::Gateway | Kind::List => Body::None,
        }
    }

    fn set_spec<'de, D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
        fn opt<'de, T: Deserialize<'de> + Default, D: Deserializer<'de>>(
            d: D,
        ) -> Result<T, D::Error> {
            Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
        }
        match self {
            Body::Pod(b) => b.spec = opt(d)?,
            Body::Node(b) => b.spec = opt(d)?,
            Body::Replicated(s) => **s = opt(d)?,
            Body::Job(b) => b.spec = opt(d)?,
            Body::CronJob(s) => **s = opt(d)?,
            Body::LeaderWorkerSet(s) => **s = opt(d)?,
            Body::DynamoGraph(s) => **s = opt(d)?,
            Body::InferenceService(s) => **s = opt(d)?,
            Body::Ingress(s) => **s = opt(d)?,
            Body::Service(s) => **s = opt(d)?,
            Body::HttpRoute(s) => **s = opt(d)?,
            Body::Hpa(s) => **s = opt(d)?,
            Body::Raw(v) | Body::WithStatus(v, _) => *v = serde_json::Value::deserialize(d)?,
            Body::None => {
                IgnoredAny::deserialize(d)?;
            }
        }
        Ok(())
    }

    fn set_status<'de, D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
        match self {
            Body::Pod(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
            Body::Node(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
            Body::Job(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
            Body::WithStatus(_, v) => *v = serde_json::Value::deserialize(d)?,
            _ => {
                IgnoredAny::deserialize(d)?;
            }
        }
        Ok(())
    }
}

/// A Kubernetes object.
#[derive(Debug, Clone)]
pub struct Object {
    pub api_version: String,
    pub kind: String,
    pub meta: ObjectMeta,
    pub body: Body,
    pub source: Source,
}

impl Object {
    pub fn group(&self) -> &str {
        group_of(&self.api_version)
    }

    pub fn namespace(&self) -> &str {
        self.meta.namespace.as_deref().unwrap_or("")
    }

    pub fn typed_kind(&self) -> Kind {
        Kind::of(&self.api_version, &self.kind)
    }
}

impl fmt::Display for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        describe(
            f,
            &self.kind,
            self.meta.namespace.as_deref(),
            &self.meta.name,
        )
    }
}

fn describe(f: &mut impl fmt::Write, kind: &str, ns: Option<&str>, name: &str) -> fmt::Result {
    match ns {
        Some(ns) if !ns.is_empty() => write!(f, "{kind} {ns}/{name}"),
        _ => write!(f, "{kind} {name}"),
    }
}

thread_local! {
    static CURRENT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The object being parsed on this thread ("Pod ml/train-0"), for error messages raised deep inside
/// its spec (a fractional GPU quantity) where the parser knows the position but not the object.
pub fn current_object() -> Option<String> {
    CURRENT.with(|c| c.borrow().clone())
}

/// What the reader cut or dropped to keep an object within the API's limits (a label value over 63
/// characters, a name over 253): the object it belonged to, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trimmed {
    pub object: Option<String>,
    pub what: String,
}

/// How many [`Trimmed`] notes are kept per read; the rest are only counted, so the notes about a
/// hostile file stay small however many limits it exceeds.
const MAX_TRIMMED: usize = 20;

thread_local! {
    static TRIMMED: RefCell<(Vec<Trimmed>, usize)> = const { RefCell::new((Vec::new(), 0)) };
}

/// Notes that something of the object being read was cut to the API's limits.
pub(crate) fn note_trimmed(what: String) {
    let object = current_object();
    TRIMMED.with(|t| {
        let mut t = t.borrow_mut();
        t.1 = t.1.saturating_add(1);
        if t.0.len() < MAX_TRIMMED {
            t.0.push(Trimmed { object, what });
        }
    });
}

/// Names the object whose metadata was just read in the notes that do not name one yet.
fn name_trimmed(object: &str) {
    TRIMMED.with(|t| {
        for n in t.borrow_mut().0.iter_mut().filter(|n| n.object.is_none()) {
            n.object = Some(object.to_string());
        }
    });
}

/// Where this thread's notes stand, to go back to with [`reset_trimmed`] when a read is retried.
pub(crate) fn trimmed_mark() -> (usize, usize) {
    TRIMMED.with(|t| {
        let t = t.borrow();
        (t.0.len(), t.1)
    })
}

/// Forgets the notes taken since `mark` (their object is read again).
pub(crate) fn reset_trimmed(mark: (usize, usize)) {
    TRIMMED.with(|t| {
        let mut t = t.borrow_mut();
        t.0.truncate(mark.0);
        t.1 = mark.1;
    });
}

/// The notes of this thread's reads since the last call (at most [`MAX_TRIMMED`]), and how many
/// there were in all.
pub fn take_trimmed() -> (Vec<Trimmed>, usize) {
    TRIMMED.with(|t| std::mem::take(&mut *t.borrow_mut()))
}

struct ObjectScope(Option<String>);

impl ObjectScope {
    fn enter(kind: &str, meta: Option<&ObjectMeta>) -> ObjectScope {
        let mut label = String::new();
        match meta {
            Some(m) => {
                let _ = describe(&mut label, kind, m.namespace.as_deref(), &m.name);
            }
            None => label.push_str(kind),
        }
        ObjectScope(CURRENT.with(|c| c.replace(Some(label))))
    }
}

impl Drop for ObjectScope {
    fn drop(&mut self) {
        CURRENT.with(|c| *c.borrow_mut() = self.0.take());
    }
}

/// How the metadata of an object is read, which decides whether its line is known. YAML wraps it in
/// `serde_saphyr::Spanned` to learn the line; JSON reads it plainly.
pub trait MetaRepr<'de>: Deserialize<'de> {
    fn into_parts(self) -> (ObjectMeta, Option<u32>);
}

impl<'de> MetaRepr<'de> for ObjectMeta {
    fn into_parts(self) -> (ObjectMeta, Option<u32>) {
        (self, None)
    }
}

impl<'de> MetaRepr<'de> for serde_saphyr::Spanned<ObjectMeta> {
    fn into_parts(self) -> (ObjectMeta, Option<u32>) {
        let line = self.referenced.line();
        (
            self.value,
            (line > 0).then(|| u32::try_from(line).unwrap_or(u32::MAX)),
        )
    }
}

/// One document (an object, a `List`, or a sequence of objects) as the objects it holds. The file is
/// filled in by the reader afterwards; the line comes from the metadata representation `M`.
pub struct Document<M> {
    pub objects: Vec<Object>,
    /// `metadata.continue` of a paginated list: where the next page starts.
    pub continue_token: Option<String>,
    /// `metadata.annotations` of a top-level list: where and when `gpuledger snapshot` read it.
    pub list_annotations: super::types::Labels,
    marker: std::marker::PhantomData<M>,
}

impl<'de, M: MetaRepr<'de>> Deserialize<'de> for Document<M> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut objects = Vec::new();
        let mut continue_token = None;
        let mut list_annotations = super::types::Labels::default();
        d.deserialize_any(DocumentSeed::<M> {
            out: &mut objects,
            continue_token: Some((&mut continue_token, &mut list_annotations)),
            defaults: None,
            deferred: None,
            marker: std::marker::PhantomData,
        })?;
        Ok(Document {
            objects,
            continue_token,
            list_annotations,
            marker: std::marker::PhantomData,
        })
    }
}

struct DocumentSeed<'a, M> {
    out: &'a mut Vec<Object>,
    /// Where a list's `metadata.continue` and `metadata.annotations` go (top-level documents only).
    continue_token: Option<(&'a mut Option<String>, &'a mut super::types::Labels)>,
    /// apiVersion and kind for items that carry none: the API server leaves them out of the items
    /// of a typed list (`PodList`), because the list names them once.
    defaults: Option<(&'a str, &'a str)>,
    /// Items of a list whose `kind` comes after its `items` (kubectl and the emulator write keys in
    /// alphabetical order): an item that names no apiVersion or kind waits here, half read, until
    /// the list's kind names it; every other item is read as it streams by.
    deferred: Option<&'a mut Vec<Deferred>>,
    marker: std::marker::PhantomData<M>,
}

/// An item read before its list's kind: what it said, and where it goes among the list's objects.
pub(super) struct Deferred {
    at: usize,
    api_version: Option<String>,
    kind: Option<String>,
    meta: Option<(ObjectMeta, Option<u32>)>,
    early: Vec<(bool, serde_json::Value)>,
}

impl<M> DocumentSeed<'_, M> {
    fn reborrow(&mut self) -> DocumentSeed<'_, M> {
        DocumentSeed {
            out: self.out,
            continue_token: None,
            defaults: self.defaults,
            deferred: self.deferred.as_deref_mut(),
            marker: std::marker::PhantomData,
        }
    }
}

impl<'de, M: MetaRepr<'de>> DeserializeSeed<'de> for DocumentSeed<'_, M> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, M: MetaRepr<'de>> Visitor<'de> for DocumentSeed<'_, M> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object (a mapping with apiVersion and kind) or a List of them")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(()) // an empty document
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self.reborrow())?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Items of a typed list start from the list's apiVersion and kind (an item that names its
        // own wins), so their spec parses straight into the typed body.
        let mut api_version: Option<String> = self.defaults.map(|(v, _)| v.to_string());
        let mut kind: Option<String> = self.defaults.map(|(_, k)| k.to_string());
        let mut meta: Option<(ObjectMeta, Option<u32>)> = None;
        let mut body: Option<Body> = None;
        // spec/status met before kind: kept as JSON and parsed at the end.
        let mut early: Vec<(bool, serde_json::Value)> = Vec::new();
        let mut items_seen = false;
        let mut waiting: Vec<Deferred> = Vec::new();
        let out = self.out;

        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "apiVersion" => api_version = Some(map.next_value()?),
                "kind" => kind = Some(map.next_value()?),
                "metadata" => {
                    let m: Option<M> = map.next_value()?;
                    meta = Some(m.map(M::into_parts).unwrap_or_default());
                }
                "items" => {
                    items_seen = true;
                    // The list's kind may come later (kubectl writes keys in alphabetical order):
                    // the items stream by all the same, and only those that name no kind of their
                    // own wait for it, half read (never the whole list as a JSON tree).
                    let defaults = list_item_type(api_version.as_deref(), kind.as_deref());
                    let mut wait = kind.is_none().then(Vec::new);
                    map.next_value_seed(DocumentSeed::<M> {
                        out: &mut *out,
                        continue_token: None,
                        defaults,
                        deferred: wait.as_mut(),
                        marker: std::marker::PhantomData,
                    })?;
                    if let Some(w) = wait {
                        waiting.extend(w);
                    }
                }
                part @ ("spec" | "status") => {
                    let is_spec = part == "spec";
                    match (&api_version, &kind) {
                        (Some(v), Some(k)) => {
                            let b = body.get_or_insert_with(|| Body::empty(Kind::of(v, k)));
                            let _scope = ObjectScope::enter(k, meta.as_ref().map(|m| &m.0));
                            map.next_value_seed(PartSeed { body: b, is_spec })?;
                        }
                        _ => early.push((is_spec, map.next_value()?)),
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }

        if !waiting.is_empty() {
            let defaults = list_item_type(api_version.as_deref(), kind.as_deref());
            place_waiting(out, waiting, defaults).map_err(de::Error::custom)?;
        }
        let (api_version, kind) = match (api_version, kind) {
            (Some(v), Some(k)) => (v, k),
            // A bare `items:` list without a kind: still a list.
            _ if items_seen => return Ok(()),
            (api_version, kind) => {
                let Some(d) = self.deferred else {
                    return Err(de::Error::custom(
                        "document is not a Kubernetes object: it has no apiVersion and kind",
                    ));
                };
                // An item of a list whose kind is not known yet: it waits for it.
                d.push(Deferred {
                    at: out.len(),
                    api_version,
                    kind,
                    meta,
                    early,
                });
                return Ok(());
            }
        };
        let typed = Kind::of(&api_version, &kind);
        // `List`, `PodList`, and any custom resource's `…List` that carries items.
        if typed == Kind::List || (items_seen && kind.ends_with("List")) {
            if let Some((slot, annotations)) = self.continue_token {
                let meta = meta.map(|(m, _)| m).unwrap_or_default();
                *annotations = meta.annotations.to_labels();
                *slot = meta.list_continue.filter(|c| !c.is_empty());
            }
            return Ok(());
        }
        let object = finish(api_version, kind, meta, body, early).map_err(de::Error::custom)?;
        out.push(object);
        Ok(())
    }
}

/// One element of a list's `items` read on its own, as [`DocumentSeed`] reads it inside the list:
/// the objects it holds and, when its list's kind is not known yet, the item that waits for it.
/// The list's item type comes from [`set_item_type`] (a `Deserialize` has no seed): the chunked
/// JSON reader (`super::json`) parses items one by one from a window of the file.
pub(super) struct ListItem {
    pub objects: Vec<Object>,
    /// `at` counts from this item's first object.
    pub deferred: Vec<Deferred>,
}

thread_local! {
    /// The item type of the list being read (its apiVersion and kind), and whether an item that
    /// names none waits for the list's kind (which has not come yet).
    static ITEM_TYPE: RefCell<(Option<(String, String)>, bool)> = const { RefCell::new((None, false)) };
}

/// Sets the item type [`ListItem`]s are read with on this thread, from the list's apiVersion and
/// kind so far (as the `items` branch of [`DocumentSeed`] does).
pub(super) fn set_item_type(api_version: Option<&str>, kind: Option<&str>) {
    let defaults = list_item_type(api_version, kind).map(|(v, k)| (v.to_string(), k.to_string()));
    ITEM_TYPE.with(|t| *t.borrow_mut() = (defaults, kind.is_none()));
}

impl<'de> Deserialize<'de> for ListItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (defaults, defer) = ITEM_TYPE.with(|t| t.borrow().clone());
        let mut objects = Vec::new();
        let mut deferred = Vec::new();
        DocumentSeed::<ObjectMeta> {
            out: &mut objects,
            continue_token: None,
            defaults: defaults.as_ref().map(|(v, k)| (v.as_str(), k.as_str())),
            deferred: defer.then_some(&mut deferred),
            marker: std::marker::PhantomData,
        }
        .deserialize(d)?;
        Ok(ListItem { objects, deferred })
    }
}

impl Deferred {
    /// The same item, `by` objects further down the list.
    pub(super) fn shifted(mut self, by: usize) -> Deferred {
        self.at += by;
        self
    }
}

/// Completes the items that waited for their list's kind, now that the list is read.
pub(super) fn place_items(
    out: &mut Vec<Object>,
    waiting: Vec<Deferred>,
    api_version: Option<&str>,
    kind: Option<&str>,
) -> Result<(), String> {
    if waiting.is_empty() {
        return Ok(());
    }
    place_waiting(out, waiting, list_item_type(api_version, kind))
}

/// Items that waited for their list's kind, completed with the item type it names and put back in
/// their places among the list's objects.
fn place_waiting(
    out: &mut Vec<Object>,
    waiting: Vec<Deferred>,
    defaults: Option<(&str, &str)>,
) -> Result<(), String> {
    let mut done = Vec::with_capacity(waiting.len());
    for d in waiting {
        let api_version = d.api_version.or(defaults.map(|(v, _)| v.to_string()));
        let kind = d.kind.or(defaults.map(|(_, k)| k.to_string()));
        let (Some(api_version), Some(kind)) = (api_version, kind) else {
            return Err(
                "document is not a Kubernetes object: it has no apiVersion and kind".to_string(),
            );
        };
        done.push((d.at, finish(api_version, kind, d.meta, None, d.early)?));
    }
    // Each waits at the position the list had reached when it was read: merge in that order.
    let rest = std::mem::take(out);
    out.reserve(rest.len() + done.len());
    let mut done = done.into_iter().peekable();
    for (i, o) in rest.into_iter().enumerate() {
        while let Some((_, d)) = done.next_if(|(at, _)| *at <= i) {
            out.push(d);
        }
        out.push(o);
    }
    out.extend(done.map(|(_, d)| d));
    Ok(())
}

/// One object from what its document said: its name (or generated name), its typed body with the
/// parts read before its kind was known.
fn finish(
    api_version: String,
    kind: String,
    meta: Option<(ObjectMeta, Option<u32>)>,
    body: Option<Body>,
    early: Vec<(bool, serde_json::Value)>,
) -> Result<Object, String> {
    let typed = Kind::of(&api_version, &kind);
    {
        let (mut meta, line) = meta.unwrap_or_default();
        // The generated name serves only here: an object keeps its name.
        if let Some(g) = meta.generate_name.take().filter(|g| !g.is_empty())
            && meta.name.is_empty()
        {
            meta.name = g;
        }
        if meta.name.is_empty() {
            return Err(format!("{kind} object has no metadata.name"));
        }
        let mut body = body.unwrap_or_else(|| Body::empty(typed));
        if !early.is_empty() {
            let _scope = ObjectScope::enter(&kind, Some(&meta));
            for (is_spec, value) in early {
                set_part(&mut body, is_spec, value).map_err(|e| e.to_string())?;
            }
        }
        let object = Object {
            api_version,
            kind,
            meta,
            body,
            source: Source {
                file: Arc::from(""),
                line,
            },
        };
        name_trimmed(&object.to_string());
        Ok(object)
    }
}

/// The apiVersion and kind of the items of a typed list (`PodList` holds `Pod`s).
fn list_item_type<'a>(
    api_version: Option<&'a str>,
    kind: Option<&'a str>,
) -> Option<(&'a str, &'a str)> {
    let item = kind?.strip_suffix("List").filter(|k| !k.is_empty())?;
    Some((api_version?, item))
}

struct PartSeed<'a> {
    body: &'a mut Body,
    is_spec: bool,
}

impl<'de> DeserializeSeed<'de> for PartSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        set_part(self.body, self.is_spec, d)
    }
}

/// Reads `spec` or `status` into `body`, tracking the path into it: a value of the wrong type
/// (`replicas: three`) is reported with its object and field (see [`take_field_error`]), whatever
/// field it is, while the parser keeps the file position.
fn set_part<'de, D: Deserializer<'de>>(
    body: &mut Body,
    is_spec: bool,
    d: D,
) -> Result<(), D::Error> {
    let mut track = serde_path_to_error::Track::new();
    let tracked = serde_path_to_error::Deserializer::new(d, &mut track);
    let r = if is_spec {
        body.set_spec(tracked)
    } else {
        body.set_status(tracked)
    };
    if r.is_err() {
        let part = if is_spec { "spec" } else { "status" };
        let path = track.path().to_string();
        let field = if path == "." {
            part.to_string()
        } else {
            format!("{part}.{path}")
        };
        let object = current_object().unwrap_or_default();
        FIELD_ERROR.with(|f| *f.borrow_mut() = Some(FieldError { object, field }));
    }
    r
}

/// Where in an object the last value of the wrong type was met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// `Deployment team-a/web`
    pub object: String,
    /// `spec.replicas`, `spec.template.spec.containers[0].resources.limits`
    pub field: String,
}

thread_local! {
    static FIELD_ERROR: RefCell<Option<FieldError>> = const { RefCell::new(None) };
}

/// The object and field of the error the last read on this thread failed with, if a spec or status
/// field failed it (and forgets it).
pub fn take_field_error() -> Option<FieldError> {
    FIELD_ERROR.with(|f| f.borrow_mut().take())
}
