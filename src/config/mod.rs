//! `.gpuledger.yaml`: the few facts about a fleet that cannot be read from the cluster.
//!
//! Which labels name a tenant or a product line, which GPU taint keys are tolerated by GPU pods
//! (so they do not make a node unplaceable), and which ingress classes and gateways face the
//! internet. Every section is optional and defaults to the conventions in the README. Unknown keys are
//! an error that names them, with file and line: a typo must never silently change the counts.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, InputError};
use crate::util::date::Date;
use crate::util::glob::Glob;

pub mod review;

/// The default name, looked up in the current directory when `--config` is not given.
pub const DEFAULT_FILE: &str = ".gpuledger.yaml";

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub tenancy: Tenancy,
    pub nodes: Nodes,
    pub exposure: Exposure,
    pub render: RenderConfig,
    /// Drift that is known and accepted for a while.
    pub accepted_drift: Vec<AcceptRule>,
    pub metrics: MetricsConfig,
    /// GPU limits the pre-merge check holds a change to.
    pub limits: Limits,
    /// When a snapshot is too old to be trusted without a warning.
    pub snapshot: SnapshotConfig,
    /// The clusters the repository drives, by name: which roots or Argo CD destinations are theirs,
    /// and the live state each is compared with.
    pub clusters: std::collections::BTreeMap<String, ClusterConfig>,
    /// Intent for workloads whose annotations the team does not control (a chart's): the first
    /// rule that matches fills the keys the workload's own `gpuledger.io/*` annotations leave unset.
    pub intent: Vec<IntentRule>,
    /// How cost is assigned and outcomes are judged (`gpuledger cost`, `inventory --opencost`).
    pub cost: CostConfig,
    /// How serving headroom is judged: the error limit of a load-test run, what counts as near
    /// capacity, and which workloads' load tests may be scaled by their live replicas.
    pub headroom: HeadroomConfig,
}

/// `cost:`: the rules for idle, shared and outside costs, and the sample a point estimate needs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CostConfig {
    /// Namespaces whose cost serves everyone (`kube-system`, `dynamo-system`): spread over the
    /// other workloads and namespaces in proportion to their GPU-hours.
    pub shared_namespaces: Vec<String>,
    /// OpenCost's idle cost: `spread` over the allocations in proportion to their cost of each
    /// resource (GPU idle by GPU cost, CPU by CPU, RAM by RAM: OpenCost's own `shareIdle`
    /// weighting), or kept `separate` as its own line.
    pub idle: IdleRule,
    /// Below this many reviewed results a cost per outcome is given as its interval only.
    pub min_sample: u64,
    /// Costs OpenCost does not see (a hosted model API, a labelling vendor), per hour, each
    /// assigned to one workload or one tenant and counted there once.
    pub external: Vec<ExternalCost>,
}

impl Default for CostConfig {
    fn default() -> Self {
        CostConfig {
            shared_namespaces: Vec::new(),
            idle: IdleRule::Spread,
            min_sample: 30,
            external: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdleRule {
    Spread,
    Separate,
}

/// A cost outside OpenCost: `name`, `per_hour`, and `workload` (`namespace/Kind/name`) or
/// `tenant`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalCost {
    pub name: String,
    pub per_hour: f64,
    #[serde(default)]
    pub workload: Option<String>,
    #[serde(default)]
    pub tenant: Option<String>,
}

/// `headroom:`. A load test's capacity is never scaled unless a `scale` rule says so.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct HeadroomConfig {
    /// A run counts only when at most this share of its requests failed (0–1).
    pub error_limit: f64,
    /// Headroom below this share of the tested capacity is "near capacity" (0–1).
    pub near_capacity: f64,
    /// Workloads whose tested capacity scales with their replicas: the first matching rule wins.
    pub scale: Vec<ScaleRule>,
}

impl Default for HeadroomConfig {
    fn default() -> Self {
        HeadroomConfig {
            error_limit: 0.01,
            near_capacity: 0.2,
            scale: Vec::new(),
        }
    }
}

/// `headroom.scale[]`: `scale: per-replica` lets the capacity a load test measured at N replicas be
/// taken as N-th per replica and multiplied by the live replicas. The report says when it did.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleRule {
    #[serde(rename = "match")]
    pub matches: MatchSpec,
    pub scale: Scale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    PerReplica,
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

/// One cluster of `clusters:`. Without an entry, a Flux root under `clusters/<name>/` belongs to
/// `<name>`, and an Argo CD Application to its `destination.name` (else `in-cluster` for
/// `https://kubernetes.default.svc`, else the server URL).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterConfig {
    /// Flux: the directory (e.g. `clusters/production`) whose root apps are this cluster's.
    pub path: Option<String>,
    /// Argo CD: a `destination.server` URL or `destination.name` that is this cluster.
    pub destinations: Vec<String>,
    /// The kube context the live state is read from when `--cluster` picks this cluster.
    pub context: Option<String>,
    /// Or the snapshot file it is compared with (relative to the working directory).
    pub snapshot: Option<std::path::PathBuf>,
}

