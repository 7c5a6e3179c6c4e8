//! The fetcher of a run and each rendered ref's view of it (see the module `remote`): what is
//! fetched once, from where a ref may fetch, and the source hosts it names.

use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine;

use super::error::{FetchError, Refusal};
use super::git::{self, Checkout, RepoSpec};
use super::helm_repo::{self, Index};
use super::http::{Http, Req, shown};
use super::policy::{
    self, Auth, Cidr, Credential, Gate, MAX_ARTIFACT_BYTES, MAX_INDEX_BYTES, Policy, Sources,
};
use super::refs::{ChartRef, ChartSource, FetchedChart};
use super::store::{self, Store, sha256};
use super::{archive, oci};

/// What remote rendering is told by the command line: whether it may fetch, and where it keeps
/// what it fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `--offline`: fetch nothing; every remote source is unknown, and says so.
    pub offline: bool,
    /// `--cache-dir`; the XDG cache when `None`.
    pub cache_dir: Option<PathBuf>,
}

/// One fetch per key, whoever asks first; the others wait for its result.
type Memo<K, V> = Mutex<HashMap<K, Arc<OnceLock<Result<V, FetchError>>>>>;

fn once<K: Eq + Hash + Clone, V: Clone>(
    memo: &Memo<K, V>,
    key: &K,
    f: impl FnOnce() -> Result<V, FetchError>,
) -> Result<V, FetchError> {
    let cell = match memo.lock() {
        Ok(mut m) => m.entry(key.clone()).or_default().clone(),
        Err(_) => Arc::new(OnceLock::new()),
    };
    cell.get_or_init(f).clone()
}

/// The I/O of remote fetching for a run: policy, client, cache and memory.
pub struct Fetcher {
    policy: Arc<Policy>,
    store: Store,
    http: OnceLock<Result<Arc<Http>, FetchError>>,
    indexes: Memo<String, Arc<Index>>,
    charts: Memo<ChartRef, FetchedChart>,
    repos: Memo<(String, Option<String>), Arc<Checkout>>,
    files: Memo<String, Arc<Vec<u8>>>,
}

impl Fetcher {
    /// A fetcher for `render.remote` of the configuration that applies (a check's base's) and the
    /// command line's options.
    pub fn new(cfg: &crate::config::RemoteConfig, options: &Options) -> Fetcher {
        let mut credentials = helm_registry_credentials();
        for c in &cfg.credentials {
            let env = |v: &Option<String>| {
                v.as_deref()
                    .and_then(|n| std::env::var(n).ok())
                    .filter(|s| !s.is_empty())
            };
            let auth = match (
                env(&c.token_env),
                env(&c.username_env),
                env(&c.password_env),
            ) {
                (Some(t), _, _) => Some(Auth::Bearer(t)),
                (None, Some(u), Some(p)) => Some(Auth::Basic {
                    username: u,
                    password: p,
                }),
                _ => None,
            };
            if let Some(auth) = auth {
                register_auth(&auth);
                credentials.retain(|x: &Credential| x.host != c.host.to_ascii_lowercase());
                credentials.push(Credential {
                    host: c.host.trim().to_ascii_lowercase(),
                    auth,
                });
            }
        }
        let policy = Policy {
            private: cfg
                .private_networks
                .iter()
                .filter_map(|c| Cidr::parse(c))
                .collect(),
            credentials,
            timeout: std::time::Duration::from_secs(cfg.timeout.0.max(1)),
        };
        let dir = options.cache_dir.clone().or_else(store::default_dir);
        Fetcher {
            policy: Arc::new(policy),
            store: Store::new(dir),
            http: OnceLock::new(),
            indexes: Mutex::default(),
            charts: Mutex::default(),
            repos: Mutex::default(),
            files: Mutex::default(),
        }
    }

    fn http(&self) -> Result<Arc<Http>, FetchError> {
        self.http
            .get_or_init(|| Http::new(self.policy.clone()).map(Arc::new))
            .clone()
    }

    fn index(&self, repo: &str) -> Result<Arc<Index>, FetchError> {
        once(&self.indexes, &repo.to_string(), || {
            let u = helm_repo::index_url(repo)?;
            let got = self
                .http()?
                .send(&Req::get(
                    u.as_str(),
                    &["application/x-yaml", "application/yaml", "*/*"],
                    MAX_INDEX_BYTES,
                ))?
                .ok(&shown(u.as_str()))?;
            helm_repo::parse(&got.body, &format!("the index of {}", shown(repo))).map(Arc::new)
        })
    }

