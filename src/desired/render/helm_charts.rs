//! kustomize `helmCharts:` inflated by gpuledger's own sandboxed `helm template`, so that a
//! kustomization over a Helm chart renders as `kustomize build --enable-helm` would render it,
//! without ever passing `--enable-helm` (which makes kustomize run helm itself, with the full
//! environment, network and `helm pull`).
//!
//! Upstream: kustomize `api/internal/builtins/HelmChartInflationGenerator.go` (the generator) and
//! `api/types/helmchartargs.go` (the fields). For each `helmCharts` entry kustomize looks for the
//! chart at `<chartHome>/<name>` below the kustomization (`helmGlobals.chartHome`, default
//! `charts`) and uses it as found, whatever `version` or `repo` say; only a chart that is not there
//! is pulled from `repo` (an OCI `repo` included). Values: `valuesFile` (default
//! `<chartHome>/<name>/values.yaml`, read whether or not it is named), replaced or merged with
//! `valuesInline` by `valuesMerge` (`override`, the default: inline wins; `merge`: the file wins;
//! `replace`: inline alone), then `additionalValuesFiles` in order (values files are read through
//! kustomize's loader, so the root-only load restrictor keeps them in or below the kustomization's
//! directory; the chart directory goes to helm unrestricted); helm still reads the chart's
//! own `values.yaml` underneath, as it always does. `releaseName` (else `--generate-name`),
//! `namespace`, `includeCRDs`, `skipHooks`, `skipTests`, `apiVersions` and `kubeVersion` become
//! helm's flags.
//!
//! Here, in the materialized copy of the repository only, each kustomization of a unit's build that
//! has `helmCharts` gets its charts rendered by the same sandboxed `helm template` gpuledger runs
//! for chart apps (no network, trimmed environment, timeout, chart and values paths checked against
//! the repository first); the output goes to a generated file in that kustomization's directory,
//! listed under `resources`, and `helmCharts`/`helmGlobals` are removed. kustomize then applies
//! the kustomization's own transformers (namespace, patches, images, prefixes) to the chart's
//! objects exactly as it does with `--enable-helm`, where the generator's output joins the
//! resources before any transformer runs. A chart that is not in the repository is never pulled:
//! the unit fails and says so. Each generated object carries its chart template's path in an
//! annotation that the render step reads back as the object's source and removes.
//!
//! Argo CD builds kustomize with `--enable-helm` only when its `kustomize.buildOptions` say so, a
//! setting of the Argo CD instance that the repository does not show; a repository that commits
//! `helmCharts` for Argo CD has it set, so Argo CD apps and bare kustomize roots are inflated. Flux
//! never inflates them: a Flux Kustomization that reaches `helmCharts` fails, as it does in Flux.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::helm::{helm_documents, helm_env};
use super::tools::{Tools, clean_paths, write};
use crate::desired::HelmArgs;
use crate::desired::error::{FileError, InflateError};
use crate::desired::kustomization::KUSTOMIZATION_FILES;
use crate::desired::sandbox;
use crate::desired::tree::{Tree, join};
use crate::util::process::{Run, run};

/// The annotation that carries a chart object's template path through kustomize.
pub(super) const TEMPLATE_ANNOTATION: &str = "gpuledger.internal/chart-template";

/// The file a kustomization's inflated charts are written to, beside it.
const GENERATED: &str = ".gpuledger-helm-charts.yaml";

/// kustomize's default chart home (`types.HelmDefaultHome`).
const DEFAULT_CHART_HOME: &str = "charts";

/// `helmGlobals` (api/types/helmchartargs.go). `configHome` is never used: helm's homes are
/// gpuledger's throwaway ones.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HelmGlobals {
    chart_home: String,
}

/// One `helmCharts` entry (api/types/helmchartargs.go, `HelmChart`): the fields that change what
/// is rendered. `version` and `repo` only matter for a chart that is not present, which is not
/// rendered here.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HelmChart {
    name: String,
    version: String,
    repo: String,
    release_name: String,
    namespace: String,
    values_file: String,
    additional_values_files: Vec<String>,
    values_inline: Map<String, Value>,
    values_merge: String,
    #[serde(rename = "includeCRDs")]
    include_crds: bool,
    skip_hooks: bool,
    skip_tests: bool,
    api_versions: Vec<String>,
    kube_version: String,
}

