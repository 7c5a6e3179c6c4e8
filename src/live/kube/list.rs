//! Reading a cluster into objects: discovery, then every served resource listed concurrently,
//! page by page, each page parsed by the same reader a snapshot file goes through
//! ([`crate::k8s::read::read_page`]), so the analyses cannot tell the sources apart, and checked
//! by [`super::pager`] so that a list that repeats items, loops or never ends cannot inflate the
//! counts or the memory. A 403 on a resource makes it missing, and so does a list stopped that way
//! (with its reason, and what it read); an expired continue token restarts the list once; any
//! other failure, or the whole read outlasting its timeout, ends the read.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kube::Client;
use serde::Deserialize;

use super::client::client;
use super::discover::discover_counted;
use super::error::KubeError;
use super::pager::{Pages, Stop};
use super::request::{Failure, get_retrying, page_path};
use super::types::{ClusterRead, ClusterSource, Missing, Progress, RESOURCES, Resource};
use crate::k8s::object::Object;
use crate::k8s::read::read_page;
use crate::util::date::Timestamp;

/// What one resource's list gave: its objects, and why the list is incomplete when it is.
pub(super) struct Listed {
    pub objects: Vec<Object>,
    pub incomplete: Option<String>,
    /// The list's resourceVersion (its first page's): where a watch of it starts.
    pub resource_version: Option<String>,
}

/// How one pass over the pages ended.
enum Pass {
    Done(Vec<Object>),
    /// Items came twice (by uid): the pass is not one consistent list.
    Duplicates(Vec<Object>, u64),
    /// Stopped before the server said it was done ([`Stop`]).
    Stopped(Vec<Object>, Stop),
}

/// Lists one resource, checked by [`Pages`]: duplicates make it list once more, and when they
/// come again the list is incomplete (its items counted once); a looping token or too many pages
/// stop it as incomplete. A 410 Expired on a continue token restarts it once, as client-go's pager
/// falls back to one new list on an expired token (client-go tools/pager/pager.go, `ListPager.List`,
/// `FullListIfExpired`) — here paginated again, so pages stay bounded — and fails the read when
/// it comes again.
pub(super) async fn list(
    client: Client,
    res: Resource,
    group_version: String,
    src: Arc<ClusterSource>,
    progress: Arc<Progress>,
    label: Arc<str>,
) -> Result<Listed, Failure> {
    let what = format!("{label}: {}", res.label());
    let mut again: Option<String> = None;
    loop {
        let counted = AtomicU64::new(0);
        let mut resource_version = None;
        let pass = pass(
            &client,
            &res,
            &group_version,
            &src,
            &progress,
            (&what, &mut resource_version),
            &counted,
        )
        .await;
        let restart = |why: String| {
            progress
                .objects
                .fetch_sub(counted.load(Ordering::Relaxed), Ordering::Relaxed);
            Some(why)
        };
        match (pass, &again) {
            (Ok(Pass::Done(objects)), _) => {
                return Ok(Listed {
                    objects,
                    incomplete: None,
                    resource_version,
                });
            }
            (Ok(Pass::Stopped(objects, stop)), _) => {
                return Ok(Listed {
                    objects,
                    incomplete: Some(stop.to_string()),
                    resource_version,
                });
            }
            (Ok(Pass::Duplicates(_, n)), None) => {
                tracing::debug!(resource = %res.label(), duplicates = n, "listing again");
                again = restart(format!("{n} items came twice across its pages"));
            }
            (Ok(Pass::Duplicates(objects, n)), Some(first)) => {
                return Ok(Listed {
                    objects,
                    incomplete: Some(format!(
                        "the API server's list is inconsistent: {first}, and {n} again when listed once more; each is counted once, and the list may miss items"
                    )),
                    resource_version,
                });
            }
            (Err(Failure::Expired(e)), None) => {
                tracing::debug!(resource = %res.label(), error = %e, "listing again");
                again = restart(format!("its continue token expired ({e})"));
            }
            (Err(Failure::Expired(e)), Some(first)) => {
                return Err(Failure::Fatal(format!(
                    "{e}: the list was started again once after {first}, and expired again"
                )));
            }
            (Err(e), _) => return Err(e),
        }
    }
}

