//! One Kubernetes object as gpuledger holds it: type, metadata, a lean typed body, and its source.
//!
//! Objects come from snapshot files, the API server and rendered manifests; the analyses see the same
//! [`Object`] whatever the origin. The body is chosen by the object's kind while parsing
//! (`super::document` reads documents into objects): `Body::empty` makes the body of a kind, whose
//! `spec` and `status` are then parsed straight into it.

use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny};

use super::dra::{ClaimBody, ClaimTemplateSpec, DeviceClassSpec, SliceSpec};
use super::queue::{KueueWorkloadBody, PodGroupBody};
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
    /// Admission (`crate::queues`). A Kueue ClusterQueue: quota per flavor, and its usage. Queues,
    /// cohorts and flavors are few: spec and status are kept as JSON.
    ClusterQueue,
    /// A Kueue LocalQueue: the namespace's door to a ClusterQueue.
    LocalQueue,
    /// A Kueue Cohort (v1beta2): ClusterQueues that lend to each other, with quota of its own.
    Cohort,
    /// A Kueue ResourceFlavor: its node labels say which GPU model a flavor is.
    ResourceFlavor,
    /// A KAI Scheduler Queue (`scheduling.run.ai`): GPU quota, limit and parent queue.
    KaiQueue,
    /// A Kueue Workload: a job's claim on quota, admitted or waiting (a lean typed body: a fleet
    /// holds one per job). Its pod sets repeat the job's pods, so it is never a GPU workload of its
    /// own.
    KueueWorkload,
    /// A KAI PodGroup: a job's pods as KAI schedules them, from a queue (lean typed body).
    PodGroup,
    /// Dynamic Resource Allocation (`resource.k8s.io`, any served version): claims and their
    /// templates are GPU demand, device classes say what a claim asks for, and slices are the
    /// devices the drivers publish (supply).
    ResourceClaim,
    ResourceClaimTemplate,
    DeviceClass,
    ResourceSlice,
    /// A CustomResourceDefinition (`apiextensions.k8s.io`, any version): a schema, never demand,
    /// and nothing reads its spec, which is often megabytes of OpenAPI: it keeps its metadata only.
    CustomResourceDefinition,
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
            ("kueue.x-k8s.io", "Cohort") => Kind::Cohort,
            ("kueue.x-k8s.io", "ResourceFlavor") => Kind::ResourceFlavor,
            ("scheduling.run.ai", "Queue") => Kind::KaiQueue,
            ("scheduling.run.ai", "PodGroup") => Kind::PodGroup,
            (super::dra::GROUP, "ResourceClaim") => Kind::ResourceClaim,
            (super::dra::GROUP, "ResourceClaimTemplate") => Kind::ResourceClaimTemplate,
            (super::dra::GROUP, "DeviceClass") => Kind::DeviceClass,
            (super::dra::GROUP, "ResourceSlice") => Kind::ResourceSlice,
            ("apiextensions.k8s.io", "CustomResourceDefinition") => Kind::CustomResourceDefinition,
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
    Claim(Box<ClaimBody>),
    ClaimTemplate(Box<ClaimTemplateSpec>),
    DeviceClass(Box<DeviceClassSpec>),
    Slice(Box<SliceSpec>),
    KueueWorkload(Box<KueueWorkloadBody>),
    PodGroup(Box<PodGroupBody>),
    /// The spec of a GitOps object (Argo CD, Flux), as JSON: its shape varies by version and it may
    /// carry arbitrary Helm values.
    Raw(serde_json::Value),
    /// Spec and status as JSON (a Kueue ClusterQueue: its quota and its usage).
    WithStatus(serde_json::Value, serde_json::Value),
    /// Kinds read for their metadata only (Namespace, Gateway, CustomResourceDefinition, lists).
    None,
}

impl Body {
    pub(super) fn empty(kind: Kind) -> Body {
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
            Kind::ResourceClaim => Body::Claim(Box::default()),
            Kind::ResourceClaimTemplate => Body::ClaimTemplate(Box::default()),
            Kind::DeviceClass => Body::DeviceClass(Box::default()),
            Kind::ResourceSlice => Body::Slice(Box::default()),
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
            Kind::KueueWorkload => Body::KueueWorkload(Box::default()),
            Kind::PodGroup => Body::PodGroup(Box::default()),
            Kind::ClusterQueue
            | Kind::LocalQueue
            | Kind::Cohort
            | Kind::ResourceFlavor
            | Kind::KaiQueue => Body::WithStatus(serde_json::Value::Null, serde_json::Value::Null),
            Kind::Namespace | Kind::Gateway | Kind::CustomResourceDefinition | Kind::List => {
                Body::None
            }
        }
    }

    pub(super) fn set_spec<'de, D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
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
            Body::Claim(b) => b.spec = opt(d)?,
            Body::ClaimTemplate(s) => **s = opt(d)?,
            Body::DeviceClass(s) => **s = opt(d)?,
            Body::Slice(s) => **s = opt(d)?,
            Body::KueueWorkload(b) => b.spec = opt(d)?,
            Body::PodGroup(b) => b.spec = opt(d)?,
            Body::Raw(v) | Body::WithStatus(v, _) => *v = serde_json::Value::deserialize(d)?,
            Body::None => {
                IgnoredAny::deserialize(d)?;
            }
        }
        Ok(())
    }

    pub(super) fn set_status<'de, D: Deserializer<'de>>(&mut self, d: D) -> Result<(), D::Error> {
        match self {
            Body::Pod(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
            Body::Node(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
            Body::Job(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
            Body::Claim(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
            Body::KueueWorkload(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
            Body::PodGroup(b) => b.status = Option::deserialize(d)?.unwrap_or_default(),
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
    /// Shared by every object of a read that says it (`v1`, `Pod`), as labels are.
    pub api_version: Text,
    pub kind: Text,
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

    /// The pods this object makes, as its typed body says them: each pod template's labels and
    /// spec (a pod is its own template). Empty for kinds whose pods live in CRD fields (a Dynamo
    /// graph, an InferenceService) or that make none.
    pub fn pod_templates(&self) -> Vec<(&LabelMap, &PodSpec)> {
        fn t(t: &PodTemplate) -> (&LabelMap, &PodSpec) {
            (&t.metadata.labels, &t.spec)
        }
        match &self.body {
            Body::Pod(p) => vec![(&self.meta.labels, &p.spec)],
            Body::Replicated(s) => vec![t(&s.template)],
            Body::Job(j) => vec![t(&j.spec.template)],
            Body::CronJob(c) => vec![t(&c.job_template.spec.template)],
            Body::LeaderWorkerSet(l) => {
                let lwt = &l.leader_worker_template;
                lwt.leader_template
                    .iter()
                    .chain([&lwt.worker_template])
                    .map(t)
                    .collect()
            }
            _ => Vec::new(),
        }
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

pub(super) fn describe(
    f: &mut impl fmt::Write,
    kind: &str,
    ns: Option<&str>,
    name: &str,
) -> fmt::Result {
    match ns {
        Some(ns) if !ns.is_empty() => write!(f, "{kind} {ns}/{name}"),
        _ => write!(f, "{kind} {name}"),
    }
}
