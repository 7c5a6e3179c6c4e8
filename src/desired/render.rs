//! Running render units: plain YAML in process, kustomize and helm as sandboxed subprocesses.
//!
//! Security: rendering a pull request's files must not run code from it. kustomize runs without
//! `--enable-alpha-plugins`, `--enable-exec` or `--enable-helm` and with the root-only load
//! restrictor, so exec plugins and KRM functions are never executed and files outside a
//! kustomization's root are refused; helm runs `template` only, without post-renderers or dependency
//! updates, so nothing is fetched. Every subprocess has no shell, a timeout, and an environment
//! trimmed to PATH plus a throwaway HOME. The load restrictor guards files only (a directory entry
//! is a root of its own, wherever it is), so [`sandbox`] first checks every path the unit's
//! kustomizations, chart and values name against the repository. Helm parameters are passed as
//! Argo CD passes them. A kustomization's `helmCharts` are rendered by that same sandboxed helm
//! before kustomize runs (the `helm_charts` module), so kustomize itself never runs helm.
//!
//! Each object keeps where it came from: its file and line for plain YAML, the source file kustomize
//! reports in its origin annotation (and the line found there), the chart template for helm and for
//! a kustomization's inflated charts.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::cache::{self, Inputs, Key, RenderCache};
use super::follow::Parsed;
use super::sandbox;
use super::tree::{Tree, is_kustomize_dir, join, normalize};
use super::{HelmArgs, How, Unit};
use crate::error::InputError;
use crate::k8s::object::{Object, Source};
use crate::k8s::read::read_str;
use crate::util::process::{Run, run, which};

mod batch;
mod helm_charts;

const ORIGIN: &str = "config.kubernetes.io/origin";

/// The external renderers available on this machine.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The kustomize program and the arguments before the directory (`kustomize build` or
    /// `kubectl kustomize`).
    pub kustomize: Option<(PathBuf, Vec<String>)>,
    pub helm: Option<PathBuf>,
    pub timeout: Duration,
    /// Whether kustomize units that cannot touch each other build in one process (the `batch`
    /// module); `GPULEDGER_KUSTOMIZE_BATCH=0` builds each on its own.
    pub batch: bool,
}

impl Tools {
    /// `GPULEDGER_KUSTOMIZE` / `GPULEDGER_HELM` when set, else `kustomize` (or `kubectl`) and `helm` on
    /// PATH.
    pub fn detect(timeout: Duration) -> Tools {
        let from_env = |var: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .filter(|p| !p.as_os_str().is_empty())
        };
        let kustomize = match from_env("GPULEDGER_KUSTOMIZE") {
            Some(p) => Some(kustomize_args(p)),
            None => which("kustomize")
                .map(kustomize_args)
                .or_else(|| which("kubectl").map(kustomize_args)),
        };
        Tools {
            kustomize,
            helm: from_env("GPULEDGER_HELM").or_else(|| which("helm")),
            timeout,
            batch: std::env::var("GPULEDGER_KUSTOMIZE_BATCH").map_or(true, |v| v != "0"),
        }
    }
}

impl Tools {
    /// The helm program, or why there is none.
    fn helm(&self) -> Result<&PathBuf, String> {
        self.helm
            .as_ref()
            .ok_or_else(|| "helm is not installed (not on PATH; set GPULEDGER_HELM)".to_string())
    }
}

fn kustomize_args(p: PathBuf) -> (PathBuf, Vec<String>) {
    let is_kubectl = p
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("kubectl"));
    let sub = if is_kubectl { "kustomize" } else { "build" };
    (p, vec![sub.into()])
}

