//! What every report shares: the schema it is written under, the kind of report it is, and the inputs
//! it could not read.
//!
//! A consumer tells reports apart by `kind` (`inventory`, `drift`, `check`, …) under one `schema`
//! (`gpuledger.report/v1`, only ever added to). A report read back (`github comment
//! --from-report`) must be of this schema and of the kind expected.
//!
//! Unknown is said one way in every section: the figure is `null`, and the object that holds it
//! has an `unknown` map from the figure's field name (or path, for a figure of a nested object
//! or of every row: `gpus.used`, `tenants.gpus_per_week`) to why. Analyses carry a figure that may
//! be unknown as a [`Known`], and write it into a report with [`Unknown::take`], so a figure can
//! only go missing with its reason beside it.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

pub const SCHEMA: &str = "gpuledger.report/v1";

/// What a report is: the command (or job) that made it. Written right after `schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The fleet: `gpuledger inventory` (and `serve`).
    Inventory,
    /// The fleet with drift against Git leading: `gpuledger drift`, the drift issue.
    Drift,
    /// A change, base against head: `gpuledger check`, the pull-request comment.
    Check,
    /// What Git declares: `gpuledger render`.
    Render,
    /// The stagger plan: `gpuledger plan`.
    Plan,
    /// Cost per verified outcome: `gpuledger cost`.
    Cost,
    /// Serving headroom: `gpuledger headroom`.
    Headroom,
    /// GPUs over a window: `gpuledger trend`.
    Trend,
    /// Marked facts of documents against the fleet: `gpuledger docs`.
    Docs,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Inventory => "inventory",
            Kind::Drift => "drift",
            Kind::Check => "check",
            Kind::Render => "render",
            Kind::Plan => "plan",
            Kind::Cost => "cost",
            Kind::Headroom => "headroom",
            Kind::Trend => "trend",
            Kind::Docs => "docs",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `&'static str` under another name: serde's derive takes a field written `&'static str` as
/// borrowed from the input (so the report could only be read from a `'static` buffer), even with
/// `deserialize_with`; through this alias it is read as [`this_schema`] says.
pub type SchemaName = &'static str;

/// Reads a report's `schema` back: only [`SCHEMA`], so an older or foreign document is refused by
/// name rather than half understood.
pub(super) fn this_schema<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    if s == SCHEMA {
        Ok(SCHEMA)
    } else {
        Err(serde::de::Error::custom(format!(
            "schema {s:?} is not {SCHEMA:?}"
        )))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct IncompleteInput {
    pub resource: String,
    pub reason: String,
}

/// Reads a check report's `kind` back: only `check` (a report written before `kind` existed has
/// none, and is a check report by its shape), so an inventory is never posted as a pull request's
/// check.
pub(super) fn check_kind<'de, D: Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
    match Kind::deserialize(d)? {
        Kind::Check => Ok(Kind::Check),
        other => Err(serde::de::Error::custom(format!(
            "a {other} report is not a check report"
        ))),
    }
}

/// [`Kind::Check`], for a check report read back without a `kind`.
pub(super) fn kind_check() -> Kind {
    Kind::Check
}

/// A figure that may be unknown: its value, or why it is not known.
#[derive(Debug, Clone, PartialEq)]
pub enum Known<T> {
    Value(T),
    Unknown(String),
}

impl<T> Known<T> {
    /// `Some` value, or `Unknown(why)`.
    pub fn from_option(v: Option<T>, why: impl FnOnce() -> String) -> Known<T> {
        match v {
            Some(v) => Known::Value(v),
            None => Known::Unknown(why()),
        }
    }

