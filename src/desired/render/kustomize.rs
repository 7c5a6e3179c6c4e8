//! Kustomize units: `kustomize build` of the unit's directory, wrapped in a generated
//! kustomization that carries the app's own options (name prefix, images, replicas, patches, …),
//! with Flux's `postBuild.substitute` applied to the output.
//!
//! kustomize runs without `--enable-alpha-plugins`, `--enable-exec` or `--enable-helm`, so exec
//! plugins and KRM functions never run and kustomize itself never runs helm: a kustomization's
//! `helmCharts` are inflated first by gpuledger's own sandboxed helm (the `helm_charts` module).
//! The load restrictor is kustomize's root-only one, except for Flux, which builds without one;
//! either way the `sandbox` has checked every path the unit's kustomizations name first. A
//! directory without a kustomization gets one listing its manifests, as Flux does.
//!
//! Each object's source is the file kustomize's origin annotation names (and its line there, from
//! the parsed tree), or an inflated chart's template. The wrapper, the restrictor and the reading
//! of origins are shared with the batched builds (the `batch` module).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value, json};

use super::helm_charts;
use super::tools::{Site, clean_paths, rel, sandbox_env, write};
use crate::desired::error::{FileError, RenderError};
use crate::desired::kustomization::{KUSTOMIZATION_FILES, is_kustomize_dir};
use crate::desired::sourceignore::SourceIgnore;
use crate::desired::tree::{Tree, normalize};
use crate::desired::{Parsed, Unit, flux, sandbox};
use crate::k8s::object::{Object, Source};
use crate::k8s::read::read_str;
use crate::util::process::{Run, run};

const ORIGIN: &str = "config.kubernetes.io/origin";

/// What the kustomize units of one render share, as they build in parallel on one copy of the
/// repository.
#[derive(Default)]
pub(super) struct Shared {
    /// The repository's `.sourceignore`s, read once for all its Flux units.
    ignore: OnceLock<SourceIgnore>,
    /// Inflating `helmCharts` rewrites kustomization files in the copy, which units may share: one
    /// inflation at a time, so a unit never reads a file another is rewriting.
    inflating: Mutex<()>,
    /// A directory without a kustomization gets a generated one, per unit: units of one directory
    /// take turns writing and building it.
    generated: Mutex<BTreeMap<String, Arc<Mutex<()>>>>,
}

