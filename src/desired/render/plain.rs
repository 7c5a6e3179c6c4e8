//! Plain manifests, and where every unit's objects land.
//!
//! A plain unit (an Argo CD directory source, a file or directory of YAML that is no kustomization
//! and no chart) is its files as `discover` parsed them, each object keeping its file and line; no
//! process runs. Every unit's objects, plain or rendered, are then placed in a namespace the way
//! `kubectl apply` places a manifest that names none.

use crate::desired::error::RenderError;
use crate::desired::{Parsed, Unit};
use crate::k8s::object::Object;

/// The objects of these files, in order; a file that does not parse fails the unit.
pub(super) fn plain(files: &[String], parsed: &Parsed) -> Result<Vec<Object>, RenderError> {
    let mut out = Vec::new();
    for f in files {
        match parsed.get(f) {
            Some(Ok(objs)) => out.extend(objs.iter().cloned()),
            Some(Err(e)) => return Err(e.clone().into()),
            None => {} // not a manifest (no apiVersion/kind anywhere in it)
        }
    }
    Ok(out)
}

/// Kinds that live outside namespaces: a default namespace is never given to them.
const CLUSTER_SCOPED: [&str; 20] = [
    "Namespace",
    "Node",
    "PersistentVolume",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "StorageClass",
    "IngressClass",
    "PriorityClass",
    "RuntimeClass",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "CSIDriver",
    "VolumeAttachment",
    "GatewayClass",
    "ClusterIssuer",
    "ClusterQueue",
    "ResourceFlavor",
    "ClusterPolicy",
];

/// Gives namespaced objects the unit's namespace where they set none (or always, for Flux
/// `targetNamespace`), else `default`, where `kubectl apply` would put them: a manifest without a
/// namespace is counted, attributed and matched where it lands, so writing `namespace: default`
/// out changes nothing.
pub(super) fn place(mut objs: Vec<Object>, unit: &Unit) -> Vec<Object> {
    // One string for every object placed, as a read shares its namespaces.
    let ns = crate::k8s::types::Text::from(unit.namespace.as_deref().unwrap_or("default"));
    let force = unit.force_namespace && unit.namespace.is_some();
    for o in &mut objs {
        if CLUSTER_SCOPED.contains(&o.kind.as_str()) {
            continue;
        }
        if force || o.meta.namespace.as_deref().is_none_or(str::is_empty) {
            o.meta.namespace = Some(ns.clone());
        }
    }
    objs
}

#[cfg(test)]
mod tests {
    use crate::k8s::object::{Body, Kind, Object, Source};
    use crate::k8s::read::read_str;
    use crate::workload::kinds::{declared_shape, shape_is_guess};

    /// A CRD whose schema carries, as an example default, a pod template asking for GPUs: the
    /// shape of a schema is never demand.
    const SCHEMA: &str = r#"{"group": "ml.example.com", "names": {"kind": "Trainer", "plural": "trainers"},
      "scope": "Namespaced", "versions": [{"name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
      "default": {"replicas": 4, "template": {"spec": {"containers": [{"name": "t", "image": "x",
      "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}}}}}}}]}"#;

    fn crd(spec_first: bool) -> String {
        let head = r#""apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
          "metadata": {"name": "trainers.ml.example.com", "labels": {"app": "ml"}}"#;
        let spec = format!(r#""spec": {SCHEMA}"#);
        if spec_first {
            format!("{{{spec}, {head}}}")
        } else {
            format!("{{{head}, {spec}}}")
        }
    }

    /// What rendering keeps of a CustomResourceDefinition, from plain YAML as from kustomize's and
    /// helm's output (all read by `read_str`), whatever its key order: its metadata, never its
    /// schema (often megabytes; a monorepo of many CRD bundles held them all at once).
    #[test]
    fn a_crd_keeps_its_metadata_and_not_its_schema() {
        for spec_first in [false, true] {
            let text = crd(spec_first);
            let as_yaml = serde_saphyr::to_string(
                &serde_json::from_str::<serde_json::Value>(&text).expect("json"),
            )
            .expect("yaml");
            for (doc, what) in [(text.as_str(), "json"), (as_yaml.as_str(), "yaml")] {
                let objs = read_str(doc, "crds.yaml").expect("parses");
                let [o] = objs.as_slice() else {
                    panic!("one object from {what}: {objs:?}")
                };
                assert_eq!(o.typed_kind(), Kind::CustomResourceDefinition, "{what}");
                assert_eq!(o.meta.name, "trainers.ml.example.com");
                assert_eq!(o.meta.labels.get("app").map(|t| t.as_str()), Some("ml"));
                assert!(
                    matches!(o.body, Body::None),
                    "{what}, spec first {spec_first}: the schema is dropped, got {:?}",
                    o.body
                );
            }
        }
    }

    /// What is dropped was never read: the same CRD with its schema kept as JSON (as every kind
    /// gpuledger does not model keeps its spec) declares no workload and is no guessed shape, so
    /// no report can tell the two apart.
    #[test]
    fn a_crds_schema_is_never_read_as_demand() {
        let objs = read_str(&crd(false), "crds.yaml").expect("parses");
        let lean = objs.first().expect("one object").clone();
        let kept = Object {
            body: Body::Raw(serde_json::from_str(SCHEMA).expect("schema")),
            source: Source {
                file: "crds.yaml".into(),
                line: None,
            },
            ..lean.clone()
        };
        for o in [&lean, &kept] {
            assert!(declared_shape(o).expect("no overflow").is_none());
            assert!(!shape_is_guess(o));
        }
        // The same pod template under a kind gpuledger does not model is read, and found.
        let other = Object {
            api_version: "ml.example.com/v1".into(),
            kind: "Trainer".into(),
            body: Body::Raw(
                serde_json::json!({"replicas": 4, "template": {"spec": {"containers": [
                {"name": "t", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}}),
            ),
            ..kept.clone()
        };
        assert!(shape_is_guess(&other));
        assert!(declared_shape(&other).expect("no overflow").is_some());
    }
}
