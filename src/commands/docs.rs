//! `gpuledger docs`: fill the marked facts of markdown documents from a fresh report (`--write`),
//! or list the ones whose text differs from it (`--check`). Documents are rewritten here,
//! atomically: a temporary file beside the document, renamed over it, so a reader never sees half
//! a document.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use gpuledger::pipeline::facts::FactsJob;
use gpuledger::pipeline::{self, Context, Run};
use gpuledger::render::facts::render_docs;

use super::{Done, fleet_spec, signals};
use crate::cli::fleet::DocsArgs;

pub fn run(args: &DocsArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let job = FactsJob {
        fleet: fleet_spec(
            &args.live,
            signals(&args.live, &args.metrics, None, None),
            &args.clock,
            args.output.config(),
        ),
        files: args.files.clone(),
        dir: args.docs_repo.clone(),
        drift: args.drift,
        cluster: args.cluster.clone(),
        check: args.check,
    };
    let Run {
        report: mut documents,
        notes,
        outcome,
    } = pipeline::facts::run(&job, cx)?;
    if args.write {
        for r in &documents.rewrites {
            write_atomic(&r.path, r.text.as_bytes())?;
            documents.report.docs.written.push(r.name.clone());
        }
    }
    let title = if args.write {
        "Documents written from the report"
    } else {
        "Documents against the report"
    };
    let text = render_docs(
        &documents.report,
        title,
        args.format.into(),
        &args.output.style(),
    );
    let run = Run {
        report: (),
        notes,
        outcome,
    };
    super::report(run, text, &args.output)
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