/// Renders units, writing to a temporary directory the files of the repository each kustomize or
/// helm unit reads (plain YAML never needs them): the files its cache key covers, or the whole
/// repository for a unit whose reads cannot be told. A unit that fails on that partial copy is
/// tried again on the whole repository, so the partial copy saves time and never changes a result. Units of one batch render in parallel on a bounded
/// pool of threads, one per core; results come back in the batch's order. A unit whose inputs the
/// shared [`RenderCache`] has seen (in this tree or in another tree of the same run) is not
/// rendered again.
pub struct Renderer<'t> {
    tree: &'t Tree,
    tools: &'t Tools,
    cache: &'t RenderCache,
    tmp: OnceLock<Result<tempfile::TempDir, String>>,
    /// The repository's files written to `tmp` so far, or all of them.
    written: Mutex<Written>,
    /// The renderers' HOME: a directory of its own, never part of the repository's copy.
    home: OnceLock<Result<tempfile::TempDir, String>>,
    /// The repository's `.sourceignore`s, read once for all its Flux units.
    ignore: OnceLock<super::sourceignore::SourceIgnore>,
    /// Inflating `helmCharts` rewrites kustomization files in the copy, which units may share: one
    /// inflation at a time, so a unit never reads a file another is rewriting.
    inflating: Mutex<()>,
    /// A directory without a kustomization gets a generated one, per unit: units of one directory
    /// take turns writing and building it.
    generated: Mutex<BTreeMap<String, Arc<Mutex<()>>>>,
    /// How many units have been numbered (each gets its own wrapper and values file names).
    count: AtomicUsize,
    problems: Mutex<Vec<String>>,
}

/// Which of the repository's files are in the copy on disk.
#[derive(Default)]
struct Written {
    files: HashSet<String>,
    whole: bool,
}

/// A unit's objects, or the error that stopped it.
type Rendering = Result<Vec<Object>, String>;