/// For a Flux Kustomization: Flux's kustomize-controller never inflates `helmCharts` (it builds
/// without `--enable-helm` and does not run helm at all; fluxcd/kustomize-controller issues 548,
/// 579 and 1284, "wontfix"), so the build fails there with kustomize's "must specify
/// --enable-helm". Said here in words, naming the kustomization, instead of inflating what Flux
/// would never apply.
pub(super) fn refuse_for_flux(tree: &Tree, dirs: &[String]) -> Result<(), InflateError> {
    for dir in dirs {
        if let Some(file) = KUSTOMIZATION_FILES
            .iter()
            .map(|n| join(dir, n))
            .find(|f| tree.exists(f))
            && let Ok(bytes) = tree.read(&file)
            && let Ok(Value::Object(k)) =
                serde_saphyr::from_str::<Value>(&String::from_utf8_lossy(bytes))
            && ["helmCharts", "helmChartInflationGenerator"]
                .iter()
                .any(|f| k.get(*f).is_some_and(|c| !c.is_null()))
        {
            return Err(InflateError::Flux { file });
        }
    }
    Ok(())
}

/// Inflates the `helmCharts` of every kustomization directory in `dirs` (tree paths) inside the
/// materialized copy at `root`. A directory already inflated for an earlier unit of the same render
/// (its kustomization on disk no longer has `helmCharts`) is left as it is.
pub(super) fn inflate(
    tree: &Tree,
    root: &Path,
    home: &Path,
    dirs: &[String],
    tools: &Tools,
) -> Result<(), InflateError> {
    for dir in dirs {
        inflate_dir(tree, root, home, dir, tools)?;
    }
    Ok(())
}

fn inflate_dir(
    tree: &Tree,
    root: &Path,
    home: &Path,
    dir: &str,
    tools: &Tools,
) -> Result<(), InflateError> {
    // kustomize reads the first kustomization file it finds; so does this. It is read from the
    // copy on disk, not the tree, so that a directory inflated for an earlier unit is seen as such.
    let Some((name, path)) = KUSTOMIZATION_FILES
        .iter()
        .map(|n| (*n, root.join(dir).join(n)))
        .find(|(_, p)| p.is_file())
    else {
        return Ok(());
    };
    let file = join(dir, name);
    let text = std::fs::read_to_string(&path).map_err(|e| FileError::new(&file, e))?;
    // The sandbox has parsed it already; one that does not parse is left to kustomize to report.
    let Ok(Value::Object(mut k)) = serde_saphyr::from_str::<Value>(&text) else {
        return Ok(());
    };
    fix_deprecated(&mut k);
    let charts = match k.get("helmCharts") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(InflateError::NotAList { file }),
    };
    let globals: HelmGlobals = match k.get("helmGlobals") {
        None | Some(Value::Null) => HelmGlobals::default(),
        Some(g) => serde_json::from_value(g.clone()).map_err(|e| InflateError::Globals {
            file: file.clone(),
            message: e.to_string(),
        })?,
    };
    let chart_home = if globals.chart_home.is_empty() {
        DEFAULT_CHART_HOME
    } else {
        globals.chart_home.as_str()
    };
    let mut docs = Vec::new();
    for (n, c) in charts.into_iter().enumerate() {
        let chart: HelmChart = serde_json::from_value(c).map_err(|e| InflateError::Entry {
            file: file.clone(),
            entry: n + 1,
            message: e.to_string(),
        })?;
        let at = Inflation {
            tree,
            root,
            home,
            dir,
            file: &file,
            chart_home,
            index: n,
            tools,
        };
        docs.extend(at.render(&chart)?);
    }
    k.remove("helmCharts");
    k.remove("helmGlobals");
    if !docs.is_empty() {
        let mut out = String::new();
        for d in &docs {
            out.push_str("---\n");
            out.push_str(&serde_json::to_string(d).unwrap_or_default());
            out.push('\n');
        }
        let generated = root.join(dir).join(GENERATED);
        std::fs::write(&generated, out).map_err(|e| FileError::new(generated.display(), e))?;
        let mut resources = match k.remove("resources") {
            Some(Value::Array(a)) => a,
            Some(Value::String(s)) => vec![Value::String(s)],
            _ => Vec::new(),
        };
        resources.push(Value::String(GENERATED.into()));
        k.insert("resources".into(), Value::Array(resources));
    }
    Ok(write(&path, &Value::Object(k))?)
}

