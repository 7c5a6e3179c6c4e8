//! Lean typed views of the Kubernetes objects gpuledger reads.
//!
//! Each struct carries only the fields an analysis uses; serde skips everything else without building
//! it, so a 100,000-pod snapshot costs a fraction of its size in memory. Field names follow the API
//! (camelCase on the wire). Every field has a default, because snapshots and manifests omit defaults
//! freely; where the API's default is not the type's default (replicas: 1), the field is an `Option`
//! and the consumer applies the API default.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::gpus::{GpuCount, GpuList};
use super::object::note_trimmed;

/// A map of strings owned by whoever builds it (a report's labels, a config's keys); objects
/// keep theirs as a [`LabelMap`].
pub type Labels = BTreeMap<String, String>;

// ---------------------------------------------------------------------------------------------
// Shared strings and compact label maps
//
// A fleet repeats the same few label keys and values across every pod of a workload, and every
// workload of a tenant: in a 100,000-pod snapshot, labels and annotations held in
// `BTreeMap<String, String>`s were half the memory kept. Objects keep them as a sorted slice of
// shared strings ([`LabelMap`] of [`Text`]): each distinct key or value is stored once per read
// (see [`intern`]), and a map costs one allocation.

/// An immutable string shared by every object that says it (a label key or value).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        **self == *other.0
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        intern(s)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        intern(&s)
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        intern(s)
    }
}

impl From<Text> for Arc<str> {
    fn from(t: Text) -> Arc<str> {
        t.0
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.0.to_string()
    }
}

/// How many distinct strings the interner of a thread keeps before it starts again: a bound on
/// its own memory whatever the input (strings already handed out stay valid).
const MAX_INTERNED: usize = 1 << 20;

/// A label map's entries, shared by every object whose map is the same (the pods of one
/// ReplicaSet carry the same labels and annotations).
type Entries = Arc<[(Text, Text)]>;

thread_local! {
    static INTERNED: RefCell<HashSet<Arc<str>>> = RefCell::new(HashSet::new());
    /// Interned maps by a hash of their strings' addresses: the strings of a read are interned,
    /// so equal maps hold the very same strings (and a map of strings from before the table was
    /// last cleared is merely not shared).
    static MAPS: RefCell<(HashMap<u64, Vec<Entries>>, usize)> = RefCell::new((HashMap::new(), 0));
}

fn same_strings(a: &[(Text, Text)], b: &[(Text, Text)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| Arc::ptr_eq(&x.0.0, &y.0.0) && Arc::ptr_eq(&x.1.0, &y.1.0))
}

/// The shared copy of a map's entries (see [`MAPS`]).
fn intern_entries(v: Vec<(Text, Text)>) -> Entries {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (k, val) in &v {
        (Arc::as_ptr(&k.0) as *const u8 as usize).hash(&mut h);
        (Arc::as_ptr(&val.0) as *const u8 as usize).hash(&mut h);
    }
    let key = h.finish();
    MAPS.with(|m| {
        let (maps, count) = &mut *m.borrow_mut();
        if let Some(found) = maps
            .get(&key)
            .and_then(|c| c.iter().find(|e| same_strings(e, &v)))
        {
            return found.clone();
        }
        if *count >= MAX_INTERNED {
            maps.clear();
            *count = 0;
        }
        let e: Entries = Arc::from(v);
        maps.entry(key).or_default().push(e.clone());
        *count += 1;
        e
    })
}

/// The shared copy of `s`: the same allocation for every equal string this thread interned since
/// [`forget_interned`] (or since the table reached [`MAX_INTERNED`]).
pub fn intern(s: &str) -> Text {
    INTERNED.with(|t| {
        let mut t = t.borrow_mut();
        if let Some(a) = t.get(s) {
            return Text(a.clone());
        }
        if t.len() >= MAX_INTERNED {
            t.clear();
        }
        let a: Arc<str> = Arc::from(s);
        t.insert(a.clone());
        Text(a)
    })
}

/// Drops this thread's table of interned strings (once a read is over: the objects keep theirs).
pub fn forget_interned() {
    INTERNED.with(|t| *t.borrow_mut() = HashSet::new());
    MAPS.with(|m| *m.borrow_mut() = (HashMap::new(), 0));
}

/// Labels, annotations or a selector: entries sorted by key, each key once (the last written
/// wins, as in a map), in one allocation of shared strings shared by the objects whose maps are
/// equal; an empty map allocates nothing.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct LabelMap(Option<Entries>);

