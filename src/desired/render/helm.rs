//! Helm units: `helm template` of a chart directory of the repository, with the release, values
//! files, inline values and parameters an Argo CD Application or Flux HelmRelease gives it.
//!
//! helm runs `template` only, without post-renderers or dependency updates, so nothing is
//! fetched; its cache, config, data and plugin homes are in the throwaway HOME, and the chart,
//! its `file://` dependencies and every values file have passed the sandbox first. Parameters are
//! passed exactly as Argo CD passes them. Each object's source is the chart template named by the
//! `# Source:` comment helm writes above it. The output is split here for kustomize's `helmCharts`
//! too (the `helm_charts` module), which runs this same sandboxed helm.

use std::path::Path;

use super::tools::{Site, clean_paths, rel, sandbox_env, write};
use crate::desired::error::{FileError, RenderError, SandboxError};
use crate::desired::remote::deps::Supply;
use crate::desired::sandbox;
use crate::desired::tree::{REMOTE_MOUNTS, join, normalize};
use crate::desired::{CHART_FILE, HelmArgs, Unit};
use crate::k8s::object::Object;
use crate::k8s::read::read_str;
use crate::util::process::{Run, run};

/// The unit's objects, unplaced.
pub(super) fn helm(site: &Site<'_>, unit: &Unit, a: &HelmArgs) -> Result<Vec<Object>, RenderError> {
    let Site {
        tree,
        root,
        home,
        number,
        tools,
    } = *site;
    let program = tools.helm.as_ref().ok_or(RenderError::NoHelm)?;
    let prepared = unit.prepared.as_deref();
    let fetched = prepared.and_then(|p| p.chart.as_ref());
    // Where the chart is in the copy, and what its templates are called in the report.
    let (chart_dir, shown) = match fetched {
        Some(c) => {
            sandbox::helm_files(tree, a)?;
            let hex = c.digest.trim_start_matches("sha256:");
            let dir = format!(
                "{REMOTE_MOUNTS}/charts/{}/{}",
                hex.get(..16).unwrap_or(hex),
                c.name
            );
            write_once(
                &root.join(&dir),
                c.files.iter().map(|(p, b)| (p.as_str(), b.as_slice())),
            )?;
            let at = unit.chart.as_ref().map_or_else(
                || format!("{}@{}", unit.path, c.version),
                |r| r.at(&c.version),
            );
            (dir, at)
        }
        None => {
            sandbox::helm(tree, &unit.path, a)?;
            (unit.path.clone(), unit.path.clone())
        }
    };
    for (name, supply) in prepared.map(|p| p.deps.as_slice()).unwrap_or_default() {
        let to = root.join(&chart_dir).join("charts").join(name);
        match supply {
            Supply::Fetched(c) => {
                write_once(&to, c.files.iter().map(|(p, b)| (p.as_str(), b.as_slice())))?
            }
            // `file://`: a directory of the fetched chart, or of the repository (which the
            // sandbox has checked stays inside it).
            Supply::Local(path) => match fetched {
                Some(c) => {
                    let dir = normalize(path).ok_or_else(|| {
                        RenderError::Helm(format!(
                            "{shown}: dependency {name} at file://{path} leaves the chart: refused"
                        ))
                    })?;
                    let prefix = format!("{dir}/");
                    write_once(
                        &to,
                        c.files
                            .iter()
                            .filter_map(|(p, b)| Some((p.strip_prefix(&prefix)?, b.as_slice()))),
                    )?;
                }
                None => {
                    let dir = sandbox::resolve(tree, &unit.path, path).map_err(|why| {
                        SandboxError::Dependency {
                            chart_file: join(&unit.path, "Chart.yaml"),
                            entry: path.clone(),
                            why,
                        }
                    })?;
                    let prefix = format!("{dir}/");
                    let files: Vec<(String, Vec<u8>)> = tree
                        .files_under(&dir)
                        .filter_map(|f| {
                            Some((
                                f.strip_prefix(&prefix)?.to_string(),
                                tree.read(f).ok()?.to_vec(),
                            ))
                        })
                        .collect();
                    write_once(&to, files.iter().map(|(p, b)| (p.as_str(), b.as_slice())))?;
                }
            },
        }
    }
    let mut args = vec![
        "template".to_string(),
        a.release.clone(),
        format!("./{}", rel(&chart_dir)),
        "--namespace".into(),
        unit.namespace.clone().unwrap_or_else(|| "default".into()),
        // Helm's schema loader fetches a `values.schema.json`'s remote `$ref`s over HTTP: from a
        // pull request's chart, a request to any address the runner reaches. Rendering fetches
        // nothing by itself (see remote/policy.rs), so values are not checked against schemas.
        SKIP_SCHEMA_VALIDATION.into(),
    ];
    if a.include_crds {
        args.push("--include-crds".into());
    }
    for f in &a.values_files {
        let Some(inside) = f.strip_prefix(CHART_FILE) else {
            args.push("--values".into());
            args.push(format!("./{f}"));
            continue;
        };
        let has = fetched.is_some_and(|c| c.files.contains_key(inside));
        if !has && a.ignore_missing_values {
            continue;
        }
        if !has {
            return Err(RenderError::Helm(format!(
                "values file {inside} is not in the chart {shown}"
            )));
        }
        args.push("--values".into());
        args.push(format!("./{chart_dir}/{inside}"));
    }
    for (n, v) in a.values.iter().enumerate() {
        let name = format!(".gpuledger-values-{number}-{n}.yaml");
        write(&root.join(&name), v)?;
        args.push("--values".into());
        args.push(name);
    }
    args.extend(set_args(a, &chart_dir));
    let out = run(&Run {
        program,
        args,
        cwd: root,
        env: helm_env(home),
        timeout: tools.timeout,
    })
    .map_err(|e| RenderError::Helm(clean_paths(&e.to_string(), root)))?;
    helm_objects(&out, &shown)
}