/// How many renders run at once: one per core.
fn pool_size() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl<'t> Renderer<'t> {
    pub fn new(tree: &'t Tree, tools: &'t Tools, cache: &'t RenderCache) -> Renderer<'t> {
        Renderer {
            tree,
            tools,
            cache,
            tmp: OnceLock::new(),
            written: Mutex::new(Written::default()),
            home: OnceLock::new(),
            ignore: OnceLock::new(),
            inflating: Mutex::new(()),
            generated: Mutex::new(BTreeMap::new()),
            count: AtomicUsize::new(0),
            problems: Mutex::new(Vec::new()),
        }
    }

    /// Problems with the rendering as a whole (the repository could not be written to disk).
    pub fn take_problems(&mut self) -> Vec<String> {
        self.problems
            .get_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The unit's objects, placed in its namespace, or the error that stopped it.
    pub fn render(&self, unit: &Unit, parsed: &Parsed) -> Result<Vec<Object>, String> {
        self.render_batch(&[unit], parsed)
            .pop()
            .unwrap_or_else(|| Err("not rendered".into()))
    }

    /// Each unit's objects (or error), in the order of `units`. Units that read the same inputs are
    /// rendered once; those the cache knows are not rendered; the rest run in parallel.
    pub fn render_batch(
        &self,
        units: &[&Unit],
        parsed: &Parsed,
    ) -> Vec<Result<Vec<Object>, String>> {
        let first = self.count.fetch_add(units.len(), Ordering::Relaxed);
        let inputs: Vec<Option<Inputs>> = units
            .iter()
            .map(|u| match u.how {
                How::Plain { .. } => None,
                _ => cache::inputs(self.tree, u),
            })
            .collect();
        let keys: Vec<Option<Key>> = inputs
            .iter()
            .map(|i| i.as_ref().map(|i| i.key.clone()))
            .collect();
        // The first unit of each key renders; later ones of the batch take its result.
        let mut leader: HashMap<&Key, usize> = HashMap::new();
        let mut results: Vec<Option<Result<Vec<Object>, String>>> = Vec::new();
        let mut todo: Vec<usize> = Vec::new();
        for (n, k) in keys.iter().enumerate() {
            let found = k.as_ref().and_then(|k| self.cache.get(k));
            if found.is_none() && k.as_ref().is_none_or(|k| !leader.contains_key(k)) {
                if let Some(k) = k {
                    leader.insert(k, n);
                }
                todo.push(n);
            }
            results.push(found);
        }
        // Kustomize units that cannot touch each other build together (the `batch` module); the
        // batches go first, so the single units fill the pool behind them.
        let (groups, alone) = if self.tools.batch {
            batch::plan(self.tree, units, &inputs, &todo, pool_size())
        } else {
            (Vec::new(), todo.clone())
        };
        let jobs: Vec<Vec<batch::Member>> = groups
            .into_iter()
            .chain(alone.into_iter().map(|n| vec![batch::Member::alone(n)]))
            .collect();
        let next = AtomicUsize::new(0);
        let done: Mutex<Vec<(usize, Rendering)>> = Mutex::new(Vec::new());
        let work = || {
            while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                for (n, result, ran) in self.run_group(first, job, units, &inputs, parsed) {
                    let Some(unit) = units.get(n) else { continue };
                    if ran {
                        if let Some(Some(k)) = keys.get(n) {
                            self.cache.put(k.clone(), &result);
                        }
                        self.cache.log(format!(
                            "{}/{} ({} {})",
                            unit.app_kind,
                            unit.app,
                            how_name(&unit.how),
                            rel(&unit.path)
                        ));
                    }
                    if let Ok(mut d) = done.lock() {
                        d.push((n, result));
                    }
                }
            }
        };
        let workers = pool_size().min(jobs.len());
        if workers <= 1 {
            work();
        } else {
            std::thread::scope(|s| {
                for _ in 0..workers {
                    s.spawn(work);
                }
            });
        }
        for (n, r) in done.into_inner().unwrap_or_default() {
            if let Some(slot) = results.get_mut(n) {
                *slot = Some(r);
            }
        }
        // A unit that shares its leader's key takes the leader's result.
        for (n, k) in keys.iter().enumerate() {
            let from = k.as_ref().and_then(|k| leader.get(k)).copied();
            if results.get(n).is_some_and(Option::is_none)
                && let Some(r) = from.and_then(|l| results.get(l).cloned().flatten())
                && let Some(slot) = results.get_mut(n)
            {
                *slot = Some(r);
            }
        }
        units
            .iter()
            .zip(results)
            .map(|(unit, r)| {
                r.unwrap_or_else(|| Err("not rendered".into()))
                    .map(|objs| place(objs, unit))
            })
            .collect()
    }

    /// Renders one unit, unplaced; says whether a renderer ran (whether the result may be cached).
    /// `inputs` are the files it reads, when they can be told; a unit that fails on a copy holding
    /// only those is rendered again on the whole repository.
    fn run(
        &self,
        i: usize,
        unit: &Unit,
        parsed: &Parsed,
        inputs: Option<&Inputs>,
    ) -> (Result<Vec<Object>, String>, bool) {
        if let How::Plain { files } = &unit.how {
            return (plain(files, parsed), false);
        }
        let needs = inputs.map(|i| i.files.as_slice());
        let result = match self.site(needs) {
            Ok((root, home)) => self.run_in(root, home, i, unit, parsed),
            Err(e) => return (Err(e), false),
        };
        if result.is_err()
            && needs.is_some()
            && !self.is_whole()
            && let Ok((root, home)) = self.site(None)
        {
            return (self.run_in(root, home, i, unit, parsed), true);
        }
        (result, true)
    }

    fn run_in(
        &self,
        root: &Path,
        home: &Path,
        i: usize,
        unit: &Unit,
        parsed: &Parsed,
    ) -> Result<Vec<Object>, String> {
        match &unit.how {
            How::Kustomize {
                overlay,
                recurse_plain,
            } => kustomize(
                &Site {
                    tree: self.tree,
                    root,
                    home,
                    renderer: self,
                },
                i,
                unit,
                overlay,
                *recurse_plain,
                parsed,
            ),
            How::Helm(args) => helm(self.tree, root, home, i, unit, args, self.tools),
            How::Plain { .. } => Ok(Vec::new()),
        }
    }

    fn is_whole(&self) -> bool {
        self.written.lock().is_ok_and(|w| w.whole)
    }

    /// The repository's copy on disk, holding at least the files `needs` (all of them for `None`),
    /// and the renderers' HOME, made the first time a renderer needs them; when they cannot be
    /// made, the problem is recorded once and each unit says so.
    fn site(&self, needs: Option<&[String]>) -> Result<(&Path, &Path), String> {
        let tmp = self.tmp.get_or_init(|| {
            tempfile::Builder::new()
                .prefix("gpuledger-render-")
                .tempdir()
                .map_err(|e| format!("cannot write the repository to a temporary directory: {e}"))
        });
        let home = self.home.get_or_init(|| {
            tempfile::Builder::new()
                .prefix("gpuledger-home-")
                .tempdir()
                .map_err(|e| format!("cannot create a temporary directory: {e}"))
        });
        let problem = |e: &String| {
            if let Ok(mut p) = self.problems.lock()
                && !p.contains(e)
            {
                p.push(e.clone());
            }
            "the repository could not be written to disk for rendering".to_string()
        };
        let (t, h) = match (tmp, home) {
            (Ok(t), Ok(h)) => (t.path(), h.path()),
            (Err(e), _) | (_, Err(e)) => return Err(problem(e)),
        };
        // Files are written once: a unit may rewrite its copy (inflated charts, a generated
        // kustomization), and no later unit's needs write over that.
        let mut written = self
            .written
            .lock()
            .map_err(|_| "the repository's copy is unusable".to_string())?;
        if !written.whole {
            let missing: Vec<&str> = match needs {
                Some(files) => files
                    .iter()
                    .map(String::as_str)
                    .filter(|f| !written.files.contains(*f))
                    .collect(),
                None => self
                    .tree
                    .files
                    .keys()
                    .map(String::as_str)
                    .filter(|f| !written.files.contains(*f))
                    .collect(),
            };
            self.tree
                .write_files(t, missing.iter().copied())
                .map_err(|e| {
                    problem(&format!(
                        "cannot write the repository to a temporary directory: {e}"
                    ))
                })?;
            if !missing.is_empty() {
                tracing::debug!(files = missing.len(), "copied to disk");
            }
            written.files.extend(missing.iter().map(|f| f.to_string()));
            written.whole |= needs.is_none();
        }
        Ok((t, h))
    }
}

fn how_name(how: &How) -> &'static str {
    match how {
        How::Plain { .. } => "plain",
        How::Kustomize { .. } => "kustomize",
        How::Helm(_) => "helm",
    }
}