/// The deprecated `helmChartInflationGenerator` entries as `helmCharts`, as kustomize converts
/// them before building (api/types/kustomization.go, `FixKustomization`, through
/// api/types/helmchartargs.go `SplitHelmParameters`/`makeHelmChartFromHca`: chartName, chartVersion,
/// chartRepoUrl, values, valuesLocal, valuesMerge and releaseName carry over; the last non-empty
/// chartHome becomes `helmGlobals.chartHome` unless the kustomization sets `helmGlobals`).
fn fix_deprecated(k: &mut Map<String, Value>) {
    let Some(Value::Array(old)) = k.remove("helmChartInflationGenerator") else {
        return;
    };
    let mut chart_home = None;
    let mut charts = Vec::new();
    for o in &old {
        let mut c = Map::new();
        for (from, to) in [
            ("chartName", "name"),
            ("chartVersion", "version"),
            ("chartRepoUrl", "repo"),
            ("values", "valuesFile"),
            ("valuesLocal", "valuesInline"),
            ("valuesMerge", "valuesMerge"),
            ("releaseName", "releaseName"),
        ] {
            if let Some(v) = o.get(from) {
                c.insert(to.into(), v.clone());
            }
        }
        if let Some(h) = o
            .get("chartHome")
            .and_then(Value::as_str)
            .filter(|h| !h.is_empty())
        {
            chart_home = Some(h.to_string());
        }
        charts.push(Value::Object(c));
    }
    if let Some(h) = chart_home
        && k.get("helmGlobals").is_none_or(Value::is_null)
    {
        k.insert("helmGlobals".into(), serde_json::json!({ "chartHome": h }));
    }
    match k.get_mut("helmCharts") {
        Some(Value::Array(a)) => a.extend(charts),
        _ => {
            k.insert("helmCharts".into(), Value::Array(charts));
        }
    }
}

/// One kustomization's context for rendering its charts.
struct Inflation<'a> {
    tree: &'a Tree,
    root: &'a Path,
    home: &'a Path,
    /// The kustomization's directory and file, as tree paths.
    dir: &'a str,
    file: &'a str,
    chart_home: &'a str,
    index: usize,
    tools: &'a Tools,
}

