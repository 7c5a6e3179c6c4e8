//! The load tests the workloads name, read from the repository they were named in: each path once,
//! relative to the repository root. A path that is absolute or climbs out of the repository (`..`,
//! or a symlink that resolves outside it) is refused: it came from an annotation, and gpuledger
//! reads only the repository it was given.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use super::file::read;
use super::types::LoadTest;
use crate::error::InputError;

/// Why a load test a workload names could not be read; the analysis shows it on the workload's
/// row, and the command exits on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadTestError {
    #[error("{path}: a load test must be a relative path inside the repository")]
    OutsideRepository { path: String },
    /// The file (`file:line: …`) that does not read.
    #[error(transparent)]
    Unreadable(#[from] InputError),
}

/// The load tests read, by the path the intent wrote: the file, or why it could not be read.
pub type LoadTests = BTreeMap<String, Result<LoadTest, LoadTestError>>;

/// Reads each load test of `paths` once, relative to the repository root `repo`. Without a
/// repository every load test is unread, which the analysis reports. A file that cannot be read or
/// parsed is kept as its error for the row, and returned for the command to exit on.
pub fn read_load_tests<'a>(
    repo: Option<&Path>,
    paths: impl IntoIterator<Item = &'a str>,
) -> (LoadTests, Vec<LoadTestError>) {
    let mut out = LoadTests::new();
    let mut errors = Vec::new();
    let Some(repo) = repo else {
        return (out, errors);
    };
    for path in paths {
        if out.contains_key(path) {
            continue;
        }
        let p = Path::new(path);
        let inside = p
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        // A symlink in the repository may still point out of it: the resolved path must stay in.
        let full = repo.join(p);
        let escapes = match (full.canonicalize(), repo.canonicalize()) {
            (Ok(f), Ok(r)) => !f.starts_with(r),
            _ => false,
        };
        let result = if !inside || escapes {
            Err(LoadTestError::OutsideRepository {
                path: path.to_string(),
            })
        } else {
            read(&full, path).map_err(LoadTestError::from)
        };
        if let Err(e) = &result {
            errors.push(e.clone());
        }
        out.insert(path.to_string(), result);
    }
    (out, errors)
}
