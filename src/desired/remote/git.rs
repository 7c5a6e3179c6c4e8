//! Git repositories that kustomize names as remote bases, fetched over smart HTTP.
//!
//! The URL forms are kustomize's (`api/internal/git/repospec.go`, `NewRepoSpecFromURL`): a query
//! (`ref=`, its alias `version=`; `timeout=` and `submodules=` are read and not needed here), an
//! optional `git::` prefix, `https://`/`http://` URLs and the scheme-less `github.com/org/repo`,
//! the repository ending at `_git/<name>` (Azure), else before `//`, else after `.git`, else after
//! the first two path segments; a subpath that climbs out (`..`) is refused. kustomize then runs
//! `git init`, `git fetch --depth=1 <url> <ref or HEAD>` and checks out `FETCH_HEAD`
//! (`api/internal/git/cloner.go`); so does this, with libgit2 (git2, which the crate builds without
//! a network stack of its own) speaking git's smart HTTP protocol through a subtransport that sends
//! every request through gpuledger's own client ([`Http`]): the same address checks, redirect
//! rules, credentials, time and size limits as every other fetch. SSH URLs are not fetched.
//! Fetched objects stay in a bare repository in the cache, so a commit already there is not
//! fetched again; a ref is asked of the server every time. Submodules are not fetched.

use std::collections::{BTreeMap, HashMap};
use std::io::{Cursor, Read, Write};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};

use super::error::FetchError;
use super::http::{Http, Req, shown};
use super::policy::MAX_ARTIFACT_BYTES;
use super::store::{Store, sha256};
use crate::desired::tree::{Entry, MAX_FILE_BYTES, normalize};

/// A kustomize git URL, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoSpec {
    /// What is fetched: `https://github.com/org/repo` (with `.git` when the URL had it).
    pub repo: String,
    /// The kustomization's directory inside it (`""` for its root).
    pub path: String,
    /// A branch, tag or full commit; `None` for the remote's HEAD.
    pub git_ref: Option<String>,
}

/// Parses a kustomize git URL; an error says why it is not fetched.
pub fn parse(entry: &str) -> Result<RepoSpec, String> {
    let raw = entry.trim();
    let (no_query, query) = raw.split_once('?').unwrap_or((raw, ""));
    let mut git_ref = None;
    let mut version = None;
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "ref" if !v.is_empty() => git_ref = Some(v.into_owned()),
            "version" if !v.is_empty() => version = Some(v.into_owned()),
            _ => {}
        }
    }
    let git_ref = git_ref.or(version);
    let mut s = no_query.to_string();
    if let Some(rest) = s
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("git::"))
        .and_then(|_| s.get(5..))
    {
        s = rest.to_string();
    }
    let lower = s.to_ascii_lowercase();
    if lower.starts_with("ssh://") || lower.starts_with("git@") || lower.starts_with("github.com:")
    {
        return Err("an SSH git URL: gpuledger fetches git over HTTPS only".into());
    }
    if lower.starts_with("file://") {
        return Err("a file:// git URL reaches outside the repository: refused".into());
    }
    if lower.starts_with("github.com/") {
        s = format!("https://{s}");
    }
    let (scheme, rest) = s
        .split_once("://")
        .filter(|(sc, _)| matches!(sc.to_ascii_lowercase().as_str(), "https" | "http"))
        .ok_or_else(|| format!("{raw:?} is not an https git URL"))?;
    let (host, path) = rest
        .split_once('/')
        .ok_or_else(|| format!("{raw:?} names no repository"))?;
    let (repo_path, sub) = if let Some((before, after)) = path.split_once("_git/") {
        let (name, sub) = after.split_once('/').unwrap_or((after, ""));
        (format!("{before}_git/{name}"), sub.to_string())
    } else if let Some((r, sub)) = path.split_once("//") {
        (r.to_string(), sub.to_string())
    } else if let Some(i) = path.find(".git") {
        let (r, sub) = path.split_at(i + 4);
        (r.to_string(), sub.trim_start_matches('/').to_string())
    } else {
        let mut parts = path.splitn(3, '/');
        let org = parts.next().unwrap_or("");
        let name = parts.next().unwrap_or("");
        (
            format!("{org}/{name}"),
            parts.next().unwrap_or("").to_string(),
        )
    };
    if repo_path.split('/').filter(|p| !p.is_empty()).count() < 2 && !repo_path.contains("_git/") {
        return Err(format!("{raw:?} names no org/repo"));
    }
    if sub.split('/').next() == Some("..") {
        return Err(format!(
            "{raw:?}: a path that climbs out of the repository: refused"
        ));
    }
    let sub =
        normalize(&sub).ok_or_else(|| format!("{raw:?}: a path that leaves the repository"))?;
    Ok(RepoSpec {
        repo: format!(
            "{}://{host}/{}",
            scheme.to_ascii_lowercase(),
            repo_path.trim_end_matches('/')
        ),
        path: sub,
        git_ref,
    })
}

