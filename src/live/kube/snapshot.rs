//! A snapshot of the cluster for reading elsewhere: everything [`super::read_cluster`] would read,
//! written as one kubectl-compatible `List` streamed page by page, with what only costs bytes
//! stripped and where and when it was read in the list's own annotations.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::client::client;
use super::discover::discover_counted;
use super::error::KubeError;
use super::pager::{self, Pages};
use super::request::{Failure, get_retrying, page_path};
use super::types::{ClusterSource, Missing, Progress};
use crate::k8s::read::SnapshotMeta;
use crate::util::date::Timestamp;

/// What `write_snapshot` wrote.
#[derive(Debug)]
pub struct SnapshotWritten {
    pub name: String,
    /// What the snapshot says about where and when it was read.
    pub meta: SnapshotMeta,
    pub objects: u64,
    pub missing: Vec<Missing>,
}

/// Writes everything [`read_cluster`] would read as one kubectl-compatible `List` (JSON), with
/// `managedFields` and the last-applied annotation stripped, so a snapshot taken anywhere can be
/// analysed anywhere. Items are streamed to `out` page by page. The list's own
/// `metadata.annotations` say where and when it was read ([`SnapshotMeta`]): kubectl ignores a
/// list's metadata when it reads the file back, and a report can say how old its live state is.
pub async fn write_snapshot(
    src: ClusterSource,
    progress: Arc<Progress>,
    out: &mut (dyn std::io::Write + Send),
) -> Result<SnapshotWritten, KubeError> {
    let overall = src.timeout;
    let (client, name, origin) = client(&src).await?;
    let mut meta = SnapshotMeta {
        context: origin.context,
        server: Some(origin.server),
        read_at: Some(Timestamp::now()),
        read_at_invalid: None,
        version: Some(env!("CARGO_PKG_VERSION").to_string()),
        resources: None,
    };
    let work = async {
        let (served, mut missing) =
            discover_counted(&client, &name, src.request_timeout, &progress).await?;
        let io = KubeError::Write;
        // The list's metadata comes after its items: only then is it known which resources were
        // read whole (a forbidden one is not), and readers take a List's keys in any order.
        out.write_all(b"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n")
            .map_err(io)?;
        let mut read = Vec::new();
        let mut written = 0u64;
        for (res, gv) in served.values() {
            // Checked as a read is (super::pager); what was written stays written, so a
            // restarted list skips what it already wrote and duplicates are skipped, not relisted.
            let mut written_keys: HashSet<String> = HashSet::new();
            let mut restarted = false;
            let mut stopped: Option<String> = None;
            'list: loop {
                let mut pages = Pages::new();
                let mut token: Option<String> = None;
                loop {
                    let path = page_path(gv, res, src.page_size, token.as_deref());
                    let text = match get_retrying(&client, &path, src.request_timeout).await {
                        Ok(t) => t,
                        Err(Failure::Forbidden(msg)) => {
                            missing.push(Missing {
                                resource: res.label(),
                                reason: format!(
                                    "forbidden: the RBAC verb `list` on `{}` is missing ({msg})",
                                    res.label()
                                ),
                            });
                            break 'list;
                        }
                        Err(Failure::NotFound) => break 'list,
                        // As client-go's pager falls back on an expired token: one new list.
                        Err(Failure::Expired(_)) if !restarted && token.is_some() => {
                            restarted = true;
                            continue 'list;
                        }
                        Err(Failure::Expired(e) | Failure::Retryable(e) | Failure::Fatal(e)) => {
                            return Err(KubeError::List {
                                cluster: name.clone(),
                                resource: res.label(),
                                reason: e,
                            });
                        }
                    };
                    let mut page: serde_json::Value =
                        serde_json::from_str(&text).map_err(|source| KubeError::Page {
                            cluster: name.clone(),
                            resource: res.label(),
                            source,
                        })?;
                    let api_version = page
                        .get("apiVersion")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or(gv)
                        .to_string();
                    let kind = page
                        .get("kind")
                        .and_then(serde_json::Value::as_str)
                        .and_then(|k| k.strip_suffix("List"))
                        .unwrap_or("")
                        .to_string();
                    let meta = page.get("metadata");
                    let next = meta
                        .and_then(|m| m.get("continue"))
                        .and_then(serde_json::Value::as_str)
                        .filter(|c| !c.is_empty())
                        .map(str::to_string);
                    let remaining = meta
                        .and_then(|m| m.get("remainingItemCount"))
                        .and_then(serde_json::Value::as_u64);
                    let items = match page.get_mut("items").map(serde_json::Value::take) {
                        Some(serde_json::Value::Array(items)) => items,
                        _ => Vec::new(),
                    };
                    let n = crate::util::sum::count(items.len());
                    for mut item in items {
                        let text = |k: &str| {
                            item.get("metadata")
                                .and_then(|m| m.get(k))
                                .and_then(serde_json::Value::as_str)
                                .unwrap_or_default()
                                .to_string()
                        };
                        let key = pager::key(
                            Some(text("uid").as_str()),
                            &kind,
                            &text("namespace"),
                            &text("name"),
                        );
                        if !pages.first_time(key.clone()) || !written_keys.insert(key) {
                            continue;
                        }
                        strip(&mut item, &api_version, &kind);
                        if written > 0 {
                            out.write_all(b",\n").map_err(io)?;
                        }
                        serde_json::to_writer(&mut *out, &item).map_err(|e| io(e.into()))?;
                        written += 1;
                    }
                    progress.objects.store(written, Ordering::Relaxed);
                    let checked = match &next {
                        Some(t) => pages.follow(t).and(pages.page(n, remaining, true)),
                        None => pages.page(n, remaining, false),
                    };
                    if let Err(stop) = checked {
                        stopped = Some(stop.to_string());
                        break 'list;
                    }
                    match next {
                        Some(t) => token = Some(t),
                        None => {
                            if pages.duplicates > 0 {
                                stopped = Some(format!(
                                    "the API server's list is inconsistent: {} items came twice across its pages (each written once); the list may miss items",
                                    pages.duplicates
                                ));
                            }
                            break 'list;
                        }
                    }
                }
            }
            if let Some(reason) = stopped {
                missing.push(Missing {
                    resource: res.label(),
                    reason,
                });
            }
            progress.resources_done.fetch_add(1, Ordering::Relaxed);
        }
        for (res, _) in served.values() {
            if !missing.iter().any(|m| m.resource == res.label()) {
                read.push(res.label());
            }
        }
        read.sort();
        meta.resources = Some(read);
        let header = serde_json::json!({"annotations": meta.annotations()});
        out.write_all(b"\n], \"metadata\": ").map_err(io)?;
        serde_json::to_writer(&mut *out, &header).map_err(|e| io(e.into()))?;
        out.write_all(b"}\n").map_err(io)?;
        out.flush().map_err(io)?;
        missing.sort_by(|a, b| a.resource.cmp(&b.resource));
        Ok(SnapshotWritten {
            name: name.clone(),
            meta: meta.clone(),
            objects: written,
            missing,
        })
    };
    match tokio::time::timeout(overall, work).await {
        Ok(r) => r,
        Err(_) => Err(KubeError::Timeout {
            cluster: name,
            seconds: overall.as_secs(),
        }),
    }
}

/// Gives a list item its apiVersion and kind back and drops what only costs bytes.
fn strip(item: &mut serde_json::Value, api_version: &str, kind: &str) {
    let Some(obj) = item.as_object_mut() else {
        return;
    };
    if !obj.contains_key("apiVersion") {
        obj.insert("apiVersion".into(), api_version.into());
    }
    if !obj.contains_key("kind") && !kind.is_empty() {
        obj.insert("kind".into(), kind.into());
    }
    if let Some(meta) = obj.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("managedFields");
        if let Some(a) = meta.get_mut("annotations").and_then(|a| a.as_object_mut()) {
            a.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
}
