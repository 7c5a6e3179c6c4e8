//! Discovery: which of [`RESOURCES`] the cluster serves, and at which group version. Each group
//! version is asked once however many of its resources are wanted; one the server forbids us to
//! discover makes its resources missing, not the read failed.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use kube::Client;
use serde::Deserialize;

use super::error::{DiscoveryError, KubeError};
use super::request::{Failure, get_retrying};
use super::types::{Missing, Progress, RESOURCES, Resource};

/// The resources to list, by plural: each with the group version to list it at.
pub(super) type Served = BTreeMap<&'static str, (Resource, String)>;

#[derive(Deserialize)]
struct GroupList {
    #[serde(default)]
    groups: Vec<Group>,
}

#[derive(Deserialize)]
struct Group {
    name: String,
    #[serde(rename = "preferredVersion")]
    preferred: Option<GroupVersion>,
    #[serde(default)]
    versions: Vec<GroupVersion>,
}

#[derive(Deserialize, Clone)]
struct GroupVersion {
    #[serde(rename = "groupVersion")]
    group_version: String,
}

#[derive(Deserialize)]
struct ResourceList {
    #[serde(default)]
    resources: Vec<ApiResource>,
}

#[derive(Deserialize)]
struct ApiResource {
    name: String,
}

/// [`discover`], with the failure naming the cluster and the resource count shown as progress.
pub(super) async fn discover_counted(
    client: &Client,
    name: &str,
    timeout: Duration,
    progress: &Progress,
) -> Result<(Served, Vec<Missing>), KubeError> {
    let (served, missing) =
        discover(client, timeout)
            .await
            .map_err(|source| KubeError::Discovery {
                cluster: name.to_string(),
                source,
            })?;
    progress
        .resources_total
        .store(crate::util::sum::count(served.len()), Ordering::Relaxed);
    Ok((served, missing))
}

/// The group/version to list each wanted resource at: the server's preferred version of the group
/// when it serves the resource there, else the first served version that does. A group version
/// the server forbids us to discover makes its resources missing (the report says so); any other
/// failure ends the read.
async fn discover(
    client: &Client,
    timeout: Duration,
) -> Result<(Served, Vec<Missing>), DiscoveryError> {
    let message = |f: Failure| match f {
        Failure::Forbidden(m) | Failure::Expired(m) | Failure::Retryable(m) | Failure::Fatal(m) => {
            m
        }
        Failure::NotFound => "not found".into(),
    };
    let groups: GroupList = serde_json::from_str(
        &get_retrying(client, "/apis", timeout)
            .await
            .map_err(|f| DiscoveryError::Groups(message(f)))?,
    )
    .map_err(|source| DiscoveryError::Parse {
        path: "/apis".into(),
        source,
    })?;
    let mut out = BTreeMap::new();
    let mut missing = Vec::new();
    // Each group version is fetched once, however many of its resources we want.
    let mut lists: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    for res in RESOURCES {
        if res.group.is_empty() {
            out.insert(res.plural, (*res, "v1".to_string()));
            continue;
        }
        let Some(g) = groups.groups.iter().find(|g| g.name == res.group) else {
            continue;
        };
        let mut candidates: Vec<GroupVersion> = g.preferred.iter().cloned().collect();
        candidates.extend(g.versions.iter().cloned());
        for gv in candidates {
            let gv = gv.group_version;
            if !lists.contains_key(&gv) {
                let path = format!("/apis/{gv}");
                let names = match get_retrying(client, &path, timeout).await {
                    Ok(text) => serde_json::from_str::<ResourceList>(&text)
                        .map(|l| l.resources.into_iter().map(|r| r.name).collect())
                        .map_err(|source| DiscoveryError::Parse {
                            path: path.clone(),
                            source,
                        })?,
                    Err(Failure::NotFound) => Vec::new(),
                    Err(Failure::Forbidden(m)) => {
                        missing.push(Missing {
                            resource: res.label(),
                            reason: format!("forbidden: discovery of {gv} is not allowed ({m})"),
                        });
                        lists.insert(gv.clone(), None);
                        continue;
                    }
                    Err(f) => {
                        return Err(DiscoveryError::Request {
                            path,
                            reason: message(f),
                        });
                    }
                };
                lists.insert(gv.clone(), Some(names));
            }
            if lists
                .get(&gv)
                .and_then(Option::as_ref)
                .is_some_and(|names| names.iter().any(|n| n == res.plural))
            {
                out.insert(res.plural, (*res, gv));
                break;
            }
        }
    }
    Ok((out, missing))
}
