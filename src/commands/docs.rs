//! `gpuledger docs`: fill the marked facts of markdown documents from a fresh report (`--write`),
//! or list the ones whose text differs from it (`--check`).
//!
//! The documents are found here (named files, or every markdown file of a directory or of a git
//! ref that holds a marker) and written here, atomically: a temporary file beside the document,
//! renamed over it, so a reader never sees half a document. What changes inside a document is the
//! library's decision ([`gpuledger::docs`]): only the marked spans.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::DocsArgs;
use gpuledger::analysis::drift::drift;
use gpuledger::analysis::inventory::{inventory_with_metrics, live_workloads};
use gpuledger::analysis::usage::Metrics;
use gpuledger::facts::{Evaluated, Facts, evaluate};
use gpuledger::input::{self, RepoSpec};
use gpuledger::live::kube::Progress;
use gpuledger::render::facts::render_docs;
use gpuledger::report::facts::{DocsReport, DocsStatus};
use gpuledger::report::{Provenance, Report, SCHEMA};
use gpuledger::util::date::Timestamp;

/// A markdown document larger than this is not read: documentation has no business being larger,
/// and a hostile repository must not make the tool read gigabytes.
const MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// The marker prefix: a document without it has nothing for gpuledger.
const MARK: &[u8] = b"gpuledger:";

pub fn run(args: &DocsArgs, rt: &Runtime, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    args.output.not_prometheus("docs")?;
    let (cfg, cfg_path) = input::config(args.output.config.as_deref(), args.docs_repo.as_deref())?;
    let mut notes = Vec::new();
    let mut sources = Vec::new();
    let live = rt.block_on(input::live(&args.live.spec(), progress))?;
    let (part, live_sources) = live.single("docs")?;
    sources.extend(live_sources);
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(Note::ConfigUsed(p.display().to_string()));
    }
    let metrics = rt.block_on(input::metrics(args.live.metrics().as_ref(), &cfg));
    if let Metrics::Failed(reason) = &metrics {
        notes.push(Note::MetricsUnknown(reason.clone()));
    }
    let mut report = inventory_with_metrics(&part.objects, &cfg, sources, &metrics)?;
    report.complete = part.incomplete.is_empty();
    report.incomplete = part.incomplete;
    let now = args.now.unwrap_or_else(Timestamp::now);
    let mut git = Vec::new();
    let mut failed = Vec::new();
    if let (true, Some(dir)) = (args.drift, &args.docs_repo) {
        let spec = RepoSpec {
            path: dir.clone(),
            git_ref: None,
            repo_urls: Vec::new(),
            render_timeout: std::time::Duration::from_secs(60),
            cluster: args.cluster.clone(),
            cluster_hint: None,
        };
        let desired = input::desired_state(&spec, &cfg, &part.objects)?;
        input::ensure_rendered(&desired, &spec)?;
        failed = input::render_failures(&desired);
        let actions = super::check::actions_env();
        git.push(input::git_side(
            dir,
            "desired",
            None,
            super::check::checkout(&actions),
        ));
        let workloads = live_workloads(&part.objects)?;
        let mut d = drift(&workloads, &part.objects, &desired, &cfg, now.date())?;
        if let Some(g) = git.first() {
            d.desired_at = g.describe.clone();
        }
        report.drift = Some(d);
    }
    report.provenance = Some(Provenance::new(
        None,
        part.provenance,
        git,
        now,
        cfg.snapshot.stale_after,
    ));

    let mut documents = Vec::new();
    let mut status = DocsStatus::default();
    for f in &args.files {
        match std::fs::read(f) {
            Ok(bytes) => documents.push(Document {
                name: f.display().to_string(),
                path: f.clone(),
                bytes,
            }),
            Err(e) => status
                .errors
                .push(format!("{}: cannot read: {e}", f.display())),
        }
    }
    if let Some(dir) = &args.docs_repo {
        documents.extend(
            markdown_files(dir, None)?
                .into_iter()
                .map(|(name, bytes)| Document {
                    path: dir.join(&name),
                    name,
                    bytes,
                }),
        );
    }
    let evaluated = check_documents(&documents, &report, &mut status);
    if args.write {
        for (doc, e) in documents.iter().zip(&evaluated) {
            if let Some(e) = e.as_ref().filter(|e| e.stale()) {
                write_atomic(&doc.path, e.rewritten().as_bytes())?;
                status.written.push(doc.name.clone());
            }
        }
    }
    let title = if args.write {
        "Documents written from the report"
    } else {
        "Documents against the report"
    };
    let out = DocsReport {
        schema: SCHEMA,
        kind: gpuledger::report::Kind::Docs,
        sources: report.sources.clone(),
        docs: status,
    };
    let text = render_docs(&out, title, args.output.format, &args.output.style());
    let status = out.docs;
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    let mut exit = if args.check && !(status.stale.is_empty() && status.unknown.is_empty()) {
        Exit::Findings
    } else {
        Exit::Clean
    };
    if !failed.is_empty() {
        notes.push(Note::RenderFailed(failed));
        exit = Exit::Error;
    }
    for e in &status.errors {
        notes.push(Note::Say(format!("cannot read a document: {e}")));
        exit = Exit::Error;
    }
    Ok(super::report_outcome(
        &report.incomplete,
        stdout,
        notes,
        exit,
    ))
}

