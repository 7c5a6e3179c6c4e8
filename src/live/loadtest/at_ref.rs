//! The load tests a change's head names, read from git's objects at the head ref — never from a
//! checkout, and never a file outside the repository: a path that is absolute or climbs out
//! (`..`) is refused, a symlink or a submodule at the path is refused (a link may point anywhere;
//! reading it would read what the pull request chose). A directory is one sweep of its `.json`
//! blobs in name order, as on disk ([`super::file`]).

use std::path::{Component, Path};

use super::file::{MAX_BYTES, parse, sweep};
use super::repo::{LoadTestError, LoadTests};
use crate::error::InputError;

/// Git's mode of a regular file (executable or not) and of a tree.
const REGULAR: [i32; 2] = [0o100644, 0o100755];
const TREE: i32 = 0o040000;

/// Reads each load test of `paths` once, from the tree of `rev` in the git repository `repo`. A
/// load test that cannot be read is kept as its error, for the row that names it.
pub fn read_load_tests_at<'a>(
    repo: &Path,
    rev: &str,
    paths: impl IntoIterator<Item = &'a str>,
) -> LoadTests {
    let mut out = LoadTests::new();
    let tree = git2::Repository::open(repo)
        .map_err(|e| e.message().to_string())
        .and_then(|g| {
            let tree = g
                .revparse_single(rev)
                .and_then(|o| o.peel_to_tree())
                .map(|t| t.id())
                .map_err(|e| e.message().to_string())?;
            Ok((g, tree))
        });
    for path in paths {
        if out.contains_key(path) {
            continue;
        }
        let result = match &tree {
            Err(why) => Err(unreadable(path, format!("cannot read {rev}: {why}"))),
            Ok((g, tree)) => read_one(g, *tree, path),
        };
        out.insert(path.to_string(), result);
    }
    out
}

fn unreadable(path: &str, message: String) -> LoadTestError {
    LoadTestError::Unreadable(InputError {
        file: path.to_string(),
        line: None,
        column: None,
        message,
    })
}

fn read_one(
    g: &git2::Repository,
    tree: git2::Oid,
    path: &str,
) -> Result<super::types::LoadTest, LoadTestError> {
    let p = Path::new(path);
    let inside = p
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    let outside = || LoadTestError::OutsideRepository {
        path: path.to_string(),
    };
    if !inside || p.components().next().is_none() {
        return Err(outside());
    }
    let tree = g
        .find_tree(tree)
        .map_err(|e| unreadable(path, e.message().to_string()))?;
    let entry = tree.get_path(p).map_err(|_| {
        unreadable(
            path,
            "cannot read the load test: not in the head's tree".into(),
        )
    })?;
    let blob = |id: git2::Oid, name: &str| -> Result<String, InputError> {
        let err = |message: String| InputError {
            file: name.to_string(),
            line: None,
            column: None,
            message,
        };
        let b = g
            .find_blob(id)
            .map_err(|e| err(format!("cannot read the load test: {}", e.message())))?;
        if b.size() as u64 > MAX_BYTES {
            return Err(err(format!(
                "is {} bytes, more than the {MAX_BYTES} a load-test result may have",
                b.size()
            )));
        }
        String::from_utf8(b.content().to_vec())
            .map_err(|_| err("cannot read the load test: not UTF-8".into()))
    };
    match entry.filemode() {
        m if REGULAR.contains(&m) => {
            let text = blob(entry.id(), path)?;
            Ok(parse(&text, path)?)
        }
        TREE => {
            let dir = g
                .find_tree(entry.id())
                .map_err(|e| unreadable(path, e.message().to_string()))?;
            let mut files: Vec<(String, git2::Oid)> = dir
                .iter()
                .filter(|e| REGULAR.contains(&e.filemode()))
                .filter_map(|e| Some((e.name().ok()?.to_string(), e.id())))
                .filter(|(n, _)| n.ends_with(".json"))
                .collect();
            files.sort();
            Ok(sweep(
                path,
                files.into_iter().map(|(n, id)| {
                    let name = format!("{}/{n}", path.trim_end_matches('/'));
                    let text = blob(id, &name)?;
                    Ok((name, text))
                }),
            )?)
        }
        // A symlink (0o120000) or a submodule: not a file of this tree to read.
        _ => Err(outside()),
    }
}
