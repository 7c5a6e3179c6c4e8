//! Kustomize units built together: one `kustomize build` over a kustomization that lists many
//! units' wrappers, its objects handed back to their units by kustomize's origin annotations.
//!
//! Starting kustomize costs far more than building one small app, so a repository of hundreds of
//! kustomize apps renders in a few processes instead of hundreds. A batch must give every unit
//! exactly the objects it would get alone, so only units that cannot touch each other share one:
//!
//! - kustomize runs a few steps once, at the top of a build, over everything it gathered (kustomize
//!   api/internal/target/kusttarget.go, `makeCustomizedResMap`): name hashes, fixing references to
//!   renamed objects, and `vars`. A unit that renames anything (a name prefix or suffix, a
//!   generator, a hash annotation, a transformer or generator plugin) or declares vars, or that
//!   changes kustomize's global schema (`openapi`, `crds`, `configurations`), builds alone, so in a
//!   batch these steps have nothing to do;
//! - units that read a common path (a shared base, a patch, a component) never share a batch, so
//!   the file an origin annotation names belongs to one unit only, and an object whose origin is
//!   missing or names no unit's path fails the batch;
//! - units with `helmCharts`, without a kustomization of their own (a generated one is written per
//!   unit), or with Flux substitutions take the one-by-one path, as do units of different load
//!   restrictors.
//!
//! A batch that fails for any reason — two units declaring the same object, one unit's own error —
//! is split in two and each half built again, down to single units, which render one by one and
//! report their own errors.

use std::collections::BTreeSet;

use serde_json::json;

use super::kustomize::{attribute, origin_path, restrictor, write_wrapper};
use super::tools::{Site, sandbox_env, write};
use crate::desired::cache::Inputs;
use crate::desired::error::{FileError, RenderError};
use crate::desired::kustomization::is_kustomize_dir;
use crate::desired::tree::{REMOTE_MOUNTS, Tree};
use crate::desired::{How, Parsed, Unit};
use crate::error::InputError;
use crate::k8s::object::Object;
use crate::k8s::read::read_str;
use crate::util::process::{Run, run};

/// The largest batch: a failed batch is halved until it builds, so this bounds what one bad unit
/// costs its neighbours (about log2 of it extra builds).
const MAX_BATCH: usize = 100;

/// Fields that make a unit build alone (see the module's note).
const ALONE: [&str; 16] = [
    "namePrefix",
    "nameSuffix",
    "configMapGenerator",
    "secretGenerator",
    "generators",
    "transformers",
    "validators",
    "vars",
    "openapi",
    "crds",
    "configurations",
    "helmCharts",
    "helmChartInflationGenerator",
    "helmGlobals",
    "generatorOptions",
    "buildMetadata",
];

/// A unit that may share a build: its index in the batch of units and every path it reads.
#[derive(Debug, Clone)]
pub(super) struct Member {
    pub n: usize,
    roots: Vec<String>,
}

impl Member {
    /// A unit rendered on its own.
    pub(super) fn alone(n: usize) -> Member {
        Member {
            n,
            roots: Vec::new(),
        }
    }
}

/// The paths a kustomize unit reads, when it may share a build with others; `None` when it must
/// build alone.
pub(super) fn batchable(tree: &Tree, unit: &Unit, inputs: &Inputs) -> Option<Vec<String>> {
    if !matches!(unit.how, How::Kustomize { .. })
        || unit.substitute.is_some()
        || !is_kustomize_dir(tree, &unit.path)
    {
        return None;
    }
    if inputs.fields.iter().any(|f| ALONE.contains(&f.as_str())) {
        return None;
    }
    // A unit with remote resources has its kustomizations rewritten to point at what was fetched.
    if inputs.roots.iter().any(|r| r.starts_with(REMOTE_MOUNTS)) {
        return None;
    }
    // An object annotated for a name hash is renamed at the top of the build.
    let hashed = inputs.files.iter().any(|f| {
        tree.read(f)
            .is_ok_and(|b| b.windows(NEEDS_HASH.len()).any(|w| w == NEEDS_HASH))
    });
    (!hashed).then(|| inputs.roots.iter().cloned().collect())
}

const NEEDS_HASH: &[u8] = b"kustomize.config.k8s.io/needs-hash";

