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
use crate::desired::error::RenderError;
use crate::desired::sandbox;
use crate::desired::tree::join;
use crate::desired::{HelmArgs, Unit};
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
    sandbox::helm(tree, &unit.path, a)?;
    let mut args = vec![
        "template".to_string(),
        a.release.clone(),
        format!("./{}", rel(&unit.path)),
        "--namespace".into(),
        unit.namespace.clone().unwrap_or_else(|| "default".into()),
    ];
    if a.include_crds {
        args.push("--include-crds".into());
    }
    for f in &a.values_files {
        args.push("--values".into());
        args.push(format!("./{f}"));
    }
    for (n, v) in a.values.iter().enumerate() {
        let name = format!(".gpuledger-values-{number}-{n}.yaml");
        write(&root.join(&name), v)?;
        args.push("--values".into());
        args.push(name);
    }
    args.extend(set_args(a));
    let out = run(&Run {
        program,
        args,
        cwd: root,
        env: helm_env(home),
        timeout: tools.timeout,
    })
    .map_err(|e| RenderError::Helm(clean_paths(&e.to_string(), root)))?;
    helm_objects(&out, &unit.path)
}

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
fn set_args(a: &HelmArgs) -> Vec<String> {
    let mut args = Vec::new();
    for (flag, values) in [("--set", &a.set), ("--set-string", &a.set_string)] {
        for (k, v) in values {
            args.push(flag.to_string());
            args.push(format!("{k}={}", clean_set_parameter(v)));
        }
    }
    for (k, path) in &a.set_file {
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
            Err(e) => return Err(e.into()),
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
            set_args(&a),
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
