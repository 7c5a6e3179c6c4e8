//! GPUs per tenant and product line over time, from history Prometheus already keeps: start, end,
//! change, rate per week and peak, and which tenant grows fastest.
//!
//! Pure: the series come in already read (gpuledger's own `gpuledger_tenant_gpus`, or
//! kube-state-metrics' requests per namespace with the namespaces' labels), the clock is passed
//! in. A step is *covered* when any series has a sample there — the exporter (or
//! kube-state-metrics) was being scraped. A tenant without a sample at a covered step held no
//! GPUs then (neither source exports a tenant or namespace that requests nothing); an uncovered
//! step is unknown, never zero. Without two covered steps there is no trend, and the report says
//! why.
//!
//! The runway ([`with_runway`]) turns growth into a date: the free placeable GPUs now, divided by
//! the GPUs a week the fleet (all tenants' changes together) or one tenant grew over the window.
//! Growth under 0.05 GPUs a week is "not growing"; unknown free GPUs leave every runway unknown
//! with why, never "not growing".

use std::collections::{BTreeMap, BTreeSet};

use crate::config::{Fallback, Tenancy};
use crate::live::range::RangeSeries;
use crate::report::Known;
use crate::report::trend::{Runway, RunwayRow, RunwayVerdict, Source, Trend, TrendRow};

pub use crate::report::series::NO_PRODUCT_LINE;

/// Series keyed by the name they are summed under (a tenant, a product line, a namespace).
pub type ByName = BTreeMap<String, BTreeMap<i64, f64>>;

/// Sums `series` by the value of label `key` (a missing label is `missing`).
pub fn by_label(series: &[RangeSeries], key: &str, missing: &str) -> ByName {
    let mut out: ByName = BTreeMap::new();
    for s in series {
        let name = s.labels.get(key).map_or(missing, String::as_str);
        let e = out.entry(name.to_string()).or_default();
        for (t, v) in &s.samples {
            *e.entry(*t).or_insert(0.0) += v;
        }
    }
    out
}

/// kube-state-metrics writes a namespace label `product-line` as `label_product_line`.
pub fn ksm_label(key: &str) -> String {
    let clean: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("label_{clean}")
}

/// Tenant and product line of each namespace, from `kube_namespace_labels` and the tenancy
/// rules' namespace labels (workload labels are not in kube-state-metrics' request series).
pub fn namespace_owners(
    labels: &[RangeSeries],
    namespaces: impl Iterator<Item = String>,
    cfg: &Tenancy,
) -> BTreeMap<String, (String, String)> {
    let by_ns: BTreeMap<&str, &BTreeMap<String, String>> = labels
        .iter()
        .filter_map(|s| s.labels.get("namespace").map(|n| (n.as_str(), &s.labels)))
        .collect();
    let pick = |keys: &[String], l: Option<&&BTreeMap<String, String>>| {
        keys.iter().find_map(|k| {
            l.and_then(|l| l.get(&ksm_label(k)))
                .filter(|v| !v.is_empty())
                .cloned()
        })
    };
    namespaces
        .map(|ns| {
            let l = by_ns.get(ns.as_str());
            let tenant = pick(&cfg.tenant.namespace_labels, l).unwrap_or_else(|| {
                match cfg.tenant.fallback.unwrap_or(Fallback::Namespace) {
                    Fallback::Namespace => ns.clone(),
                    Fallback::None => "(none)".to_string(),
                }
            });
            let line = pick(&cfg.product_line.namespace_labels, l)
                .unwrap_or_else(|| NO_PRODUCT_LINE.to_string());
            (ns, (tenant, line))
        })
        .collect()
}

/// Re-keys namespace series by their owner (`which` picks tenant or product line).
pub fn regroup(
    namespaces: &ByName,
    owners: &BTreeMap<String, (String, String)>,
    which: impl Fn(&(String, String)) -> &str,
) -> ByName {
    let mut out: ByName = BTreeMap::new();
    for (ns, points) in namespaces {
        let Some(owner) = owners.get(ns) else {
            continue;
        };
        let e = out.entry(which(owner).to_string()).or_default();
        for (t, v) in points {
            *e.entry(*t).or_insert(0.0) += v;
        }
    }
    out
}

