//! The fallback for kinds gpuledger does not model: any pod template or container list under
//! `spec` that requests GPUs, and any other GPU figure the spec names, is a role of an
//! *unmodelled GPU workload*, whose shape is a guess.
//!
//! The walk looks for `…template` objects whose `spec` has `containers` (a pod template) and for
//! objects with a `containers` list (a pod spec), and does not descend into what it found, so a
//! template's containers are not counted twice. A role is named by its path
//! (`spec.workers.template`, `spec.tasks[worker].template` for a list item named `worker`), its
//! replicas are a `replicas` integer beside the template (else 1) and its GPUs follow the pod rule
//! ([`PodRule`], DRA claims included).
//!
//! Outside pod templates, a GPU is named three ways, and each is a role too (its replicas a
//! `replicas` or `instances` integer in the same object, else 1): a GPU resource name as a key
//! (`nvidia.com/gpu: 2`, `nvidia.com/mig-1g.10gb: 1`), as a value beside a count (`gpu: {name:
//! nvidia.com/gpu, quantity: 1}`, the shape Spark's operator uses), or a GPU device class
//! (`deviceClassName: gpu.nvidia.com`, `count` beside it, else 1 as in a DRA request). A GPU named
//! without a count gpuledger can read is still a role, of unknown size: never silent. The walk is
//! bounded in depth and in the number of values it looks at, so a large or hostile spec costs a
//! fixed amount of work.

use serde_json::{Map, Value};

use crate::k8s::gpus::{GpuResource, Gpus};
use crate::k8s::quantity::Quantity;
use crate::util::sum::TooLarge;

use super::super::claims::{DeviceKind, Dra};
use super::super::pods::{PodGpus, PodRule, detail};
use super::super::types::{DeviceDetail, GpuShape, Role};
use super::crds::template;

/// Keys whose string value may name a GPU resource, with its count beside it.
const NAME_KEYS: [&str; 5] = ["name", "resource", "resourceName", "type", "gpuType"];
/// Keys that hold the count beside a GPU resource's name.
const COUNT_KEYS: [&str; 6] = ["quantity", "count", "amount", "value", "number", "gpus"];

/// How deep under `spec` a pod template is looked for.
const MAX_DEPTH: usize = 8;
/// How many JSON values one object's walk looks at, at most.
const MAX_VALUES: usize = 4096;

/// Kinds that hold pod templates for others to instantiate (a Kubeflow `TrainingRuntime`, a KServe
/// `ServingRuntime` or `LLMInferenceServiceConfig`, a `PodTemplate`), or schemas: their templates
/// run nothing by themselves. Matched by the end of the kind.
const TEMPLATE_HOLDERS: [&str; 6] = [
    "Runtime",
    "Template",
    "Config",
    "Configuration",
    "Class",
    "Profile",
];

/// Kinds that describe supply, limits or quota rather than demand: the GPUs they name are a
/// ceiling or a pool, never work. Matched by the end of the kind; each suffix with the kinds it
/// stands for (and their API):
/// - `Quota`, `LimitRange`, `Budget`: Kubernetes `ResourceQuota`, `LimitRange`,
///   `PodDisruptionBudget` (core/v1, policy/v1).
/// - `Queue`, `Flavor`, `Cohort`: Kueue `ClusterQueue`, `LocalQueue`, `ResourceFlavor`, `Cohort`
///   (kueue `apis/kueue/v1beta2`), KAI and Volcano `Queue` (`scheduling.run.ai/v2`,
///   `scheduling.volcano.sh/v1beta1`: its `capability`).
/// - `Pool`, `Provisioner`, `NodeClaim`: Karpenter `NodePool` (its `limits`), the older
///   `Provisioner`, and the nodes it asks for (`karpenter.sh/v1`).
/// - `Autoscaler`, `MachineSet`, `MachineDeployment`: OpenShift `ClusterAutoscaler`
///   (`resourceLimits.gpus[]` with `min` and `max`) and `MachineAutoscaler`
///   (`autoscaling.openshift.io/v1`, `v1beta1`), `MachineSet` (`machine.openshift.io/v1beta1`),
///   Cluster API `MachineDeployment` (`cluster.x-k8s.io/v1beta1`); the Pod autoscalers.
/// - `Policy`, `Rule`: the GPU Operator's `ClusterPolicy` (`nvidia.com/v1`), Node Feature
///   Discovery's `NodeFeatureRule` (`nfd.k8s-sigs.io/v1alpha1`).
/// - `Profile` (in [`TEMPLATE_HOLDERS`]): OpenShift AI `HardwareProfile`, `AcceleratorProfile`
///   (`infrastructure.opendatahub.io`, `dashboard.opendatahub.io`).
const SUPPLY: [&str; 14] = [
    "Quota",
    "LimitRange",
    "Budget",
    "Queue",
    "Flavor",
    "Cohort",
    "Pool",
    "Provisioner",
    "NodeClaim",
    "Autoscaler",
    "MachineSet",
    "MachineDeployment",
    "Policy",
    "Rule",
];

/// Whether a kind gpuledger does not model is no demand at all: it holds templates for others
/// ([`TEMPLATE_HOLDERS`]) or describes supply, limits or quota ([`SUPPLY`]). Its GPUs are never
/// guessed as a workload's.
pub(super) fn not_demand(kind: &str) -> bool {
    kind == "CustomResourceDefinition"
        || TEMPLATE_HOLDERS
            .iter()
            .chain(SUPPLY.iter())
            .any(|s| kind.ends_with(s))
}

