//! What `helm dependency build` adds to a chart before Argo CD renders it, and what Flux's
//! source-controller adds before it packages one: the dependencies `Chart.yaml` lists (or
//! `requirements.yaml`, for `apiVersion: v1` charts) that `charts/` lacks.
//!
//! Upstream: helm `pkg/downloader/manager.go` (`Build`: the versions of `Chart.lock` when there is
//! one; every dependency is fetched, enabled by its `condition` or not, since Helm checks that each
//! is present before it evaluates conditions), `internal/resolver/resolver.go` (a `file://`
//! repository is a path from the chart, an `oci://` one is listed for tags of `<repo>/<name>`,
//! any other is read through its index), and Argo CD `reposerver/repository/repository.go`
//! (`helmTemplate` runs the build only after `helm template` fails on a missing dependency,
//! which gives the same result as building what is missing first). Flux's dependency manager
//! (`internal/helm/chart/dependency_manager.go`) adds only what `charts/` lacks, too. A
//! dependency is present when a subchart of its name is in `charts/` (a directory or an archive),
//! as Helm's `CheckDependencies` matches them. Named repositories (`@stable`, `alias:stable`) live
//! in Argo CD's or Helm's own configuration, which the repository does not hold: such a
//! dependency is unknown, with that reason.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::Remote;
use super::archive::{self, Files};
use super::error::FetchError;
use super::refs::{ChartRef, ChartSource, FetchedChart, Resolved, Rules};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Requirement {
    name: String,
    version: String,
    repository: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DependencyList {
    dependencies: Vec<Requirement>,
}

/// A dependency a chart lacks, as `Chart.yaml` (and `Chart.lock`) name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dep {
    pub name: String,
    /// The locked version, else the range of `Chart.yaml`.
    pub version: String,
    pub repository: String,
}

/// Where a missing dependency comes from.
#[derive(Debug, Clone)]
pub enum Supply {
    /// Fetched from its repository.
    Fetched(FetchedChart),
    /// `file://`: this path, relative to the chart's directory.
    Local(String),
}

fn list(bytes: Option<&[u8]>) -> Vec<Requirement> {
    bytes
        .and_then(|b| {
            serde_saphyr::from_str::<Option<DependencyList>>(&String::from_utf8_lossy(b)).ok()
        })
        .flatten()
        .map(|l| l.dependencies)
        .unwrap_or_default()
}

/// The names of the subcharts `files` (a chart's files, by path from the chart) hold in
/// `charts/`: a directory's `Chart.yaml` name, an archive's.
pub fn present(files: &mut dyn Iterator<Item = (&str, &[u8])>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let name_of = |b: &[u8]| -> Option<String> {
        let v: serde_json::Value = serde_saphyr::from_str(&String::from_utf8_lossy(b)).ok()?;
        v.get("name")?.as_str().map(str::to_string)
    };
    for (path, bytes) in files {
        let Some(rest) = path.strip_prefix("charts/") else {
            continue;
        };
        match rest.split_once('/') {
            Some((_, "Chart.yaml")) => out.extend(name_of(bytes)),
            None if rest.ends_with(".tgz") => {
                if let Ok((_, f)) = archive::chart(bytes, path) {
                    out.extend(f.get("Chart.yaml").and_then(|b| name_of(b)));
                }
            }
            _ => {}
        }
    }
    out
}

/// The dependencies `Chart.yaml` (or `requirements.yaml`) lists that are not `present`, with the
/// versions `Chart.lock` (or `requirements.lock`) pins.
pub fn missing(files: &dyn Fn(&str) -> Option<Vec<u8>>, present: &BTreeSet<String>) -> Vec<Dep> {
    let chart = files("Chart.yaml");
    let mut reqs = list(chart.as_deref());
    let mut lock = list(files("Chart.lock").as_deref());
    if reqs.is_empty() {
        reqs = list(files("requirements.yaml").as_deref());
        lock = list(files("requirements.lock").as_deref());
    }
    reqs.into_iter()
        .filter(|r| !r.name.is_empty() && !present.contains(&r.name))
        .map(|r| {
            let locked = lock
                .iter()
                .find(|l| l.name == r.name && l.repository == r.repository)
                .map(|l| l.version.clone())
                .filter(|v| !v.is_empty());
            Dep {
                version: locked.unwrap_or(r.version),
                name: r.name,
                repository: r.repository.trim().to_string(),
            }
        })
        .collect()
}

/// Fetches a missing dependency (or says where a `file://` one is), and what it resolved to.
pub fn supply(remote: &Remote, dep: &Dep) -> Result<(Supply, Option<Resolved>), FetchError> {
    let repo = dep.repository.as_str();
    if let Some(path) = repo.strip_prefix("file://") {
        return Ok((Supply::Local(path.to_string()), None));
    }
    let source = if let Some(oci) = repo.strip_prefix("oci://") {
        ChartSource::Oci {
            reference: format!("{}/{}", oci.trim_end_matches('/'), dep.name),
            insecure: false,
        }
    } else if repo.starts_with("https://") || repo.starts_with("http://") {
        ChartSource::Repo {
            url: repo.to_string(),
            chart: dep.name.clone(),
        }
    } else if repo.is_empty() {
        return Err(FetchError::invalid(
            format!("dependency {}", dep.name),
            "no repository, and it is not in charts/",
        ));
    } else {
        return Err(FetchError::invalid(
            format!("dependency {} from {repo}", dep.name),
            "a named repository is defined in Argo CD's or Helm's own configuration, which the \
             repository does not hold",
        ));
    };
    let r = ChartRef {
        source,
        version: dep.version.clone(),
        digest: None,
        rules: Rules::Helm,
    };
    let c = remote.chart(&r)?;
    let resolved = Resolved {
        what: format!("dependency {}", dep.name),
        source: r.location(),
        wanted: dep.version.clone(),
        version: c.version.clone(),
        digest: c.digest.clone(),
    };
    Ok((Supply::Fetched(c), Some(resolved)))
}

/// A fetched chart's own files, as `missing` reads them.
pub fn reader(files: &Files) -> impl Fn(&str) -> Option<Vec<u8>> + '_ {
    move |p| files.get(p).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_charts_lacks_is_wanted_at_the_locked_version() {
        let chart = b"apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: redis\n  version: ^17\n  repository: https://charts.example.com\n- name: local\n  version: 0.1.0\n  repository: file://../local\n- name: here\n  version: 1.0.0\n  repository: https://charts.example.com\n  condition: here.enabled\n".to_vec();
        let lock = b"dependencies:\n- name: redis\n  version: 17.3.2\n  repository: https://charts.example.com\n".to_vec();
        let here = archive::pack(&[("here/Chart.yaml", b"name: here\nversion: 1.0.0\n")]);
        let files: Files = [
            ("Chart.yaml".to_string(), chart),
            ("Chart.lock".to_string(), lock),
            ("charts/here-1.0.0.tgz".to_string(), here),
        ]
        .into();
        let present = present(&mut files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
        assert_eq!(present, ["here".to_string()].into());
        let want = missing(&reader(&files), &present);
        assert_eq!(
            want,
            [
                Dep {
                    name: "redis".into(),
                    version: "17.3.2".into(),
                    repository: "https://charts.example.com".into()
                },
                Dep {
                    name: "local".into(),
                    version: "0.1.0".into(),
                    repository: "file://../local".into()
                },
            ]
        );
    }
}
