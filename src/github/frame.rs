//! The frame around a report on GitHub: the footer and the overflow note, the posting id, the
//! step outputs' figures, the warnings on manifests, the JSON report file, the repository's place
//! in the workspace, the local commit a comment is valid at — and the quoting that keeps text
//! from the repository from acting as workflow commands.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::actions::Annotation;
use super::event::Runtime;
use super::marker;
use crate::doc::{Block, Doc, Text};
use crate::render::page::{Links, arrow};
use crate::report::{Check, CheckReport, Drift, DriftRow};
use crate::util::date::Timestamp;

/// Which run posted a comment: the parts of one posting share it.
pub fn posting_id(rt: &Runtime) -> String {
    match (&rt.run_id, &rt.run_attempt) {
        (Some(id), Some(attempt)) => format!("{id}.{attempt}"),
        (Some(id), None) => id.clone(),
        _ => Timestamp::now().to_string(),
    }
}

/// What the frame could not do: name the repository, or write the JSON report.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("which repository? give --github-repo OWNER/NAME (Actions sets GITHUB_REPOSITORY)")]
    NoRepository,
    #[error("{0:?} is not a repository: expected OWNER/NAME")]
    NotARepository(String),
    #[error("cannot serialize the report")]
    Serialize(#[source] serde_json::Error),
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// `owner/name` from the flag or the runtime, checked so it cannot bend the API path.
pub fn slug(flag: Option<&str>, rt: &Runtime) -> Result<String, FrameError> {
    let s = flag
        .map(str::to_string)
        .or_else(|| rt.repository.clone())
        .ok_or(FrameError::NoRepository)?;
    let ok = s.split('/').count() == 2
        && s.split('/').all(|p| {
            !p.is_empty()
                && p != "."
                && p != ".."
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        });
    if !ok {
        return Err(FrameError::NotARepository(s));
    }
    Ok(s)
}

/// Writes the JSON report where asked (or under `RUNNER_TEMP` in Actions) and returns the path.
pub fn write_json<T: serde::Serialize>(
    explicit: Option<&Path>,
    scope: &str,
    rt: &Runtime,
    report: &T,
) -> Result<Option<PathBuf>, FrameError> {
    // One file per scope by default: a job may post for several clusters.
    let path = explicit.map(Path::to_path_buf).or_else(|| {
        let scope: String = scope
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        rt.runner_temp
            .as_ref()
            .map(|t| t.join(format!("gpuledger-report-{scope}.json")))
    });
    let Some(p) = path else { return Ok(None) };
    let text = crate::report::to_json(report)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .map_err(FrameError::Serialize)?;
    std::fs::write(&p, crate::util::redact::redact(&text).as_bytes()).map_err(|source| {
        FrameError::Write {
            path: p.clone(),
            source,
        }
    })?;
    Ok(Some(p))
}

/// The small print under a report: version, scope, head, and the run with the full report.
pub fn footer(scope: &str, head: Option<&str>, rt: &Runtime) -> Doc {
    let mut t = Text::new()
        .plain(format!("gpuledger {} · scope ", env!("CARGO_PKG_VERSION")))
        .code(scope);
    if let Some(h) = head {
        t = t.plain(" · head ").code(h.get(..12).unwrap_or(h));
    }
    if let Some(url) = rt.run_url() {
        t = t.plain(" · ").link("run and full report", url);
    }
    Doc {
        blocks: vec![Block::Small(t)],
    }
}

/// The report with its footer as the last block.
pub fn with_footer(report: &Doc, footer: &Doc) -> Doc {
    let mut d = report.clone();
    d.extend(footer.clone());
    d
}

/// The last words of a part when the report did not fit.
pub fn overflow_note(rt: &Runtime) -> String {
    let t = match rt.run_url() {
        Some(url) => Text::new().emph(
            Text::new()
                .plain("The report is longer than fits here: the full report is in the ")
                .link("job summary", url)
                .plain("."),
        ),
        None => Text::new().emph(
            "The report is longer than fits here: run gpuledger locally (or see the JSON report) for the full report.",
        ),
    };
    let mut d = Doc::new();
    d.paragraph(t);
    d.markdown().trim_end().to_string()
}

/// `88.1` (percent, one decimal) from a 0..1 share.
pub fn pct(share: f64) -> String {
    crate::util::number::percent_value(share, crate::util::number::Digits::Tenth)
}

/// A path for a step output (empty when there is none).
pub fn path_text(p: Option<&Path>) -> String {
    p.map(|p| p.display().to_string()).unwrap_or_default()
}

/// The repository's path from the workspace root, for annotation file names (`gitops/`, or empty).
pub fn prefix(repo: &Path, rt: &Runtime) -> String {
    let Some(ws) = &rt.workspace else {
        return String::new();
    };
    let (Ok(repo), Ok(ws)) = (repo.canonicalize(), ws.canonicalize()) else {
        return String::new();
    };
    match repo.strip_prefix(&ws) {
        Ok(rel) if rel.as_os_str().is_empty() => String::new(),
        Ok(rel) => format!("{}/", rel.display()),
        Err(_) => String::new(),
    }
}

/// Warnings on the manifests of the workloads the change adds, removes or reshapes, and on those
/// whose drift it introduces.
pub fn check_annotations(report: &CheckReport, at: &str) -> Vec<Annotation> {
    let c = &report.check;
    let introduced: BTreeSet<&str> = c
        .drift_introduced
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let mut annotated = BTreeSet::new();
    let mut out = Vec::new();
    for (what, rows) in [
        ("added", &c.added),
        ("removed", &c.removed),
        ("reshaped", &c.reshaped),
    ] {
        for r in rows {
            let id = r.id();
            out.push(Annotation::at(
                r.source.as_deref().map(|s| format!("{at}{s}")).as_deref(),
                format!(
                    "GPUs {what}{}: {id}",
                    if introduced.contains(id.as_str()) {
                        ", introduces drift"
                    } else {
                        ""
                    },
                ),
                format!(
                    "{} ({} → {} GPUs, tenant {})",
                    arrow(r.shape_base.as_deref(), r.shape_head.as_deref()),
                    r.gpus_base,
                    r.gpus_head,
                    r.tenant
                ),
            ));
            annotated.insert(id);
        }
    }
    for w in c
        .drift_introduced
        .iter()
        .flatten()
        .filter(|w| !annotated.contains(*w))
    {
        out.push(Annotation::at(
            None,
            format!("GPU drift introduced: {w}"),
            "this change makes Git and the live state disagree about this workload".to_string(),
        ));
    }
    out
}

/// The repository's HEAD commit (outside Actions, when no --head-sha is given).
pub fn head_of(repo: &Path) -> Option<String> {
    commit_of(repo, None)
}

/// The commit `git_ref` names in the repository (HEAD when `None`).
pub fn commit_of(repo: &Path, git_ref: Option<&str>) -> Option<String> {
    let r = git2::Repository::discover(repo).ok()?;
    let commit = match git_ref {
        Some(x) => r.revparse_single(x).ok()?.peel_to_commit().ok()?,
        None => r.head().ok()?.peel_to_commit().ok()?,
    };
    Some(commit.id().to_string())
}

/// Links from manifests to their blobs at `sha` in the repository on GitHub.
pub fn links(rt: &Runtime, slug: &str, sha: &str, repo: &Path) -> Links {
    let server = rt.server_url.as_deref().unwrap_or("https://github.com");
    Links::github(server, slug, sha, &prefix(repo, rt))
}

/// When `sha` was committed, from the repository (present with `fetch-depth: 0`).
pub fn commit_time(repo: &Path, sha: &str) -> Option<Timestamp> {
    let r = git2::Repository::discover(repo).ok()?;
    let oid = git2::Oid::from_str(sha).ok()?;
    let commit = r.find_commit(oid).ok()?;
    Some(Timestamp::from_unix(commit.committer().when().seconds()))
}

/// The step outputs of a check: unknown, never 0, where the live state was not read.
pub fn check_outputs(c: &Check, report_path: Option<&Path>) -> Vec<(&'static str, String)> {
    let unknown = || "unknown".to_string();
    vec![
        (
            "drift",
            c.drift_introduced
                .as_ref()
                .map_or_else(unknown, |d| d.len().to_string()),
        ),
        (
            "unmanaged_gpus",
            c.capacity
                .as_ref()
                .map_or_else(unknown, |x| x.unmanaged_live.to_string()),
        ),
        ("coverage", c.coverage_head.map_or_else(unknown, pct)),
        (
            "gpu_delta",
            c.gpu_delta.map_or_else(unknown, |d| d.to_string()),
        ),
        ("report_path", path_text(report_path)),
    ]
}

/// A change that moves no GPU, introduces no drift and leaves the configuration as it was
/// (`--skip-no-change`). What is unknown is not "no change".
pub fn no_change(c: &Check) -> bool {
    c.gpu_delta == Some(0)
        && c.config.changes.is_empty()
        && c.config.head_error.is_none()
        && (!c.live || c.drift_introduced.is_some())
        && c.tenants.iter().all(|t| t.delta == 0)
        && c.added.is_empty()
        && c.removed.is_empty()
        && c.reshaped.is_empty()
        && c.drift_introduced.as_ref().is_none_or(Vec::is_empty)
}

/// The drifting rows, with their category.
fn drifting(d: &Drift) -> Vec<(&'static str, &DriftRow)> {
    [
        ("unmanaged", &d.unmanaged),
        ("missing", &d.missing),
        ("changed", &d.changed),
    ]
    .into_iter()
    .flat_map(|(cat, rows)| rows.iter().map(move |r| (cat, r)))
    .collect()
}

/// The step outputs of a drift run: counts from a partial read would look known, so they are
/// unknown.
pub fn drift_outputs(
    d: &Drift,
    complete: bool,
    report_path: Option<&Path>,
) -> Vec<(&'static str, String)> {
    let known = |v: String| if complete { v } else { "unknown".to_string() };
    vec![
        ("drift", known(drifting(d).len().to_string())),
        (
            "unmanaged_gpus",
            known(d.unmanaged.iter().map(|r| r.gpus).sum::<u64>().to_string()),
        ),
        (
            "coverage",
            known(d.coverage.map_or_else(|| "unknown".to_string(), pct)),
        ),
        ("report_path", path_text(report_path)),
    ]
}

/// Warnings on the manifests of drifting workloads that Git declares.
pub fn drift_annotations(d: &Drift, at: &str) -> Vec<Annotation> {
    drifting(d)
        .into_iter()
        .filter_map(|(cat, r)| {
            let file = r.git_source.as_deref()?;
            Some(Annotation::at(
                Some(&format!("{at}{file}")),
                format!("GPU drift ({cat}): {}", r.id()),
                arrow(r.git_shape.as_deref(), r.live_shape.as_deref()),
            ))
        })
        .collect()
}

/// The tracking issue's marker: a digest of the drift set (which workloads drift, and how), and of
/// the report.
pub fn issue_marker(scope: &str, d: &Drift, report: &Doc) -> marker::Marker {
    let mut keys: Vec<String> = drifting(d)
        .iter()
        .map(|(cat, r)| {
            format!(
                "{cat} {}/{}/{}/{}",
                r.namespace, r.api_group, r.kind, r.name
            )
        })
        .collect();
    keys.sort();
    let mut m = marker::Marker::issue(scope, &marker::digest(keys.iter().map(String::as_str)));
    m.report = Some(marker::digest([report.unlinked().markdown().as_str()]));
    m
}
