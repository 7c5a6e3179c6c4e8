//! Helm HTTP repositories: `index.yaml`, the version a request resolves to, and the archive.
//!
//! Upstream: helm `pkg/repo/v1/chartrepo.go` (`DownloadIndexFile`: the index is `<repo>/index.yaml`,
//! the repository URL getting a trailing `/` and keeping its query), `pkg/repo/v1/index.go`
//! (`loadIndex`: `apiVersion` required, versions sorted highest first, unparsable versions last;
//! `IndexFile.Get`: an exact version string first, else the highest match of the range, `*` when
//! none is given), `pkg/downloader/chart_downloader.go` (`ResolveChartVersion`: `urls[0]`, a
//! relative URL resolved against the repository URL with the repository's query; the digest with
//! an optional `sha256:` prefix). Flux source-controller reads the same index
//! (`internal/helm/repository/chart_repository.go`, `getChartVersion`: exact match, then `*` or
//! the range over versions parsed strictly with an optional `v`). Argo CD passes a version that
//! parses to `helm pull --version`, which is `IndexFile.Get`, and picks the highest match of a
//! range itself: the same choice. The archive's SHA-256 must match the index's `digest` when the
//! index gives one.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::error::FetchError;
use super::refs::Rules;
use super::semver::{self, Version};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct IndexFile {
    api_version: Option<String>,
    #[serde(default)]
    entries: BTreeMap<String, Vec<Option<Entry>>>,
}

/// One version of a chart in an index.
#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub urls: Vec<String>,
    #[serde(default)]
    pub digest: Option<String>,
}

/// A repository's index: versions by chart name.
#[derive(Debug, Clone)]
pub struct Index {
    pub entries: BTreeMap<String, Vec<Entry>>,
}

/// `<repo>/index.yaml`, the repository's query kept.
pub fn index_url(repo: &str) -> Result<url::Url, FetchError> {
    let base = with_slash(repo)?;
    let mut u = base.join("index.yaml").map_err(|e| FetchError::Url {
        url: repo.to_string(),
        message: e.to_string(),
    })?;
    u.set_query(base.query());
    Ok(u)
}

fn with_slash(repo: &str) -> Result<url::Url, FetchError> {
    let mut u = url::Url::parse(repo).map_err(|e| FetchError::Url {
        url: repo.to_string(),
        message: e.to_string(),
    })?;
    if !u.path().ends_with('/') {
        let p = format!("{}/", u.path());
        u.set_path(&p);
    }
    Ok(u)
}

/// Reads an index (JSON or YAML).
pub fn parse(bytes: &[u8], what: &str) -> Result<Index, FetchError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(FetchError::invalid(what, "empty index"));
    }
    let text = String::from_utf8_lossy(bytes);
    let file: IndexFile = if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).map_err(|e| FetchError::invalid(what, e))?
    } else {
        serde_saphyr::from_str(&text).map_err(|e| FetchError::invalid(what, e))?
    };
    if file.api_version.as_deref().is_none_or(str::is_empty) {
        return Err(FetchError::invalid(
            what,
            "no apiVersion: not a chart repository index",
        ));
    }
    Ok(Index {
        entries: file
            .entries
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().flatten().collect()))
            .collect(),
    })
}

impl Index {
    /// The entry `wanted` (a version or a range; empty for the latest stable) resolves to.
    pub fn get(
        &self,
        chart: &str,
        wanted: &str,
        rules: &Rules,
        source_url: &str,
    ) -> Result<&Entry, FetchError> {
        let versions = self.entries.get(chart).ok_or_else(|| FetchError::NoChart {
            chart: chart.to_string(),
            source_url: source_url.to_string(),
        })?;
        let parse = match rules {
            Rules::Flux | Rules::FluxSemver { .. } => Version::parse_flux,
            _ => Version::parse,
        };
        let wanted_range = match rules {
            Rules::Flux if wanted.trim() == "*" => "",
            _ => wanted,
        };
        let picked = semver::highest(
            versions.iter().map(|e| e.version.as_str()),
            wanted_range,
            parse,
        )
        .map_err(|e| FetchError::invalid(format!("version {wanted:?} of chart {chart}"), e))?;
        let none = || {
            let mut have: Vec<&str> = versions.iter().map(|e| e.version.as_str()).collect();
            have.sort_by(|a, b| match (Version::parse(a), Version::parse(b)) {
                (Some(x), Some(y)) => y.cmp(&x),
                _ => b.cmp(a),
            });
            let more = have.len().saturating_sub(5);
            have.truncate(5);
            FetchError::NoVersion {
                chart: chart.to_string(),
                wanted: wanted.to_string(),
                source_url: source_url.to_string(),
                have: if more > 0 {
                    format!("{} and {more} more", have.join(", "))
                } else if have.is_empty() {
                    "no versions".into()
                } else {
                    have.join(", ")
                },
            }
        };
        let v = picked.ok_or_else(none)?;
        versions.iter().find(|e| e.version == v).ok_or_else(none)
    }
}