const WEEK_S: f64 = 7.0 * 86_400.0;

/// The trend of `tenants` and `product_lines` over `[start, end]`.
pub fn trend(
    source: Source,
    source_note: String,
    (start, end, step_s): (i64, i64, u64),
    tenants: &ByName,
    product_lines: &ByName,
) -> Trend {
    let covered: Vec<i64> = tenants
        .values()
        .flat_map(|p| p.keys().copied())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let unknown = match covered.len() {
        0 => Some(format!(
            "no history: {} has no sample in the window",
            match source {
                Source::Gpuledger => "gpuledger_tenant_gpus",
                Source::KubeStateMetrics => "kube_pod_container_resource_requests",
            }
        )),
        1 => Some("one step of history only: a change needs two".to_string()),
        _ => None,
    };
    let rows = |by: &ByName| {
        let mut rows: Vec<TrendRow> = by
            .iter()
            .map(|(name, p)| row(name, p, &covered, unknown.is_none()))
            .collect();
        // Largest now first, then by name: the table reads like the inventory's.
        rows.sort_by(|a, b| {
            b.end
                .unwrap_or(0.0)
                .total_cmp(&a.end.unwrap_or(0.0))
                .then_with(|| a.name.cmp(&b.name))
        });
        rows
    };
    let tenants = rows(tenants);
    let fastest = tenants
        .iter()
        .filter_map(|t| t.per_week.filter(|w| *w > 0.0).map(|w| (w, &t.name)))
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, n)| n.clone());
    Trend {
        source,
        source_note,
        start,
        end,
        step_s,
        product_lines: rows(product_lines),
        tenants,
        fastest,
        unknown,
        busy_unknown: Some("busy GPUs were not read".to_string()),
        covered,
        runway: runway(
            None,
            Known::Unknown("the free placeable GPUs were not read".to_string()),
            &[],
            0,
        ),
    }
}

/// The fleet's name in a runway row.
pub const FLEET: &str = "fleet";

/// Sets the trend's runway from the free placeable GPUs now (with where the figure came from), or
/// why they are unknown.
pub fn with_runway(t: &mut Trend, free: Known<(u64, String)>) {
    let fleet = if t.unknown.is_some() {
        None
    } else {
        // Every tenant's change together, over the same span as theirs.
        let weeks: Vec<f64> = t.tenants.iter().filter_map(|r| r.per_week).collect();
        (!weeks.is_empty()).then(|| weeks.iter().sum::<f64>())
    };
    let why_no_trend = t.unknown.clone();
    t.runway = runway(fleet, free, &t.tenants, t.end);
    if let Some(why) = why_no_trend {
        t.runway.unknown = Some(format!("no trend: {why}"));
    }
}

/// The runway of the fleet (growing `fleet` GPUs a week) and of each tenant of `rows`, for `free`
/// GPUs, counted from `end`.
fn runway(fleet: Option<f64>, free: Known<(u64, String)>, rows: &[TrendRow], end: i64) -> Runway {
    let (free, free_source, unknown) = match free {
        Known::Value((n, source)) => (Some(n), Some(source), None),
        Known::Unknown(why) => (None, None, Some(why)),
    };
    let row = |name: &str, per_week: Option<f64>| runway_row(name, per_week, free, end);
    Runway {
        free,
        free_source,
        unknown,
        fleet: row(FLEET, fleet),
        tenants: rows.iter().map(|r| row(&r.name, r.per_week)).collect(),
    }
}

/// Growth below this many GPUs a week is no growth: a rounding error in the history must not
/// promise a date decades away.
const GROWING: f64 = 0.05;

fn runway_row(name: &str, per_week: Option<f64>, free: Option<u64>, end: i64) -> RunwayRow {
    let (verdict, weeks) = match (per_week, free) {
        (Some(w), _) if w < GROWING => (RunwayVerdict::NotGrowing, None),
        #[allow(clippy::cast_precision_loss)]
        (Some(w), Some(free)) => (RunwayVerdict::RunsOut, Some(free as f64 / w)),
        _ => (RunwayVerdict::Unknown, None),
    };
    #[allow(clippy::cast_possible_truncation)]
    let runs_out = weeks.map(|w| end.saturating_add((w * WEEK_S).round() as i64));
    RunwayRow {
        name: name.to_string(),
        per_week,
        verdict,
        weeks,
        runs_out,
    }
}