/// Where a kustomize unit renders: the tree, its copy on disk, the renderers' HOME, and the
/// renderer's shared state.
struct Site<'a, 't> {
    tree: &'t Tree,
    root: &'a Path,
    home: &'a Path,
    renderer: &'a Renderer<'t>,
}

fn plain(
    files: &[String],
    parsed: &BTreeMap<String, Result<Vec<Object>, InputError>>,
) -> Result<Vec<Object>, String> {
    let mut out = Vec::new();
    for f in files {
        match parsed.get(f) {
            Some(Ok(objs)) => out.extend(objs.iter().cloned()),
            Some(Err(e)) => return Err(e.to_string()),
            None => {} // not a manifest (no apiVersion/kind anywhere in it)
        }
    }
    Ok(out)
}

/// Kinds that live outside namespaces: a default namespace is never given to them.
const CLUSTER_SCOPED: [&str; 20] = [
    "Namespace",
    "Node",
    "PersistentVolume",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "StorageClass",
    "IngressClass",
    "PriorityClass",
    "RuntimeClass",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "CSIDriver",
    "VolumeAttachment",
    "GatewayClass",
    "ClusterIssuer",
    "ClusterQueue",
    "ResourceFlavor",
    "ClusterPolicy",
];

/// Gives namespaced objects the unit's namespace where they set none (or always, for Flux
/// `targetNamespace`), else `default`, where `kubectl apply` would put them: a manifest without a
/// namespace is counted, attributed and matched where it lands, so writing `namespace: default`
/// out changes nothing.
fn place(mut objs: Vec<Object>, unit: &Unit) -> Vec<Object> {
    let ns = unit.namespace.as_deref().unwrap_or("default");
    let force = unit.force_namespace && unit.namespace.is_some();
    for o in &mut objs {
        if CLUSTER_SCOPED.contains(&o.kind.as_str()) {
            continue;
        }
        if force || o.meta.namespace.as_deref().is_none_or(str::is_empty) {
            o.meta.namespace = Some(ns.to_string());
        }
    }
    objs
}