/// Where an entry's archive is: `urls[0]`, relative to the repository (whose query it takes).
pub fn archive_url(repo: &str, entry: &Entry) -> Result<url::Url, FetchError> {
    let first = entry.urls.first().ok_or_else(|| {
        FetchError::invalid(
            format!("chart version {} in the index of {repo}", entry.version),
            "no urls",
        )
    })?;
    if let Ok(abs) = url::Url::parse(first) {
        return Ok(abs);
    }
    let base = with_slash(repo)?;
    let mut u = base.join(first).map_err(|e| FetchError::Url {
        url: first.clone(),
        message: e.to_string(),
    })?;
    u.set_query(base.query());
    Ok(u)
}

/// The entry's digest as hex, without an `algo:` prefix (helm `stripDigestAlgorithm`).
pub fn entry_digest(entry: &Entry) -> Option<String> {
    let d = entry.digest.as_deref()?.trim();
    let hex = d.rsplit_once(':').map_or(d, |(_, h)| h);
    (!hex.is_empty()).then(|| hex.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "apiVersion: v1\nentries:\n  llm:\n  - version: 1.2.0\n    urls: [charts/llm-1.2.0.tgz]\n    digest: sha256:ABC\n  - version: 1.10.0\n    urls: [https://cdn.example.com/llm-1.10.0.tgz]\n  - version: 2.0.0-rc.1\n    urls: [llm-2.0.0-rc.1.tgz]\n  -\n";

    #[test]
    fn versions_resolve_as_helm_and_flux_resolve_them() {
        let i = parse(INDEX.as_bytes(), "index").unwrap();
        let get = |w: &str, r: Rules| i.get("llm", w, &r, "repo").map(|e| e.version.clone());
        assert_eq!(get("", Rules::Argo).unwrap(), "1.10.0");
        assert_eq!(get("*", Rules::Flux).unwrap(), "1.10.0");
        assert_eq!(get("~1.2", Rules::Argo).unwrap(), "1.2.0");
        assert_eq!(get("1.2", Rules::Argo).unwrap(), "1.2.0");
        assert_eq!(get(">=2.0.0-0", Rules::Flux).unwrap(), "2.0.0-rc.1");
        let e = get("3.x", Rules::Argo).unwrap_err().to_string();
        assert!(
            e.contains("no version matching \"3.x\"") && e.contains("1.10.0, 1.2.0"),
            "{e}"
        );
        assert!(matches!(
            i.get("other", "", &Rules::Argo, "repo"),
            Err(FetchError::NoChart { .. })
        ));
        assert!(parse(b"entries: {}\n", "i").is_err());
        assert!(parse(b"  \n", "i").is_err());
    }

    #[test]
    fn urls_resolve_against_the_repository() {
        let i = parse(INDEX.as_bytes(), "index").unwrap();
        let e = &i.entries["llm"][0];
        assert_eq!(
            index_url("https://h.example/charts?token=x")
                .unwrap()
                .as_str(),
            "https://h.example/charts/index.yaml?token=x"
        );
        assert_eq!(
            archive_url("https://h.example/charts?token=x", e)
                .unwrap()
                .as_str(),
            "https://h.example/charts/charts/llm-1.2.0.tgz?token=x"
        );
        assert_eq!(
            archive_url("https://h.example/charts", &i.entries["llm"][1])
                .unwrap()
                .as_str(),
            "https://cdn.example.com/llm-1.10.0.tgz"
        );
        assert_eq!(entry_digest(e).as_deref(), Some("abc"));
    }
}