impl Inflation<'_> {
    /// A path the kustomization names, as a tree path (symlinks followed; one out of the
    /// repository refused, as the sandbox refuses it).
    fn path(&self, what: &'static str, p: &str) -> Result<String, InflateError> {
        sandbox::resolve(self.tree, self.dir, p).map_err(|why| InflateError::Leaves {
            file: self.file.to_string(),
            what,
            path: p.to_string(),
            why,
        })
    }

    /// A values file kustomize loads through its loader, which the root-only load restrictor
    /// (Argo CD's and bare kustomize's default) keeps in or below the kustomization's directory,
    /// symlinks resolved. The chart directory itself is handed to helm and is not restricted.
    fn loaded(&self, what: &'static str, p: &str) -> Result<String, InflateError> {
        let path = self.path(what, p)?;
        let root = sandbox::resolve(self.tree, "", self.dir).unwrap_or_default();
        let inside = root.is_empty() || path == root || path.starts_with(&format!("{root}/"));
        if !inside {
            return Err(InflateError::NotLoadable {
                file: self.file.to_string(),
                what,
                path: p.to_string(),
                resolved: path,
                dir: if self.dir.is_empty() { "." } else { self.dir }.to_string(),
            });
        }
        Ok(path)
    }

    /// The chart's objects, each annotated with its template's tree path.
    fn render(&self, c: &HelmChart) -> Result<Vec<Value>, InflateError> {
        let file = self.file.to_string();
        if c.name.is_empty() {
            return Err(InflateError::EmptyName {
                file,
                entry: self.index + 1,
            });
        }
        let name = &c.name;
        let chart_dir = self.path("chart", &join(self.chart_home, name))?;
        // kustomize uses a chart that is present as it is (`chartExistsLocally`) and pulls only
        // one that is not; pulling is fetching, which rendering never does.
        if !self.tree.is_dir(&chart_dir) || chart_dir.is_empty() {
            return Err(if c.repo.is_empty() {
                InflateError::NoChart {
                    file,
                    chart: name.clone(),
                    chart_dir,
                }
            } else {
                InflateError::RemoteChart {
                    file,
                    chart: name.clone(),
                    version: c.version.clone(),
                    repo: c.repo.clone(),
                    chart_dir,
                }
            });
        }
        let chart_file = join(&chart_dir, "Chart.yaml");
        let values_file = if c.values_file.is_empty() {
            join(&join(self.chart_home, name), "values.yaml")
        } else {
            c.values_file.clone()
        };
        let values_path = self.loaded("valuesFile", &values_file)?;
        // kustomize loads the values file in every case (`copyValuesFile`,
        // `replaceValuesInline`) and fails when it is missing.
        let values_bytes =
            self.tree
                .read(&values_path)
                .map_err(|source| InflateError::ValuesFile {
                    file: file.clone(),
                    chart: name.clone(),
                    values_file: values_file.clone(),
                    source: Box::new(source),
                })?;
        let mut values_files = Vec::new();
        if c.values_inline.is_empty() {
            values_files.push(format!("./{values_path}"));
        } else {
            let merged = self.merged_values(c, values_bytes, &values_file)?;
            let generated = join(self.dir, &format!(".gpuledger-values-{}.yaml", self.index));
            write(&self.root.join(&generated), &Value::Object(merged))?;
            values_files.push(format!("./{generated}"));
        }
        let mut checked = vec![values_path];
        for f in &c.additional_values_files {
            let p = self.loaded("additionalValuesFiles entry", f)?;
            values_files.push(format!("./{p}"));
            checked.push(p);
        }
        // The chart's own `file://` dependencies and the values files stay in the repository.
        sandbox::helm(
            self.tree,
            &chart_dir,
            &HelmArgs {
                values_files: checked,
                ..HelmArgs::default()
            },
        )
        .map_err(|source| InflateError::Sandbox {
            file: file.clone(),
            chart: name.clone(),
            source: Box::new(source),
        })?;
        let program = self.tools.helm.as_ref().ok_or(InflateError::NoHelm)?;
        // kustomize passes `--generate-name` without a release name, and the name helm makes up
        // changes on every build; `release-name` is helm's own placeholder, stable between runs.
        let release = if c.release_name.is_empty() {
            "release-name"
        } else {
            c.release_name.as_str()
        };
        let mut args = vec![
            "template".to_string(),
            release.to_string(),
            format!("./{chart_dir}"),
            super::helm::SKIP_SCHEMA_VALIDATION.to_string(),
        ];
        if !c.namespace.is_empty() {
            args.extend(["--namespace".to_string(), c.namespace.clone()]);
        }
        for f in values_files {
            args.extend(["--values".to_string(), f]);
        }
        for v in &c.api_versions {
            args.extend(["--api-versions".to_string(), v.clone()]);
        }
        if !c.kube_version.is_empty() {
            args.extend(["--kube-version".to_string(), c.kube_version.clone()]);
        }
        for (set, flag) in [
            (c.include_crds, "--include-crds"),
            (c.skip_tests, "--skip-tests"),
            (c.skip_hooks, "--no-hooks"),
        ] {
            if set {
                args.push(flag.to_string());
            }
        }
        let out = run(&Run {
            program,
            args,
            cwd: self.root,
            env: helm_env(self.home),
            timeout: self.tools.timeout,
        })
        .map_err(|e| InflateError::Helm {
            file: file.clone(),
            chart: name.clone(),
            chart_file,
            message: clean_paths(&e.to_string(), self.root),
        })?;
        annotated_documents(&out, &chart_dir).map_err(|e| InflateError::Output {
            file,
            chart: name.clone(),
            template: e.template,
            message: e.message,
        })
    }

    /// `valuesInline` laid over the values file by `valuesMerge` (kustomize
    /// `createNewMergedValuesFile`/`replaceValuesInline`).
    fn merged_values(
        &self,
        c: &HelmChart,
        values_bytes: &[u8],
        values_file: &str,
    ) -> Result<Map<String, Value>, InflateError> {
        let file = self.file.to_string();
        let from_file = || -> Result<Map<String, Value>, InflateError> {
            match serde_saphyr::from_str::<Value>(&String::from_utf8_lossy(values_bytes)) {
                Ok(Value::Object(m)) => Ok(m),
                Ok(Value::Null) => Ok(Map::new()),
                Ok(_) => Err(InflateError::ValuesNotMapping {
                    file: file.clone(),
                    chart: c.name.clone(),
                    values_file: values_file.to_string(),
                }),
                Err(e) => Err(InflateError::ValuesYaml {
                    file: file.clone(),
                    chart: c.name.clone(),
                    values_file: values_file.to_string(),
                    message: e.to_string(),
                }),
            }
        };
        match c.values_merge.as_str() {
            "" | "override" => {
                let mut m = from_file()?;
                merge_values(&mut m, &c.values_inline, true);
                Ok(m)
            }
            "merge" => {
                let mut m = from_file()?;
                merge_values(&mut m, &c.values_inline, false);
                Ok(m)
            }
            "replace" => Ok(c.values_inline.clone()),
            other => Err(InflateError::ValuesMerge {
                file,
                chart: c.name.clone(),
                merge: other.to_string(),
            }),
        }
    }
}

