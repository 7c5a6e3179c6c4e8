//! `.gpuledger.yaml`: the few facts about a fleet that cannot be read from the cluster.
//!
//! Which labels name a tenant or a product line, which GPU taint keys are tolerated by GPU pods
//! (so they do not make a node unplaceable), and which ingress classes and gateways face the
//! internet. Every section is optional and defaults to the conventions in the README. Unknown keys are
//! an error that names them, with file and line: a typo must never silently change the counts.
//!
//! [`Config`] and its small sections are here; the larger sections have files of their own
//! (`tenancy`, `cost`, `headroom`, `metrics`, and `rules` for the rules that match workloads), durations are
//! [`Age`]s, `load` reads and checks the file, and [`review`] says what a change to it does. Every
//! type is used as `crate::config::Name`.

use serde::{Deserialize, Serialize};

mod age;
mod cost;
mod headroom;
mod load;
mod metrics;
pub mod review;
mod rules;
mod tenancy;

pub use age::{Age, AgeError};
pub use cost::{CostConfig, ExternalCost, IdleRule};
pub use headroom::{HeadroomConfig, Scale, ScaleRule};
pub use metrics::MetricsConfig;
pub use rules::{AcceptRule, IntentRule, MatchSpec, Scalar};
pub use tenancy::{DEFAULT_CONTACT_KEYS, DEFAULT_CONTACTS_ABOVE, Fallback, Resolution, Tenancy};

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

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Tenant → the most GPUs its desired workloads may declare.
    pub tenants: std::collections::BTreeMap<String, u64>,
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
    /// Fetching remote charts, chart dependencies and kustomize bases.
    pub remote: RemoteConfig,
}

/// `render.remote`: where rendering may fetch from. A check applies the base's: a pull request
/// cannot widen what its own check fetches.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteConfig {
    /// Source hosts (`charts.example.com`, `registry.internal:5000`) fetching may use beyond the
    /// ones the base ref's own sources already use.
    pub allow: Vec<String>,
    /// Private address ranges (`10.0.0.0/8`, `127.0.0.1/32`) a source host may resolve to; none by
    /// default. Link-local and cloud metadata addresses are refused whatever this says.
    pub private_networks: Vec<String>,
    /// Credentials, each sent to its own host only, read from environment variables.
    pub credentials: Vec<RemoteCredential>,
    /// How long one fetch (an index, a chart, a git fetch) may take.
    pub timeout: Age,
}

impl Default for RemoteConfig {
    fn default() -> Self {
        RemoteConfig {
            allow: Vec::new(),
            private_networks: Vec::new(),
            credentials: Vec::new(),
            timeout: Age(60),
        }
    }
}

/// A credential for one host: basic auth (`username_env` + `password_env`) or a bearer token
/// (`token_env`), each the name of an environment variable, never the secret itself.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteCredential {
    /// `ghcr.io`, `charts.example.com:8443`: the only host it is sent to.
    pub host: String,
    pub username_env: Option<String>,
    pub password_env: Option<String>,
    pub token_env: Option<String>,
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
