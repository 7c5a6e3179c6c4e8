//! One file of a repository's [`Tree`](super::tree::Tree), as it was read: its bytes, a symlink, or
//! why it was listed and not read. Shared by the readers of the working directory, of a git tree
//! ([`super::git_tree`]) and of fetched remote content, which all build trees of these.

/// Refuses files larger than this: a manifest repository has no business holding them, and a
/// hostile one must not make the tool read gigabytes.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// One file of the tree, by its path relative to the repository root (`/`-separated).
#[derive(Debug, Clone)]
pub enum Entry {
    File(Vec<u8>),
    /// A symlink and its target as written in the link.
    Symlink(String),
    /// A file over [`MAX_FILE_BYTES`]: listed, never read.
    TooLarge(u64),
    /// A Git LFS pointer whose object is not here ([`super::lfs`]): listed, never read.
    LfsPointer {
        oid: String,
    },
    /// A submodule whose recorded commit is not here (its repository was never fetched, or lacks
    /// that commit), keyed by the submodule's path: everything below it is unknown.
    Submodule {
        commit: String,
        why: String,
    },
}
