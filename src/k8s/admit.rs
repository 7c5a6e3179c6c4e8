//! What the reader does to each object it parsed before keeping it: cut it to the API's limits,
//! noting what it cut, and share its strings and label maps with the rest of the read.
//!
//! The API server refuses a label value longer than 63 characters, a label key whose name part is
//! longer than 63 or whose prefix is longer than 253, an object name longer than 253 and a namespace
//! longer than 63. A file can hold anything, and one huge label repeated into every row of a report
//! (a namespace label that names the tenant) once made a 1 MB snapshot need gigabytes. So the reader
//! applies the API's limits: a label or selector entry beyond them is dropped (it could never have
//! been on a live object, and a truncated value could merge two tenants), a name beyond them is
//! truncated (an object needs one), an annotation larger than the API's 256 KiB for all annotations
//! together is dropped; each is noted in the read's [`Session`] with the object it belonged to.
//!
//! Every field of the typed bodies ([`super::types`]) that holds a [`LabelMap`] or a [`Text`] is
//! admitted here: a new such field gets a line below, or it is neither cut nor shared.

use super::object::Body;
use super::session::Session;
use super::text::{LabelMap, Text};
use super::types::{
    Container, DynamoGraphSpec, InferenceServiceSpec, LwsSpec, ObjectMeta, PodSpec, PodStatus,
    PodTemplate, ServiceSpec,
};

/// Longest label value, and longest name part of a label key.
const MAX_LABEL_VALUE: usize = 63;
/// Longest DNS subdomain: object names, label key prefixes.
const MAX_NAME: usize = 253;
/// Longest DNS label: namespaces.
const MAX_NAMESPACE: usize = 63;
/// The API's limit on all annotations of an object together.
const MAX_ANNOTATIONS: usize = 256 * 1024;

/// The annotation that only costs memory: the last-applied copy of the whole object.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Cuts an object's metadata to the API's limits and shares its maps. Done as soon as the metadata
/// is read, so that the rest of the object (and its errors) sees the name the object keeps.
pub(super) fn meta(m: &mut ObjectMeta, s: &mut Session) {
    cap_name(&mut m.name, "name", MAX_NAME, s);
    if let Some(g) = &mut m.generate_name {
        cap_boxed(g, "name", MAX_NAME, s);
    }
    if let Some(ns) = &mut m.namespace {
        cap_text(ns, "namespace", MAX_NAMESPACE, s);
    }
    if let Some(uid) = &mut m.uid {
        cap_boxed(uid, "name", MAX_NAME, s);
    }
    labels(&mut m.labels, s);
    annotations(&mut m.annotations, s);
    for o in &mut m.owner_references {
        cap_text(&mut o.name, "name", MAX_NAME, s);
        s.share_text(&mut o.api_version);
        s.share_text(&mut o.kind);
        s.share_text(&mut o.uid);
    }
}

/// Cuts an object's typed body to the API's limits and shares its strings.
pub(super) fn body(b: &mut Body, s: &mut Session) {
    match b {
        Body::Pod(p) => {
            pod_spec(&mut p.spec, s);
            pod_status(&mut p.status, s);
        }
        Body::Replicated(r) => template(&mut r.template, s),
        Body::Job(j) => template(&mut j.spec.template, s),
        Body::CronJob(c) => template(&mut c.job_template.spec.template, s),
        Body::LeaderWorkerSet(l) => lws(l, s),
        Body::DynamoGraph(d) => dynamo(d, s),
        Body::InferenceService(i) => inference_service(i, s),
        Body::Service(v) => service(v, s),
        Body::KueueWorkload(w) => {
            for p in &mut w.spec.pod_sets {
                pod_spec(&mut p.template.spec, s);
            }
        }
        Body::Node(_)
        | Body::Ingress(_)
        | Body::HttpRoute(_)
        | Body::Hpa(_)
        | Body::Claim(_)
        | Body::ClaimTemplate(_)
        | Body::DeviceClass(_)
        | Body::Slice(_)
        | Body::PodGroup(_)
        | Body::Raw(_)
        | Body::WithStatus(..)
        | Body::None => {}
    }
}

pub(super) fn pod_spec(p: &mut PodSpec, s: &mut Session) {
    for c in p.containers.iter_mut().chain(&mut p.init_containers) {
        container(c, s);
    }
    labels(&mut p.node_selector, s);
    if let Some(n) = &mut p.node_name {
        s.share_text(n);
    }
}