/// Writes a directory of fetched files once: into a temporary sibling, renamed into place, so a
/// unit rendering beside this one never reads it half written, and a second writer leaves it.
fn write_once<'a>(
    dest: &Path,
    files: impl Iterator<Item = (&'a str, &'a [u8])>,
) -> Result<(), FileError> {
    if dest.exists() {
        return Ok(());
    }
    let parent = dest.parent().unwrap_or(dest);
    std::fs::create_dir_all(parent).map_err(|e| FileError::new(parent.display(), e))?;
    let tmp = tempfile::Builder::new()
        .prefix(".gpuledger-tmp-")
        .tempdir_in(parent)
        .map_err(|e| FileError::new(parent.display(), e))?;
    for (p, bytes) in files {
        // Paths come normalised from the archive reader or the tree: never absolute, never `..`.
        let Some(p) = normalize(p).filter(|p| !p.is_empty()) else {
            continue;
        };
        let to = tmp.path().join(&p);
        if let Some(d) = to.parent() {
            std::fs::create_dir_all(d).map_err(|e| FileError::new(d.display(), e))?;
        }
        std::fs::write(&to, bytes).map_err(|e| FileError::new(to.display(), e))?;
    }
    let tmp = tmp.keep();
    if let Err(e) = std::fs::rename(&tmp, dest) {
        let _ = std::fs::remove_dir_all(&tmp);
        if !dest.exists() {
            return Err(FileError::new(dest.display(), e));
        }
    }
    Ok(())
}

/// The helm flag that keeps `helm template` from checking values against the chart's
/// `values.schema.json`, whose remote `$ref`s Helm would fetch (helm 3.16 and later).
pub(super) const SKIP_SCHEMA_VALIDATION: &str = "--skip-schema-validation";

/// helm's environment: the renderer's, with helm's cache, config, data and plugin homes in the
/// throwaway HOME, so no repository and no user configuration reaches it.
pub(super) fn helm_env(home: &Path) -> Vec<(String, String)> {
    let h = |s: &str| home.join(s).display().to_string();
    let mut env = sandbox_env(home);
    env.extend([
        ("HELM_CACHE_HOME".to_string(), h("cache")),
        ("HELM_CONFIG_HOME".to_string(), h("config")),
        ("HELM_DATA_HOME".to_string(), h("data")),
        ("HELM_PLUGINS".to_string(), h("plugins")),
    ]);
    env
}

