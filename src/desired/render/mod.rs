//! Running render units: plain YAML in process, kustomize and helm as sandboxed subprocesses.
//!
//! Security: rendering a pull request's files must not run code from it. kustomize runs without
//! `--enable-alpha-plugins`, `--enable-exec` or `--enable-helm` and with the root-only load
//! restrictor, so exec plugins and KRM functions are never executed and files outside a
//! kustomization's root are refused; helm runs `template` only, without post-renderers or dependency
//! updates, so nothing is fetched. Every subprocess has no shell, a timeout, and an environment
//! trimmed to PATH plus a throwaway HOME. The load restrictor guards files only (a directory entry
//! is a root of its own, wherever it is), so [`sandbox`](super::sandbox) first checks every path
//! the unit's kustomizations, chart and values name against the repository. Helm parameters are
//! passed as Argo CD passes them. A kustomization's `helmCharts` are rendered by that same
//! sandboxed helm before kustomize runs (the `helm_charts` module), so kustomize itself never runs
//! helm.
//!
//! Each object keeps where it came from: its file and line for plain YAML, the source file kustomize
//! reports in its origin annotation (and the line found there), the chart template for helm and for
//! a kustomization's inflated charts.
//!
//! This module schedules: [`Renderer`] takes a level of units, answers what the render cache
//! knows, groups kustomize units that can build together (`batch`) and runs the rest on a pool of
//! threads, each unit by its kind — `plain`, `kustomize` (with `helm_charts`) or `helm` — in the
//! repository's copy on disk (`copy`), with the programs and environment of `tools`. The flow is
//! one way: this module names its children, and none of them names it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::cache::{self, Inputs, Key, RenderCache};
use super::error::RenderError;
use super::tree::Tree;
use super::{How, Parsed, Unit};
use crate::k8s::object::Object;
use batch::{BatchError, Member};
use copy::RepoCopy;
use plain::{place, plain};
pub use tools::Tools;
use tools::{Site, rel};

mod batch;
mod copy;
mod helm;
mod helm_charts;
mod kustomize;
mod plain;
mod tools;

/// Renders units, writing to a temporary directory the files of the repository each kustomize or
/// helm unit reads (plain YAML never needs them): the files its cache key covers, or the whole
/// repository for a unit whose reads cannot be told. A unit that fails on that partial copy is
/// tried again on the whole repository, so the partial copy saves time and never changes a
/// result. Units of one batch render in parallel on a bounded pool of threads, one per core;
/// results come back in the batch's order. A unit whose inputs the shared [`RenderCache`] has seen
/// (in this tree or in another tree of the same run) is not rendered again.
pub struct Renderer<'t> {
    tree: &'t Tree,
    tools: &'t Tools,
    cache: &'t RenderCache,
    copy: RepoCopy,
    kustomize: kustomize::Shared,
    /// How many units (and batches) have been numbered (each gets its own wrapper and values file
    /// names).
    count: AtomicUsize,
}