/// Adds each tenant's busy GPUs at the first and last step with busy data, from `busy` (series by
/// tenant), or the reason they are unknown. At a step with busy data a tenant without a sample was
/// busy on no GPU: gpuledger exports every tenant's busy GPUs when it knows them, and none when it
/// does not.
pub fn with_busy(t: &mut Trend, busy: Known<&ByName>) {
    let by = match busy {
        Known::Value(by) => by,
        Known::Unknown(why) => {
            t.busy_unknown = Some(why);
            return;
        }
    };
    let steps: BTreeSet<i64> = by.values().flat_map(|p| p.keys().copied()).collect();
    let (Some(first), Some(last)) = (steps.first(), steps.last()) else {
        t.busy_unknown = Some(
            "no busy GPUs in the window: gpuledger_tenant_gpus{state=\"used\"} has no sample (gpuledger serve reads DCGM only with --prometheus)"
                .to_string(),
        );
        return;
    };
    let at = |name: &str, step: &i64| {
        by.get(name)
            .and_then(|p| p.get(step))
            .copied()
            .unwrap_or(0.0)
    };
    for row in &mut t.tenants {
        row.busy_start = Some(at(&row.name, first));
        row.busy_end = Some(at(&row.name, last));
    }
    t.busy_unknown = None;
}