/// Lays `src` over `dst` as mergo does for kustomize's values maps (`mergo.Merge`, with
/// `WithOverride` for `override`): maps merge key by key, recursively; with `overwrite` every other
/// value of `src` replaces the one in `dst`, without it only a key `dst` lacks (or holds null) is
/// filled. A map in `src` never replaces a value of another type in `dst`.
fn merge_values(dst: &mut Map<String, Value>, src: &Map<String, Value>, overwrite: bool) {
    for (k, s) in src {
        match dst.get_mut(k) {
            None => {
                dst.insert(k.clone(), s.clone());
            }
            Some(Value::Object(d)) if s.is_object() => {
                if let Value::Object(s) = s {
                    merge_values(d, s, overwrite);
                }
            }
            Some(d) if s.is_object() && !d.is_null() => {}
            Some(d) => {
                if overwrite || d.is_null() {
                    *d = s.clone();
                }
            }
        }
    }
}

/// A document of helm's output that is not YAML: the template it came from, and the parser's
/// message.
#[derive(Debug)]
struct BadDocument {
    template: String,
    message: String,
}

/// `helm template` output as JSON documents, each annotated with its `# Source:` template as a
/// tree path (`<chart name>/templates/x.yaml` → `<chart dir>/templates/x.yaml`). Documents that are
/// not objects (empty templates, NOTES-like text) are dropped, as kustomize drops them.
fn annotated_documents(out: &str, chart_dir: &str) -> Result<Vec<Value>, BadDocument> {
    let mut docs = Vec::new();
    for (doc, source) in helm_documents(out, chart_dir) {
        let v = match serde_saphyr::from_str::<Value>(doc) {
            Ok(Value::Object(m)) if m.contains_key("kind") => m,
            Ok(_) => continue,
            Err(e) => {
                return Err(BadDocument {
                    template: source.unwrap_or_else(|| "helm template output".into()),
                    message: e.to_string(),
                });
            }
        };
        let mut v = v;
        if let Some(src) = source {
            let meta = v
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                let ann = meta
                    .entry("annotations")
                    .or_insert_with(|| Value::Object(Map::new()));
                if ann.is_null() {
                    *ann = Value::Object(Map::new());
                }
                if let Value::Object(ann) = ann {
                    ann.insert(TEMPLATE_ANNOTATION.into(), Value::String(src));
                }
            }
        }
        docs.push(Value::Object(v));
    }
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    /// kustomize's valuesMerge over mergo: `override` lets inline win (zero values included),
    /// `merge` fills only what the file lacks, maps merge recursively in both.
    #[test]
    fn values_merge_as_kustomize_does() {
        let file = json!({"gpus": 1, "replicas": 2, "res": {"a": 1, "b": 2}, "list": [1], "n": null, "s": "x"});
        let inline = json!({"gpus": 0, "res": {"b": 3, "c": 4}, "list": [2, 3], "n": 5, "new": true, "s": {"m": 1}});
        let mut o = map(file.clone());
        merge_values(&mut o, &map(inline.clone()), true);
        assert_eq!(
            Value::Object(o),
            json!({"gpus": 0, "replicas": 2, "res": {"a": 1, "b": 3, "c": 4}, "list": [2, 3], "n": 5, "new": true, "s": "x"})
        );
        let mut m = map(file);
        merge_values(&mut m, &map(inline), false);
        assert_eq!(
            Value::Object(m),
            json!({"gpus": 1, "replicas": 2, "res": {"a": 1, "b": 2, "c": 4}, "list": [1], "n": 5, "new": true, "s": "x"})
        );
    }

    #[test]
    fn the_deprecated_form_becomes_helm_charts() {
        let mut k = map(json!({
            "helmCharts": [{"name": "a"}],
            "helmChartInflationGenerator": [
                {"chartName": "b", "chartHome": "vendor", "values": "v.yaml", "valuesLocal": {"gpus": 2}, "releaseName": "r", "releaseNamespace": "ignored"},
            ],
        }));
        fix_deprecated(&mut k);
        assert_eq!(
            Value::Object(k),
            json!({
                "helmCharts": [{"name": "a"}, {"name": "b", "valuesFile": "v.yaml", "valuesInline": {"gpus": 2}, "releaseName": "r"}],
                "helmGlobals": {"chartHome": "vendor"},
            })
        );
    }

    #[test]
    fn documents_carry_their_template() {
        let out = "---\n# Source: llm/templates/d.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# Source: llm/templates/empty.yaml\n\n---\n# Source: llm/templates/e.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: {x: z}\n";
        let docs = annotated_documents(out, "apps/x/charts/llm").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(
            docs[0]["metadata"]["annotations"][TEMPLATE_ANNOTATION],
            "apps/x/charts/llm/templates/d.yaml"
        );
        assert_eq!(docs[1]["metadata"]["annotations"]["x"], "z");
        assert!(annotated_documents("kind: [", "c").is_err());
    }
}