    pub fn value(&self) -> Option<&T> {
        match self {
            Known::Value(v) => Some(v),
            Known::Unknown(_) => None,
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Known<U> {
        match self {
            Known::Value(v) => Known::Value(f(v)),
            Known::Unknown(why) => Known::Unknown(why),
        }
    }
}

impl<T, E: std::fmt::Display> From<Result<T, E>> for Known<T> {
    fn from(r: Result<T, E>) -> Known<T> {
        match r {
            Ok(v) => Known::Value(v),
            Err(e) => Known::Unknown(e.to_string()),
        }
    }
}

/// Why figures of one object are `null`, by field name (or path): serialized as a plain map.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Unknown(BTreeMap<String, String>);

impl Unknown {
    /// The value of `figure` for its field, its reason under `field` when it is unknown.
    pub fn take<T>(&mut self, field: &str, figure: Known<T>) -> Option<T> {
        match figure {
            Known::Value(v) => Some(v),
            Known::Unknown(why) => {
                self.0.insert(field.to_string(), why);
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Notes why `field` is unknown (the field is `null`, or absent from every row).
    pub fn set(&mut self, field: &str, why: impl Into<String>) {
        self.0.insert(field.to_string(), why.into());
    }
}

impl std::ops::Deref for Unknown {
    type Target = BTreeMap<String, String>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Unknown {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<BTreeMap<String, String>> for Unknown {
    fn from(m: BTreeMap<String, String>) -> Unknown {
        Unknown(m)
    }
}

impl IntoIterator for Unknown {
    type Item = (String, String);
    type IntoIter = std::collections::btree_map::IntoIter<String, String>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<(String, String)> for Unknown {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(i: I) -> Unknown {
        Unknown(i.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Unknown {
    type Item = (&'a String, &'a String);
    type IntoIter = std::collections::btree_map::Iter<'a, String, String>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A figure of an optional column (one the user asks for with a flag): absent from the JSON when
/// not asked, `null` when asked and unknown (its reason in the `unknown` map of the object that
/// holds the rows), else the value.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Column<T> {
    #[default]
    NotAsked,
    Unknown,
    Value(T),
}

impl<T: Copy> Column<T> {
    /// Whether the column was asked for (serde skips it otherwise).
    pub fn not_asked(&self) -> bool {
        matches!(self, Column::NotAsked)
    }

    pub fn value(&self) -> Option<T> {
        match self {
            Column::Value(v) => Some(*v),
            _ => None,
        }
    }
}

impl<T: Serialize> Serialize for Column<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Column::Value(v) => s.serialize_some(v),
            Column::NotAsked | Column::Unknown => s.serialize_none(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Column<T> {
    /// A field that is present: `null` is unknown (a missing field is [`Column::NotAsked`], by
    /// `#[serde(default)]` on the field).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Column<T>, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            Some(v) => Column::Value(v),
            None => Column::Unknown,
        })
    }
}

/// A report as JSON, with unknown said one way: every figure a fleet report's `unknown` maps name
/// (the report's own, paths from its root such as `tenants.gpus_requested`; the fleet's, paths
/// from `fleet` such as `gpus.placeable`) is `null`, whatever the analysis held in its place. Every
/// writer of a report's JSON goes through here (the `--format json` output, the JSON report file,
/// the documents' facts).
pub fn to_json<T: Serialize>(report: &T) -> serde_json::Result<serde_json::Value> {
    let mut v = serde_json::to_value(report)?;
    if let serde_json::Value::Object(root) = &mut v {
        null_named(root);
        if let Some(serde_json::Value::Object(fleet)) = root.get_mut("fleet") {
            null_named(fleet);
        }
    }
    Ok(v)
}

/// Sets to `null` each path named in `map`'s `unknown` map.
fn null_named(map: &mut serde_json::Map<String, serde_json::Value>) {
    let paths: Vec<String> = match map.get("unknown") {
        Some(serde_json::Value::Object(u)) => u.keys().cloned().collect(),
        _ => return,
    };
    for p in paths {
        null_path(map, &p);
    }
}

/// `a.b.c` in `map`, through objects and into every element of a list on the way.
fn null_path(map: &mut serde_json::Map<String, serde_json::Value>, path: &str) {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let Some(child) = map.get_mut(head) else {
        return;
    };
    match (rest, child) {
        (None, child) => *child = serde_json::Value::Null,
        (Some(rest), serde_json::Value::Object(m)) => null_path(m, rest),
        (Some(rest), serde_json::Value::Array(items)) => {
            for item in items {
                if let serde_json::Value::Object(m) = item {
                    null_path(m, rest);
                }
            }
        }
        (Some(_), _) => {}
    }
}