/// A unit's objects, or the error that stopped it.
type Rendering = Result<Vec<Object>, RenderError>;

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
            copy: RepoCopy::default(),
            kustomize: kustomize::Shared::default(),
            count: AtomicUsize::new(0),
        }
    }

    /// Problems with the rendering as a whole (the repository could not be written to disk).
    pub fn take_problems(&mut self) -> Vec<String> {
        self.copy.take_problems()
    }

    /// The unit's objects, placed in its namespace, or the error that stopped it.
    pub fn render(&self, unit: &Unit, parsed: &Parsed) -> Result<Vec<Object>, RenderError> {
        self.render_batch(&[unit], parsed)
            .pop()
            .unwrap_or(Err(RenderError::NotRendered))
    }

    /// Each unit's objects (or error), in the order of `units`. Units that read the same inputs are
    /// rendered once; those the cache knows are not rendered; the rest run in parallel.
    pub fn render_batch(
        &self,
        units: &[&Unit],
        parsed: &Parsed,
    ) -> Vec<Result<Vec<Object>, RenderError>> {
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
        let mut results: Vec<Option<Rendering>> = Vec::new();
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
                r.unwrap_or(Err(RenderError::NotRendered))
                    .map(|objs| place(objs, unit))
            })
            .collect()
    }

    /// Renders a batch: built together when it can be, else halved and tried again, down to single
    /// units rendered one by one. Returns each unit's result and whether a renderer ran.
    fn run_group(
        &self,
        first: usize,
        group: &[Member],
        units: &[&Unit],
        inputs: &[Option<Inputs>],
        parsed: &Parsed,
    ) -> Vec<(usize, Rendering, bool)> {
        if let [m] = group {
            let Some(unit) = units.get(m.n) else {
                return Vec::new();
            };
            let found = inputs.get(m.n).and_then(Option::as_ref);
            let (r, ran) = self.run(first + m.n, unit, parsed, found);
            return vec![(m.n, r, ran)];
        }
        match self.build_together(first, group, units, inputs, parsed) {
            Ok(each) => each
                .into_iter()
                .map(|(n, objs)| (n, Ok(objs), true))
                .collect(),
            Err(why) => {
                tracing::debug!(units = group.len(), %why, "batch split");
                let (a, b) = group.split_at(group.len() / 2);
                let mut out = self.run_group(first, a, units, inputs, parsed);
                out.extend(self.run_group(first, b, units, inputs, parsed));
                out
            }
        }
    }

    /// One `kustomize build` over the batch, in a copy holding what its units read.
    fn build_together(
        &self,
        first: usize,
        group: &[Member],
        units: &[&Unit],
        inputs: &[Option<Inputs>],
        parsed: &Parsed,
    ) -> Result<Vec<(usize, Vec<Object>)>, BatchError> {
        let needs = batch::needs(group, inputs);
        let (root, home) = self.copy.site(self.tree, Some(&needs))?;
        let site = Site {
            tree: self.tree,
            root,
            home,
            tools: self.tools,
            number: self.count.fetch_add(1, Ordering::Relaxed),
        };
        batch::build(&site, first, group, units, parsed)
    }

    /// Renders one unit, unplaced; says whether a renderer ran (whether the result may be cached).
    /// `inputs` are the files it reads, when they can be told; a unit that fails on a copy holding
    /// only those is rendered again on the whole repository.
    fn run(
        &self,
        number: usize,
        unit: &Unit,
        parsed: &Parsed,
        inputs: Option<&Inputs>,
    ) -> (Rendering, bool) {
        if let How::Plain { files } = &unit.how {
            return (plain(files, parsed), false);
        }
        let needs = inputs.map(|i| i.files.as_slice());
        let result = match self.copy.site(self.tree, needs) {
            Ok((root, home)) => self.run_in(root, home, number, unit, parsed),
            Err(e) => return (Err(e), false),
        };
        if result.is_err()
            && needs.is_some()
            && !self.copy.is_whole()
            && let Ok((root, home)) = self.copy.site(self.tree, None)
        {
            return (self.run_in(root, home, number, unit, parsed), true);
        }
        (result, true)
    }

    fn run_in(
        &self,
        root: &Path,
        home: &Path,
        number: usize,
        unit: &Unit,
        parsed: &Parsed,
    ) -> Rendering {
        let site = Site {
            tree: self.tree,
            root,
            home,
            tools: self.tools,
            number,
        };
        match &unit.how {
            How::Kustomize {
                overlay,
                recurse_plain,
            } => kustomize::kustomize(
                &site,
                &self.kustomize,
                unit,
                overlay,
                *recurse_plain,
                parsed,
            ),
            How::Helm(args) => helm::helm(&site, unit, args),
            How::Plain { .. } => Ok(Vec::new()),
        }
    }
}

fn how_name(how: &How) -> &'static str {
    match how {
        How::Plain { .. } => "plain",
        How::Kustomize { .. } => "kustomize",
        How::Helm(_) => "helm",
    }
}