/// Whether two sets of tree paths share a path, or one holds a directory the other reads inside.
fn overlaps(taken: &BTreeSet<String>, roots: &[String]) -> bool {
    roots.iter().any(|r| {
        if r.is_empty() || taken.contains("") {
            return true;
        }
        // An ancestor of r (or r itself) taken...
        let mut p = r.as_str();
        loop {
            if taken.contains(p) {
                return true;
            }
            match p.rsplit_once('/') {
                Some((parent, _)) => p = parent,
                None => break,
            }
        }
        // ...or something inside r.
        let inside = format!("{r}/");
        taken
            .range(inside.clone()..)
            .next()
            .is_some_and(|t| t.starts_with(&inside))
    })
}

/// Splits the batchable units into batches of one restrictor each whose paths do not overlap,
/// `parts` or more of them (one per worker) of at most [`MAX_BATCH`] units. A unit that overlaps
/// every open batch opens a new one.
pub(super) fn group(members: Vec<(Member, &'static str)>, parts: usize) -> Vec<Vec<Member>> {
    let count = members.len();
    let size = count.div_ceil(parts.max(1)).clamp(1, MAX_BATCH);
    struct Open {
        restrictor: &'static str,
        taken: BTreeSet<String>,
        members: Vec<Member>,
    }
    let mut open: Vec<Open> = Vec::new();
    for (m, restrictor) in members {
        let fits = open.iter().position(|b| {
            b.restrictor == restrictor && b.members.len() < size && !overlaps(&b.taken, &m.roots)
        });
        let i = fits.unwrap_or_else(|| {
            open.push(Open {
                restrictor,
                taken: BTreeSet::new(),
                members: Vec::new(),
            });
            open.len() - 1
        });
        let Some(b) = open.get_mut(i) else { continue };
        b.taken.extend(m.roots.iter().cloned());
        b.members.push(m);
    }
    open.into_iter().map(|b| b.members).collect()
}

/// The batchable units among `todo` (indices into `units`), grouped; and the rest.
pub(super) fn plan(
    tree: &Tree,
    units: &[&Unit],
    inputs: &[Option<Inputs>],
    todo: &[usize],
    parts: usize,
) -> (Vec<Vec<Member>>, Vec<usize>) {
    let mut members = Vec::new();
    let mut alone = Vec::new();
    for &n in todo {
        let unit = units.get(n);
        let found = inputs.get(n).and_then(Option::as_ref);
        match unit
            .zip(found)
            .and_then(|(u, i)| Some((batchable(tree, u, i)?, restrictor(u))))
        {
            Some((roots, r)) => members.push((Member { n, roots }, r)),
            None => alone.push(n),
        }
    }
    // Two units are not worth a batch's bookkeeping.
    if members.len() < 3 {
        alone.extend(members.into_iter().map(|(m, _)| m.n));
        alone.sort_unstable();
        return (Vec::new(), alone);
    }
    let mut groups = group(members, parts);
    // A batch of one is a unit alone.
    groups.retain(|g| {
        if let [m] = g.as_slice() {
            alone.push(m.n);
            false
        } else {
            true
        }
    });
    (groups, alone)
}

/// The files the units of a batch read, for the repository's copy to hold.
pub(super) fn needs(group: &[Member], inputs: &[Option<Inputs>]) -> Vec<String> {
    group
        .iter()
        .filter_map(|m| inputs.get(m.n).and_then(Option::as_ref))
        .flat_map(|i| i.files.iter().cloned())
        .collect()
}

/// Why a batch cannot be used as it was built: it is split and built again, down to single units
/// that render (and fail) on their own, so this is only ever logged.
#[derive(Debug, thiserror::Error)]
pub(super) enum BatchError {
    #[error("no kustomize")]
    NoKustomize,
    #[error("no such unit")]
    NoUnit,
    #[error("not a kustomize unit")]
    NotKustomize,
    /// The repository's copy could not be made.
    #[error(transparent)]
    Copy(#[from] RenderError),
    #[error(transparent)]
    File(#[from] FileError),
    #[error("{0}")]
    Build(String),
    #[error(transparent)]
    Output(#[from] InputError),
    #[error("{kind}/{name} has no origin annotation")]
    NoOrigin { kind: String, name: String },
    #[error("{path} is read by no unit of the batch")]
    NoOwner { path: String },
}

/// One `kustomize build` over the wrappers of the batch's units, in the copy `site` names
/// (`site.number` numbers the batch, `first` the units); each unit's objects, or why the batch
/// cannot be used as it is.
pub(super) fn build(
    site: &Site<'_>,
    first: usize,
    group: &[Member],
    units: &[&Unit],
    parsed: &Parsed,
) -> Result<Vec<(usize, Vec<Object>)>, BatchError> {
    let Site {
        root, home, tools, ..
    } = *site;
    let (program, pre) = tools.kustomize.as_ref().ok_or(BatchError::NoKustomize)?;
    let mut wrappers = Vec::new();
    let mut restrict = None;
    for m in group {
        let unit = units.get(m.n).ok_or(BatchError::NoUnit)?;
        let How::Kustomize { overlay, .. } = &unit.how else {
            return Err(BatchError::NotKustomize);
        };
        let wrap_name = format!(".gpuledger-wrap-{}", first + m.n);
        write_wrapper(root, &wrap_name, unit, overlay)?;
        wrappers.push(format!("../{wrap_name}"));
        restrict = Some(restrictor(unit));
    }
    let batch = format!(".gpuledger-batch-{}", site.number);
    let k = json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": wrappers,
        "buildMetadata": ["originAnnotations"],
    });
    write(&root.join(&batch).join("kustomization.yaml"), &k)?;
    let mut args = pre.clone();
    args.extend([
        batch.clone(),
        "--load-restrictor".into(),
        restrict.unwrap_or("LoadRestrictionsRootOnly").into(),
    ]);
    let out = run(&Run {
        program,
        args,
        cwd: root,
        env: sandbox_env(home),
        timeout: tools.timeout,
    })
    .map_err(|e| BatchError::Build(e.to_string()))?;
    let objs =
        read_str(&out, &format!("{batch} (kustomize)")).and_then(crate::workload::checked)?;
    let mut each: Vec<(usize, Vec<Object>)> = group.iter().map(|m| (m.n, Vec::new())).collect();
    for o in objs {
        let path = origin_path(&o, &batch).ok_or_else(|| BatchError::NoOrigin {
            kind: o.kind.to_string(),
            name: o.meta.name.clone(),
        })?;
        let owner = group
            .iter()
            .position(|m| m.roots.iter().any(|r| within(&path, r)))
            .ok_or(BatchError::NoOwner { path })?;
        if let Some((_, objs)) = each.get_mut(owner) {
            objs.push(o);
        }
    }
    for (_, objs) in &mut each {
        attribute(objs, &batch, parsed);
    }
    tracing::debug!(units = group.len(), "built together");
    Ok(each)
}

/// Whether the tree path `path` is `root` or inside it.
fn within(path: &str, root: &str) -> bool {
    root.is_empty()
        || path == root
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    fn roots(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn paths_overlap_when_one_holds_the_other() {
        let taken = set(&["apps/a", "base/common", "patches/p.yaml"]);
        assert!(overlaps(&taken, &roots(&["apps/a"])));
        assert!(overlaps(&taken, &roots(&["apps/a/sub"])));
        assert!(overlaps(&taken, &roots(&["base"])));
        assert!(overlaps(&taken, &roots(&["patches/p.yaml"])));
        assert!(overlaps(&taken, &roots(&[""])));
        assert!(!overlaps(&taken, &roots(&["apps/ab"])));
        assert!(!overlaps(&taken, &roots(&["apps/b", "base/other"])));
        assert!(overlaps(&taken, &roots(&["apps"])));
        assert!(within("apps/a/x.yaml", "apps/a"));
        assert!(!within("apps/ab/x.yaml", "apps/a"));
        assert!(within("x.yaml", ""));
    }

    #[test]
    fn units_that_share_a_base_never_share_a_batch() {
        let m = |n: usize, r: &[&str]| (Member { n, roots: roots(r) }, "LoadRestrictionsRootOnly");
        let members = vec![
            m(0, &["apps/a", "base"]),
            m(1, &["apps/b", "base"]),
            m(2, &["apps/c"]),
            m(3, &["apps/d"]),
            (
                Member {
                    n: 4,
                    roots: roots(&["flux/e"]),
                },
                "LoadRestrictionsNone",
            ),
        ];
        let groups = group(members, 1);
        let ns: Vec<Vec<usize>> = groups
            .iter()
            .map(|g| g.iter().map(|m| m.n).collect())
            .collect();
        assert_eq!(ns, vec![vec![0, 2, 3], vec![1], vec![4]]);
        // One per worker when they fit: two workers, four units, two batches of two.
        let members = (0..4).map(|n| m(n, &[&format!("apps/{n}")])).collect();
        let sizes: Vec<usize> = group(members, 2).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![2, 2]);
    }
}