/// The guessed shape of an unmodelled object's spec, or `None` when it names no GPU.
pub(super) fn guess(spec: &Value, rule: PodRule<'_, '_>) -> Result<Option<GpuShape>, TooLarge> {
    let mut walk = Walk {
        budget: MAX_VALUES,
        roles: Vec::new(),
        rule,
    };
    walk.visit(spec, "spec", 0, None)?;
    let shape = GpuShape::new(walk.roles);
    Ok(shape.declares_gpus().then_some(shape))
}

struct Walk<'r, 'a> {
    budget: usize,
    roles: Vec<Role>,
    rule: PodRule<'r, 'a>,
}

/// A count written as a number or a quantity string (`2`, `"2"`), when it is a whole number.
fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => Quantity::parse(s.trim()).ok()?.whole(),
        _ => None,
    }
}

/// The GPUs of `n` devices of `resource`: whole, or the detail of MIG and shared ones.
fn named(resource: &GpuResource, n: u64) -> PodGpus {
    let mut g = Gpus::default();
    g.set(resource, n);
    PodGpus {
        whole: g.whole,
        detail: detail(&g, &Default::default()),
    }
}

impl Walk<'_, '_> {
    /// `outer`: the `replicas` or `instances` of the object `v` is in, for a GPU named in `v`
    /// that has none of its own (Spark's `executor: {instances, gpu: {name, quantity}}`).
    fn visit(
        &mut self,
        v: &Value,
        path: &str,
        depth: usize,
        outer: Option<u64>,
    ) -> Result<(), TooLarge> {
        if depth > MAX_DEPTH || self.budget == 0 {
            return Ok(());
        }
        self.budget -= 1;
        match v {
            Value::Object(m) => self.visit_object(v, m, path, depth, outer),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if self.budget == 0 {
                        break;
                    }
                    // An item is named by its `name` (a Volcano task, a container group) when it
                    // has one, so the role reads `spec.tasks[worker].template`.
                    let label = item
                        .get("name")
                        .and_then(Value::as_str)
                        .filter(|n| !n.is_empty() && n.len() <= 63)
                        .map_or_else(|| i.to_string(), str::to_string);
                    self.visit(item, &format!("{path}[{label}]"), depth + 1, None)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn visit_object(
        &mut self,
        v: &Value,
        m: &Map<String, Value>,
        path: &str,
        depth: usize,
        outer: Option<u64>,
    ) -> Result<(), TooLarge> {
        let replicas = m.get("replicas").and_then(Value::as_u64).unwrap_or(1);
        let own = m
            .get("replicas")
            .or_else(|| m.get("instances"))
            .and_then(Value::as_u64);
        // A pod spec: its containers (and init containers) are the pod.
        if m.get("containers").is_some_and(Value::is_array) {
            if let Ok(spec) = crate::k8s::read::pod_spec(v) {
                let g = self.rule.gpus(&spec)?;
                self.push(path, replicas, g);
            }
            return Ok(());
        }
        self.named_here(m, path, own.or(outer).unwrap_or(1));
        for (k, child) in m {
            let child_path = format!("{path}.{k}");
            // `nvidia.com/gpu: 2` outside a container.
            if let Some(r) = GpuResource::classify(k) {
                self.counted(&child_path, own.unwrap_or(1), &r, count(child));
                continue;
            }
            let is_template = k.ends_with("template") || k.ends_with("Template");
            let pod = child
                .get("spec")
                .and_then(|s| s.get("containers"))
                .is_some_and(Value::is_array);
            if is_template && pod {
                if let Some(t) = template(Some(child)) {
                    // `replicas` beside the template (a Deployment-like spec), else one.
                    let g = self.rule.gpus(&t.spec)?;
                    self.push(&child_path, replicas, g);
                }
                continue;
            }
            self.visit(child, &child_path, depth + 1, own)?;
        }
        Ok(())
    }

    /// A GPU named by a value in `m`: a resource name (`name: nvidia.com/gpu`) with its count
    /// beside it, or a GPU device class (`deviceClassName: gpu.nvidia.com`, `count` else 1), for
    /// `replicas` replicas.
    fn named_here(&mut self, m: &Map<String, Value>, path: &str, replicas: u64) {
        let beside = || COUNT_KEYS.iter().find_map(|k| m.get(*k)).and_then(count);
        for key in NAME_KEYS {
            if let Some(r) = m
                .get(key)
                .and_then(Value::as_str)
                .and_then(GpuResource::classify)
            {
                self.counted(path, replicas, &r, beside());
                return;
            }
        }
        let Some(class) = m.get("deviceClassName").and_then(Value::as_str) else {
            return;
        };
        let r = match Dra::default().classify(class, &[]) {
            DeviceKind::Whole => GpuResource::Whole,
            DeviceKind::Mig(p) => GpuResource::Mig(p.unwrap_or_else(|| "unknown".into())),
            _ => return,
        };
        let n = match m.get("count") {
            Some(c) => count(c),
            None => Some(1),
        };
        self.counted(path, replicas, &r, n);
    }

    /// A role of `n` GPUs of `resource` per replica, or of a GPU count it could not read.
    fn counted(&mut self, path: &str, replicas: u64, resource: &GpuResource, n: Option<u64>) {
        let g = match n {
            Some(n) => named(resource, n),
            None => PodGpus {
                whole: 0,
                detail: DeviceDetail {
                    unknown: vec![format!(
                        "{path} names {resource} without a count gpuledger can read"
                    )],
                    ..DeviceDetail::default()
                },
            },
        };
        self.push(path, replicas, g);
    }

    fn push(&mut self, path: &str, replicas: u64, gpus: PodGpus) {
        self.roles.push(Role {
            name: path.to_string(),
            replicas,
            gpus_per_replica: gpus.whole,
            nodes_per_replica: 1,
            autoscaled: false,
            devices: gpus.detail,
        });
    }
}