/// `--set`, `--set-string` and `--set-file` exactly as Argo CD builds them (argo-cd
/// `util/helm/cmd.go`, `template` and `cleanSetParameters`): `name=value` with the name as written
/// and every comma of the value escaped unless it is already escaped or the value is a `{…}` list,
/// so `v1,gpus=0` sets one key, never a second one. A file parameter's path is escaped the same way.
fn set_args(a: &HelmArgs, chart_dir: &str) -> Vec<String> {
    let mut args = Vec::new();
    for (flag, values) in [("--set", &a.set), ("--set-string", &a.set_string)] {
        for (k, v) in values {
            args.push(flag.to_string());
            args.push(format!("{k}={}", clean_set_parameter(v)));
        }
    }
    for (k, path) in &a.set_file {
        let path = match path.strip_prefix(CHART_FILE) {
            Some(inside) => format!("{chart_dir}/{inside}"),
            None => path.clone(),
        };
        args.push("--set-file".into());
        args.push(format!("{k}={}", clean_set_parameter(&format!("./{path}"))));
    }
    args
}

/// Argo CD's `cleanSetParameters`: a value in braces is a helm list and keeps its commas; every
/// other comma not preceded by a backslash becomes `\,`.
fn clean_set_parameter(v: &str) -> String {
    if v.starts_with('{') && v.ends_with('}') {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len());
    let mut prev = None;
    for c in v.chars() {
        if c == ',' && prev != Some('\\') {
            out.push_str("\\,");
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    out
}

/// The documents of `helm template` output, each with the template it came from as a tree path
/// (`# Source: <chart name>/templates/x.yaml` → `<chart path>/templates/x.yaml`), when it says.
pub(super) fn helm_documents<'o>(
    out: &'o str,
    chart_path: &'o str,
) -> impl Iterator<Item = (&'o str, Option<String>)> + 'o {
    out.split("\n---")
        .map(|d| d.trim_start_matches("---"))
        .map(move |doc| {
            let source = doc
                .lines()
                .find_map(|l| l.strip_prefix("# Source: "))
                .map(|s| join(chart_path, s.split_once('/').map_or(s, |(_, r)| r)));
            (doc, source)
        })
}

/// Splits `helm template` output at its documents and names each after its `# Source:` template.
fn helm_objects(out: &str, chart_path: &str) -> Result<Vec<Object>, RenderError> {
    let mut objs = Vec::new();
    for (doc, source) in helm_documents(out, chart_path) {
        let source = source.unwrap_or_else(|| format!("{} (helm)", rel(chart_path)));
        let mut parsed = match read_str(doc, &source).and_then(crate::workload::checked) {
            Ok(o) => o,
            Err(e) if e.message.contains("no apiVersion and kind") => continue, // NOTES-like leftovers
            // helm's own decoder keeps a duplicated key's later value: so does this.
            Err(e) if e.message.contains("duplicate mapping key") => {
                let (read, note) = crate::desired::lenient::last_wins(doc, &source, &e);
                tracing::warn!("{note}");
                read.and_then(crate::workload::checked)?
            }
            Err(e) => return Err(crate::desired::lenient::plain_words(e).into()),
        };
        for o in &mut parsed {
            o.source.line = None; // lines of rendered output are not lines of the template
        }
        objs.extend(parsed);
    }
    Ok(objs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Argo CD's `cleanSetParameters` (argo-cd util/helm/cmd_test.go cases among them).
    #[test]
    fn set_parameters_are_escaped_as_argo_cd_does() {
        for (value, want) in [
            ("v1,gpus=0", r"v1\,gpus=0"),
            (r"v1\,gpus=0", r"v1\,gpus=0"),
            ("{a,b,c}", "{a,b,c}"),
            ("{a,b", r"{a\,b"),
            ("a,b}", r"a\,b}"),
            (",", r"\,"),
            ("é,ü", r"é\,ü"),
            ("", ""),
        ] {
            assert_eq!(clean_set_parameter(value), want, "{value:?}");
        }
        let a = HelmArgs {
            set: [("image.tag".to_string(), "v1,gpus=0".to_string())].into(),
            set_string: [("gpus".to_string(), "4".to_string())].into(),
            set_file: [("cfg".to_string(), "charts/a,b.txt".to_string())].into(),
            ..HelmArgs::default()
        };
        assert_eq!(
            set_args(&a, "c"),
            [
                "--set",
                r"image.tag=v1\,gpus=0",
                "--set-string",
                "gpus=4",
                "--set-file",
                r"cfg=./charts/a\,b.txt"
            ]
        );
    }
}
