//! The fallback for kinds gpuledger does not model: any pod template or container list under
//! `spec` that requests GPUs is a role of an *unmodelled GPU workload*, whose shape is a guess.
//!
//! The walk looks for `…template` objects whose `spec` has `containers` (a pod template) and for
//! objects with a `containers` list (a pod spec), and does not descend into what it found, so a
//! template's containers are not counted twice. A role is named by its path
//! (`spec.workers.template`, `spec.tasks[worker].template` for a list item named `worker`), its replicas are a `replicas` integer beside the template (else 1) and
//! its GPUs follow the pod rule ([`pod_request`]). The walk is bounded in depth and in the number of
//! values it looks at, so a large or hostile spec costs a fixed amount of work.

use serde_json::{Map, Value};

use crate::util::sum::TooLarge;

use super::super::pods::pod_request;
use super::super::types::{GpuShape, Role};
use super::crds::template;

/// How deep under `spec` a pod template is looked for.
const MAX_DEPTH: usize = 8;
/// How many JSON values one object's walk looks at, at most.
const MAX_VALUES: usize = 4096;

/// Kinds that hold pod templates for others to instantiate (a Kubeflow `TrainingRuntime`, a KServe
/// `ServingRuntime` or `LLMInferenceServiceConfig`, a `PodTemplate`), or schemas: their templates
/// run nothing by themselves.
pub(super) fn holds_templates_only(kind: &str) -> bool {
    kind == "CustomResourceDefinition"
        || [
            "Runtime",
            "Template",
            "Config",
            "Configuration",
            "Class",
            "Policy",
            "Profile",
        ]
        .iter()
        .any(|s| kind.ends_with(s))
}

/// The guessed shape of an unmodelled object's spec, or `None` when no template in it requests GPUs.
pub(super) fn guess(spec: &Value) -> Result<Option<GpuShape>, TooLarge> {
    let mut walk = Walk {
        budget: MAX_VALUES,
        roles: Vec::new(),
    };
    walk.visit(spec, "spec", 0)?;
    let shape = GpuShape::new(walk.roles);
    Ok(shape.declares_gpus().then_some(shape))
}

struct Walk {
    budget: usize,
    roles: Vec<Role>,
}

impl Walk {
    fn visit(&mut self, v: &Value, path: &str, depth: usize) -> Result<(), TooLarge> {
        if depth > MAX_DEPTH || self.budget == 0 {
            return Ok(());
        }
        self.budget -= 1;
        match v {
            Value::Object(m) => self.visit_object(v, m, path, depth),
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
                    self.visit(item, &format!("{path}[{label}]"), depth + 1)?;
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
    ) -> Result<(), TooLarge> {
        let replicas = m.get("replicas").and_then(Value::as_u64).unwrap_or(1);
        // A pod spec: its containers (and init containers) are the pod.
        if m.get("containers").is_some_and(Value::is_array) {
            if let Ok(spec) = crate::k8s::read::pod_spec(v) {
                self.push(path, replicas, pod_request(&spec)?.whole);
            }
            return Ok(());
        }
        for (k, child) in m {
            let child_path = format!("{path}.{k}");
            let is_template = k.ends_with("template") || k.ends_with("Template");
            let pod = child
                .get("spec")
                .and_then(|s| s.get("containers"))
                .is_some_and(Value::is_array);
            if is_template && pod {
                if let Some(t) = template(Some(child)) {
                    // `replicas` beside the template (a Deployment-like spec), else one.
                    self.push(&child_path, replicas, pod_request(&t.spec)?.whole);
                }
                continue;
            }
            self.visit(child, &child_path, depth + 1)?;
        }
        Ok(())
    }

    fn push(&mut self, path: &str, replicas: u64, gpus: u64) {
        self.roles.push(Role {
            name: path.to_string(),
            replicas,
            gpus_per_replica: gpus,
            nodes_per_replica: 1,
            autoscaled: false,
        });
    }
}