/// One pass over the pages, pipelined: a page is parsed on a blocking thread while the next one
/// downloads (its `continue` token and `remainingItemCount` are read first, without building the
/// page's objects). `counted` is what the pass added to the progress; the first page's
/// resourceVersion is written beside `what`.
async fn pass(
    client: &Client,
    res: &Resource,
    group_version: &str,
    src: &ClusterSource,
    progress: &Progress,
    (what, resource_version): (&str, &mut Option<String>),
    counted: &AtomicU64,
) -> Result<Pass, Failure> {
    let mut objects = Vec::new();
    let mut pages = Pages::new();
    let first = page_path(group_version, res, src.page_size, None);
    // An expired token on the first page cannot be: nothing was continued.
    let mut text = Some(
        get_retrying(client, &first, src.request_timeout)
            .await
            .map_err(|f| match f {
                Failure::Expired(e) => Failure::Fatal(e),
                other => other,
            })?,
    );
    while let Some(page_text) = text.take() {
        let head = match page_head(&page_text) {
            Ok(h) => h,
            // The reader's own error says where in the page it broke.
            Err(e) => {
                let why = read_page(&page_text, what).err().map(|r| r.to_string());
                return Err(Failure::Fatal(format!(
                    "cannot parse {}: {}",
                    res.label(),
                    why.unwrap_or_else(|| e.to_string())
                )));
            }
        };
        if pages.is_first() {
            resource_version.clone_from(&head.resource_version);
        }
        let looped = match &head.token {
            Some(t) => pages.follow(t).err(),
            None => None,
        };
        let token = head.token.clone().filter(|_| looped.is_none());
        let source = what.to_string();
        let parse = tokio::task::spawn_blocking(move || {
            let (objects, next) = read_page(&page_text, &source)?;
            Ok::<_, crate::error::InputError>((crate::workload::checked(objects)?, next))
        });
        let fetch = async {
            match &token {
                Some(t) => {
                    let path = page_path(group_version, res, src.page_size, Some(t));
                    get_retrying(client, &path, src.request_timeout)
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
        let before = objects.len();
        let checked = pages.objects(page, head.remaining, head.token.is_some(), &mut objects);
        let added = crate::util::sum::count(objects.len().saturating_sub(before));
        progress.objects.fetch_add(added, Ordering::Relaxed);
        counted.fetch_add(added, Ordering::Relaxed);
        if let Some(stop) = looped.or(checked.err()) {
            return Ok(Pass::Stopped(objects, stop));
        }
        text = fetched?;
    }
    Ok(match pages.duplicates {
        0 => Pass::Done(objects),
        n => Pass::Duplicates(objects, n),
    })
}

/// What a list page says about the list, read without building its items.
struct Head {
    /// `metadata.continue`, when not empty.
    token: Option<String>,
    /// `metadata.remainingItemCount`.
    remaining: Option<u64>,
    /// `metadata.resourceVersion`, when not empty.
    resource_version: Option<String>,
}

fn page_head(text: &str) -> Result<Head, serde_json::Error> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "continue", default)]
        token: Option<String>,
        #[serde(rename = "remainingItemCount", default)]
        remaining: Option<u64>,
        #[serde(rename = "resourceVersion", default)]
        resource_version: Option<String>,
    }
    #[derive(Deserialize)]
    struct Page {
        #[serde(default)]
        metadata: Option<Meta>,
    }
    let page: Page = serde_json::from_str(text)?;
    let meta = page.metadata;
    Ok(Head {
        remaining: meta.as_ref().and_then(|m| m.remaining),
        resource_version: meta
            .as_ref()
            .and_then(|m| m.resource_version.clone())
            .filter(|v| !v.is_empty()),
        token: meta.and_then(|m| m.token).filter(|t| !t.is_empty()),
    })
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
            Ok(listed) => {
                if let Some(why) = listed.incomplete {
                    missing.push(Missing {
                        resource: res.label(),
                        reason: why,
                    });
                }
                by_resource.insert(order, listed.objects);
            }
            Err(Failure::Forbidden(msg)) => missing.push(Missing {
                resource: res.label(),
                reason: format!(
                    "forbidden: the RBAC verb `list` on `{}` is missing ({msg})",
                    res.label()
                ),
            }),
            Err(Failure::NotFound) => {} // not served after all
            Err(Failure::Expired(e) | Failure::Retryable(e) | Failure::Fatal(e)) => {
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