impl LabelMap {
    pub fn new() -> LabelMap {
        LabelMap::default()
    }

    fn entries(&self) -> &[(Text, Text)] {
        self.0.as_deref().unwrap_or_default()
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries()
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&Text> {
        self.find(key)
            .ok()
            .and_then(|i| self.entries().get(i))
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Text, &Text)> + ExactSizeIterator {
        self.entries().iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Text> + ExactSizeIterator {
        self.entries().iter().map(|(k, _)| k)
    }

    /// The map with its entries changed by `change` (a copy: the entries may be shared).
    fn edit<R>(&mut self, change: impl FnOnce(&mut Vec<(Text, Text)>) -> R) -> R {
        let mut v = self.entries().to_vec();
        let r = change(&mut v);
        self.0 = (!v.is_empty()).then(|| Arc::from(v));
        r
    }

    /// Sets `key` to `value`, returning the value it replaces.
    pub fn insert(&mut self, key: impl Into<Text>, value: impl Into<Text>) -> Option<Text> {
        let (key, value) = (key.into(), value.into());
        let at = self.find(&key);
        self.edit(|v| match at {
            Ok(i) => v.get_mut(i).map(|e| std::mem::replace(&mut e.1, value)),
            Err(i) => {
                v.insert(i, (key, value));
                None
            }
        })
    }

    /// Takes `key` out, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Text> {
        let i = self.find(key).ok()?;
        Some(self.edit(|v| v.remove(i).1))
    }

    /// Keeps the entries `keep` says yes to, asking once about each (`keep` may note what it
    /// drops).
    pub fn retain(&mut self, mut keep: impl FnMut(&Text, &Text) -> bool) {
        let Some(first) = self.entries().iter().position(|(k, v)| !keep(k, v)) else {
            return;
        };
        let mut at = 0;
        self.edit(|v| {
            v.retain(|(k, val)| {
                at += 1;
                match (at - 1).cmp(&first) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Equal => false,
                    std::cmp::Ordering::Greater => keep(k, val),
                }
            })
        });
    }

    /// The same entries as an owned map.
    pub fn to_labels(&self) -> Labels {
        self.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// From entries in any order; of a key written twice, the last wins.
    fn from_entries(mut v: Vec<(Text, Text)>) -> LabelMap {
        // A stable sort keeps equal keys in the order written: the last of each run wins.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Text, Text)> = Vec::with_capacity(v.len());
        for e in v {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => out.push(e),
            }
        }
        if out.is_empty() {
            return LabelMap(None);
        }
        LabelMap(Some(intern_entries(out)))
    }
}

