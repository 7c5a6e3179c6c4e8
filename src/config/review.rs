//! What a change does to `.gpuledger.yaml`, in sentences a reviewer approves.
//!
//! A pre-merge check applies the configuration of the base ref, so a pull request cannot accept
//! its own drift, raise its own tenant limit or exclude its own paths from rendering and pass. The
//! head's configuration still matters once merged: [`changes`] lists how it differs from the base,
//! one sentence per change, and the comment shows them as their own section. Accepted drift, limits
//! and render paths get sentences of their own; every other setting is compared field by field, so
//! a setting added later is never missed.

use serde_json::Value;

use super::{AcceptRule, Config};

/// How `head` differs from `base`, in the order of the file's sections.
pub fn changes(base: &Config, head: &Config) -> Vec<String> {
    let mut out = Vec::new();
    for r in head
        .accepted_drift
        .iter()
        .filter(|r| !base.accepted_drift.contains(r))
    {
        out.push(format!("accepts drift on {}", rule(r)));
    }
    for r in base
        .accepted_drift
        .iter()
        .filter(|r| !head.accepted_drift.contains(r))
    {
        out.push(format!("no longer accepts drift on {}", rule(r)));
    }
    let (bl, hl) = (&base.limits.tenants, &head.limits.tenants);
    for (t, h) in hl {
        match bl.get(t) {
            None => out.push(format!("sets a limit of {h} GPUs for tenant {t}")),
            Some(b) if h > b => out.push(format!("raises the limit of {t} {b} → {h} GPUs")),
            Some(b) if h < b => out.push(format!("lowers the limit of {t} {b} → {h} GPUs")),
            Some(_) => {}
        }
    }
    for (t, b) in bl.iter().filter(|(t, _)| !hl.contains_key(*t)) {
        out.push(format!("removes the limit of {t} (was {b} GPUs)"));
    }
    let lists: [(&str, &str, &Vec<String>, &Vec<String>); 5] = [
        (
            "excludes {} from rendering",
            "stops excluding {} from rendering",
            &base.render.exclude,
            &head.render.exclude,
        ),
        (
            "renders root {}",
            "no longer renders root {}",
            &base.render.roots,
            &head.render.roots,
        ),
        (
            "takes {} as this repository's URL",
            "no longer takes {} as this repository's URL",
            &base.render.repo_urls,
            &head.render.repo_urls,
        ),
        (
            "allows rendering to fetch from {}",
            "no longer allows rendering to fetch from {}",
            &base.render.remote.allow,
            &head.render.remote.allow,
        ),
        (
            "allows fetching from the private network {}",
            "no longer allows fetching from the private network {}",
            &base.render.remote.private_networks,
            &head.render.remote.private_networks,
        ),
    ];
    for (added, removed, b, h) in lists {
        for p in h.iter().filter(|p| !b.contains(p)) {
            out.push(added.replace("{}", p));
        }
        for p in b.iter().filter(|p| !h.contains(p)) {
            out.push(removed.replace("{}", p));
        }
    }
    let (mut b, mut h) = (settings(base), settings(head));
    for v in [&mut b, &mut h] {
        if let Some(m) = v.as_object_mut() {
            m.remove("accepted_drift");
            m.remove("limits");
        }
        if let Some(m) = v.get_mut("render").and_then(Value::as_object_mut) {
            m.remove("exclude");
            m.remove("roots");
            m.remove("repo_urls");
            if let Some(r) = m.get_mut("remote").and_then(Value::as_object_mut) {
                r.remove("allow");
                r.remove("private_networks");
            }
        }
    }
    leaves("", &b, &h, &mut out);
    out
}

fn settings(c: &Config) -> Value {
    // A Config is plain data: serialising it cannot fail.
    serde_json::to_value(c).unwrap_or(Value::Null)
}

/// Every setting that differs, by its dotted path.
fn leaves(path: &str, b: &Value, h: &Value, out: &mut Vec<String>) {
    if b == h {
        return;
    }
    if let (Value::Object(bm), Value::Object(hm)) = (b, h) {
        let keys: std::collections::BTreeSet<&String> = bm.keys().chain(hm.keys()).collect();
        for k in keys {
            let p = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            leaves(
                &p,
                bm.get(k).unwrap_or(&Value::Null),
                hm.get(k).unwrap_or(&Value::Null),
                out,
            );
        }
        return;
    }
    out.push(format!("changes {path} from {b} to {h}"));
}

fn rule(r: &AcceptRule) -> String {
    let m = &r.matches;
    let mut what: Vec<String> = [
        ("namespace", &m.namespace),
        ("kind", &m.kind),
        ("name", &m.name),
    ]
    .iter()
    .filter_map(|(k, g)| g.as_ref().map(|g| format!("{k} {}", g.as_str())))
    .collect();
    if what.is_empty() {
        what.push("every workload".into());
    }
    let owner = r.owner.as_deref().filter(|o| !o.trim().is_empty());
    let owner = owner.map_or_else(|| "no owner".to_string(), |o| format!("owner {o}"));
    let until = r
        .expires
        .map_or_else(|| "no expiry".to_string(), |d| format!("until {d}"));
    format!("{}, {owner}, {until} ({})", what.join(", "), r.reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> Config {
        Config::parse(text, "c").unwrap()
    }

    #[test]
    fn a_change_that_relaxes_the_check_reads_as_such() {
        let base =
            cfg("limits:\n  tenants: {research: 64, chat: 32}\nrender:\n  exclude: [old/**]\n");
        let head = cfg(concat!(
            "limits:\n  tenants: {research: 128}\n",
            "render:\n  exclude: [apps/x/**]\n",
            "accepted_drift:\n  - match: {namespace: ml, name: 'x-*'}\n    reason: migrating\n    owner: alice\n    expires: 2026-12-31\n",
            "metrics:\n  busy_threshold: 0.2\n",
        ));
        assert_eq!(
            changes(&base, &head),
            [
                "accepts drift on namespace ml, name x-*, owner alice, until 2026-12-31 (migrating)",
                "raises the limit of research 64 → 128 GPUs",
                "removes the limit of chat (was 32 GPUs)",
                "excludes apps/x/** from rendering",
                "stops excluding old/** from rendering",
                "changes metrics.busy_threshold from 0.05 to 0.2",
            ]
        );
        assert!(changes(&head, &head).is_empty());
        assert!(changes(&Config::default(), &Config::default()).is_empty());
    }

    #[test]
    fn an_expired_rule_without_owner_is_shown_too() {
        let head = cfg(
            "accepted_drift:\n  - match: {}\n    reason: r\n    owner: ' '\n    expires: 2020-01-01\n",
        );
        assert_eq!(
            changes(&Config::default(), &head),
            ["accepts drift on every workload, no owner, until 2020-01-01 (r)"]
        );
    }
}