/// `snapshot:`: how old the live state may be before a report flags it as stale.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SnapshotConfig {
    /// `24h`, `1h30m`, `2d`: past this age at report time, the live state is stale.
    pub stale_after: Age,
}

impl Default for SnapshotConfig {
    fn default() -> Self {
        SnapshotConfig {
            stale_after: Age(24 * 3600),
        }
    }
}

/// A length of time in whole seconds, written `2d`, `24h`, `1h30m`, `90m` or `45s` (units in
/// decreasing order, each at most once), and printed back in the same form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Age(pub u64);

impl Age {
    pub fn parse(s: &str) -> Result<Age, String> {
        let bad = || format!("{s:?} is not a duration (expected e.g. 24h, 1h30m, 2d, 90m)");
        let mut total: u64 = 0;
        let mut digits = String::new();
        let mut last_unit = u64::MAX;
        for c in s.trim().chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            let unit = match c {
                'd' => 86_400,
                'h' => 3_600,
                'm' => 60,
                's' => 1,
                _ => return Err(bad()),
            };
            // `30m1h` or `1h1h` is a typo, not a sum.
            if digits.is_empty() || unit >= last_unit {
                return Err(bad());
            }
            last_unit = unit;
            let n: u64 = digits.parse().map_err(|_| bad())?;
            digits.clear();
            total = n
                .checked_mul(unit)
                .and_then(|v| total.checked_add(v))
                .ok_or_else(bad)?;
        }
        if !digits.is_empty() || last_unit == u64::MAX || total == 0 {
            return Err(bad());
        }
        Ok(Age(total))
    }
}

impl std::fmt::Display for Age {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut rest = self.0;
        let mut any = false;
        // A day or a day and a half reads better in hours (`24h`, `36h`); whole days past that.
        let days = if rest >= 2 * 86_400 && rest.is_multiple_of(86_400) {
            86_400
        } else {
            u64::MAX
        };
        for (unit, name) in [(days, 'd'), (3_600, 'h'), (60, 'm'), (1, 's')] {
            if rest >= unit {
                write!(f, "{}{name}", rest / unit)?;
                rest %= unit;
                any = true;
            }
        }
        if !any {
            f.write_str("0s")?;
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Age {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Age, D::Error> {
        let s = String::deserialize(d)?;
        Age::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Age {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Tenant → the most GPUs its desired workloads may declare.
    pub tenants: std::collections::BTreeMap<String, u64>,
}

/// How GPU activity is judged.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// A GPU is busy when its average engine activity over the window is above this (0–1).
    pub busy_threshold: f64,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            busy_threshold: 0.05,
        }
    }
}

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

/// How the GitOps repository is rendered.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenderConfig {
    /// Render exactly these paths (kustomize roots, chart roots, directories or files) instead of
    /// discovering apps and roots.
    pub roots: Vec<String>,
    /// Paths or globs never rendered (e.g. `examples/**`).
    pub exclude: Vec<String>,
    /// URLs that name this repository in Argo CD `repoURL`s and Flux GitRepositories, besides its
    /// git remotes.
    pub repo_urls: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(from = "TenancyFile")]
