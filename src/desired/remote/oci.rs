//! Charts in OCI registries, over the distribution API.
//!
//! Upstream: the OCI distribution spec (`GET /v2/<name>/tags/list`, `/manifests/<reference>`,
//! `/blobs/<digest>`; a `WWW-Authenticate: Bearer realm=…,service=…,scope=…` challenge answered
//! with a token from the realm), helm `pkg/registry/constants.go` (the chart's config
//! `application/vnd.cncf.helm.config.v1+json` and layer
//! `application/vnd.cncf.helm.chart.content.v1.tar+gzip`, the legacy `application/tar+gzip`
//! still read), `pkg/registry/client.go` (`Tags`: `_` in a tag is `+` of the version, tags that are
//! not strict semver dropped) and `pkg/registry/tag.go` (a version that parses is the tag itself,
//! no listing). Argo CD and Flux differ only in how a version picks a tag (see [`pick_tag`]).
//! A manifest fetched by digest, and every blob, is checked against its digest.
//!
//! Registries on loopback addresses (`localhost`, `127.0.0.0/8`, `::1`) are spoken to over plain
//! HTTP, as Docker and containerd treat them as insecure registries by default; every other over
//! HTTPS unless the source asks for plain HTTP (Flux `spec.insecure`).

use std::sync::Mutex;

use serde::Deserialize;

use super::error::FetchError;
use super::http::{Got, Http, Req};
use super::policy::{MAX_CHART_BYTES, MAX_INDEX_BYTES};
use super::refs::Rules;
use super::semver::{self, Version};
use super::store::{Store, sha256};

pub const HELM_CONFIG: &str = "application/vnd.cncf.helm.config.v1+json";
pub const HELM_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";
const LEGACY_LAYER: &str = "application/tar+gzip";
const MANIFEST_TYPES: [&str; 2] = [
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
];
/// Pages of a tag list followed, at most.
const MAX_TAG_PAGES: usize = 20;

/// A repository in a registry: `ghcr.io/org/charts/llm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// `host` or `host:port`.
    pub registry: String,
    pub path: String,
    pub scheme: &'static str,
}

impl Repo {
    /// `registry/path` (with or without `oci://`), no tag or digest.
    pub fn parse(reference: &str, insecure: bool) -> Result<Repo, FetchError> {
        let r = reference.trim();
        let r = r.strip_prefix("oci://").unwrap_or(r).trim_end_matches('/');
        let (registry, path) = r.split_once('/').ok_or_else(|| FetchError::Url {
            url: reference.to_string(),
            message: "an OCI reference is registry/repository".into(),
        })?;
        if registry.is_empty() || path.is_empty() || path.contains("..") {
            return Err(FetchError::Url {
                url: reference.to_string(),
                message: "an OCI reference is registry/repository".into(),
            });
        }
        let registry = registry.to_ascii_lowercase();
        let scheme = if insecure || loopback(&registry) {
            "http"
        } else {
            "https"
        };
        Ok(Repo {
            registry,
            path: path.to_string(),
            scheme,
        })
    }

    fn url(&self, rest: &str) -> String {
        format!(
            "{}://{}/v2/{}/{rest}",
            self.scheme, self.registry, self.path
        )
    }

    pub fn shown(&self) -> String {
        format!("oci://{}/{}", self.registry, self.path)
    }
}

fn loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => registry.rsplit_once(':').map_or(registry, |(h, _)| h),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    #[serde(default)]
    pub media_type: String,
    pub digest: String,
    #[serde(default)]
    pub size: u64,
}

#[derive(Debug, Deserialize)]
pub struct Manifest {
    pub config: Descriptor,
    #[serde(default)]
    pub layers: Vec<Descriptor>,
}

#[derive(Deserialize)]
struct TagList {
    #[serde(default)]
    tags: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    token: Option<String>,
    access_token: Option<String>,
}