fn rel(p: &str) -> String {
    if p.is_empty() {
        ".".into()
    } else {
        p.to_string()
    }
}

fn kustomize(
    site: &Site<'_, '_>,
    i: usize,
    unit: &Unit,
    overlay: &Map<String, Value>,
    recurse_plain: bool,
    parsed: &Parsed,
) -> Result<Vec<Object>, String> {
    let Site {
        tree, root, home, ..
    } = *site;
    let tools = site.renderer.tools;
    let (program, pre) = tools
        .kustomize
        .as_ref()
        .ok_or("kustomize is not installed (neither kustomize nor kubectl is on PATH; set GPULEDGER_KUSTOMIZE)")?;
    let wrap_name = format!(".gpuledger-wrap-{i}");
    let built = sandbox::kustomize(tree, &unit.path, overlay, &wrap_name)?;
    let has_kustomization = is_kustomize_dir(tree, &unit.path);
    // Held while this unit's generated kustomization is written and built.
    let dir_lock = if has_kustomization {
        None
    } else {
        site.renderer
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
            // The repository's `.sourceignore`s, read once for all its Flux units.
            let ignore = site
                .renderer
                .ignore
                .get_or_init(|| super::sourceignore::SourceIgnore::load(tree));
            super::flux::generated_resources(tree, &unit.path, parsed, ignore)
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
    // `helmCharts` are rendered by gpuledger's sandboxed helm into plain resources before
    // kustomize runs, never by kustomize `--enable-helm`.
    if unit.app_kind == "Kustomization" {
        helm_charts::refuse_for_flux(tree, &built)?;
    } else {
        let _one_at_a_time = site.renderer.inflating.lock();
        helm_charts::inflate(tree, root, home, &built, tools)?;
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
            let path = if unit.path.is_empty() {
                "."
            } else {
                unit.path.as_str()
            };
            let mut direct = pre.clone();
            direct.extend([
                path.to_string(),
                "--load-restrictor".into(),
                restrictor.into(),
            ]);
            return Err(match build(direct) {
                Err(own) => format!(
                    "kustomize build {path}: {}",
                    kustomize_error(&clean_paths(&own, root))
                ),
                Ok(_) => format!(
                    "kustomize build {path} with the app's options (name prefix, patches, images, …): {}",
                    kustomize_error(&clean_paths(&wrapped, root))
                ),
            });
        }
    };
    let out = substitute(out, unit)?;
    let mut objs = read_str(&out, &format!("{} (kustomize)", rel(&unit.path)))
        .and_then(crate::workload::checked)
        .map_err(|e| e.to_string())?;
    attribute(&mut objs, &wrap_name, parsed);
    Ok(objs)
}

/// The load restrictor a unit builds with. Flux's kustomize-controller builds with no load
/// restriction inside the repository (fluxcd/pkg kustomize/kustomize_generator.go, SecureBuild:
/// LoadRestrictionsNone on a filesystem that refuses anything outside the root), so an overlay may
/// read a patch beside its directory; the sandbox has already checked that every path stays in the
/// repository. Argo CD and bare kustomize keep kustomize's default, root-only.
fn restrictor(unit: &Unit) -> &'static str {
    if unit.app_kind == "Kustomization" {
        "LoadRestrictionsNone"
    } else {
        "LoadRestrictionsRootOnly"
    }
}

