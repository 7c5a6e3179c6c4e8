//! Fetching what units need before they render: a unit's chart when it is not in the repository,
//! and the dependencies its chart's `charts/` lacks (what `helm dependency build` would add), for
//! a chart of the repository and a fetched one alike. Fetches of one level run in parallel; a unit
//! whose fetch fails is not rendered and carries the reason, every other renders on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::error::RenderError;
use super::remote::Remote;
use super::remote::deps::{self, Supply};
use super::remote::refs::Resolved;
use super::tree::{Tree, join};
use super::{How, Prepared, Unit, sandbox};

/// What preparing one unit gave: what it fetched (nothing, when it needs nothing), or why it
/// cannot render.
type Prepping = Result<Option<Prepared>, RenderError>;

/// Fetches run at once, at most: they wait on the network, not on the cores.
const PARALLEL: usize = 8;

/// Prepares every unit of `units` that needs something fetched; returns, per unit, the error that
/// keeps it from rendering.
pub fn prepare(units: &mut [Unit], tree: &Tree, remote: &Remote) -> Vec<Option<RenderError>> {
    let todo: Vec<usize> = (0..units.len())
        .filter(|&i| units.get(i).is_some_and(needs_prepare))
        .collect();
    let mut out: Vec<Option<RenderError>> = vec![None; units.len()];
    if todo.is_empty() {
        return out;
    }
    let next = AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<(usize, Prepping)>> = std::sync::Mutex::default();
    let shared: &[Unit] = units;
    let work = || {
        while let Some(&i) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
            let Some(u) = shared.get(i) else { continue };
            let r = one(u, tree, remote);
            if let Ok(mut v) = results.lock() {
                v.push((i, r));
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 0..todo.len().min(PARALLEL) {
            s.spawn(work);
        }
    });
    for (i, r) in results.into_inner().unwrap_or_default() {
        match r {
            Ok(p) => {
                if let Some(u) = units.get_mut(i) {
                    u.prepared = p.map(Arc::new);
                }
            }
            Err(e) => {
                if let Some(slot) = out.get_mut(i) {
                    *slot = Some(e);
                }
            }
        }
    }
    out
}

fn needs_prepare(u: &Unit) -> bool {
    u.prepared.is_none() && matches!(u.how, How::Helm(_))
}

/// What one helm unit needs fetched, if anything.
fn one(u: &Unit, tree: &Tree, remote: &Remote) -> Result<Option<Prepared>, RenderError> {
    let mut p = Prepared::default();
    // The chart's files, as `missing` reads them: the fetched chart's, or the tree's.
    let deps = if let Some(c) = &u.chart {
        let fetched = remote.chart(c).map_err(|e| RenderError::Fetch {
            what: format!("chart {}", c.describe()),
            refused: e.is_refusal(),
            error: e.to_string(),
        })?;
        p.resolved.push(Resolved {
            what: "chart".into(),
            source: c.location(),
            wanted: c.digest.clone().unwrap_or_else(|| c.version.clone()),
            version: fetched.version.clone(),
            digest: fetched.digest.clone(),
        });
        let files = fetched.files.clone();
        p.chart = Some(fetched);
        let present = deps::present(&mut files.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
        deps::missing(&deps::reader(&files), &present)
    } else {
        let Ok(dir) = sandbox::resolve(tree, "", &u.path) else {
            return Ok(None);
        };
        let charts = join(&dir, "charts");
        let mut inside = tree.files_under(&charts).filter_map(|f| {
            let rel = f.strip_prefix(dir.as_str())?.trim_start_matches('/');
            Some((rel, tree.read(f).ok()?))
        });
        let present = deps::present(&mut inside);
        let read = |f: &str| tree.read(&join(&dir, f)).ok().map(<[u8]>::to_vec);
        deps::missing(&read, &present)
    };
    for d in deps {
        let (supply, resolved) = deps::supply(remote, &d).map_err(|e| RenderError::Fetch {
            what: format!(
                "dependency {} ({} {}) of the chart",
                d.name, d.repository, d.version
            ),
            refused: e.is_refusal(),
            error: e.to_string(),
        })?;
        if let Supply::Local(_) = supply {
            // A `file://` dependency of a chart in the repository: copied at render time, once the
            // sandbox has checked its path.
            if u.chart.is_none() {
                p.deps.push((d.name, supply));
                continue;
            }
        }
        p.resolved.extend(resolved);
        p.deps.push((d.name, supply));
    }
    if p.chart.is_none() && p.deps.is_empty() {
        return Ok(None);
    }
    Ok(Some(p))
}
