//! The fleet inventory as blocks: the decision view first (the four counts, the shortage, the
//! tenants), the long lists after (`super::lists`).

use super::page::{self, count, percent};
use super::unknown::{missing, routes, unknown_lines};
use crate::doc::{Block, Chart, Doc, Table, Text};
use crate::report::Report;
use crate::util::text::count as count_of;

/// The whole inventory: headline, then details.
pub fn inventory(r: &Report) -> Doc {
    if let Some(d) = manifests_only(r) {
        return d;
    }
    let mut d = headline(r);
    // Cost per verified outcome, when its inputs were given: a decision figure, before the lists.
    if let Some(c) = &r.cost {
        d.extend(super::cost::section(c, r.headroom.as_ref()));
    }
    d.extend(super::lists::details(r));
    if let Some(h) = &r.headroom {
        d.extend(super::headroom::section(h));
    }
    d
}

/// An input that holds no Node and no Pod is manifests, not a cluster: one line that says so and
/// names the command for manifests, then what its workloads declare — not a page of figures that
/// are all unknown. `None` for a cluster or a dump of one.
fn manifests_only(r: &Report) -> Option<Doc> {
    if !(missing(r, "pods") && missing(r, "nodes")) || r.workloads.is_empty() {
        return None;
    }
    let mut d = Doc::new();
    d.heading(2, page::title("GPU fleet inventory", r.provenance.as_ref()));
    d.paragraph(
        Text::new()
            .strong("This input holds no Node and no Pod: it reads as manifests (desired state), not a cluster.")
            .plain(" ")
            .code("gpuledger render --repo DIR")
            .plain(" is the command for manifests; the inventory needs a cluster or a dump of one (")
            .code("kubectl get nodes,pods -A -o yaml")
            .plain("). What the workloads here declare:"),
    );
    d.section(
        &format!("Declared GPU workloads ({})", r.workloads.len()),
        Table::new(&["workload", "tenant", "shape", ">GPUs declared"]).rows(&r.workloads, |w| {
            vec![
                format!("{}/{}/{}", w.namespace, w.kind, w.name).into(),
                w.tenant.as_str().into(),
                w.shape.as_str().into(),
                w.gpus_declared
                    .map_or_else(|| "unknown".to_string(), |g| g.to_string())
                    .into(),
            ]
        }),
        None,
    );
    Some(d)
}

/// The title, the INCOMPLETE banner when part of the input was not read, and the figures.
pub fn headline(r: &Report) -> Doc {
    let mut d = Doc::new();
    d.heading(2, page::title("GPU fleet inventory", r.provenance.as_ref()));
    if let Some(b) = page::banner(r) {
        d.push(b);
    }
    if let Some(b) = super::dra::uncounted(r) {
        d.push(b);
    }
    // The figures' first block is their headline: warnings before it, where and when after it.
    let mut figures = figures(r).blocks.into_iter();
    if let Some(first) = figures.next() {
        super::provenance::lead(&mut d, r.provenance.as_ref(), first);
    }
    d.blocks.extend(figures);
    d
}

/// The fleet in one line, for a folded section's summary: `101 of 112 placeable GPUs requested
/// (90.2%) on 14 GPU nodes; 16 pending`.
pub fn one_line(r: &Report) -> String {
    let (f, g) = (&r.fleet, &r.fleet.gpus);
    if missing(r, "pods") || missing(r, "nodes") {
        return "incomplete: figures unknown (see the banner above)".into();
    }
    format!(
        "{} of {} placeable GPUs requested ({}) on {}; {} pending",
        g.requested,
        g.placeable,
        percent(f.utilisation),
        count_of(f.gpu_nodes, "GPU node"),
        g.pending
    )
}