/// A conversation with one repository of a registry, holding its bearer token once one is given.
pub struct Session<'a> {
    http: &'a Http,
    pub repo: Repo,
    token: Mutex<Option<String>>,
}

impl<'a> Session<'a> {
    pub fn new(http: &'a Http, repo: Repo) -> Session<'a> {
        Session {
            http,
            repo,
            token: Mutex::new(None),
        }
    }

    /// GET below `/v2/<repo>/`, answering one bearer challenge.
    fn get(&self, rest: &str, accept: &[&str], limit: u64) -> Result<Got, FetchError> {
        let url = self.repo.url(rest);
        let token = self.token.lock().ok().and_then(|t| t.clone());
        let send = |token: Option<&str>| {
            self.http.send(&Req {
                token: token.map(|t| (self.repo.registry.as_str(), t)),
                ..Req::get(&url, accept, limit)
            })
        };
        let got = send(token.as_deref())?;
        if got.status.as_u16() != 401 || token.is_some() {
            return Ok(got);
        }
        let Some(challenge) = got
            .headers
            .get(http::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_challenge)
        else {
            return Ok(got);
        };
        let t = self.token_from(&challenge)?;
        if let Ok(mut slot) = self.token.lock() {
            *slot = Some(t.clone());
        }
        send(Some(&t))
    }

    /// A pull token from the challenge's realm. The realm's own credential (when one is
    /// configured for its host) goes with the request; the registry's only when the realm is on
    /// the registry's host.
    fn token_from(&self, c: &Challenge) -> Result<String, FetchError> {
        let mut u = url::Url::parse(&c.realm).map_err(|e| FetchError::Url {
            url: c.realm.clone(),
            message: e.to_string(),
        })?;
        {
            let mut q = u.query_pairs_mut();
            if let Some(s) = &c.service {
                q.append_pair("service", s);
            }
            let scope = c
                .scope
                .clone()
                .unwrap_or_else(|| format!("repository:{}:pull", self.repo.path));
            q.append_pair("scope", &scope);
        }
        let got = self
            .http
            .send(&Req::get(u.as_str(), &["application/json"], 1024 * 1024))?
            .ok(&format!("the token service of {}", self.repo.registry))?;
        let a: TokenAnswer = serde_json::from_slice(&got.body)
            .map_err(|e| FetchError::invalid(format!("the token of {}", c.realm), e))?;
        a.token
            .or(a.access_token)
            .filter(|t| !t.is_empty())
            .inspect(|t| crate::util::redact::register(t))
            .ok_or_else(|| FetchError::invalid(format!("the token of {}", c.realm), "no token"))
    }

    /// Every tag of the repository, following `Link: <…>; rel="next"` pages.
    pub fn tags(&self) -> Result<Vec<String>, FetchError> {
        let mut out = Vec::new();
        let mut rest = "tags/list".to_string();
        for _ in 0..MAX_TAG_PAGES {
            let got = self
                .get(&rest, &["application/json"], MAX_INDEX_BYTES)?
                .ok(&format!("{} tags", self.repo.shown()))?;
            let list: TagList = serde_json::from_slice(&got.body)
                .map_err(|e| FetchError::invalid(format!("{} tags", self.repo.shown()), e))?;
            out.extend(list.tags.unwrap_or_default());
            let next = got
                .headers
                .get(http::header::LINK)
                .and_then(|l| l.to_str().ok())
                .and_then(next_link);
            match next.and_then(|n| n.split_once("/tags/list").map(|(_, q)| q.to_string())) {
                Some(q) => rest = format!("tags/list{q}"),
                None => return Ok(out),
            }
        }
        Ok(out)
    }

    /// The manifest a tag or digest names, and its digest (checked when asked for by digest).
    pub fn manifest(&self, reference: &str) -> Result<(String, Manifest), FetchError> {
        let what = format!("{}:{reference}", self.repo.shown());
        let got = self
            .get(
                &format!("manifests/{reference}"),
                &MANIFEST_TYPES,
                MAX_INDEX_BYTES,
            )?
            .ok(&what)?;
        let digest = format!("sha256:{}", sha256(&got.body));
        if reference.starts_with("sha256:") && !reference.eq_ignore_ascii_case(&digest) {
            return Err(FetchError::Digest {
                what,
                want: reference.to_string(),
                got: digest,
            });
        }
        let m: Manifest =
            serde_json::from_slice(&got.body).map_err(|e| FetchError::invalid(&what, e))?;
        Ok((digest, m))
    }

    /// A blob's bytes, from the cache when it holds them, checked against the digest.
    pub fn blob(&self, d: &Descriptor, limit: u64, store: &Store) -> Result<Vec<u8>, FetchError> {
        let hex = d
            .digest
            .strip_prefix("sha256:")
            .ok_or_else(|| FetchError::invalid(&d.digest, "only sha256 digests are read"))?
            .to_ascii_lowercase();
        if let Some(b) = store.get(&hex) {
            return Ok(b);
        }
        let what = format!("{}@{}", self.repo.shown(), d.digest);
        let got = self
            .get(&format!("blobs/{}", d.digest), &[], limit)?
            .ok(&what)?;
        let got_hex = sha256(&got.body);
        if got_hex != hex {
            return Err(FetchError::Digest {
                what,
                want: d.digest.clone(),
                got: format!("sha256:{got_hex}"),
            });
        }
        store.put(&got.body);
        Ok(got.body.to_vec())
    }
}

/// A bearer challenge's parameters.
#[derive(Debug, PartialEq, Eq)]
struct Challenge {
    realm: String,
    service: Option<String>,
    scope: Option<String>,
}

fn bearer_challenge(h: &str) -> Option<Challenge> {
    let rest = h
        .trim()
        .strip_prefix("Bearer ")
        .or_else(|| h.trim().strip_prefix("bearer "))?;
    let mut realm = None;
    let (mut service, mut scope) = (None, None);
    // key="value" pairs; values may hold commas (a scope list), so split on `",`.
    for part in rest.split("\",") {
        let (k, v) = part.split_once('=')?;
        let v = v.trim().trim_matches('"').to_string();
        match k.trim() {
            "realm" => realm = Some(v),
            "service" => service = Some(v),
            "scope" => scope = Some(v),
            _ => {}
        }
    }
    Some(Challenge {
        realm: realm?,
        service,
        scope,
    })
}

/// The target of `Link: <…>; rel="next"`.
fn next_link(h: &str) -> Option<String> {
    h.split(',').find_map(|l| {
        let (target, params) = l.split_once(';')?;
        params.contains("rel=\"next\"").then(|| {
            target
                .trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

/// The tag a chart version request names, by the controller's rules; `None` when the tags must
/// be listed to tell.
pub fn literal_tag(version: &str, rules: &Rules) -> Option<String> {
    let tag = |v: &str| v.replace('+', "_");
    match rules {
        Rules::Tag => Some(if version.is_empty() {
            "latest".into()
        } else {
            version.to_string()
        }),
        // Helm (and Argo CD, which calls it with a version that parses): a version that parses
        // is the tag, without listing.
        Rules::Argo => Version::parse(version).map(|_| tag(version)),
        Rules::Flux => Version::parse_flux(version).map(|_| tag(version)),
        Rules::Helm | Rules::FluxSemver { .. } => None,
    }
}

/// The tag a version range picks among `tags`, by the controller's rules.
pub fn pick_tag(
    tags: &[String],
    version: &str,
    rules: &Rules,
) -> Result<Option<String>, FetchError> {
    let as_version: Vec<String> = tags.iter().map(|t| t.replace('_', "+")).collect();
    let parse: fn(&str) -> Option<Version> = match rules {
        Rules::Helm => Version::parse_strict,
        Rules::Flux | Rules::FluxSemver { .. } => Version::parse_flux,
        Rules::Argo | Rules::Tag => Version::parse,
    };
    let filter = match rules {
        Rules::FluxSemver { filter: Some(f) } => Some(
            regex::Regex::new(f)
                .map_err(|e| FetchError::invalid(format!("semverFilter {f:?}"), e))?,
        ),
        _ => None,
    };
    let candidates = as_version
        .iter()
        .zip(tags)
        .filter(|(_, raw)| filter.as_ref().is_none_or(|f| f.is_match(raw)))
        .map(|(v, _)| v.as_str());
    let picked = semver::highest(candidates, version, parse)
        .map_err(|e| FetchError::invalid(format!("version {version:?}"), e))?;
    Ok(picked.map(|v| v.replace('+', "_")))
}

/// The chart layer of a manifest (Helm's media type, or the legacy one).
pub fn chart_layer(m: &Manifest) -> Option<&Descriptor> {
    m.layers
        .iter()
        .find(|l| l.media_type == HELM_LAYER)
        .or_else(|| m.layers.iter().find(|l| l.media_type == LEGACY_LAYER))
}

/// Bytes a chart layer may have.
pub const CHART_LIMIT: u64 = MAX_CHART_BYTES;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_schemes() {
        let r = Repo::parse("oci://ghcr.io/org/charts/llm", false).unwrap();
        assert_eq!(
            (r.registry.as_str(), r.path.as_str(), r.scheme),
            ("ghcr.io", "org/charts/llm", "https")
        );
        assert_eq!(
            Repo::parse("127.0.0.1:5000/c/llm", false).unwrap().scheme,
            "http"
        );
        assert_eq!(
            Repo::parse("localhost:5000/c/llm", false).unwrap().scheme,
            "http"
        );
        assert_eq!(
            Repo::parse("reg.example/c/llm", true).unwrap().scheme,
            "http"
        );
        assert!(Repo::parse("llm", false).is_err());
        assert!(Repo::parse("reg/../x", false).is_err());
    }

    #[test]
    fn challenges_and_links() {
        let c = bearer_challenge(
            r#"Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:org/llm:pull""#,
        )
        .unwrap();
        assert_eq!(c.realm, "https://ghcr.io/token");
        assert_eq!(c.scope.as_deref(), Some("repository:org/llm:pull"));
        assert_eq!(bearer_challenge("Basic realm=\"x\""), None);
        assert_eq!(
            next_link(r#"</v2/x/tags/list?n=100&last=b>; rel="next""#).as_deref(),
            Some("/v2/x/tags/list?n=100&last=b")
        );
    }

    #[test]
    fn tags_are_picked_as_each_controller_picks_them() {
        let tags: Vec<String> = [
            "1.0.0",
            "1.2.0_build.1",
            "1.10.0",
            "v2.0.0",
            "latest",
            "2.1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(literal_tag("1.2", &Rules::Argo).as_deref(), Some("1.2"));
        assert_eq!(literal_tag("1.2", &Rules::Flux), None);
        assert_eq!(
            literal_tag("1.2.0+build.1", &Rules::Flux).as_deref(),
            Some("1.2.0_build.1")
        );
        assert_eq!(literal_tag("", &Rules::Tag).as_deref(), Some("latest"));
        let pick = |v: &str, r: Rules| pick_tag(&tags, v, &r).unwrap();
        assert_eq!(pick("^1", Rules::Helm).as_deref(), Some("1.10.0"));
        assert_eq!(pick("*", Rules::Helm).as_deref(), Some("1.10.0"));
        assert_eq!(pick(">=2", Rules::Flux).as_deref(), Some("v2.0.0"));
        assert_eq!(pick(">=2", Rules::Argo).as_deref(), Some("2.1"));
        assert_eq!(pick(">=2", Rules::Helm), None);
        assert_eq!(
            pick(
                "1.x",
                Rules::FluxSemver {
                    filter: Some("^1\\.0".into())
                }
            )
            .as_deref(),
            Some("1.0.0")
        );
    }
}
