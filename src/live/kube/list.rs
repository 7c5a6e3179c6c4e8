//! Reading a cluster into objects: discovery, then every served resource listed concurrently,
//! page by page, each page parsed by the same reader a snapshot file goes through
//! ([`crate::k8s::read::read_page`]), so the analyses cannot tell the sources apart. A 403 on a
//! resource makes it missing; any other failure, or the whole read outlasting its timeout, ends
//! the read.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kube::Client;
use serde::Deserialize;

use super::client::client;
use super::discover::discover_counted;
use super::error::KubeError;
use super::request::{Failure, get_retrying, page_path};
use super::types::{ClusterRead, ClusterSource, Missing, Progress, RESOURCES, Resource};
use crate::k8s::object::Object;
use crate::k8s::read::read_page;
use crate::util::date::Timestamp;

/// Lists one resource, page by page, pipelined: a page is parsed on a blocking thread while the
/// next one downloads (its `continue` token is read first, without building the page's objects).
async fn list(
    client: Client,
    res: Resource,
    group_version: String,
    src: Arc<ClusterSource>,
    progress: Arc<Progress>,
    label: Arc<str>,
) -> Result<Vec<Object>, Failure> {
    let mut objects = Vec::new();
    let what = format!("{label}: {}", res.label());
    let first = page_path(&group_version, &res, src.page_size, None);
    let mut text = Some(get_retrying(&client, &first, src.request_timeout).await?);
    while let Some(page_text) = text.take() {
        let token = match continue_token(&page_text) {
            Ok(t) => t,
            // The reader's own error says where in the page it broke.
            Err(e) => {
                let why = read_page(&page_text, &what).err().map(|r| r.to_string());
                return Err(Failure::Fatal(format!(
                    "cannot parse {}: {}",
                    res.label(),
                    why.unwrap_or_else(|| e.to_string())
                )));
            }
        };
        let source = what.clone();
        let parse = tokio::task::spawn_blocking(move || {
            let (objects, next) = read_page(&page_text, &source)?;
            Ok::<_, crate::error::InputError>((crate::workload::checked(objects)?, next))
        });
        let fetch = async {
            match &token {
                Some(t) => {
                    let path = page_path(&group_version, &res, src.page_size, Some(t));
                    get_retrying(&client, &path, src.request_timeout)
                        .await
                        .map(Some)
                }
                None => Ok(None),
            }
        };
        let (parsed, fetched) = tokio::join!(parse, fetch);
        let (page, _) = parsed
            .map_err(|e| Failure::Fatal(format!("parsing {} stopped: {e}", res.label())))?
            .map_err(|e| Failure::Fatal(format!("cannot parse {}: {e}", res.label())))?;
        progress
            .objects
            .fetch_add(crate::util::sum::count(page.len()), Ordering::Relaxed);
        objects.extend(page);
        text = fetched?;
    }
    Ok(objects)
}

/// A list's `metadata.continue`, read without building its items.
fn continue_token(text: &str) -> Result<Option<String>, serde_json::Error> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "continue", default)]
        token: Option<String>,
    }
    #[derive(Deserialize)]
    struct Head {
        #[serde(default)]
        metadata: Option<Meta>,
    }
    let head: Head = serde_json::from_str(text)?;
    Ok(head
        .metadata
        .and_then(|m| m.token)
        .filter(|t| !t.is_empty()))
}

/// Reads every resource of [`RESOURCES`] the cluster serves.
pub async fn read_cluster(
    src: ClusterSource,
    progress: Arc<Progress>,
) -> Result<ClusterRead, KubeError> {
    let overall = src.timeout;
    let (client, name, origin) = client(&src).await?;
    let read_at = Timestamp::now();
    match tokio::time::timeout(overall, read_inner(client, name.clone(), src, progress)).await {
        Ok(r) => r.map(|(objects, missing)| ClusterRead {
            name,
            origin,
            read_at,
            objects,
            missing,
        }),
        Err(_) => Err(KubeError::Timeout {
            cluster: name,
            seconds: overall.as_secs(),
        }),
    }
}

async fn read_inner(
    client: Client,
    name: String,
    src: ClusterSource,
    progress: Arc<Progress>,
) -> Result<(Vec<Object>, Vec<Missing>), KubeError> {
    let (served, mut missing) =
        discover_counted(&client, &name, src.request_timeout, &progress).await?;
    let src = Arc::new(src);
    let label: Arc<str> = Arc::from(name.as_str());
    let mut tasks = tokio::task::JoinSet::new();
    for (_, (res, gv)) in served {
        let (client, src, progress, label) =
            (client.clone(), src.clone(), progress.clone(), label.clone());
        tasks.spawn(async move {
            let r = list(client, res, gv, src, progress.clone(), label).await;
            progress.resources_done.fetch_add(1, Ordering::Relaxed);
            (res, r)
        });
    }
    let mut by_resource: BTreeMap<usize, Vec<Object>> = BTreeMap::new();
    while let Some(joined) = tasks.join_next().await {
        let (res, r) = joined.map_err(KubeError::Task)?;
        let order = RESOURCES
            .iter()
            .position(|x| *x == res)
            .unwrap_or(usize::MAX);
        match r {
            Ok(objs) => {
                by_resource.insert(order, objs);
            }
            Err(Failure::Forbidden(msg)) => missing.push(Missing {
                resource: res.label(),
                reason: format!(
                    "forbidden: the RBAC verb `list` on `{}` is missing ({msg})",
                    res.label()
                ),
            }),
            Err(Failure::NotFound) => {} // not served after all
            Err(Failure::Retryable(e) | Failure::Fatal(e)) => {
                return Err(KubeError::List {
                    cluster: name,
                    resource: res.label(),
                    reason: e,
                });
            }
        }
    }
    missing.sort_by(|a, b| a.resource.cmp(&b.resource));
    // Objects in the order of RESOURCES, as a snapshot would hold them.
    let objects = by_resource.into_values().flatten().collect();
    Ok((objects, missing))
}