/// A fetched commit: its id and its files (symlinks as links, for the tree to resolve).
pub struct Checkout {
    pub commit: String,
    pub files: BTreeMap<String, Entry>,
}

/// Clients the subtransport may use, by the id in a `gpuledger://<id>/<url>` remote URL.
static CLIENTS: Mutex<Option<HashMap<u64, Weak<Http>>>> = Mutex::new(None);
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
/// The scheme gpuledger's remotes use, so libgit2's own transports are never involved.
const SCHEME: &str = "gpuledger";
const PREFIX: &str = "gpuledger://";

fn register_transport() -> Result<(), String> {
    REGISTERED
        .get_or_init(|| {
            // SAFETY: registration happens once, under `OnceLock`, which orders it before every
            // remote of this scheme is created. libgit2 appends `://` to the scheme.
            unsafe {
                git2::transport::register(SCHEME, |remote| {
                    Transport::smart(remote, true, Subtransport)
                })
            }
            .map_err(|e| e.message().to_string())
        })
        .clone()
}

/// The `gpuledger://` smart subtransport: git's HTTP protocol over [`Http`].
struct Subtransport;

impl SmartSubtransport for Subtransport {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let rest = url
            .strip_prefix(PREFIX)
            .ok_or_else(|| git2::Error::from_str("not a gpuledger URL"))?;
        let (id, real) = rest
            .split_once('/')
            .ok_or_else(|| git2::Error::from_str("not a gpuledger URL"))?;
        let id: u64 = id
            .parse()
            .map_err(|_| git2::Error::from_str("bad client id"))?;
        let http = CLIENTS
            .lock()
            .ok()
            .and_then(|m| m.as_ref().and_then(|m| m.get(&id)).and_then(Weak::upgrade))
            .ok_or_else(|| git2::Error::from_str("the fetch client is gone"))?;
        let real = real.trim_end_matches('/').to_string();
        match action {
            Service::UploadPackLs => {
                let u = format!("{real}/info/refs?service=git-upload-pack");
                let got = http
                    .send(&Req::get(&u, &["*/*"], MAX_ARTIFACT_BYTES))
                    .and_then(|g| g.ok(&shown(&real)))
                    .map_err(|e| git2::Error::from_str(&e.to_string()))?;
                let ct = got
                    .headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                if ct != "application/x-git-upload-pack-advertisement" {
                    return Err(git2::Error::from_str(&format!(
                        "{} is not a smart HTTP git server (content type {ct:?})",
                        shown(&real)
                    )));
                }
                Ok(Box::new(Cursor::new(got.body.to_vec())))
            }
            Service::UploadPack => Ok(Box::new(Post {
                http,
                url: format!("{real}/git-upload-pack"),
                request: Vec::new(),
                response: None,
            })),
            _ => Err(git2::Error::from_str("gpuledger only fetches")),
        }
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

/// One stateless `git-upload-pack` exchange: what libgit2 writes is posted on its first read.
struct Post {
    http: Arc<Http>,
    url: String,
    request: Vec<u8>,
    response: Option<Cursor<Vec<u8>>>,
}

impl Write for Post {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.request.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Read for Post {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.response.is_none() {
            let body = std::mem::take(&mut self.request);
            let got = self
                .http
                .send(&Req {
                    method: http::Method::POST,
                    body: Some(("application/x-git-upload-pack-request", body.into())),
                    ..Req::get(
                        &self.url,
                        &["application/x-git-upload-pack-result"],
                        MAX_ARTIFACT_BYTES,
                    )
                })
                .and_then(|g| g.ok(&shown(&self.url)))
                .map_err(std::io::Error::other)?;
            self.response = Some(Cursor::new(got.body.to_vec()));
        }
        match &mut self.response {
            Some(r) => r.read(buf),
            None => Ok(0),
        }
    }
}

/// The commit `spec`'s ref names, with its files: from the cache when the commit is there,
/// else fetched (depth 1).
pub fn fetch(http: &Arc<Http>, store: &Store, spec: &RepoSpec) -> Result<Checkout, FetchError> {
    let fail = |m: String| FetchError::Git {
        url: shown(&spec.repo),
        message: m,
    };
    register_transport().map_err(fail)?;
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Ok(mut m) = CLIENTS.lock() {
        let map = m.get_or_insert_with(HashMap::new);
        map.retain(|_, w| w.strong_count() > 0);
        map.insert(id, Arc::downgrade(http));
    }
    // One bare repository per URL in the cache; a temporary one without a cache.
    let tmp;
    let dir = match store.subdir("git") {
        Some(d) => {
            let hash = sha256(spec.repo.as_bytes());
            d.join(format!("{}.git", hash.get(..24).unwrap_or(&hash)))
        }
        None => {
            tmp = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
            tmp.path().join("repo.git")
        }
    };
    let repo = git2::Repository::open_bare(&dir)
        .or_else(|_| git2::Repository::init_bare(&dir))
        .map_err(|e| fail(format!("the cache's repository: {}", e.message())))?;
    let url = format!("{PREFIX}{id}/{}", spec.repo);
    let git = |e: git2::Error| fail(e.message().to_string());
    let mut remote = repo.remote_anonymous(&url).map_err(git)?;
    // Which commit the ref names now (a full commit id names itself).
    let wanted = spec.git_ref.clone().unwrap_or_else(|| "HEAD".into());
    let full_sha = wanted.len() == 40 && wanted.bytes().all(|b| b.is_ascii_hexdigit());
    let (commit, refspec) = if full_sha {
        (wanted.to_ascii_lowercase(), wanted.to_ascii_lowercase())
    } else {
        remote.connect(git2::Direction::Fetch).map_err(git)?;
        let heads: Vec<(String, String)> = remote
            .list()
            .map_err(git)?
            .iter()
            .map(|h| (h.name().to_string(), h.oid().to_string()))
            .collect();
        let _ = remote.disconnect();
        let find = |name: &str| {
            heads
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, o)| o.clone())
        };
        let candidates = if wanted == "HEAD" {
            vec!["HEAD".to_string()]
        } else {
            vec![
                format!("refs/tags/{wanted}^{{}}"),
                format!("refs/tags/{wanted}"),
                format!("refs/heads/{wanted}"),
                wanted.clone(),
            ]
        };
        let (name, oid) = candidates
            .iter()
            .find_map(|c| find(c).map(|o| (c.trim_end_matches("^{}").to_string(), o)))
            .ok_or_else(|| fail(format!("no branch or tag {wanted:?}")))?;
        (oid, name)
    };
    let oid = git2::Oid::from_str(&commit).map_err(git)?;
    if repo.find_commit(oid).is_err() {
        let mut opts = git2::FetchOptions::new();
        opts.depth(1);
        opts.download_tags(git2::AutotagOption::None);
        opts.follow_redirects(git2::RemoteRedirect::None);
        remote
            .fetch(&[refspec.as_str()], Some(&mut opts), None)
            .map_err(git)?;
    }
    let c = repo
        .find_commit(oid)
        .map_err(|e| fail(format!("commit {commit} was not fetched: {}", e.message())))?;
    let tree = c.tree().map_err(git)?;
    let mut files = BTreeMap::new();
    let mut total: u64 = 0;
    let mut problem = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, e| {
        if e.kind() != Some(git2::ObjectType::Blob) {
            return git2::TreeWalkResult::Ok;
        }
        let Ok(name) = e.name() else {
            return git2::TreeWalkResult::Ok;
        };
        let Ok(blob) = repo.find_blob(e.id()) else {
            return git2::TreeWalkResult::Ok;
        };
        let size = u64::try_from(blob.size()).unwrap_or(u64::MAX);
        total = total.saturating_add(size);
        if total > MAX_ARTIFACT_BYTES {
            problem = Some(format!(
                "more than {MAX_ARTIFACT_BYTES} bytes at {commit}: refused"
            ));
            return git2::TreeWalkResult::Abort;
        }
        let entry = if size > MAX_FILE_BYTES {
            Entry::TooLarge(size)
        } else if e.filemode() == 0o120000 {
            Entry::Symlink(String::from_utf8_lossy(blob.content()).into_owned())
        } else {
            Entry::File(blob.content().to_vec())
        };
        files.insert(format!("{dir}{name}"), entry);
        git2::TreeWalkResult::Ok
    })
    .map_err(git)?;
    if let Some(p) = problem {
        return Err(fail(p));
    }
    Ok(Checkout { commit, files })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> RepoSpec {
        parse(s).unwrap()
    }

    /// The forms of kustomize's examples/remoteBuild.md and repospec tests.
    #[test]
    fn kustomize_git_urls() {
        let s = p("github.com/kubernetes-sigs/kustomize/examples/multibases?ref=v1.0.6");
        assert_eq!(s.repo, "https://github.com/kubernetes-sigs/kustomize");
        assert_eq!(s.path, "examples/multibases");
        assert_eq!(s.git_ref.as_deref(), Some("v1.0.6"));
        let s = p("https://github.com/org/repo//deploy/base?ref=main&timeout=90");
        assert_eq!(
            (s.repo.as_str(), s.path.as_str()),
            ("https://github.com/org/repo", "deploy/base")
        );
        let s = p("git::https://gitlab.example.com/group/sub/repo.git/overlays/prod?version=v2");
        assert_eq!(s.repo, "https://gitlab.example.com/group/sub/repo.git");
        assert_eq!(
            (s.path.as_str(), s.git_ref.as_deref()),
            ("overlays/prod", Some("v2"))
        );
        let s = p("https://dev.azure.com/org/project/_git/repo/path/x?ref=r");
        assert_eq!(s.repo, "https://dev.azure.com/org/project/_git/repo");
        assert_eq!(s.path, "path/x");
        assert_eq!(p("https://github.com/org/repo").path, "");
        assert!(parse("git@github.com:org/repo.git//x").is_err());
        assert!(parse("ssh://git@github.com/org/repo").is_err());
        assert!(parse("https://github.com/org/repo//../../etc").is_err());
    }
}
