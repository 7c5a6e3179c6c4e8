//! Quota or nodes? Where work waits for queue quota, the inventory's diagnosis: queued GPUs per
//! GPU model, and whether the placeable GPUs they could use are free (a quota problem: the queues
//! are at their quota, the nodes are not) or not (capacity).

use std::collections::{BTreeMap, BTreeSet};

use super::QueueFigures;
use super::admit::Live;
use crate::k8s::object::Object;
use crate::queues::Admission;
use crate::workload::Workload;
use crate::workload::owners::Workloads;

/// Queued GPUs per GPU model: a pod held by admission goes to the model its own selector names;
/// a Kueue Workload's GPUs to its flavor's model, else its pods' selector's. Work that may run on
/// any model counts in the fleet's figure only.
pub fn queued_by_model(
    objects: &[Object],
    workloads: &Workloads<'_>,
    figures: &QueueFigures,
) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    let mut from_pods: BTreeSet<usize> = BTreeSet::new();
    for p in &workloads.pods {
        if p.state != crate::workload::owners::PodState::Queued || p.gpus.whole == 0 {
            continue;
        }
        if let Some(w) = p.workload {
            from_pods.insert(w);
        }
        let model = objects.get(p.object).and_then(|o| {
            let m = crate::analysis::pins::of_object(o);
            (m.len() == 1).then(|| m.into_iter().next()).flatten()
        });
        let model = model.or_else(|| {
            p.workload
                .and_then(|w| figures.waits.get(&w))
                .and_then(|q| q.model.clone())
        });
        if let Some(m) = model {
            let e = out.entry(m).or_default();
            *e = e.saturating_add(p.gpus.whole);
        }
    }
    for (i, w) in workloads.list.iter().enumerate() {
        if w.queued.whole == 0 || from_pods.contains(&i) {
            continue;
        }
        if let Some(m) = figures.waits.get(&i).and_then(|q| q.model.clone()) {
            let e = out.entry(m).or_default();
            *e = e.saturating_add(w.queued.whole);
        }
    }
    out
}

