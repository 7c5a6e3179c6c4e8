//! Git LFS pointer files. A repository that keeps files in Git LFS commits a small pointer in
//! their place (`version https://git-lfs.github.com/spec/v1`, `oid sha256:…`, `size …`); the
//! content lives in `.git/lfs/objects` once fetched. Read as a manifest, a pointer is a YAML
//! document of three strings: no object, so an app of such files would render as empty, with no
//! warning. So a pointer is recognised (git-lfs `docs/spec.md`: under 1024 bytes, the version
//! line first, then `key value` lines sorted by key, `oid` and `size` required) and replaced by
//! its object when that is present locally with the announced size; otherwise the tree holds it
//! as `Entry::LfsPointer` (`super::tree`) and reading it is an error that names the file ("Git LFS
//! object not fetched"), so its app is unknown, never empty.

use std::path::{Path, PathBuf};

/// The first line of every pointer (git-lfs docs/spec.md).
const VERSION: &str = "version https://git-lfs.github.com/spec/v1";

/// A pointer is smaller than this (git-lfs docs/spec.md).
const MAX_POINTER_BYTES: usize = 1024;

/// What a pointer file points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// The object's sha256, in hex.
    pub oid: String,
    pub size: u64,
}

/// The pointer `bytes` are, if they are one.
pub fn pointer(bytes: &[u8]) -> Option<Pointer> {
    if bytes.len() >= MAX_POINTER_BYTES {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    if lines.next()?.trim_end() != VERSION {
        return None;
    }
    let (mut oid, mut size) = (None, None);
    for line in lines.filter(|l| !l.is_empty()) {
        let (key, value) = line.split_once(' ')?;
        match key {
            "oid" => {
                let hex = value.strip_prefix("sha256:")?;
                if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                oid = Some(hex.to_ascii_lowercase());
            }
            "size" => size = Some(value.parse().ok()?),
            _ => {}
        }
    }
    Some(Pointer {
        oid: oid?,
        size: size?,
    })
}

/// Where git-lfs keeps object `oid` under a repository's common git directory.
fn object_path(git_dir: &Path, oid: &str) -> PathBuf {
    // The oid is 64 hex digits ([`pointer`]), so these are whole characters.
    let (a, b) = (oid.get(..2).unwrap_or(""), oid.get(2..4).unwrap_or(""));
    git_dir.join("lfs/objects").join(a).join(b).join(oid)
}

/// What a file of the tree holds when `bytes` are a pointer (`None` when they are not): the
/// object, when `git_dir` (the repository's common git directory) holds it with the announced
/// size, else `Err` with the pointer's oid.
pub fn fetched(bytes: &[u8], git_dir: Option<&Path>) -> Option<Result<Vec<u8>, String>> {
    let p = pointer(bytes)?;
    let object = git_dir
        .map(|d| object_path(d, &p.oid))
        .and_then(|path| std::fs::read(path).ok())
        .filter(|b| u64::try_from(b.len()).ok() == Some(p.size));
    Some(object.ok_or(p.oid))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OID: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

    #[test]
    fn a_pointer_is_recognised_and_nothing_else() {
        let text = format!("{VERSION}\noid sha256:{OID}\nsize 12345\n");
        assert_eq!(
            pointer(text.as_bytes()),
            Some(Pointer {
                oid: OID.into(),
                size: 12345
            })
        );
        assert_eq!(pointer(b"apiVersion: v1\nkind: Pod\n"), None);
        // No size, a short oid, another hash, too long.
        assert_eq!(
            pointer(format!("{VERSION}\noid sha256:{OID}\n").as_bytes()),
            None
        );
        assert_eq!(
            pointer(format!("{VERSION}\noid sha256:abc\nsize 1\n").as_bytes()),
            None
        );
        assert_eq!(
            pointer(format!("{VERSION}\noid md5:{OID}\nsize 1\n").as_bytes()),
            None
        );
        let long = format!("{VERSION}\noid sha256:{OID}\nsize 1\n{}", "x".repeat(1024));
        assert_eq!(pointer(long.as_bytes()), None);
    }

    #[test]
    fn a_fetched_object_replaces_its_pointer() {
        let dir = tempfile::tempdir().unwrap();
        let content = b"apiVersion: v1\nkind: Pod\n";
        let oid = OID;
        let path = object_path(dir.path(), oid);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        let ptr = |size: usize| format!("{VERSION}\noid sha256:{oid}\nsize {size}\n").into_bytes();
        assert_eq!(
            fetched(&ptr(content.len()), Some(dir.path())),
            Some(Ok(content.to_vec()))
        );
        assert_eq!(
            fetched(&ptr(content.len() + 1), Some(dir.path())),
            Some(Err(oid.to_string()))
        );
        assert_eq!(
            fetched(&ptr(content.len()), None),
            Some(Err(oid.to_string()))
        );
        assert_eq!(fetched(content, Some(dir.path())), None);
    }
}
