use super::*;

fn t(s: &str) -> Timestamp {
    Timestamp::parse(s).unwrap()
}

fn counted(name: &str, cost: f64, verified: f64, results: f64, threshold: f64) -> CostRow {
    let pass = verified / results;
    CostRow {
        name: name.into(),
        total_cost: Some(cost),
        results: Some(results),
        verified_outcomes: Some(if pass >= threshold { verified } else { 0.0 }),
        pass_rate: Some(pass),
        quality_threshold: Some(threshold),
        suitable: Some(pass >= threshold),
        cost_per_1000: (pass >= threshold).then(|| cost / verified * 1000.0),
        ..CostRow::default()
    }
}

fn sampled(name: &str, cost: f64, on_time: f64, n: u64, passed: u64) -> CostRow {
    let (lo, hi) = crate::analysis::cost::wilson(passed, n).unwrap();
    let p = passed as f64 / n as f64;
    CostRow {
        name: name.into(),
        total_cost: Some(cost),
        results: Some(on_time),
        verified_outcomes: Some(on_time * p),
        pass_rate: Some(p),
        sample: Some(n),
        cost_per_1000: Some(cost / (on_time * p) * 1000.0),
        cost_per_1000_interval: Some([
            cost / (on_time * hi) * 1000.0,
            cost / (on_time * lo) * 1000.0,
        ]),
        ..CostRow::default()
    }
}

fn s(label: &str, row: &CostRow) -> Side {
    let w = (t("2026-12-02T11:00:00Z"), t("2026-12-02T12:00:00Z"));
    side(label.into(), row, w, 1.0, Vec::new(), None)
}

#[test]
fn sides_read_as_label_workload_and_window() {
    assert_eq!(
        SideSpec::parse("serve/Deployment/l40s").unwrap(),
        SideSpec {
            label: None,
            workload: "serve/Deployment/l40s".into(),
            window: None
        }
    );
    let before =
        SideSpec::parse("before=serve/Deployment/chat@2026-12-01T00:00:00Z..2026-12-02T00:00:00Z")
            .unwrap();
    assert_eq!(before.label.as_deref(), Some("before"));
    assert_eq!(before.workload, "serve/Deployment/chat");
    assert_eq!(
        before.window,
        Some((t("2026-12-01T00:00:00Z"), t("2026-12-02T00:00:00Z")))
    );
    assert!(matches!(
        SideSpec::parse("chat"),
        Err(SideError::NoWorkload(_))
    ));
    assert!(matches!(
        SideSpec::parse("a/B/c@2026-12-01T00:00:00Z"),
        Err(SideError::Window(_))
    ));
    assert!(matches!(
        SideSpec::parse("a/B/c@2026-12-02T00:00:00Z..2026-12-01T00:00:00Z"),
        Err(SideError::Backwards(_))
    ));
}

#[test]
fn the_worked_example_keeps_outcomes_at_a_quarter_less_cost() {
    // $2/h and $1.50/h for 990 verified of 1,000 an hour, 95% required.
    let a = s(
        "A",
        &counted("serve/Deployment/h100", 2.0, 990.0, 1000.0, 0.95),
    );
    let b = s(
        "B",
        &counted("serve/Deployment/l40s", 1.5, 990.0, 1000.0, 0.95),
    );
    assert!((a.cost_per_1000.unwrap() - 2.0202).abs() < 1e-4);
    assert!((b.cost_per_1000.unwrap() - 1.5152).abs() < 1e-4);
    let c = compare(a, b);
    assert_eq!(
        c.verdict,
        "B keeps outcomes at 25% less cost: outcomes counted one by one, no sampling interval"
    );
    assert_eq!(c.distinguishable, Some(true));
    assert_eq!(c.cheaper.as_deref(), Some("B"));
    assert!((c.saving.unwrap() - 0.25).abs() < 1e-9);
}

#[test]
fn a_model_below_its_threshold_never_wins_whatever_it_costs() {
    let a = s(
        "A",
        &counted("serve/Deployment/h100", 2.0, 990.0, 1000.0, 0.95),
    );
    let b = s(
        "B",
        &counted("serve/Deployment/small", 1.0, 900.0, 1000.0, 0.95),
    );
    let c = compare(a, b);
    assert_eq!(
        c.verdict,
        "A keeps outcomes, whatever either costs: B is unsuitable: pass rate 90% below its quality threshold 95%"
    );
    assert_eq!(c.distinguishable, None);
    assert_eq!(c.cheaper, None);
}

#[test]
fn overlapping_intervals_are_not_distinguishable_yet() {
    let a = s("A", &sampled("eval/Job/a", 2.0, 1000.0, 40, 38));
    let b = s("B", &sampled("eval/Job/b", 1.8, 1000.0, 40, 39));
    let c = compare(a, b);
    assert!(
        c.verdict.starts_with("Not distinguishable yet: n = 40"),
        "{}",
        c.verdict
    );
    assert_eq!(c.distinguishable, Some(false));
    // Large samples: the same pass rates, intervals apart.
    let a = s("A", &sampled("eval/Job/a", 2.0, 1000.0, 4000, 3800));
    let b = s("B", &sampled("eval/Job/b", 1.5, 1000.0, 4000, 3800));
    let c = compare(a, b);
    assert_eq!(
        c.verdict,
        "B keeps outcomes at 25% less cost: intervals do not overlap"
    );
}

#[test]
fn the_cheaper_side_s_worse_latency_and_deadlines_are_said() {
    let mut a = s(
        "before",
        &counted("serve/Deployment/chat", 2.0, 990.0, 1000.0, 0.95),
    );
    let mut b = s(
        "after",
        &counted("serve/Deployment/chat", 1.5, 990.0, 1000.0, 0.95),
    );
    let bound = |met: bool, ms: f64| LatencyNow {
        bound: "ttft_p95<=500ms".into(),
        now_ms: Some(ms),
        met: Some(met),
    };
    a.latency = vec![bound(true, 320.0)];
    b.latency = vec![bound(false, 620.0)];
    let att = |x: f64| Attainment {
        attainment: Some(x),
        ..Attainment::default()
    };
    a.deadline_attainment = Some(att(1.0));
    b.deadline_attainment = Some(att(0.8));
    let c = compare(a, b);
    assert_eq!(
        c.verdict,
        "after keeps outcomes at 25% less cost: outcomes counted one by one, no sampling interval; but after misses ttft_p95<=500ms (620 ms); but after meets fewer deadlines (80% against 100%)"
    );
}

#[test]
fn an_unknown_cost_per_outcome_cannot_be_compared() {
    let a = s("A", &counted("x/Deployment/a", 2.0, 990.0, 1000.0, 0.95));
    let mut row = counted("x/Deployment/b", 1.0, 990.0, 1000.0, 0.95);
    row.total_cost = None;
    row.cost_per_1000 = None;
    row.unknown.set("cost_per_1000", "its cost is unknown");
    let c = compare(a, s("B", &row));
    assert_eq!(
        c.verdict,
        "Cannot compare: B's cost per 1,000 verified outcomes is unknown (its cost is unknown)"
    );
    assert_eq!(c.distinguishable, None);
}