/// A pod's status: its phase is shared.
pub(super) fn pod_status(p: &mut PodStatus, s: &mut Session) {
    if let Some(phase) = &mut p.phase {
        s.share_text(phase);
    }
}

fn container(c: &mut Container, s: &mut Session) {
    s.share_text(&mut c.name);
    if let Some(r) = &mut c.restart_policy {
        s.share_text(r);
    }
    for t in c.command.iter_mut().chain(&mut c.args) {
        s.share_text(t);
    }
}

pub(super) fn template(t: &mut PodTemplate, s: &mut Session) {
    labels(&mut t.metadata.labels, s);
    pod_spec(&mut t.spec, s);
}

fn lws(l: &mut LwsSpec, s: &mut Session) {
    let lwt = &mut l.leader_worker_template;
    if let Some(t) = &mut lwt.leader_template {
        template(t, s);
    }
    template(&mut lwt.worker_template, s);
}

fn dynamo(d: &mut DynamoGraphSpec, s: &mut Session) {
    for c in d.components.iter_mut().flatten() {
        for i in &mut c.pod_template.spec.init_containers {
            container(i, s);
        }
    }
}

fn inference_service(i: &mut InferenceServiceSpec, s: &mut Session) {
    for c in &mut i.predictor.containers {
        container(c, s);
    }
}

fn service(v: &mut ServiceSpec, s: &mut Session) {
    labels(&mut v.selector, s);
}

fn label_key_ok(k: &str) -> bool {
    match k.rsplit_once('/') {
        Some((prefix, name)) => prefix.len() <= MAX_NAME && name.len() <= MAX_LABEL_VALUE,
        None => k.len() <= MAX_LABEL_VALUE,
    }
}

/// At most 63 characters of `k`, for a note about it (the note must not grow with the input).
fn short(k: &str) -> String {
    match k.char_indices().nth(MAX_LABEL_VALUE) {
        Some((i, _)) => format!("{}…", k.get(..i).unwrap_or_default()),
        None => k.to_string(),
    }
}

/// A label map (labels, a node selector, a service selector) within the API's limits, shared.
fn labels(map: &mut LabelMap, s: &mut Session) {
    map.retain(|k, v| {
        if !label_key_ok(k) {
            s.note_trimmed(format!(
                "label key {:?} is {} characters, beyond the Kubernetes limit (63, with a prefix of up to 253); the label is ignored",
                short(k),
                k.chars().count()
            ));
            return false;
        }
        if v.len() > MAX_LABEL_VALUE {
            s.note_trimmed(format!(
                "label {} has a value of {} characters, more than the 63 Kubernetes allows; the label is ignored",
                short(k),
                v.chars().count()
            ));
            return false;
        }
        true
    });
    s.share_labels(map);
}

/// Annotations minus the ones that only cost memory, within the API's limit for all of them
/// together, shared.
fn annotations(map: &mut LabelMap, s: &mut Session) {
    map.remove(LAST_APPLIED);
    let size: usize = map
        .iter()
        .map(|(k, v)| k.len().saturating_add(v.len()))
        .sum();
    if size > MAX_ANNOTATIONS {
        s.note_trimmed(format!(
            "annotations take {size} bytes, more than the 256 KiB Kubernetes allows; they are ignored"
        ));
        *map = LabelMap::new();
    }
    s.share_labels(map);
}

/// [`cap_name`] for a boxed string (a uid, a generated name).
fn cap_boxed(name: &mut Box<str>, field: &str, max: usize, s: &mut Session) {
    if name.len() > max {
        let mut long = String::from(std::mem::take(name));
        cap_name(&mut long, field, max, s);
        *name = long.into_boxed_str();
    }
}

/// [`cap_name`] for a shared string, which it then shares.
fn cap_text(name: &mut Text, field: &str, max: usize, s: &mut Session) {
    if name.len() > max {
        let mut long = name.to_string();
        cap_name(&mut long, field, max, s);
        *name = Text::from(long);
    }
    s.share_text(name);
}

/// A name within `max` bytes, truncated on a character boundary (and noted) when longer.
fn cap_name(name: &mut String, field: &str, max: usize, s: &mut Session) {
    if name.len() > max {
        let mut end = max;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        s.note_trimmed(format!(
            "{field} {:?} is {} characters, more than the {max} Kubernetes allows; it is cut to {max}",
            short(name),
            name.chars().count()
        ));
        name.truncate(end);
    }
}