/// The four counts, the shortage, clusters and tenants: what a drift issue folds under drift.
pub fn figures(r: &Report) -> Doc {
    let f = &r.fleet;
    let g = &f.gpus;
    let mut d = Doc::new();
    // Without the pods (or the nodes) the figures built on them are unknown, never zero.
    let (no_pods, no_nodes) = (missing(r, "pods"), missing(r, "nodes"));
    let known = |v: u64, unknown: bool| {
        if unknown {
            "unknown".to_string()
        } else {
            v.to_string()
        }
    };
    // Work waiting for queue quota is its own tier, beside pending, where admission queues exist.
    let queued = if super::queues::has_admission(r) {
        format!(", {} queued", super::queues::queued(r))
    } else {
        String::new()
    };
    if no_pods || no_nodes {
        d.paragraph(
            Text::new()
                .strong(known(g.requested, no_pods))
                .plain(" GPUs requested of ")
                .strong(known(g.placeable, no_nodes))
                .plain(format!(
                    " placeable (utilisation unknown) on {} GPU nodes; {} pending{queued}.",
                    known(f.gpu_nodes, no_nodes),
                    known(g.pending, no_pods),
                )),
        );
    } else {
        let mut headline = Text::new()
            .strong(g.requested.to_string())
            .plain(" GPUs requested of ")
            .strong(g.placeable.to_string())
            .plain(format!(
                " placeable ({} utilisation) on {} GPU nodes; {} pending{queued}. {}.",
                percent(f.utilisation),
                f.gpu_nodes,
                g.pending,
                sentence(&f.shortage.summary)
            ));
        if let Some(n) = &f.nearly_full {
            headline = who_to_call(headline, n);
            headline = super::queues::borrowing(headline, &n.borrowing);
        }
        d.paragraph(headline);
    }
    let used_partial = f.partial.get("gpus.used");
    let used_note = f.unknown.get("gpus.used").cloned().unwrap_or_else(|| {
        let mut note = format!(
            "busy; {} GPU-equivalents; {}",
            f.gpu_equivalents_used
                .map_or("?".into(), |e| format!("{e:.1}")),
            f.metrics_source.clone().unwrap_or_default()
        );
        if let Some(scope) = &f.metrics_scope {
            note.push_str(&format!("; scope: {scope}"));
        }
        if let Some(why) = used_partial {
            note = format!("partial, at least this many: {why}; {note}");
        }
        note
    });
    let tiers = [
        (
            "capacity",
            known(g.capacity, no_nodes),
            "physical GPUs on GPU nodes".to_string(),
        ),
        (
            "allocatable",
            known(g.allocatable, no_nodes),
            "offered by the device plugins".into(),
        ),
        (
            "placeable",
            known(g.placeable, no_nodes),
            if no_nodes {
                "GPU nodes excluded unknown".to_string()
            } else {
                format!("{} GPU nodes excluded", f.excluded_nodes.len())
            },
        ),
        (
            "requested",
            known(g.requested, no_pods),
            "by bound, running pods".into(),
        ),
        (
            "pending",
            known(g.pending, no_pods),
            "by pods waiting for a node".into(),
        ),
        (
            "queued",
            super::queues::queued(r),
            "by work waiting for its queue's quota (Kueue, KAI)".into(),
        ),
        (
            "used",
            if no_pods {
                "unknown".into()
            } else if let (Some(n), Some(_)) = (g.used, used_partial) {
                format!("≥ {n}")
            } else {
                count(g.used)
            },
            used_note,
        ),
    ];
    let admission = super::queues::has_admission(r);
    let tiers = tiers
        .into_iter()
        .filter(|(tier, ..)| admission || *tier != "queued");
    d.push(Block::Table(Table::new(&["GPUs", ">count", "note"]).rows(
        tiers,
        |(tier, n, note)| {
            let note = super::dra::tier_note(r, tier, note);
            vec![tier.into(), n.into(), note.into()]
        },
    )));
    // H100s and L4s are not one pool: the tiers per model, when the nodes name their model.
    if !no_nodes && f.models.iter().any(|m| m.model != "unknown") {
        let queued_col = f.models.iter().any(|m| m.queued > 0);
        let mut headers = vec![
            "GPU model",
            ">nodes",
            ">capacity",
            ">allocatable",
            ">placeable",
            ">requested",
        ];
        if queued_col {
            headers.push(">queued");
        }
        d.push(Block::Table(Table::new(&headers).rows(&f.models, |m| {
            let mut row = vec![
                m.model.as_str().into(),
                m.nodes.to_string().into(),
                m.capacity.to_string().into(),
                m.allocatable.to_string().into(),
                m.placeable.to_string().into(),
                if no_pods {
                    "unknown".to_string()
                } else {
                    m.requested.to_string()
                }
                .into(),
            ];
            if queued_col {
                row.push(m.queued.to_string().into());
            }
            row
        })));
    }
    let other_unknown = unknown_lines(&f.unknown);
    if !other_unknown.is_empty() {
        d.push(Block::Quote(other_unknown));
    }
    if no_pods {
        d.paragraph(format!(
            "The namespaces holding GPU pods are unknown; {} public routes.",
            routes(r, "", f.public_routes)
        ));
    } else {
        d.paragraph(format!(
            "{} namespaces hold GPU pods (the top three hold {}); {} public routes.",
            f.gpu_namespaces,
            percent(f.top3_namespace_share),
            routes(r, "", f.public_routes)
        ));
    }

    if !r.clusters.is_empty() {
        let t = Table::new(&[
            "cluster",
            ">GPU nodes",
            ">capacity",
            ">placeable",
            ">requested",
            ">pending",
            ">util",
            "shortage",
        ])
        .rows(&r.clusters, |c| {
            let g = &c.fleet.gpus;
            vec![
                format!(
                    "{}{}",
                    c.name,
                    if c.complete { "" } else { " (incomplete)" }
                )
                .into(),
                c.fleet.gpu_nodes.to_string().into(),
                g.capacity.to_string().into(),
                g.placeable.to_string().into(),
                g.requested.to_string().into(),
                g.pending.to_string().into(),
                percent(c.fleet.utilisation).into(),
                format!("{:?}", c.fleet.shortage.kind).to_lowercase().into(),
            ]
        });
        d.section("Clusters", t, None);
    }

    // The used column says something only when some tenant's activity is known.
    let used_known = !no_pods && r.tenants.iter().any(|t| t.gpus_used.is_some());
    // Who to call is a column only when some tenant has a contact.
    let contacts = r.tenants.iter().any(|t| !t.contacts.is_empty());
    let queued_col = r.tenants.iter().any(|t| t.gpus_queued > 0);
    let mut headers = vec![
        "tenant",
        ">requested",
        ">pending",
        ">queued",
        ">used",
        ">share",
        ">workloads",
        ">public routes",
        "product lines",
    ];
    // The trend column (GPUs per week) only when a Prometheus gave one.
    let trend = r.tenants.iter().any(|t| t.gpus_per_week.value().is_some());
    if trend {
        headers.push(">GPUs/week");
    }
    if contacts {
        headers.push("contact");
    }
    let mut tenants = Table::new(&headers).rows(&r.tenants, |t| {
        let mut row = vec![
            t.name.as_str().into(),
            known(t.gpus_requested, no_pods).into(),
            known(t.gpus_pending, no_pods).into(),
            if queued_col {
                t.gpus_queued.to_string().into()
            } else {
                Text::new()
            },
            if used_known {
                count(t.gpus_used).into()
            } else {
                Text::new()
            },
            if no_pods {
                "unknown".into()
            } else {
                percent(t.share)
            }
            .into(),
            t.workloads.to_string().into(),
            routes(r, "tenants.public_routes", t.public_routes).into(),
            t.product_lines.join(", ").into(),
        ];
        if trend {
            row.push(
                t.gpus_per_week
                    .value()
                    .map_or_else(|| "unknown".into(), per_week)
                    .into(),
            );
        }
        if contacts {
            row.push(t.contacts.join(", ").into());
        }
        row
    });
    if !used_known || !queued_col {
        tenants = tenants.drop_empty_columns();
    }
    d.section("Tenants", tenants, None);
    d.extend(super::queues::section(r));
    // A trend column that was asked for and is unknown says why in a line, not a column of
    // "unknown" (a partly known one shows its unknown cells).
    if !trend && let Some(why) = r.fleet.unknown.get("tenants.gpus_per_week") {
        d.paragraph(Text::new().emph(format!("GPUs per week unknown: {why}.")));
    }
    let held = r
        .tenants
        .iter()
        .map(|t| (t.name.as_str(), t.gpus_requested))
        .collect();
    if !no_pods && let Some(pie) = pie(held) {
        d.push(pie);
    }
    d
}