/// The quota diagnosis: when nothing pending is short of nodes but work is queued, and placeable
/// GPUs of the models it may use are free, the shortage is the queues' quota, not the nodes.
pub fn diagnose(
    admission: &Admission,
    figures: &QueueFigures,
    workloads: &[Workload],
    shortage: &mut crate::report::Shortage,
    models: &[crate::report::ModelRow],
    by_model: &BTreeMap<String, u64>,
    queued: u64,
) {
    use crate::report::ShortageKind;
    if queued == 0 || !matches!(shortage.kind, ShortageKind::None | ShortageKind::Fits) {
        return;
    }
    let free_of = |m: &crate::report::ModelRow| {
        m.placeable
            .saturating_sub(m.requested)
            .saturating_sub(m.pending)
    };
    let free_all = shortage.free_placeable.saturating_sub(shortage.pending);
    let any_model =
        queued.saturating_sub(by_model.values().fold(0, |a, n| a.saturating_add(*n))) > 0;
    let free_for_queued = if any_model {
        free_all
    } else {
        models
            .iter()
            .filter(|m| by_model.contains_key(&m.model))
            .map(free_of)
            .fold(0u64, u64::saturating_add)
            .min(free_all)
    };
    let live = Live::new(admission);
    let usage = live.usage_now();
    let mut queues = Vec::new();
    // What each cohort tree could lend, per flavor: once, however many of its queues wait.
    let mut lend: BTreeMap<(usize, String), u64> = BTreeMap::new();
    for r in figures
        .rows
        .iter()
        .filter(|r| r.queued.is_some_and(|q| q.0 > 0.0))
    {
        let admitted = r.admitted.map_or("?".into(), |a| a.to_string());
        let nominal = r.nominal.map_or("?".into(), |a| a.to_string());
        queues.push(match &r.flavor {
            Some(f) => format!("{} ({f}: {admitted} of {nominal} admitted)", r.queue),
            None => format!("{} ({admitted} of {nominal} admitted)", r.queue),
        });
        if let (Some(q), Some(f)) = (live.tree.queue(&r.queue), &r.flavor) {
            let n = u64::try_from(live.tree.lendable(q, f, &usage)).unwrap_or(0);
            let e = lend.entry((live.tree.root(q), f.clone())).or_insert(0);
            *e = (*e).max(n);
        }
    }
    let could_lend = lend.values().fold(0u64, |a, n| a.saturating_add(*n));
    let quotas_known = admission.cluster_queues.iter().all(|q| q.known())
        && admission.cohorts.iter().all(|c| c.problems.is_empty())
        && admission
            .kai_queues
            .iter()
            .all(|q| q.all_problems().next().is_none());
    // A hierarchical Cohort's own quota covers GPUs too (Kueue v1beta2 `Cohort.spec.resourceGroups`).
    let nominal: u64 = admission
        .cluster_queues
        .iter()
        .flat_map(|q| &q.flavors)
        .chain(admission.cohorts.iter().flat_map(|c| &c.flavors))
        .map(|f| f.quota.nominal)
        .fold(0, u64::saturating_add);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let kai: u64 = admission
        .kai_queues
        .iter()
        .filter(|q| crate::queues::is_kai_leaf(admission, &q.name))
        .filter_map(|q| q.quota.filter(|n| *n > 0.0 && n.is_finite()))
        .map(|n| n.floor() as u64)
        .fold(0, u64::saturating_add);
    let placeable: u64 = models
        .iter()
        .map(|m| m.placeable)
        .fold(0, u64::saturating_add);
    // A KAI leaf with quota −1 bounds nothing: it covers every GPU.
    let unbounded = admission.kai_queues.iter().any(|q| {
        crate::queues::is_kai_leaf(admission, &q.name) && q.quota.is_some_and(|n| n < 0.0)
    });
    let uncovered = quotas_known.then(|| {
        if unbounded {
            0
        } else {
            placeable.saturating_sub(nominal.saturating_add(kai))
        }
    });
    let q = crate::report::queues::QuotaShortage {
        queued,
        free_for_queued,
        queues: queues.clone(),
        cohort_could_lend: could_lend,
        uncovered_placeable: uncovered,
    };
    // Work Kueue says can never be admitted as the queues are: no free GPU helps it.
    let never: Vec<(String, u64, &str)> = workloads
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let n = figures.waits.get(&i)?.never.as_deref()?;
            (w.queued.whole > 0).then(|| (w.id.to_string(), w.queued.whole, n))
        })
        .collect();
    let never_text = if never.is_empty() {
        String::new()
    } else {
        format!(
            "; {} of them can never be admitted as the queues are ({})",
            never.iter().fold(0u64, |a, (_, n, _)| a.saturating_add(*n)),
            never
                .iter()
                .map(|(id, n, why)| format!("{id}: {n} GPUs, {why}"))
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    if free_for_queued > 0 {
        shortage.kind = ShortageKind::Quota;
        shortage.summary = format!(
            "quota problem: {queued} GPUs wait for queue quota ({}) while {free_for_queued} placeable GPUs they could use are free{never_text}{}{}",
            queues.join(", "),
            if could_lend > 0 {
                format!("; their cohorts could lend {could_lend}")
            } else {
                "; their cohorts lend nothing now".to_string()
            },
            match uncovered {
                Some(n) if n > 0 => format!("; {n} placeable GPUs are covered by no queue's quota"),
                _ => String::new(),
            }
        );
    } else {
        shortage.kind = ShortageKind::Capacity;
        shortage.summary = format!(
            "capacity problem: {queued} GPUs wait for queue quota ({}) and no placeable GPU of their models is free{never_text}",
            queues.join(", ")
        );
    }
    shortage.quota = Some(q);
}