impl fmt::Debug for LabelMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Into<Text>, V: Into<Text>> FromIterator<(K, V)> for LabelMap {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> LabelMap {
        LabelMap::from_entries(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl From<Labels> for LabelMap {
    fn from(l: Labels) -> LabelMap {
        l.into_iter().collect()
    }
}

impl From<&Labels> for LabelMap {
    fn from(l: &Labels) -> LabelMap {
        l.iter().collect()
    }
}

impl<'a> IntoIterator for &'a LabelMap {
    type Item = (&'a Text, &'a Text);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Text, Text)>,
        fn(&'a (Text, Text)) -> (&'a Text, &'a Text),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries().iter().map(|(k, v)| (k, v))
    }
}

/// A string read straight into the interner, with the same acceptance as `String` (a string, or
/// UTF-8 bytes).
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(intern(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Text, E> {
        match std::str::from_utf8(v) {
            Ok(s) => Ok(intern(s)),
            Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(v), &self)),
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        d.deserialize_string(TextVisitor)
    }
}

impl<'de> Deserialize<'de> for LabelMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LabelMap, D::Error> {
        struct MapVisitor;
        impl<'de> Visitor<'de> for MapVisitor {
            type Value = LabelMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LabelMap, A::Error> {
                let mut v = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some((k, val)) = map.next_entry::<Text, Text>()? {
                    v.push((k, val));
                }
                Ok(LabelMap::from_entries(v))
            }
        }
        d.deserialize_map(MapVisitor)
    }
}

// ---------------------------------------------------------------------------------------------
// The API's length limits, applied as objects are read
//
// The API server refuses a label value longer than 63 characters, a label key whose name part is
// longer than 63 or whose prefix is longer than 253, an object name longer than 253 and a namespace
// longer than 63. A file can hold anything, and one huge label repeated into every row of a report
// (a namespace label that names the tenant) once made a 1 MB snapshot need gigabytes. So the reader
// applies the API's limits: a label or selector entry beyond them is dropped (it could never have
// been on a live object, and a truncated value could merge two tenants), a name beyond them is
// truncated (an object needs one), an annotation larger than the API's 256 KiB for all annotations
// together is dropped; each is noted with the object it belonged to (see
// [`super::object::take_trimmed`]).

/// Longest label value, and longest name part of a label key.
pub const MAX_LABEL_VALUE: usize = 63;
/// Longest DNS subdomain: object names, label key prefixes.
pub const MAX_NAME: usize = 253;
/// Longest DNS label: namespaces.
pub const MAX_NAMESPACE: usize = 63;
/// The API's limit on all annotations of an object together.
pub const MAX_ANNOTATIONS: usize = 256 * 1024;

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

/// A label map (labels, a node selector, a service selector) within the API's limits.
fn capped_labels<'de, D: serde::Deserializer<'de>>(d: D) -> Result<LabelMap, D::Error> {
    let mut map = Option::<LabelMap>::deserialize(d)?.unwrap_or_default();
    map.retain(|k, v| {
        if !label_key_ok(k) {
            note_trimmed(format!(
                "label key {:?} is {} characters, beyond the Kubernetes limit (63, with a prefix of up to 253); the label is ignored",
                short(k),
                k.chars().count()
            ));
            return false;
        }
        if v.len() > MAX_LABEL_VALUE {
            note_trimmed(format!(
                "label {} has a value of {} characters, more than the 63 Kubernetes allows; the label is ignored",
                short(k),
                v.chars().count()
            ));
            return false;
        }
        true
    });
    Ok(map)
}

/// A name within `max` bytes, truncated on a character boundary (and noted) when longer.
fn capped_name(field: &str, mut name: String, max: usize) -> String {
    if name.len() > max {
        let mut end = max;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        note_trimmed(format!(
            "{field} {:?} is {} characters, more than the {max} Kubernetes allows; it is cut to {max}",
            short(&name),
            name.chars().count()
        ));
        name.truncate(end);
    }
    name
}

fn name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let n = Option::<String>::deserialize(d)?.unwrap_or_default();
    Ok(capped_name("name", n, MAX_NAME))
}

fn opt_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.map(|n| capped_name("name", n, MAX_NAME)))
}

fn namespace<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.map(|n| capped_name("namespace", n, MAX_NAMESPACE)))
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    #[serde(deserialize_with = "name")]
    pub name: String,
    pub uid: String,
    pub controller: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(deserialize_with = "name")]
    pub name: String,
    /// Objects created with a generated name (Argo CD and Helm hook Jobs) have only this in Git.
    /// The reader names such an object after it and then drops it: an object read keeps `None`.
    #[serde(deserialize_with = "opt_name")]
    pub generate_name: Option<String>,
    #[serde(deserialize_with = "namespace")]
    pub namespace: Option<String>,
    #[serde(deserialize_with = "opt_name")]
    pub uid: Option<String>,
    #[serde(deserialize_with = "capped_labels")]
    pub labels: LabelMap,
    #[serde(deserialize_with = "annotations")]
    pub annotations: LabelMap,
    pub owner_references: Vec<OwnerRef>,
    /// When the object was created (RFC 3339), as the API server wrote it; `None` in Git.
    pub creation_timestamp: Option<String>,
    /// `metadata.continue` of a list page (ListMeta shares the `metadata` key with ObjectMeta).
    #[serde(rename = "continue")]
    pub list_continue: Option<String>,
}

/// Annotations minus the ones that only cost memory (the last-applied copy of the whole object),
/// and within the API's limit for all of them together.
fn annotations<'de, D: serde::Deserializer<'de>>(d: D) -> Result<LabelMap, D::Error> {
    let mut map = Option::<LabelMap>::deserialize(d)?.unwrap_or_default();
    map.remove("kubectl.kubernetes.io/last-applied-configuration");
    let size: usize = map
        .iter()
        .map(|(k, v)| k.len().saturating_add(v.len()))
        .sum();
    if size > MAX_ANNOTATIONS {
        note_trimmed(format!(
            "annotations take {size} bytes, more than the 256 KiB Kubernetes allows; they are ignored"
        ));
        map = LabelMap::new();
    }
    Ok(map)
}