/// Tenants shown by name in the pie; the rest are one "other" slice, so a fleet of forty tenants
/// still reads at a glance.
const PIE_SLICES: usize = 7;

/// GPUs requested by tenant as a pie: the largest [`PIE_SLICES`] and the rest as "other".
fn pie(mut held: Vec<(&str, u64)>) -> Option<Block> {
    held.retain(|(_, n)| *n > 0);
    if held.is_empty() {
        return None;
    }
    held.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    // One tenant past the cut is shown by name: an "other" slice of one says less.
    let shown = if held.len() > PIE_SLICES + 1 {
        PIE_SLICES
    } else {
        held.len()
    };
    let rest: u64 = held
        .iter()
        .skip(shown)
        .map(|(_, n)| *n)
        .fold(0, u64::saturating_add);
    let others = held.len().saturating_sub(shown);
    let mut slices: Vec<(String, u64)> = held
        .into_iter()
        .take(shown)
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    if others > 0 {
        slices.push((format!("{others} other tenants"), rest));
    }
    Some(Block::Chart(Chart::Pie {
        title: "GPUs requested by tenant".into(),
        slices,
    }))
}

/// ` Fleet at 95%: chat holds 46% — @team-chat; search holds 20% (no contact known).` The
/// contacts are cluster or repository text: the markdown writer escapes them (a `@team` is shown,
/// never a mention that pings).
fn who_to_call(mut t: Text, n: &crate::report::NearlyFull) -> Text {
    t = t.plain(format!(" Fleet at {}", page::percent_whole(n.utilisation)));
    for (i, c) in n.tenants.iter().enumerate() {
        t = t.plain(if i == 0 { ": " } else { "; " });
        t = t.strong(c.tenant.as_str()).plain(format!(
            " holds {}",
            c.share
                .map_or_else(|| "an unknown share".into(), page::percent_whole)
        ));
        t = if c.contacts.is_empty() {
            t.plain(" (no contact known)")
        } else {
            t.plain(format!(" — {}", c.contacts.join(", ")))
        };
    }
    t.plain(".")
}

