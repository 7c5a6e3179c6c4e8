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
    let ns = unit.namespace.as_deref().unwrap_or("default");
    let force = unit.force_namespace && unit.namespace.is_some();
    for o in &mut objs {
        if CLUSTER_SCOPED.contains(&o.kind.as_str()) {
            continue;
        }
        if force || o.meta.namespace.as_deref().is_none_or(str::is_empty) {
            o.meta.namespace = Some(ns.to_string());
        }
    }
    objs
}
