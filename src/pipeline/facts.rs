//! `docs`: the marked facts of markdown documents against a fresh report of the fleet — which are
//! stale (with the new text), which the report cannot confirm — and the documents rewritten with
//! every stale span replaced, for the binary to write when asked (`docs --write`). The check and
//! the drift issue ask the same of a repository's documents at a ref ([`status_of_repo`]).
//!
//! The documents are read here: named files, or every markdown file of a directory (or of a git
//! ref) that holds a marker; never run. What changes inside a document is [`crate::facts`]'s
//! decision: only the marked spans.

use std::path::{Path, PathBuf};

use super::fleet::{self, FleetSpec, Headline};
use super::input::RepoSpec;
use super::{Context, Error, Note, Outcome, Result, Run};
use crate::analysis::drift::drift;
use crate::facts::{Evaluated, Facts, evaluate};
use crate::report::facts::{DocsReport, DocsStatus};
use crate::report::{Kind, Report, SCHEMA};

/// A markdown document larger than this is not read: documentation has no business being larger,
/// and a hostile repository must not make the tool read gigabytes.
const MAX_DOCUMENT_BYTES: usize = 16 * 1024 * 1024;

/// The marker prefix: a document without it has nothing for gpuledger.
const MARK: &[u8] = b"gpuledger:";

/// Which documents, against what.
#[derive(Debug, Clone)]
pub struct FactsJob {
    /// The fleet the facts are read from.
    pub fleet: FleetSpec,
    /// Markdown files named one by one.
    pub files: Vec<PathBuf>,
    /// Every markdown file with a marker in this directory (a git repository: its tracked and
    /// untracked files, not the ignored ones).
    pub dir: Option<PathBuf>,
    /// `dir` is also the GitOps repository: render it and compare it with the live state, for the
    /// `drift.*` facts; `cluster` picks its cluster.
    pub drift: bool,
    pub cluster: Option<String>,
    /// Stale or unknown facts are findings (`docs --check`).
    pub check: bool,
}

/// What `docs` produced: the status, and each stale document's new text.
#[derive(Debug)]
pub struct Documents {
    pub report: DocsReport,
    pub rewrites: Vec<Rewrite>,
    /// The fleet report the facts were read from.
    pub fleet: Report,
}

