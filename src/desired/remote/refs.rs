//! What an app names outside the repository, before anything is fetched, and what fetching found:
//! the types the source readers, the fetchers and the render step share.

use std::sync::Arc;

use super::archive::Files;

/// Whose rules pick a version from the ones a source has: the controllers differ in small ways
/// (see `super::semver` and each fetcher).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Rules {
    /// Argo CD (`reposerver/repository/repository.go`, `newHelmClientResolveRevision`).
    Argo,
    /// Flux source-controller's HelmChart (`internal/helm/repository/*chart_repository.go`).
    Flux,
    /// Flux `OCIRepository.spec.ref.semver`, with its `semverFilter` (a regular expression).
    FluxSemver { filter: Option<String> },
    /// This tag, as it is (Flux `ref.tag`, or `latest`).
    Tag,
    /// `helm dependency build` (helm `internal/resolver/resolver.go`).
    Helm,
}

/// Where a chart comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ChartSource {
    /// A Helm repository (`index.yaml`) and the chart's name in it.
    Repo { url: String, chart: String },
    /// An OCI registry: the chart's repository `registry/path/name`, without a scheme; `insecure`
    /// when the source asks for plain HTTP (Flux `spec.insecure`).
    Oci { reference: String, insecure: bool },
}

/// A chart to fetch: where from, which version (a version, a range, a tag; empty is the latest),
/// or a digest that pins it (OCI).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChartRef {
    pub source: ChartSource,
    pub version: String,
    pub digest: Option<String>,
    pub rules: Rules,
}

impl ChartRef {
    /// `oci://ghcr.io/org/charts/llm`, `https://charts.example.com (chart llm)`.
    pub fn location(&self) -> String {
        match &self.source {
            ChartSource::Repo { url, chart } => format!("{} (chart {chart})", shown(url)),
            ChartSource::Oci { reference, .. } => format!("oci://{reference}"),
        }
    }

    /// The chart at a version, as the sources of its objects name it:
    /// `oci://ghcr.io/org/charts/llm:1.2.3`, `https://charts.example.com/llm-1.2.3.tgz`.
    pub fn at(&self, version: &str) -> String {
        match &self.source {
            ChartSource::Repo { url, chart } => {
                format!("{}/{chart}-{version}.tgz", shown(url).trim_end_matches('/'))
            }
            ChartSource::Oci { reference, .. } => format!(
                "oci://{}:{}",
                reference.trim_start_matches("oci://"),
                version.replace('+', "_")
            ),
        }
    }

    /// What the app asked for: `llm ^1.2 from https://…`.
    pub fn describe(&self) -> String {
        let wanted = match (&self.digest, self.version.as_str()) {
            (Some(d), _) => format!("@{d}"),
            (None, "") => " (latest)".to_string(),
            (None, v) => format!(" {v}"),
        };
        format!("{}{wanted}", self.location())
    }
}

fn shown(url: &str) -> String {
    crate::util::redact::redact(url).into_owned()
}

/// A fetched chart: its files (without the archive's top directory), and what the request
/// resolved to.
#[derive(Debug, Clone)]
pub struct FetchedChart {
    pub name: String,
    pub version: String,
    /// `sha256:…` of the archive (HTTP) or of the OCI manifest.
    pub digest: String,
    pub files: Arc<Files>,
}

/// One thing fetched for an app, as the report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// `chart`, `dependency`, `kustomize base`, `manifest`.
    pub what: String,
    /// Where from (a URL, `oci://…`).
    pub source: String,
    /// What was asked for (`^1.2`, `main`), empty for the latest.
    pub wanted: String,
    /// What it resolved to (`1.2.3`, a commit).
    pub version: String,
    /// `sha256:…` (a chart archive or manifest) or the commit id.
    pub digest: String,
}
