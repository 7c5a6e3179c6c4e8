//! Which apps a change leaves unknown, for `check`: every app that failed to render on either
//! side, and an app not rendered on purpose (offline, a new source host, a plugin) that the change
//! adds, removes or changes — so a pull request that adds a remote chart gpuledger could not fetch
//! reads as a GPU delta of unknown naming the app, and the `render-error` gate fails on it.

use std::collections::BTreeMap;

use crate::report::{AppRow, AppStatus, ConfigReview, Desired};

/// The apps whose GPUs the change makes unknown, by (kind, name): the side (the head's first) and
/// the error. Every app that failed to render on either side; and an app not rendered on purpose
/// that only one side has, or that the change changed (its object differs, or why it is not
/// rendered).
pub fn failed_apps(
    base: &Desired,
    head: &Desired,
) -> BTreeMap<(String, String), (&'static str, String)> {
    let mut out = BTreeMap::new();
    for (side, d) in [("base", base), ("head", head)] {
        for a in d.apps.iter().filter(|a| a.status == AppStatus::Error) {
            out.insert(
                (a.kind.clone(), a.name.clone()),
                (side, a.error.clone().unwrap_or_default()),
            );
        }
    }
    type Key<'a> = (&'a Option<String>, &'a str, &'a str);
    fn skipped(d: &Desired) -> BTreeMap<Key<'_>, &AppRow> {
        d.apps
            .iter()
            .filter(|a| a.status == AppStatus::NotRendered)
            .map(|a| ((&a.cluster, a.kind.as_str(), a.name.as_str()), a))
            .collect()
    }
    let (b, h) = (skipped(base), skipped(head));
    let error = |a: &AppRow| a.error.clone().unwrap_or_else(|| "not rendered".into());
    for (k, a) in &h {
        let same = b
            .get(k)
            .is_some_and(|x| x.fingerprint == a.fingerprint && x.error == a.error);
        if !same {
            out.entry((a.kind.clone(), a.name.clone()))
                .or_insert(("head", error(a)));
        }
    }
    for (_, a) in b.iter().filter(|(k, _)| !h.contains_key(*k)) {
        out.entry((a.kind.clone(), a.name.clone()))
            .or_insert(("base", error(a)));
    }
    out
}

/// Every app of either side that failed to render, every app not rendered that the change adds,
/// removes or changes (`unknown`, from [`failed_apps`]), the problems of either tree, and a head
/// configuration that does not parse.
pub fn render_errors(
    base: &Desired,
    head: &Desired,
    config: &ConfigReview,
    unknown: &BTreeMap<(String, String), (&'static str, String)>,
) -> Vec<String> {
    let not_rendered = unknown.iter().filter(|((kind, name), (side, _))| {
        let d = if *side == "head" { head } else { base };
        d.apps
            .iter()
            .any(|a| a.kind == *kind && a.name == *name && a.status == AppStatus::NotRendered)
    });
    let not_rendered: Vec<String> = not_rendered
        .map(|((kind, name), (side, why))| format!("{side}: {kind} {name}: {why}"))
        .collect();
    [("base", base), ("head", head)]
        .iter()
        .flat_map(|(side, d)| {
            d.apps
                .iter()
                .filter(|a| a.status == AppStatus::Error)
                .map(move |a| {
                    format!(
                        "{side}: {} {}: {}",
                        a.kind,
                        a.name,
                        a.error.as_deref().unwrap_or("")
                    )
                })
                .chain(d.problems.iter().map(move |p| format!("{side}: {p}")))
        })
        .chain(not_rendered)
        .chain(config.head_error.iter().map(|e| format!("head: {e}")))
        .collect()
}