pub fn run(job: &FactsJob, cx: &Context<'_>) -> Result<Run<Documents>> {
    let spec = &job.fleet;
    let mut notes = Vec::new();
    let one = fleet::one_cluster(spec, "docs", job.dir.as_deref(), true, cx, &mut notes)?;
    let (cfg, part, now) = (&one.cfg, &one.part, one.now);
    let (model, mut report) = one.read(Headline::Fleet)?;
    let mut git = Vec::new();
    let mut failed = Vec::new();
    if let (true, Some(dir)) = (job.drift, &job.dir) {
        let repo = RepoSpec {
            path: dir.clone(),
            git_ref: None,
            repo_urls: Vec::new(),
            render_timeout: std::time::Duration::from_secs(60),
            cluster: job.cluster.clone(),
            cluster_hint: None,
            remote: crate::desired::remote::Options::default(),
            base_hosts: None,
        };
        let (desired, side, f) = fleet::desired(&repo, cfg, &part.objects, "desired", cx)?;
        failed = f;
        let mut d = drift(
            &model.workloads.list,
            &part.objects,
            &desired,
            cfg,
            now.date(),
        )?;
        d.desired_at = side.describe.clone();
        report.drift = Some(d);
        git.push(side);
    }
    fleet::finish(
        &mut report,
        Kind::Inventory,
        None,
        part.provenance.clone(),
        git,
        now,
        cfg,
    );

    let mut documents = Vec::new();
    let mut status = DocsStatus::default();
    for f in &job.files {
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
    if let Some(dir) = &job.dir {
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
    let rewrites = documents
        .iter()
        .zip(&evaluated)
        .filter_map(|(doc, e)| {
            let e = e.as_ref().filter(|e| e.stale())?;
            Some(Rewrite {
                path: doc.path.clone(),
                name: doc.name.clone(),
                text: e.rewritten(),
            })
        })
        .collect();
    let mut outcome = if job.check && !(status.stale.is_empty() && status.unknown.is_empty()) {
        Outcome::Findings
    } else {
        Outcome::Clean
    };
    if !failed.is_empty() {
        notes.push(Note::RenderFailed(failed));
        outcome = Outcome::Incomplete;
    }
    for e in &status.errors {
        notes.push(Note::Say(format!("cannot read a document: {e}")));
        outcome = Outcome::Incomplete;
    }
    let outcome = fleet::ending(&report, &mut notes, outcome);
    Ok(Run {
        report: Documents {
            report: DocsReport {
                schema: SCHEMA,
                kind: Kind::Docs,
                sources: report.sources.clone(),
                docs: status,
            },
            rewrites,
            fleet: report,
        },
        notes,
        outcome,
    })
}

/// A stale document as it should be: where it is, how findings name it, and its new text.
#[derive(Debug)]
pub struct Rewrite {
    pub path: PathBuf,
    pub name: String,
    pub text: String,
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
    let facts = Facts::new(report, || crate::render::facts::tables(report));
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
/// `report`: what `check` reports for the head of a change, and the drift issue for the ref drift
/// was computed at. Nothing of the repository is run.
pub fn status_of_repo(repo: &Path, rev: Option<&str>, report: &Report) -> Result<DocsStatus> {
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

fn documents_error(what: String) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> Error {
    move |e| Error::Documents {
        what,
        source: Some(e),
    }
}

/// The markdown files of `repo` that hold a marker, by path relative to it (`/`-separated), with
/// their bytes: at `rev` from git's objects, else from the working tree (in a git repository, the
/// files git does not ignore). Symlinks are never followed; files larger than
/// [`MAX_DOCUMENT_BYTES`] are left out.
pub fn markdown_files(repo: &Path, rev: Option<&str>) -> Result<Vec<(String, Vec<u8>)>> {
    let git = git2::Repository::open(repo).ok();
    let mut out = Vec::new();
    if let Some(rev) = rev {
        let git = git.ok_or_else(|| Error::Documents {
            what: format!(
                "{} is not a git repository (needed for a ref)",
                repo.display()
            ),
            source: None,
        })?;
        let tree = git
            .revparse_single(rev)
            .and_then(|o| o.peel_to_tree())
            .map_err(|e| {
                documents_error(format!("cannot read {rev} in {}", repo.display()))(Box::new(e))
            })?;
        let mut found = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let name = entry.name().unwrap_or_default();
            // Regular files only: a link (0o120000) or a submodule is not a document of this tree.
            let regular = matches!(entry.filemode(), 0o100644 | 0o100755);
            if regular && is_markdown(name) {
                found.push((format!("{dir}{name}"), entry.id()));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| {
            documents_error(format!("cannot read {rev} in {}", repo.display()))(Box::new(e))
        })?;
        for (name, id) in found {
            let blob = git.find_blob(id).map_err(|e| {
                documents_error(format!("cannot read {name} at {rev}"))(Box::new(e))
            })?;
            let bytes = blob.content();
            if bytes.len() <= MAX_DOCUMENT_BYTES && contains(bytes, MARK) {
                out.push((name, bytes.to_vec()));
            }
        }
        return Ok(out);
    }
    let cannot = |p: &Path| documents_error(format!("cannot read {}", p.display()));
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = repo.join(&rel);
        let entries = std::fs::read_dir(&dir).map_err(|e| cannot(&dir)(Box::new(e)))?;
        for e in entries {
            let e = e.map_err(|e| cannot(&dir)(Box::new(e)))?;
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
            let meta =
                std::fs::symlink_metadata(e.path()).map_err(|x| cannot(&e.path())(Box::new(x)))?;
            if meta.is_dir() {
                stack.push(rel_path);
            } else if meta.is_file()
                && is_markdown(&name)
                && usize::try_from(meta.len()).is_ok_and(|n| n <= MAX_DOCUMENT_BYTES)
            {
                let bytes = std::fs::read(e.path()).map_err(|x| cannot(&e.path())(Box::new(x)))?;
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
