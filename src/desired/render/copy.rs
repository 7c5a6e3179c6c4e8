//! The repository's copy on disk, which kustomize and helm read, and the renderers' HOME beside it.
//!
//! Both are temporary directories made the first time a renderer needs them (plain YAML never
//! does). Files are written as units need them: the files a unit's cache key covers, or the whole
//! repository for a unit whose reads cannot be told, each file once, so that what a unit rewrote
//! in its copy (inflated charts, a generated kustomization) is never written over by a later
//! unit's needs. When the copy cannot be made, the reason is recorded once as a problem of the
//! run and each unit says that it could not render.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use crate::desired::error::RenderError;
use crate::desired::tree::Tree;

/// The copy, its HOME, and the problems met making them.
#[derive(Default)]
pub(super) struct RepoCopy {
    tmp: OnceLock<Result<tempfile::TempDir, CopyError>>,
    /// The repository's files written to `tmp` so far, or all of them.
    written: Mutex<Written>,
    /// The renderers' HOME: a directory of its own, never part of the repository's copy.
    home: OnceLock<Result<tempfile::TempDir, CopyError>>,
    problems: Mutex<Vec<String>>,
}

/// Which of the repository's files are in the copy on disk.
#[derive(Default)]
struct Written {
    files: HashSet<String>,
    whole: bool,
}

/// Why the copy or its HOME could not be made: a problem of the run, said once.
#[derive(Debug, thiserror::Error)]
enum CopyError {
    #[error("cannot write the repository to a temporary directory: {0}")]
    Dir(std::io::Error),
    #[error("cannot create a temporary directory: {0}")]
    Home(std::io::Error),
    #[error("cannot write the repository to a temporary directory: {0}")]
    Write(crate::error::Error),
}

impl RepoCopy {
    /// Whether every file of the repository is in the copy.
    pub(super) fn is_whole(&self) -> bool {
        self.written.lock().is_ok_and(|w| w.whole)
    }

    /// Problems with the copy (it could not be made or written), each once.
    pub(super) fn take_problems(&mut self) -> Vec<String> {
        self.problems
            .get_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The copy of `tree` on disk, holding at least the files `needs` (all of them for `None`),
    /// and the renderers' HOME.
    pub(super) fn site(
        &self,
        tree: &Tree,
        needs: Option<&[String]>,
    ) -> Result<(&Path, &Path), RenderError> {
        let tmp = self.tmp.get_or_init(|| {
            tempfile::Builder::new()
                .prefix("gpuledger-render-")
                .tempdir()
                .map_err(CopyError::Dir)
        });
        let home = self.home.get_or_init(|| {
            tempfile::Builder::new()
                .prefix("gpuledger-home-")
                .tempdir()
                .map_err(CopyError::Home)
        });
        let problem = |e: &CopyError| {
            let e = e.to_string();
            if let Ok(mut p) = self.problems.lock()
                && !p.contains(&e)
            {
                p.push(e);
            }
            RenderError::NoCopy
        };
        let (t, h) = match (tmp, home) {
            (Ok(t), Ok(h)) => (t.path(), h.path()),
            (Err(e), _) | (_, Err(e)) => return Err(problem(e)),
        };
        // Files are written once: a unit may rewrite its copy (inflated charts, a generated
        // kustomization), and no later unit's needs write over that.
        let mut written = self.written.lock().map_err(|_| RenderError::CopyUnusable)?;
        if !written.whole {
            let missing: Vec<&str> = match needs {
                Some(files) => files
                    .iter()
                    .map(String::as_str)
                    .filter(|f| !written.files.contains(*f))
                    .collect(),
                None => tree
                    .files
                    .keys()
                    .map(String::as_str)
                    .filter(|f| !written.files.contains(*f))
                    .collect(),
            };
            let wrote = tree
                .write_files(t, missing.iter().copied())
                .map_err(|e| problem(&CopyError::Write(e)))?;
            if !wrote.is_empty() {
                tracing::debug!(files = wrote.len(), "copied to disk");
            }
            written.files.extend(missing.iter().map(|f| f.to_string()));
            written.files.extend(wrote);
            written.whole |= needs.is_none();
        }
        Ok((t, h))
    }
}