    fn chart(&self, r: &ChartRef) -> Result<FetchedChart, FetchError> {
        once(&self.charts, r, || match &r.source {
            ChartSource::Repo { url, chart } => self.repo_chart(r, url, chart),
            ChartSource::Oci {
                reference,
                insecure,
            } => self.oci_chart(r, reference, *insecure),
        })
    }

    fn repo_chart(&self, r: &ChartRef, url: &str, chart: &str) -> Result<FetchedChart, FetchError> {
        let index = self.index(url)?;
        let entry = index.get(chart, &r.version, &r.rules, &shown(url))?;
        let at = helm_repo::archive_url(url, entry)?;
        let want = helm_repo::entry_digest(entry);
        let what = format!("chart {chart} {} from {}", entry.version, shown(url));
        let bytes = match want.as_deref().and_then(|d| self.store.get(d)) {
            Some(b) => b,
            None => {
                let got = self
                    .http()?
                    .send(&Req::get(at.as_str(), &["*/*"], policy::MAX_CHART_BYTES))?
                    .ok(&shown(at.as_str()))?;
                let hex = sha256(&got.body);
                if let Some(w) = &want
                    && *w != hex
                {
                    return Err(FetchError::Digest {
                        what,
                        want: format!("sha256:{w} (the index's)"),
                        got: format!("sha256:{hex}"),
                    });
                }
                self.store.put(&got.body);
                got.body.to_vec()
            }
        };
        let digest = format!("sha256:{}", sha256(&bytes));
        let (_, files) = archive::chart(&bytes, &what)?;
        Ok(FetchedChart {
            name: chart.to_string(),
            version: entry.version.clone(),
            digest,
            files: Arc::new(files),
        })
    }

    fn oci_chart(
        &self,
        r: &ChartRef,
        reference: &str,
        insecure: bool,
    ) -> Result<FetchedChart, FetchError> {
        let http = self.http()?;
        let repo = oci::Repo::parse(reference, insecure)?;
        let s = oci::Session::new(&http, repo);
        let tag = match &r.digest {
            Some(d) => d.clone(),
            None => match oci::literal_tag(&r.version, &r.rules) {
                Some(t) => t,
                None => {
                    let tags = s.tags()?;
                    oci::pick_tag(&tags, &r.version, &r.rules)?.ok_or_else(|| {
                        FetchError::NoVersion {
                            chart: s.repo.path.clone(),
                            wanted: r.version.clone(),
                            source_url: s.repo.shown(),
                            have: tags_shown(&tags),
                        }
                    })?
                }
            },
        };
        let (digest, manifest) = s.manifest(&tag)?;
        let what = format!("{}:{tag}", s.repo.shown());
        if manifest.config.media_type != oci::HELM_CONFIG {
            return Err(FetchError::invalid(
                &what,
                format!(
                    "not a Helm chart (config media type {:?}, Helm's is {})",
                    manifest.config.media_type,
                    oci::HELM_CONFIG
                ),
            ));
        }
        let layer = oci::chart_layer(&manifest)
            .ok_or_else(|| FetchError::invalid(&what, "the manifest has no Helm chart layer"))?;
        let bytes = s.blob(layer, oci::CHART_LIMIT, &self.store)?;
        let (top, files) = archive::chart(&bytes, &what)?;
        let version = chart_version(&files).unwrap_or_else(|| tag.replace('_', "+"));
        Ok(FetchedChart {
            name: top,
            version,
            digest,
            files: Arc::new(files),
        })
    }

    fn git(&self, spec: &RepoSpec) -> Result<Arc<Checkout>, FetchError> {
        once(
            &self.repos,
            &(spec.repo.clone(), spec.git_ref.clone()),
            || git::fetch(&self.http()?, &self.store, spec).map(Arc::new),
        )
    }

    fn file(&self, url: &str) -> Result<Arc<Vec<u8>>, FetchError> {
        once(&self.files, &url.to_string(), || {
            let got = self
                .http()?
                .send(&Req::get(url, &["*/*"], MAX_ARTIFACT_BYTES))?
                .ok(&shown(url))?;
            Ok(Arc::new(got.body.to_vec()))
        })
    }
}

fn tags_shown(tags: &[String]) -> String {
    match tags.len() {
        0 => "no tags".into(),
        n if n > 5 => format!(
            "{} and {} more",
            tags.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            n - 5
        ),
        _ => tags.join(", "),
    }
}

/// The `version` of a chart's `Chart.yaml`.
fn chart_version(files: &archive::Files) -> Option<String> {
    let text = String::from_utf8_lossy(files.get("Chart.yaml")?).into_owned();
    let v: serde_json::Value = serde_saphyr::from_str(&text).ok()?;
    v.get("version")?.as_str().map(str::to_string)
}

