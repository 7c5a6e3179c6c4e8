//! The fetch cache: what was fetched, kept by the SHA-256 of its bytes (`--cache-dir`, by default
//! `$XDG_CACHE_HOME/gpuledger`, else `~/.cache/gpuledger`; the GitHub Action keeps it between
//! runs).
//!
//! Only content whose digest is known before it is fetched is looked up here: a chart archive the
//! index names with its digest, an OCI blob, a git commit. Indexes, tag lists and manifests by tag
//! are asked for every time, since what a range or a tag resolves to may have moved. A file read
//! back is hashed again and dropped when it does not match its name, so a damaged or tampered
//! cache is fetched again, never rendered. A cache that cannot be written only costs time.

use std::path::{Path, PathBuf};

/// The cache directory by default: `$XDG_CACHE_HOME/gpuledger`, else `$HOME/.cache/gpuledger`.
pub fn default_dir() -> Option<PathBuf> {
    let non_empty = |v: &str| {
        std::env::var_os(v)
            .filter(|x| !x.is_empty())
            .map(PathBuf::from)
    };
    non_empty("XDG_CACHE_HOME")
        .or_else(|| non_empty("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("gpuledger"))
}

/// Hex SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, bytes);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// A cache directory (or none: then nothing is kept).
#[derive(Debug, Clone)]
pub struct Store {
    dir: Option<PathBuf>,
}

impl Store {
    pub fn new(dir: Option<PathBuf>) -> Store {
        Store { dir }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn blob_path(&self, hex: &str) -> Option<PathBuf> {
        let ok = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
        let dir = self.dir.as_ref().filter(|_| ok)?;
        Some(
            dir.join("blobs")
                .join("sha256")
                .join(hex.to_ascii_lowercase()),
        )
    }

    /// The bytes whose SHA-256 is `hex`, when the cache holds them intact.
    pub fn get(&self, hex: &str) -> Option<Vec<u8>> {
        let path = self.blob_path(hex)?;
        let bytes = std::fs::read(&path).ok()?;
        if sha256(&bytes) == hex.to_ascii_lowercase() {
            return Some(bytes);
        }
        tracing::warn!(file = %path.display(), "cached file does not match its digest: fetched again");
        let _ = std::fs::remove_file(&path);
        None
    }

    /// Keeps `bytes` under their digest (written to a temporary name, then renamed, so a reader
    /// never sees half a file); returns the digest.
    pub fn put(&self, bytes: &[u8]) -> String {
        let hex = sha256(bytes);
        if let Some(path) = self.blob_path(&hex)
            && !path.exists()
            && let Some(parent) = path.parent()
        {
            let write = || -> std::io::Result<()> {
                std::fs::create_dir_all(parent)?;
                let tmp = tempfile::NamedTempFile::new_in(parent)?;
                std::fs::write(tmp.path(), bytes)?;
                tmp.persist(&path).map_err(|e| e.error)?;
                Ok(())
            };
            if let Err(e) = write() {
                tracing::debug!(error = %e, "fetch cache not written");
            }
        }
        hex
    }

    /// A directory of the cache for `kind` (`git`), made when missing.
    pub fn subdir(&self, kind: &str) -> Option<PathBuf> {
        let d = self.dir.as_ref()?.join(kind);
        std::fs::create_dir_all(&d).ok()?;
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_comes_back_only_when_intact() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::new(Some(dir.path().to_path_buf()));
        let hex = s.put(b"chart");
        assert_eq!(hex, sha256(b"chart"));
        assert_eq!(s.get(&hex).as_deref(), Some(&b"chart"[..]));
        let path = s.blob_path(&hex).unwrap();
        std::fs::write(&path, b"tampered").unwrap();
        assert_eq!(s.get(&hex), None);
        assert!(!path.exists());
        assert_eq!(s.get("../../etc/passwd"), None);
        assert_eq!(Store::new(None).get(&hex), None);
    }
}
