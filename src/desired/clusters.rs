//! Which cluster an app belongs to.
//!
//! A GitOps repository usually drives several clusters, and the desired state is per cluster: the
//! same object in two clusters is two desired workloads, and drift compares a live cluster only
//! with its own part. A Flux root belongs to the cluster directory it is defined in (Flux's
//! bootstrap writes `clusters/<name>/flux-system/gotk-sync.yaml`), and what it applies stays
//! there; an Argo CD Application belongs to its `destination` (argo-cd
//! `pkg/apis/application/v1alpha1/types.go`, `ApplicationDestination`: `server` or `name`, where
//! `https://kubernetes.default.svc` is the cluster Argo CD runs in, named `in-cluster`).
//! `clusters:` in `.gpuledger.yaml` names them explicitly and wins.

use std::collections::BTreeMap;

use crate::config::ClusterConfig;

/// The API server address Argo CD uses for the cluster it runs in, and the name it gives it.
pub const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
pub const IN_CLUSTER: &str = "in-cluster";

/// The cluster a Flux root defined in `file` belongs to: the configured cluster whose `path`
/// holds the file, else `<name>` when the file is under a `clusters/<name>/` directory.
pub fn flux_root(file: &str, clusters: &BTreeMap<String, ClusterConfig>) -> Option<String> {
    let under = |dir: &str| {
        let dir = dir.trim_start_matches("./").trim_end_matches('/');
        dir.is_empty() || file.starts_with(&format!("{dir}/"))
    };
    if let Some((name, _)) = clusters
        .iter()
        .filter(|(_, c)| c.path.as_deref().is_some_and(under))
        // The deepest configured path wins (`clusters/prod/eu` over `clusters/prod`).
        .max_by_key(|(_, c)| c.path.as_deref().map_or(0, str::len))
    {
        return Some(name.clone());
    }
    let parts: Vec<&str> = file.split('/').collect();
    parts
        .windows(3)
        .find(|w| w.first() == Some(&"clusters"))
        .and_then(|w| w.get(1))
        .map(|s| s.to_string())
}

/// The cluster of an Argo CD destination: the configured cluster that lists its server or name,
/// else its name, else `in-cluster` for the in-cluster server, else the server URL. `None` when
/// the destination names no cluster.
pub fn argo_destination(
    server: Option<&str>,
    name: Option<&str>,
    clusters: &BTreeMap<String, ClusterConfig>,
) -> Option<String> {
    let server = server
        .map(|s| s.trim_end_matches('/'))
        .filter(|s| !s.is_empty());
    let name = name.filter(|s| !s.is_empty());
    for (cluster, c) in clusters {
        if c.destinations
            .iter()
            .map(|d| d.trim_end_matches('/'))
            .any(|d| Some(d) == server || Some(d) == name)
        {
            return Some(cluster.clone());
        }
    }
    match (name, server) {
        (Some(n), _) => Some(n.to_string()),
        (None, Some(s)) if s == IN_CLUSTER_SERVER => Some(IN_CLUSTER.to_string()),
        (None, Some(s)) => Some(s.to_string()),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flux_roots_belong_to_their_cluster_directory() {
        let none = BTreeMap::new();
        assert_eq!(
            flux_root("clusters/production/flux-system/gotk-sync.yaml", &none).as_deref(),
            Some("production")
        );
        assert_eq!(
            flux_root("clusters/staging/apps.yaml", &none).as_deref(),
            Some("staging")
        );
        // A file directly in `clusters/` names no cluster.
        assert_eq!(flux_root("clusters/apps.yaml", &none), None);
        assert_eq!(flux_root("bootstrap/root.yaml", &none), None);
        let cfg: BTreeMap<String, ClusterConfig> = [(
            "prod-eu".to_string(),
            ClusterConfig {
                path: Some("./fleet/eu/".into()),
                ..ClusterConfig::default()
            },
        )]
        .into();
        assert_eq!(
            flux_root("fleet/eu/sync.yaml", &cfg).as_deref(),
            Some("prod-eu")
        );
    }

    #[test]
    fn argo_destinations_name_their_cluster() {
        let none = BTreeMap::new();
        assert_eq!(
            argo_destination(Some("https://kubernetes.default.svc"), None, &none).as_deref(),
            Some("in-cluster")
        );
        assert_eq!(
            argo_destination(None, Some("prod"), &none).as_deref(),
            Some("prod")
        );
        assert_eq!(argo_destination(None, None, &none), None);
        let cfg: BTreeMap<String, ClusterConfig> = [(
            "gpu-east".to_string(),
            ClusterConfig {
                destinations: vec!["https://10.0.0.1:6443/".into()],
                ..ClusterConfig::default()
            },
        )]
        .into();
        assert_eq!(
            argo_destination(Some("https://10.0.0.1:6443"), None, &cfg).as_deref(),
            Some("gpu-east")
        );
    }
}