/// The unit's objects, unplaced.
pub(super) fn kustomize(
    site: &Site<'_>,
    shared: &Shared,
    unit: &Unit,
    overlay: &Map<String, Value>,
    recurse_plain: bool,
    parsed: &Parsed,
) -> Result<Vec<Object>, RenderError> {
    let Site {
        tree,
        root,
        home,
        tools,
        number,
    } = *site;
    let (program, pre) = tools.kustomize.as_ref().ok_or(RenderError::NoKustomize)?;
    let wrap_name = format!(".gpuledger-wrap-{number}");
    let built = sandbox::kustomize(tree, &unit.path, overlay, &wrap_name)?;
    let has_kustomization = is_kustomize_dir(tree, &unit.path);
    // Held while this unit's generated kustomization is written and built.
    let dir_lock = if has_kustomization {
        None
    } else {
        shared
            .generated
            .lock()
            .map(|mut m| m.entry(unit.path.clone()).or_default().clone())
            .ok()
    };
    let _dir_guard = dir_lock.as_ref().map(|l| l.lock());
    if !has_kustomization {
        // As Flux does for a plain directory: a kustomization of every manifest below it.
        let prefix = if unit.path.is_empty() {
            String::new()
        } else {
            format!("{}/", unit.path)
        };
        let files: Vec<String> = if recurse_plain {
            let ignore = shared.ignore.get_or_init(|| SourceIgnore::load(tree));
            flux::generated_resources(tree, &unit.path, parsed, ignore)
        } else {
            parsed
                .iter()
                .filter_map(|(p, r)| {
                    let rel = p.strip_prefix(&prefix)?;
                    // Unparsable by our typed reader is not unparsable by kustomize (`${var}`
                    // before substitution): every manifest goes in, kustomize has the last word.
                    (!rel.contains('/') && r.as_ref().map_or(true, |o| !o.is_empty()))
                        .then(|| rel.to_string())
                })
                .collect()
        };
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let k = json!({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": files});
        write(&root.join(&unit.path).join("kustomization.yaml"), &k)?;
    }
    // Remote resources point at what gpuledger fetched and mounted; `helmCharts` are rendered by
    // gpuledger's sandboxed helm into plain resources before kustomize runs, never by kustomize
    // `--enable-helm`. Both rewrite kustomizations in the copy, one unit at a time.
    {
        let _one_at_a_time = shared.inflating.lock();
        point_at_mounts(tree, root, &built)?;
        if unit.app_kind == "Kustomization" {
            helm_charts::refuse_for_flux(tree, &built)?;
        } else {
            helm_charts::inflate(tree, root, home, &built, tools)?;
        }
    }
    let restrictor = restrictor(unit);
    write_wrapper(root, &wrap_name, unit, overlay)?;
    let mut args = pre.clone();
    args.push(wrap_name.clone());
    args.push("--load-restrictor".into());
    args.push(restrictor.into());
    let build = |args: Vec<String>| {
        run(&Run {
            program,
            args,
            cwd: root,
            env: sandbox_env(home),
            timeout: tools.timeout,
        })
    };
    let out = match build(args) {
        Ok(out) => out,
        Err(wrapped) => {
            // The wrapper's error names the wrapper; kustomize's own error for the app's path is
            // what its author can act on. Build the path alone: when it fails too, that is the
            // error; when it builds, the app's options (prefix, patches, images) broke it.
            let path = rel(&unit.path);
            let mut direct = pre.clone();
            direct.extend([path.clone(), "--load-restrictor".into(), restrictor.into()]);
            return Err(match build(direct) {
                Err(own) => RenderError::Kustomize {
                    path,
                    message: kustomize_error(&clean_paths(&own.to_string(), root)),
                },
                Ok(_) => RenderError::KustomizeOptions {
                    path,
                    message: kustomize_error(&clean_paths(&wrapped.to_string(), root)),
                },
            });
        }
    };
    let out = substitute(out, unit);
    let mut objs = read_str(&out, &format!("{} (kustomize)", rel(&unit.path)))
        .and_then(crate::workload::checked)?;
    attribute(&mut objs, &wrap_name, parsed);
    Ok(objs)
}

/// Rewrites, in the copy only, each remote `resources`/`bases`/`components` entry of the
/// kustomizations in `dirs` to the directory its fetched content is mounted at (relative to the
/// kustomization, as kustomize reads it). A kustomization already rewritten for an earlier unit
/// has no remote entry left and is left as it is.
fn point_at_mounts(tree: &Tree, root: &Path, dirs: &[String]) -> Result<(), FileError> {
    for dir in dirs {
        let mounts: BTreeMap<&str, &str> = tree
            .remote_entries
            .iter()
            .filter(|((d, _), _)| d == dir)
            .filter_map(|((_, e), r)| Some((e.as_str(), r.as_ref().ok()?.as_str())))
            .collect();
        if mounts.is_empty() {
            continue;
        }
        let Some(path) = KUSTOMIZATION_FILES
            .iter()
            .map(|n| root.join(dir).join(n))
            .find(|p| p.is_file())
        else {
            continue;
        };
        let text = std::fs::read_to_string(&path).map_err(|e| FileError::new(path.display(), e))?;
        let Ok(Value::Object(mut k)) = serde_saphyr::from_str::<Value>(&text) else {
            continue;
        };
        let up = "../".repeat(dir.split('/').filter(|s| !s.is_empty()).count());
        let mut changed = false;
        for field in ["resources", "bases", "components"] {
            if let Some(Value::Array(entries)) = k.get_mut(field) {
                for e in entries.iter_mut() {
                    if let Some(m) = e.as_str().and_then(|s| mounts.get(s.trim())) {
                        *e = Value::String(format!("{up}{m}"));
                        changed = true;
                    }
                }
            }
        }
        if changed {
            write(&path, &Value::Object(k))?;
        }
    }
    Ok(())
}

/// The load restrictor a unit builds with. Flux's kustomize-controller builds with no load
/// restriction inside the repository (fluxcd/pkg kustomize/kustomize_generator.go, SecureBuild:
/// LoadRestrictionsNone on a filesystem that refuses anything outside the root), so an overlay may
/// read a patch beside its directory; the sandbox has already checked that every path stays in the
/// repository. Argo CD and bare kustomize keep kustomize's default, root-only.
pub(super) fn restrictor(unit: &Unit) -> &'static str {
    if unit.app_kind == "Kustomization" {
        "LoadRestrictionsNone"
    } else {
        "LoadRestrictionsRootOnly"
    }
}

/// Writes the unit's wrapper kustomization at the copy's root: the app's own options (prefix,
/// images, patches, …) over the unit's directory, with origin annotations on.
pub(super) fn write_wrapper(
    root: &Path,
    wrap_name: &str,
    unit: &Unit,
    overlay: &Map<String, Value>,
) -> Result<(), FileError> {
    let mut k = overlay.clone();
    k.insert(
        "apiVersion".into(),
        json!("kustomize.config.k8s.io/v1beta1"),
    );
    k.insert("kind".into(), json!("Kustomization"));
    k.insert("resources".into(), json!([format!("../{}", unit.path)]));
    k.insert("buildMetadata".into(), json!(["originAnnotations"]));
    write(
        &root.join(wrap_name).join("kustomization.yaml"),
        &Value::Object(k),
    )
}

/// The tree path of the file kustomize's origin annotation names, for a build rooted at the
/// top-level directory `built_in` (a wrapper or a batch): kustomize joins the paths it followed
/// from there (kustomize api/resource/origin.go, `Append`).
pub(super) fn origin_path(o: &Object, built_in: &str) -> Option<String> {
    let origin = o.meta.annotations.get(ORIGIN)?;
    let path = origin
        .lines()
        .find_map(|l| l.trim().strip_prefix("path:"))
        .map(str::trim)?;
    normalize(&format!("{built_in}/{path}"))
}

/// Gives each object of a kustomize build the source it came from — the file kustomize's origin
/// annotation names (and its line there), or an inflated chart's template — and drops the
/// annotations gpuledger asked for.
pub(super) fn attribute(objs: &mut [Object], built_in: &str, parsed: &Parsed) {
    for o in objs {
        let tree_path = origin_path(o, built_in);
        o.meta.annotations.remove(ORIGIN);
        // An object of an inflated chart comes from its template, not from the generated file.
        if let Some(template) = o.meta.annotations.remove(helm_charts::TEMPLATE_ANNOTATION) {
            o.source = Source {
                file: template.into(),
                line: None,
            };
            continue;
        }
        let Some(tree_path) = tree_path else {
            continue;
        };
        let line = parsed
            .get(&tree_path)
            .and_then(|r| r.as_ref().ok())
            .and_then(|src| {
                src.iter()
                    .find(|s| s.kind == o.kind && o.meta.name.contains(&s.meta.name))
                    .and_then(|s| s.source.line)
            });
        o.source = Source {
            file: tree_path.into(),
            line,
        };
    }
}

/// Flux `postBuild.substitute`: `${var}`, `${var:=default}`, `${var:-default}`; `$${var}` stays literal.
fn substitute(text: String, unit: &Unit) -> String {
    let Some(vars) = &unit.substitute else {
        return text;
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some((before, after)) = rest.split_once("${") {
        if let Some(literal) = before.strip_suffix('$') {
            out.push_str(literal);
            out.push_str("${");
            rest = after;
            continue;
        }
        out.push_str(before);
        let Some((expr, next)) = after.split_once('}') else {
            out.push_str("${");
            out.push_str(after);
            rest = "";
            break;
        };
        let (name, default) = match expr.split_once(":=").or_else(|| expr.split_once(":-")) {
            Some((n, d)) => (n, Some(d)),
            None => (expr, None),
        };
        // Flux replaces an unset variable without a default with nothing; one that the cluster's
        // ConfigMaps and Secrets (`substituteFrom`) may set is unknown here, and kept as written
        // (an empty value would break text the real value completes, `image: repo:${TAG}`).
        match vars.get(name).map(String::as_str).or(default) {
            Some(v) => out.push_str(v),
            None if unit.substitute_from_cluster => {
                out.push_str("${");
                out.push_str(expr);
                out.push('}');
            }
            None => {}
        }
        rest = next;
    }
    out.push_str(rest);
    out
}

/// kustomize's message out of what the runner captured: `kubectl kustomize` wraps it in a log line
/// (`E1202 07:21:59.870318 9108 run.go:72] "command failed" err="…"`) with Go's quoting; the
/// standalone `kustomize` prints `Error: …`. Anything else is kept as it is.
fn kustomize_error(msg: &str) -> String {
    if let Some((_, quoted)) = msg.split_once(" err=\"") {
        let quoted = quoted.trim_end();
        let inner = quoted.strip_suffix('"').unwrap_or(quoted);
        return inner.replace("\\\"", "\"").replace("\\\\", "\\");
    }
    match msg.split_once("Error: ") {
        Some((_, rest)) => rest.trim().to_string(),
        None => msg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kustomize_errors_are_kustomize_own_words() {
        assert_eq!(
            kustomize_error(
                "/usr/bin/kubectl failed (exit status: 1): E1202 07:21:59.870318    9108 run.go:72] \"command failed\" err=\"accumulating resources: 'x' \\\"quoted\\\"\"\n"
                    .trim_end()
            ),
            "accumulating resources: 'x' \"quoted\""
        );
        assert_eq!(
            kustomize_error("kustomize failed (exit status: 1): Error: no such file\n"),
            "no such file"
        );
        assert_eq!(kustomize_error("timed out"), "timed out");
    }

    #[test]
    fn flux_substitution() {
        let mut u = crate::desired::discover::plan_unit_for_tests();
        u.substitute = Some([("replicas".to_string(), "4".to_string())].into());
        let s = substitute(
            "a: ${replicas}\nb: ${missing:=7}\nc: $${replicas}\nd: ${gone}\n".into(),
            &u,
        );
        assert_eq!(s, "a: 4\nb: 7\nc: ${replicas}\nd: \n");
        // Multi-byte text around and inside the markers, and an unclosed one, never panic.
        let s = substitute("é${replicas}ü $é${ ${ünclosed".into(), &u);
        assert_eq!(s, "é4ü $é${ ${ünclosed");
        // With substituteFrom, a variable the cluster may set is unknown: kept as written (the
        // talos image of a home lab's upgrade plan, `talosctl:${TALOS_VERSION}`, stays readable).
        u.substitute_from_cluster = true;
        let s = substitute(
            "image: talosctl:${TALOS_VERSION}\nr: ${replicas}\nb: ${missing:=7}\n".into(),
            &u,
        );
        assert_eq!(s, "image: talosctl:${TALOS_VERSION}\nr: 4\nb: 7\n");
    }
}