// ---------------------------------------------------------------------------------------------
// Pods and pod templates

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Resources {
    pub requests: GpuList,
    pub limits: GpuList,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Container {
    pub name: String,
    pub resources: Resources,
    /// `Always` on an init container marks a restartable sidecar.
    pub restart_policy: Option<String>,
    /// The serving engine's flags (`--max-num-seqs 256`) live here: serving headroom compares them
    /// with what a load test recorded. Shared: every pod of a workload repeats them.
    pub command: Vec<Text>,
    pub args: Vec<Text>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodSpec {
    pub node_name: Option<String>,
    pub containers: Vec<Container>,
    pub init_containers: Vec<Container>,
    pub overhead: GpuList,
    #[serde(deserialize_with = "capped_labels")]
    pub node_selector: LabelMap,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TemplateMeta {
    #[serde(deserialize_with = "capped_labels")]
    pub labels: LabelMap,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PodTemplate {
    pub metadata: TemplateMeta,
    pub spec: PodSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PodStatus {
    pub phase: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
}

// ---------------------------------------------------------------------------------------------
// Nodes

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Taint {
    pub key: String,
    pub effect: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeSpec {
    pub unschedulable: bool,
    pub taints: Vec<Taint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeStatus {
    pub capacity: GpuList,
    pub allocatable: GpuList,
    pub conditions: Vec<Condition>,
}

// ---------------------------------------------------------------------------------------------
// Workload controllers

/// Deployment, ReplicaSet and StatefulSet share the fields gpuledger reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ReplicatedSpec {
    pub replicas: Option<u64>,
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct JobSpec {
    pub parallelism: Option<u64>,
    pub template: PodTemplate,
    /// Kills the Job after this long: a runtime above it is a contradiction ([`crate::intent`]).
    #[serde(rename = "activeDeadlineSeconds")]
    pub active_deadline_seconds: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct JobStatus {
    pub conditions: Vec<Condition>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct JobTemplate {
    pub spec: JobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CronJobSpec {
    pub job_template: JobTemplate,
    pub suspend: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LeaderWorkerTemplate {
    pub size: Option<u64>,
    pub leader_template: Option<PodTemplate>,
    pub worker_template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LwsSpec {
    pub replicas: Option<u64>,
    pub leader_worker_template: LeaderWorkerTemplate,
}

// ---------------------------------------------------------------------------------------------
// NVIDIA Dynamo

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Multinode {
    pub node_count: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DynamoResourceItem {
    pub gpu: Option<GpuCount>,
    pub gpu_type: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoResources {
    pub requests: DynamoResourceItem,
    pub limits: DynamoResourceItem,
}

/// A container in a Dynamo spec: the role heuristic needs its command line.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoContainer {
    pub name: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
    pub resources: Resources,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExtraPodSpec {
    pub main_container: Option<DynamoContainer>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Enabled {
    pub enabled: bool,
}

/// One entry of `spec.services` in `nvidia.com/v1alpha1`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DynamoService {
    pub component_type: Option<String>,
    pub sub_component_type: Option<String>,
    pub replicas: Option<u64>,
    pub multinode: Option<Multinode>,
    pub resources: DynamoResources,
    pub extra_pod_spec: ExtraPodSpec,
    pub scaling_adapter: Option<Enabled>,
}

impl DynamoService {
    pub fn scaled_by_adapter(&self) -> bool {
        self.scaling_adapter.as_ref().is_some_and(|a| a.enabled)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoPodTemplateSpec {
    pub containers: Vec<DynamoContainer>,
    #[serde(rename = "initContainers")]
    pub init_containers: Vec<Container>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoPodTemplate {
    pub spec: DynamoPodTemplateSpec,
}

/// One entry of `spec.components` in `nvidia.com/v1beta1`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DynamoComponent {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub replicas: Option<u64>,
    pub multinode: Option<Multinode>,
    pub pod_template: DynamoPodTemplate,
    pub scaling_adapter: Option<Enabled>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoGraphSpec {
    pub services: Option<BTreeMap<String, DynamoService>>,
    pub components: Option<Vec<DynamoComponent>>,
}

// ---------------------------------------------------------------------------------------------
// KServe

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkerSpec {
    pub pipeline_parallel_size: Option<u64>,
    pub tensor_parallel_size: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PredictorModel {
    pub resources: Resources,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Predictor {
    pub min_replicas: Option<u64>,
    pub model: Option<PredictorModel>,
    // The framework forms of upstream's PredictorSpec (kserve/kserve
    // pkg/apis/serving/v1beta1/predictor.go): each embeds a container, so its resources sit
    // right under the framework key, like `model`'s. Boxed: they are rarely set and keep `Body` small.
    pub tensorflow: Option<Box<PredictorModel>>,
    pub pytorch: Option<Box<PredictorModel>>,
    pub sklearn: Option<Box<PredictorModel>>,
    pub xgboost: Option<Box<PredictorModel>>,
    pub onnx: Option<Box<PredictorModel>>,
    pub triton: Option<Box<PredictorModel>>,
    pub huggingface: Option<Box<PredictorModel>>,
    pub lightgbm: Option<Box<PredictorModel>>,
    pub paddle: Option<Box<PredictorModel>>,
    pub pmml: Option<Box<PredictorModel>>,
    pub containers: Vec<Container>,
    pub worker_spec: Option<WorkerSpec>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct InferenceServiceSpec {
    pub predictor: Predictor,
}

// ---------------------------------------------------------------------------------------------
// Exposure: Ingress, Service, Gateway API

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ServiceBackend {
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IngressBackend {
    pub service: Option<ServiceBackend>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IngressPath {
    pub path: Option<String>,
    pub backend: IngressBackend,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IngressHttp {
    pub paths: Vec<IngressPath>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IngressRule {
    pub host: Option<String>,
    pub http: Option<IngressHttp>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct IngressSpec {
    pub ingress_class_name: Option<String>,
    pub rules: Vec<IngressRule>,
    pub default_backend: Option<IngressBackend>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ServiceSpec {
    #[serde(rename = "type")]
    pub type_: Option<String>,
    #[serde(deserialize_with = "capped_labels")]
    pub selector: LabelMap,
    pub load_balancer_class: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RouteRef {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PathMatch {
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub value: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HttpRouteMatch {
    pub path: Option<PathMatch>,
    pub method: Option<String>,
    pub headers: Vec<serde::de::IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HttpRouteRule {
    pub matches: Vec<HttpRouteMatch>,
    pub backend_refs: Vec<RouteRef>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HttpRouteSpec {
    pub parent_refs: Vec<RouteRef>,
    pub hostnames: Vec<String>,
    pub rules: Vec<HttpRouteRule>,
}

// ---------------------------------------------------------------------------------------------
// Autoscaling

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ScaleTargetRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HpaSpec {
    pub scale_target_ref: ScaleTargetRef,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(m: &LabelMap) -> Vec<(&str, &str)> {
        m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    #[test]
    fn label_maps_keep_the_last_of_a_key_and_share_equal_maps() {
        let a: LabelMap = serde_json::from_str(r#"{"b":"1","a":"2","b":"3"}"#).unwrap();
        assert_eq!(pairs(&a), [("a", "2"), ("b", "3")]);
        let b: LabelMap = serde_json::from_str(r#"{"a":"2","b":"3"}"#).unwrap();
        assert_eq!(a, b);
        let (Some(ea), Some(eb)) = (&a.0, &b.0) else {
            panic!("non-empty maps hold entries");
        };
        assert!(Arc::ptr_eq(ea, eb), "equal maps share one allocation");
        assert_eq!(a.get("a").map(Text::as_str), Some("2"));
        assert!(a.get("c").is_none() && !a.contains_key("c"));

        // Changing a copy leaves the shared entries alone.
        let mut c = a.clone();
        assert_eq!(c.remove("a").as_deref(), Some("2"));
        assert_eq!(c.insert("z", "9"), None);
        assert_eq!(c.insert("z", "10").as_deref(), Some("9"));
        assert_eq!(pairs(&c), [("b", "3"), ("z", "10")]);
        assert_eq!(pairs(&a), [("a", "2"), ("b", "3")]);
        c.retain(|k, _| k != "b");
        assert_eq!(pairs(&c), [("z", "10")]);

        let empty: LabelMap = serde_json::from_str("{}").unwrap();
        assert!(empty.0.is_none() && empty.is_empty());
        assert_eq!(a.to_labels().get("b").map(String::as_str), Some("3"));
    }

    #[test]
    fn interned_strings_are_one_allocation() {
        let (x, y) = (intern("team"), intern(&String::from("team")));
        assert!(Arc::ptr_eq(&x.0, &y.0));
        assert_eq!(x, "team");
        assert_eq!(format!("{x} {x:?}"), "team \"team\"");
    }
}