/// `+12.5`, `-3`, `0`: GPUs per week, to a tenth.
fn per_week(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    match r {
        r if r > 0.0 => format!("+{r}"),
        r if r < 0.0 => format!("{r}"),
        _ => "0".into(),
    }
}

/// `s` with its first letter in upper case: a sentence of its own.
fn sentence(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slices(b: Option<Block>) -> Vec<(String, u64)> {
        match b {
            Some(Block::Chart(Chart::Pie { slices, .. })) => slices,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_pie_shows_the_largest_tenants_and_one_other_slice() {
        let names: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        let held: Vec<(&str, u64)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), 100 - i as u64))
            .collect();
        let s = slices(pie(held.clone()));
        assert_eq!(s.len(), PIE_SLICES + 1);
        assert_eq!(s[0], ("t0".to_string(), 100));
        assert_eq!(s[PIE_SLICES], ("3 other tenants".to_string(), 93 + 92 + 91));
        // One past the cut is shown by name; nothing held, no pie.
        assert_eq!(slices(pie(held[..8].to_vec())).len(), 8);
        assert!(pie(vec![("idle", 0)]).is_none());
    }

    #[test]
    fn empty_columns_are_dropped_and_a_table_without_rows_keeps_its_columns() {
        let t = Table::new(&["a", "b", ">c"])
            .rows(0..2, |i| vec![i.to_string().into(), Text::new(), "".into()])
            .drop_empty_columns();
        assert_eq!(t.headers, ["a"]);
        assert_eq!(t.rows, vec![vec![Text::from("0")], vec![Text::from("1")]]);
        assert_eq!(
            Table::new(&["a", "b"]).drop_empty_columns().headers.len(),
            2
        );
    }
}