/// One document: as it is named in findings, where it is written, and its bytes.
struct Document {
    name: String,
    path: PathBuf,
    bytes: Vec<u8>,
}

/// Each document checked against the report; a document that cannot be read is an error in the
/// status (the others are still checked) and `None` here.
fn check_documents(
    documents: &[Document],
    report: &Report,
    status: &mut DocsStatus,
) -> Vec<Option<Evaluated>> {
    let facts = Facts::new(report, || gpuledger::render::facts::tables(report));
    documents
        .iter()
        .map(|d| match evaluate(&d.name, &d.bytes, &facts) {
            Ok(e) => {
                e.count_into(status);
                Some(e)
            }
            Err(e) => {
                status.errors.push(e.to_string());
                None
            }
        })
        .collect()
}

/// The marked facts of the markdown files of `repo` (at `rev`, or its working tree) against
/// `report`: what `check` reports for the head of a change. Nothing of the repository is run.
pub fn status_of_repo(
    repo: &Path,
    rev: Option<&str>,
    report: &Report,
) -> anyhow::Result<DocsStatus> {
    let documents: Vec<Document> = markdown_files(repo, rev)?
        .into_iter()
        .map(|(name, bytes)| Document {
            path: repo.join(&name),
            name,
            bytes,
        })
        .collect();
    let mut status = DocsStatus::default();
    check_documents(&documents, report, &mut status);
    Ok(status)
}

fn is_markdown(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// The markdown files of `repo` that hold a marker, by path relative to it (`/`-separated), with
/// their bytes: at `rev` from git's objects, else from the working tree (in a git repository, the
/// files git does not ignore). Symlinks are never followed; files larger than
/// [`MAX_DOCUMENT_BYTES`] are left out.
pub fn markdown_files(repo: &Path, rev: Option<&str>) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let git = git2::Repository::open(repo).ok();
    let mut out = Vec::new();
    if let Some(rev) = rev {
        let git = git.with_context(|| {
            format!(
                "{} is not a git repository (needed for a ref)",
                repo.display()
            )
        })?;
        let tree = git
            .revparse_single(rev)
            .and_then(|o| o.peel_to_tree())
            .with_context(|| format!("cannot read {rev} in {}", repo.display()))?;
        let mut found = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let name = entry.name().unwrap_or_default();
            // Regular files only: a link (0o120000) or a submodule is not a document of this tree.
            let regular = matches!(entry.filemode(), 0o100644 | 0o100755);
            if regular && is_markdown(name) {
                found.push((format!("{dir}{name}"), entry.id()));
            }
            git2::TreeWalkResult::Ok
        })?;
        for (name, id) in found {
            let blob = git.find_blob(id)?;
            let bytes = blob.content();
            if bytes.len() <= MAX_DOCUMENT_BYTES && contains(bytes, MARK) {
                out.push((name, bytes.to_vec()));
            }
        }
        return Ok(out);
    }
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = repo.join(&rel);
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?;
        for e in entries {
            let e = e.with_context(|| format!("cannot read {}", dir.display()))?;
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name == ".git" {
                continue;
            }
            let rel_path = rel.join(&name);
            if git
                .as_ref()
                .is_some_and(|g| g.is_path_ignored(&rel_path).unwrap_or(false))
            {
                continue;
            }
            let meta = std::fs::symlink_metadata(e.path())
                .with_context(|| format!("cannot read {}", e.path().display()))?;
            if meta.is_dir() {
                stack.push(rel_path);
            } else if meta.is_file()
                && is_markdown(&name)
                && usize::try_from(meta.len()).is_ok_and(|n| n <= MAX_DOCUMENT_BYTES)
            {
                let bytes = std::fs::read(e.path())
                    .with_context(|| format!("cannot read {}", e.path().display()))?;
                if contains(&bytes, MARK) {
                    out.push((rel_path.to_string_lossy().replace('\\', "/"), bytes));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Replaces `path` with `bytes` atomically: a temporary file in the same directory (so the rename
/// stays on one file system), with the document's permissions, renamed over it.
fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".gpuledger-docs-")
        .tempfile_in(&dir)
        .with_context(|| format!("cannot write beside {}", path.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", tmp.path().display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = tmp.as_file().set_permissions(meta.permissions());
    }
    tmp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_finds_the_marker_prefix() {
        assert!(contains(b"x <!-- gpuledger:fact", MARK));
        assert!(!contains(b"gpuledger", MARK));
        assert!(is_markdown("docs/Capacity.MD") && !is_markdown("a.yaml"));
    }
}