fn row(name: &str, p: &BTreeMap<i64, f64>, covered: &[i64], known: bool) -> TrendRow {
    // At a covered step a missing sample is zero GPUs: the source exports only what holds some.
    let points: Vec<f64> = covered
        .iter()
        .map(|t| p.get(t).copied().unwrap_or(0.0))
        .collect();
    let (first, last) = (covered.first(), covered.last());
    let (start, end) = if known {
        (points.first().copied(), points.last().copied())
    } else {
        (None, None)
    };
    let change = start.zip(end).map(|(s, e)| e - s);
    #[allow(clippy::cast_precision_loss)]
    let per_week = change.zip(first.zip(last)).and_then(|(c, (f, l))| {
        let span = (l - f) as f64;
        (span > 0.0).then(|| c / span * WEEK_S)
    });
    TrendRow {
        name: name.to_string(),
        start,
        end,
        change,
        per_week,
        peak: known
            .then(|| points.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            .filter(|p| p.is_finite()),
        busy_start: None,
        busy_end: None,
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(pairs: &[(&str, &[(i64, f64)])]) -> ByName {
        pairs
            .iter()
            .map(|(n, p)| (n.to_string(), p.iter().copied().collect()))
            .collect()
    }

    #[test]
    fn start_end_change_rate_and_peak_with_missing_steps_as_zero() {
        let day = 86_400;
        let t = series(&[
            ("chat", &[(0, 10.0), (day, 20.0), (2 * day, 24.0)]),
            // Appears on day 1: it held nothing on day 0, when the source was being scraped.
            ("search", &[(day, 8.0), (2 * day, 4.0)]),
        ]);
        let x = trend(
            Source::Gpuledger,
            String::new(),
            (0, 2 * day, 86_400),
            &t,
            &BTreeMap::new(),
        );
        assert_eq!(x.unknown, None);
        assert_eq!(x.covered, [0, day, 2 * day]);
        let chat = &x.tenants[0];
        assert_eq!(
            (chat.start, chat.end, chat.change, chat.peak),
            (Some(10.0), Some(24.0), Some(14.0), Some(24.0))
        );
        assert_eq!(chat.per_week, Some(14.0 / 2.0 * 7.0));
        let search = &x.tenants[1];
        assert_eq!(search.points, [0.0, 8.0, 4.0]);
        assert_eq!((search.start, search.peak), (Some(0.0), Some(8.0)));
        assert_eq!(x.fastest.as_deref(), Some("chat"));
    }

    #[test]
    fn the_runway_is_free_gpus_over_growth_for_the_fleet_and_each_tenant() {
        let week = 7 * 86_400;
        // chat +21 a week, search +9, scratch shrinking by 2: the fleet grows 28 a week.
        let t = series(&[
            ("chat", &[(0, 100.0), (2 * week, 142.0)]),
            ("search", &[(0, 10.0), (2 * week, 28.0)]),
            ("scratch", &[(0, 6.0), (2 * week, 2.0)]),
        ]);
        let mut x = trend(
            Source::Gpuledger,
            String::new(),
            (0, 2 * week, 86_400),
            &t,
            &BTreeMap::new(),
        );
        with_runway(&mut x, Known::Value((84, "live state".into())));
        let r = &x.runway;
        assert_eq!((r.free, r.unknown.as_deref()), (Some(84), None));
        assert_eq!(r.fleet.name, FLEET);
        assert_eq!(r.fleet.per_week, Some(28.0));
        assert_eq!(r.fleet.verdict, RunwayVerdict::RunsOut);
        assert_eq!(r.fleet.weeks, Some(3.0));
        assert_eq!(r.fleet.runs_out, Some(5 * week));
        let by: BTreeMap<&str, &RunwayRow> =
            r.tenants.iter().map(|t| (t.name.as_str(), t)).collect();
        assert_eq!(by["chat"].weeks, Some(4.0));
        assert_eq!(by["chat"].runs_out, Some(6 * week));
        assert_eq!(by["search"].weeks, Some(84.0 / 9.0));
        assert_eq!(by["scratch"].verdict, RunwayVerdict::NotGrowing);
        assert_eq!(by["scratch"].weeks, None);
        // Unknown free GPUs: every runway is unknown, with why, but the growth stays.
        with_runway(&mut x, Known::Unknown("no live state".into()));
        assert_eq!(x.runway.free, None);
        assert_eq!(x.runway.unknown.as_deref(), Some("no live state"));
        assert_eq!(x.runway.fleet.verdict, RunwayVerdict::Unknown);
        assert_eq!(x.runway.fleet.per_week, Some(28.0));
        // A tenant that does not grow does not run out, whatever is free.
        let r = &x.runway.tenants;
        assert_eq!(
            r.iter().find(|t| t.name == "scratch").unwrap().verdict,
            RunwayVerdict::NotGrowing
        );
        // Nothing free and growing: out now.
        with_runway(&mut x, Known::Value((0, "live state".into())));
        assert_eq!(x.runway.fleet.weeks, Some(0.0));
        assert_eq!(x.runway.fleet.runs_out, Some(2 * week));
    }

    #[test]
    fn no_history_is_unknown_with_why_never_zero() {
        let x = trend(
            Source::KubeStateMetrics,
            String::new(),
            (0, 10, 1),
            &BTreeMap::new(),
            &BTreeMap::new(),
        );
        assert!(x.unknown.as_deref().unwrap().starts_with("no history"));
        let mut x = x;
        with_runway(&mut x, Known::Value((10, "live state".into())));
        assert_eq!(x.runway.fleet.verdict, RunwayVerdict::Unknown);
        assert!(
            x.runway
                .unknown
                .as_deref()
                .unwrap()
                .starts_with("no trend: no history")
        );
        let one = series(&[("chat", &[(5, 3.0)])]);
        let x = trend(Source::Gpuledger, String::new(), (0, 10, 1), &one, &one);
        assert_eq!(x.tenants[0].start, None);
        assert_eq!(x.tenants[0].per_week, None);
        assert!(x.unknown.is_some());
        assert_eq!(x.fastest, None);
    }

    #[test]
    fn kube_state_metrics_namespaces_map_to_tenants_by_the_namespace_label_rules() {
        assert_eq!(ksm_label("product-line"), "label_product_line");
        let labels = vec![RangeSeries {
            labels: [
                ("namespace", "chat-prod"),
                ("label_tenant", "chat"),
                ("label_product_line", "assistant"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            samples: vec![],
        }];
        let owners = namespace_owners(
            &labels,
            ["chat-prod".to_string(), "scratch".to_string()].into_iter(),
            &Tenancy::default(),
        );
        assert_eq!(owners["chat-prod"], ("chat".into(), "assistant".into()));
        assert_eq!(
            owners["scratch"],
            ("scratch".into(), NO_PRODUCT_LINE.into())
        );
    }
}