pub struct Tenancy {
    pub tenant: Resolution,
    pub product_line: Resolution,
    /// Who to call, per tenant: `chat: "@team-chat"`. Wins over the namespaces' keys.
    pub contacts: std::collections::BTreeMap<String, String>,
    /// The namespace annotations or labels that name a tenant's contact, first match wins
    /// (annotation before label for each key).
    pub contact_keys: Vec<String>,
    /// At or above this utilisation (requested / placeable) the headline names the largest
    /// tenants and who to call.
    pub contacts_above: f64,
}

/// `tenancy.contact_keys` when not given: the project's own key, then the usual conventions.
pub const DEFAULT_CONTACT_KEYS: [&str; 3] = ["gpuledger.io/contact", "owner", "team"];
/// `tenancy.contacts_above` when not given.
pub const DEFAULT_CONTACTS_ABOVE: f64 = 0.9;

/// `tenancy:` as written: every field optional, so a partial section keeps each default it does not
/// override (giving `workload_labels` must not drop the namespace label lookup).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TenancyFile {
    tenant: ResolutionFile,
    product_line: ResolutionFile,
    contacts: std::collections::BTreeMap<String, String>,
    contact_keys: Option<Vec<String>>,
    contacts_above: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ResolutionFile {
    workload_labels: Option<Vec<String>>,
    namespace_labels: Option<Vec<String>>,
    fallback: Option<Fallback>,
}

impl ResolutionFile {
    fn over(self, d: Resolution) -> Resolution {
        Resolution {
            workload_labels: self.workload_labels.unwrap_or(d.workload_labels),
            namespace_labels: self.namespace_labels.unwrap_or(d.namespace_labels),
            fallback: self.fallback.or(d.fallback),
        }
    }
}

impl From<TenancyFile> for Tenancy {
    fn from(f: TenancyFile) -> Tenancy {
        let d = Tenancy::default();
        Tenancy {
            tenant: f.tenant.over(d.tenant),
            product_line: f.product_line.over(d.product_line),
            contacts: f.contacts,
            contact_keys: f.contact_keys.unwrap_or(d.contact_keys),
            contacts_above: f.contacts_above.unwrap_or(d.contacts_above),
        }
    }
}

impl Default for Tenancy {
    fn default() -> Self {
        Tenancy {
            tenant: Resolution {
                workload_labels: vec!["tenant".into()],
                namespace_labels: vec!["tenant".into()],
                fallback: Some(Fallback::Namespace),
            },
            product_line: Resolution {
                workload_labels: vec!["product-line".into()],
                namespace_labels: vec!["product-line".into()],
                fallback: Some(Fallback::None),
            },
            contacts: std::collections::BTreeMap::new(),
            contact_keys: DEFAULT_CONTACT_KEYS.map(String::from).to_vec(),
            contacts_above: DEFAULT_CONTACTS_ABOVE,
        }
    }
}