/// Writes the unit's wrapper kustomization at the copy's root: the app's own options (prefix,
/// images, patches, …) over the unit's directory, with origin annotations on.
fn write_wrapper(
    root: &Path,
    wrap_name: &str,
    unit: &Unit,
    overlay: &Map<String, Value>,
) -> Result<(), String> {
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
fn origin_path(o: &Object, built_in: &str) -> Option<String> {
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
fn attribute(objs: &mut [Object], built_in: &str, parsed: &Parsed) {
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

/// The environment of a renderer: a HOME outside the repository's copy (so a repository cannot
/// plant a `.gitconfig` or helm plugins there), and git that can reach no remote and read no
/// configuration, should a renderer try to fetch something.
fn sandbox_env(home: &Path) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
        ("GIT_ALLOW_PROTOCOL".into(), "none".into()),
    ]
}

/// Flux `postBuild.substitute`: `${var}`, `${var:=default}`, `${var:-default}`; `$${var}` stays literal.
fn substitute(text: String, unit: &Unit) -> Result<String, String> {
    let Some(vars) = &unit.substitute else {
        return Ok(text);
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
        // Flux replaces an unset variable without a default with nothing.
        if let Some(v) = vars.get(name).map(String::as_str).or(default) {
            out.push_str(v);
        }
        rest = next;
    }
    out.push_str(rest);
    Ok(out)
}

fn write(path: &Path, v: &Value) -> Result<(), String> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap_or_default())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Error messages name paths as the repository does, not the temporary directory.
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

fn clean_paths(msg: &str, root: &Path) -> String {
    msg.replace(&format!("{}/", root.display()), "")
        .replace(&root.display().to_string(), ".")
}

fn helm(
    tree: &Tree,
    root: &Path,
    home: &Path,
    i: usize,
    unit: &Unit,
    a: &HelmArgs,
    tools: &Tools,
) -> Result<Vec<Object>, String> {
    let program = tools.helm()?;
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
        let name = format!(".gpuledger-values-{i}-{n}.yaml");
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
    .map_err(|e| clean_paths(&e, root))?;
    helm_objects(&out, &unit.path)
}

/// helm's environment: the renderer's, with helm's cache, config, data and plugin homes in the
/// throwaway HOME, so no repository and no user configuration reaches it.
fn helm_env(home: &Path) -> Vec<(String, String)> {
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
fn helm_documents<'o>(
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
fn helm_objects(out: &str, chart_path: &str) -> Result<Vec<Object>, String> {
    let mut objs = Vec::new();
    for (doc, source) in helm_documents(out, chart_path) {
        let source = source.unwrap_or_else(|| format!("{} (helm)", rel(chart_path)));
        let mut parsed = match read_str(doc, &source).and_then(crate::workload::checked) {
            Ok(o) => o,
            Err(e) if e.message.contains("no apiVersion and kind") => continue, // NOTES-like leftovers
            Err(e) => return Err(e.to_string()),
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
    #[test]
    fn kustomize_errors_are_kustomize_own_words() {
        assert_eq!(
            super::kustomize_error(
                "/usr/bin/kubectl failed (exit status: 1): E1202 07:21:59.870318    9108 run.go:72] \"command failed\" err=\"accumulating resources: 'x' \\\"quoted\\\"\"\n"
                    .trim_end()
            ),
            "accumulating resources: 'x' \"quoted\""
        );
        assert_eq!(
            super::kustomize_error("kustomize failed (exit status: 1): Error: no such file\n"),
            "no such file"
        );
        assert_eq!(super::kustomize_error("timed out"), "timed out");
    }

    use super::*;

    #[test]
    fn flux_substitution() {
        let mut u = super::super::discover::plan_unit_for_tests();
        u.substitute = Some([("replicas".to_string(), "4".to_string())].into());
        let s = substitute(
            "a: ${replicas}\nb: ${missing:=7}\nc: $${replicas}\nd: ${gone}\n".into(),
            &u,
        )
        .unwrap();
        assert_eq!(s, "a: 4\nb: 7\nc: ${replicas}\nd: \n");
        // Multi-byte text around and inside the markers, and an unclosed one, never panic.
        let s = substitute("é${replicas}ü $é${ ${ünclosed".into(), &u).unwrap();
        assert_eq!(s, "é4ü $é${ ${ünclosed");
    }

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
