//! Rules of `.gpuledger.yaml` that pick workloads by a `match` ([`MatchSpec`], globs compiled when
//! the file is read): drift accepted for a while (`accepted_drift:`), and intent for workloads
//! whose annotations the team does not control (`intent:`), its values kept as the text an
//! annotation would hold.

use serde::{Deserialize, Serialize};

use crate::util::date::Date;
use crate::util::glob::Glob;

/// An accepted-drift rule: while it has not expired, matching drift is reported as accepted, not
/// as drift. An expired rule hides nothing and is itself reported.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptRule {
    #[serde(rename = "match")]
    pub matches: MatchSpec,
    pub reason: String,
    #[serde(default)]
    pub owner: Option<String>,
    /// The last day the rule applies (`YYYY-MM-DD`, inclusive).
    #[serde(default)]
    pub expires: Option<Date>,
}

/// Which workloads a rule covers; each field is a glob (`*`, `?`), compiled when the config is
/// read; absent means any.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchSpec {
    pub namespace: Option<Glob>,
    pub kind: Option<Glob>,
    pub name: Option<Glob>,
}

impl MatchSpec {
    pub fn matches(&self, namespace: &str, kind: &str, name: &str) -> bool {
        let ok = |pat: &Option<Glob>, v: &str| pat.as_ref().is_none_or(|p| p.is_match(v));
        ok(&self.namespace, namespace) && ok(&self.kind, kind) && ok(&self.name, name)
    }
}

/// An `intent:` rule: a `match` and the intent keys as the annotations write them, without the
/// `gpuledger.io/` prefix (`deadline`, `earliest-start`, `runtime`, `interruptible`, …). Values are
/// checked where they apply, with the rule named (`intent[0].runtime`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IntentRule {
    #[serde(rename = "match")]
    pub matches: MatchSpec,
    #[serde(default)]
    pub deadline: Option<Scalar>,
    #[serde(default, rename = "earliest-start")]
    pub earliest_start: Option<Scalar>,
    #[serde(default)]
    pub runtime: Option<Scalar>,
    #[serde(default)]
    pub interruptible: Option<Scalar>,
    #[serde(default, rename = "quality-threshold")]
    pub quality_threshold: Option<Scalar>,
    #[serde(default, rename = "latency-objective")]
    pub latency_objective: Option<Scalar>,
    #[serde(default)]
    pub outcome: Option<Scalar>,
    #[serde(default, rename = "load-test")]
    pub load_test: Option<Scalar>,
    #[serde(default, rename = "outcomes-metric")]
    pub outcomes_metric: Option<Scalar>,
}

/// A YAML scalar kept as the text an annotation would hold (`true`, `0.98`, `1h`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Scalar(pub String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Ok(Scalar(s)),
            v @ (serde_json::Value::Bool(_) | serde_json::Value::Number(_)) => {
                Ok(Scalar(v.to_string()))
            }
            _ => Err(serde::de::Error::custom(
                "expected a single value (text, number or true/false)",
            )),
        }
    }
}

impl IntentRule {
    /// The rule's values by key, as an annotation would carry them.
    pub fn values(&self) -> std::collections::BTreeMap<String, String> {
        [
            ("deadline", &self.deadline),
            ("earliest-start", &self.earliest_start),
            ("runtime", &self.runtime),
            ("interruptible", &self.interruptible),
            ("quality-threshold", &self.quality_threshold),
            ("latency-objective", &self.latency_objective),
            ("outcome", &self.outcome),
            ("load-test", &self.load_test),
            ("outcomes-metric", &self.outcomes_metric),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k.to_string(), v.0.clone())))
        .collect()
    }
}