/// How one attribute (tenant, product line) is resolved: the first workload label that is set, then
/// the first namespace label, then the fallback.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    #[serde(default)]
    pub workload_labels: Vec<String>,
    #[serde(default)]
    pub namespace_labels: Vec<String>,
    /// Unset: the namespace name for tenants, nothing for product lines.
    #[serde(default)]
    pub fallback: Option<Fallback>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fallback {
    /// The namespace name.
    Namespace,
    /// No value.
    None,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Nodes {
    /// Taint keys that GPU pods tolerate: such a taint does not make a node unplaceable.
    pub tolerated_taints: Vec<String>,
}

impl Default for Nodes {
    fn default() -> Self {
        Nodes {
            tolerated_taints: vec!["nvidia.com/gpu".into()],
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Exposure {
    /// Ingress classes whose controllers face the internet (e.g. `nginx-public`).
    pub public_ingress_classes: Vec<String>,
    /// Gateways that face the internet, as `namespace/name`.
    pub public_gateways: Vec<String>,
}

impl Config {
    /// Parses a config file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Config, InputError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let cfg: Option<Config> = serde_saphyr::from_str(text)
            .map_err(|e| crate::k8s::read::yaml_error_to_input(&e, file))?;
        let cfg = cfg.unwrap_or_default();
        for (key, v) in [
            ("headroom.error_limit", cfg.headroom.error_limit),
            ("headroom.near_capacity", cfg.headroom.near_capacity),
        ] {
            if !(0.0..1.0).contains(&v) {
                return Err(InputError {
                    file: file.to_string(),
                    line: None,
                    column: None,
                    message: format!("{key} is {v}: it is a fraction from 0 to 1 (0.01 is 1%)"),
                });
            }
        }
        let t = cfg.metrics.busy_threshold;
        if !(0.0..1.0).contains(&t) {
            return Err(InputError {
                file: file.to_string(),
                line: None,
                column: None,
                message: format!(
                    "metrics.busy_threshold is {t}: it is a fraction of activity from 0 to 1 (0.05 is 5%)"
                ),
            });
        }
        for (i, e) in cfg.cost.external.iter().enumerate() {
            let problem = if !(e.per_hour.is_finite() && e.per_hour >= 0.0) {
                Some(format!("is {}: a cost per hour of at least 0", e.per_hour))
            } else if e.workload.is_some() == e.tenant.is_some() {
                Some("needs exactly one of workload (namespace/Kind/name) or tenant: a cost is counted once".to_string())
            } else {
                None
            };
            if let Some(p) = problem {
                return Err(InputError {
                    file: file.to_string(),
                    line: None,
                    column: None,
                    message: format!("cost.external[{i}] ({}) per_hour {p}", e.name)
                        .replace("per_hour needs", "needs"),
                });
            }
        }
        Ok(cfg)
    }

    pub fn load(path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Config::parse(&text, &path.display().to_string())?)
    }

    /// The explicit file when given (it must exist), else `.gpuledger.yaml` in `dir` when present,
    /// else the defaults. Returns the file used, if any.
    pub fn discover(
        explicit: Option<&Path>,
        dir: &Path,
    ) -> Result<(Config, Option<PathBuf>), Error> {
        if let Some(p) = explicit {
            return Ok((Config::load(p)?, Some(p.to_path_buf())));
        }
        let p = dir.join(DEFAULT_FILE);
        if p.is_file() {
            return Ok((Config::load(&p)?, Some(p)));
        }
        Ok((Config::default(), None))
    }

    /// The `.gpuledger.yaml` committed at `rev` in the repository at `repo` (the defaults when that
    /// commit has none), and the name it is known by in messages (`origin/main:.gpuledger.yaml`).
    /// Read from git objects, never from the work tree, so a pull request's edits cannot reach it.
    pub fn at_ref(repo: &Path, rev: &str) -> Result<(Config, Option<String>), Error> {
        let name = format!("{rev}:{DEFAULT_FILE}");
        let fail = |message: String| {
            Error::Input(InputError {
                file: name.clone(),
                line: None,
                column: None,
                message,
            })
        };
        let git = git2::Repository::open(repo).map_err(|e| {
            fail(format!(
                "{} is not a git repository: {}",
                repo.display(),
                e.message()
            ))
        })?;
        let tree = git
            .revparse_single(rev)
            .and_then(|o| o.peel_to_tree())
            .map_err(|e| {
                fail(format!(
                    "cannot read ref {rev}: {} (fetch it first: `git fetch origin {rev}`, or `fetch-depth: 0` in actions/checkout)",
                    e.message()
                ))
            })?;
        let Ok(entry) = tree.get_path(Path::new(DEFAULT_FILE)) else {
            return Ok((Config::default(), None));
        };
        if entry.filemode() != i32::from(git2::FileMode::Blob)
            && entry.filemode() != i32::from(git2::FileMode::BlobExecutable)
        {
            return Err(fail(
                "is not a regular file (a symlink or a directory): refused".into(),
            ));
        }
        let blob = entry
            .to_object(&git)
            .and_then(|o| o.peel_to_blob())
            .map_err(|e| fail(e.message().to_string()))?;
        let text =
            std::str::from_utf8(blob.content()).map_err(|_| fail("is not UTF-8 text".into()))?;
        Ok((Config::parse(text, &name)?, Some(name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_is_the_defaults() {
        assert_eq!(Config::parse("", "c").unwrap(), Config::default());
        assert_eq!(
            Config::parse("# only a comment\n", "c").unwrap(),
            Config::default()
        );
    }

    #[test]
    fn stale_after_reads_hours_minutes_and_days() {
        assert_eq!(Config::default().snapshot.stale_after, Age(86_400));
        let c = Config::parse("snapshot:\n  stale_after: 1h30m\n", "c").unwrap();
        assert_eq!(c.snapshot.stale_after, Age(5_400));
        assert_eq!(c.snapshot.stale_after.to_string(), "1h30m");
        assert_eq!(Age::parse("2d").unwrap().to_string(), "2d");
        assert_eq!(Age::parse("1d").unwrap().to_string(), "24h");
        assert_eq!(Age::parse("2d1h").unwrap().to_string(), "49h");
        for bad in [
            "",
            "24",
            "h",
            "30m1h",
            "1h1h",
            "0h",
            "1.5h",
            "-1h",
            "99999999999999999999d",
        ] {
            assert!(Age::parse(bad).is_err(), "{bad}");
        }
        let e = Config::parse("snapshot:\n  stale_after: soon\n", "c.yaml").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.message.contains("not a duration"), "{e}");
    }

    #[test]
    fn partial_sections_keep_other_defaults() {
        let c =
            Config::parse("exposure:\n  public_ingress_classes: [nginx-public]\n", "c").unwrap();
        assert_eq!(c.exposure.public_ingress_classes, ["nginx-public"]);
        assert_eq!(c.nodes.tolerated_taints, ["nvidia.com/gpu"]);
        assert_eq!(c.tenancy.tenant.fallback, Some(Fallback::Namespace));
    }

    #[test]
    fn unknown_key_is_named_with_its_line() {
        let e = Config::parse(
            "nodes:\n  tolerated_taints: []\n  toleratd: [x]\n",
            "g.yaml",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("toleratd"), "{e}");
        let e = Config::parse(
            "tenancy:\n  tenant:\n    workload_label: [team]\n",
            "g.yaml",
        )
        .unwrap_err();
        assert!(e.message.contains("workload_label"), "{e}");
    }

    #[test]
    fn accepted_drift_rules() {
        let c = Config::parse(
            "accepted_drift:\n- match: {namespace: \"loadtest-*\", kind: Deployment}\n  reason: load tests\n  owner: \"@perf\"\n  expires: 2026-12-31\n",
            "c",
        )
        .unwrap();
        let r = &c.accepted_drift[0];
        assert!(r.matches.matches("loadtest-7", "Deployment", "x"));
        assert!(!r.matches.matches("prod", "Deployment", "x"));
        assert_eq!(r.expires.unwrap().to_string(), "2026-12-31");
        let e = Config::parse(
            "accepted_drift:\n- match: {name: x}\n  reason: r\n  expires: soon\n",
            "g.yaml",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("not a date"), "{e}");
    }

    #[test]
    fn cost_rules_and_outside_costs() {
        let d = Config::default().cost;
        assert_eq!((d.idle, d.min_sample), (IdleRule::Spread, 30));
        let c = Config::parse(
            "cost:\n  shared_namespaces: [kube-system]\n  idle: separate\n  external:\n  - {name: judge, per_hour: 0.5, tenant: research}\n",
            "c",
        )
        .unwrap();
        assert_eq!(c.cost.idle, IdleRule::Separate);
        assert_eq!(c.cost.external[0].tenant.as_deref(), Some("research"));
        for bad in [
            "cost:\n  external:\n  - {name: x, per_hour: 1}\n",
            "cost:\n  external:\n  - {name: x, per_hour: 1, tenant: a, workload: a/Job/b}\n",
            "cost:\n  external:\n  - {name: x, per_hour: -1, tenant: a}\n",
        ] {
            let e = Config::parse(bad, "g.yaml").unwrap_err();
            assert!(e.message.contains("cost.external[0] (x)"), "{e}");
        }
        assert!(Config::parse("cost:\n  idle: sometimes\n", "g.yaml").is_err());
    }

    #[test]
    fn fallback_none() {
        let c = Config::parse(
            "tenancy:\n  tenant:\n    workload_labels: [team]\n    fallback: none\n",
            "c",
        )
        .unwrap();
        assert_eq!(c.tenancy.tenant.workload_labels, ["team"]);
        assert_eq!(
            c.tenancy.tenant.namespace_labels,
            ["tenant"],
            "a partial section keeps the other defaults"
        );
        assert_eq!(c.tenancy.tenant.fallback, Some(Fallback::None));
    }
}