fn register_auth(a: &Auth) {
    match a {
        Auth::Basic { password, .. } => crate::util::redact::register(password),
        Auth::Bearer(t) => crate::util::redact::register(t),
    }
}

/// Credentials from Helm's registry configuration (`$HELM_REGISTRY_CONFIG`, else
/// `$XDG_CONFIG_HOME/helm/registry/config.json`, else `~/.config/helm/registry/config.json`; the
/// Docker `auths` format Helm writes on `helm registry login`), each bound to its host.
fn helm_registry_credentials() -> Vec<Credential> {
    let var = |v: &str| {
        std::env::var_os(v)
            .filter(|x| !x.is_empty())
            .map(PathBuf::from)
    };
    let file = var("HELM_REGISTRY_CONFIG").or_else(|| {
        var("XDG_CONFIG_HOME")
            .or_else(|| var("HOME").map(|h| h.join(".config")))
            .map(|d| d.join("helm/registry/config.json"))
    });
    let Some(text) = file.and_then(|f| std::fs::read_to_string(f).ok()) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (host, entry) in v
        .get("auths")
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flatten()
    {
        let host = host
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_ascii_lowercase();
        let decoded = entry
            .get("auth")
            .and_then(serde_json::Value::as_str)
            .and_then(|a| base64::engine::general_purpose::STANDARD.decode(a).ok())
            .and_then(|b| String::from_utf8(b).ok());
        let auth = match decoded.as_deref().and_then(|d| d.split_once(':')) {
            Some((u, p)) => Auth::Basic {
                username: u.to_string(),
                password: p.to_string(),
            },
            None => match entry
                .get("identitytoken")
                .and_then(serde_json::Value::as_str)
            {
                Some(t) => Auth::Bearer(t.to_string()),
                None => continue,
            },
        };
        register_auth(&auth);
        out.push(Credential { host, auth });
    }
    out
}

/// One rendered ref's access to the fetcher: whether and from where it may fetch, and the source
/// hosts it names.
pub struct Remote {
    fetcher: Arc<Fetcher>,
    gate: Gate,
    hosts: Mutex<BTreeSet<String>>,
}

impl Remote {
    /// `base_hosts`: for a check's head, the hosts the base's sources use (`None` for a trusted
    /// ref); `allow` is `render.remote.allow`.
    pub fn new(
        fetcher: Arc<Fetcher>,
        offline: bool,
        base_hosts: Option<BTreeSet<String>>,
        allow: &[String],
    ) -> Remote {
        Remote {
            fetcher,
            gate: Gate {
                offline,
                sources: base_hosts.map_or(Sources::Own, Sources::Fixed),
                allow: allow
                    .iter()
                    .map(|h| h.trim().to_ascii_lowercase())
                    .collect(),
            },
            hosts: Mutex::new(BTreeSet::new()),
        }
    }

    pub fn offline(&self) -> bool {
        self.gate.offline
    }

    /// Every source host this ref's apps named, fetched or not.
    pub fn hosts(&self) -> BTreeSet<String> {
        self.hosts.lock().map(|h| h.clone()).unwrap_or_default()
    }

    /// Records `url`'s host as one this ref uses and checks that fetching may start there.
    fn source(&self, url: &str) -> Result<(), FetchError> {
        let parsed = url::Url::parse(url).map_err(|e| FetchError::Url {
            url: shown(url),
            message: e.to_string(),
        })?;
        let host = policy::authority(&parsed).ok_or_else(|| FetchError::Url {
            url: shown(url),
            message: "no host".into(),
        })?;
        if let Ok(mut h) = self.hosts.lock() {
            h.insert(host.clone());
        }
        Ok(self.gate.source(&host)?)
    }

    pub fn chart(&self, r: &ChartRef) -> Result<FetchedChart, FetchError> {
        let url = match &r.source {
            ChartSource::Repo { url, .. } => url.clone(),
            ChartSource::Oci { reference, .. } => {
                format!("oci://{}", reference.trim_start_matches("oci://"))
            }
        };
        self.source(&url)?;
        self.fetcher.chart(r)
    }

    pub fn git(&self, spec: &RepoSpec) -> Result<Arc<Checkout>, FetchError> {
        self.source(&spec.repo)?;
        self.fetcher.git(spec)
    }

    /// A remote manifest's bytes (any status but 2xx is an error, with the status).
    pub fn file(&self, url: &str) -> Result<Arc<Vec<u8>>, FetchError> {
        self.source(url)?;
        self.fetcher.file(url)
    }

    /// Why nothing is fetched for this ref, when nothing may be.
    pub fn refusal(&self) -> Option<Refusal> {
        self.gate.offline.then_some(Refusal::Offline)
    }
}
