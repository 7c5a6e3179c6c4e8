//! Lints on a workload's intent, for the pre-merge check: intent missing, a value that does not
//! parse, a window too short for the runtime, and contradictions with the keys the ecosystem
//! already has (a workload that may not be interrupted but that Cluster Autoscaler may evict or a
//! scheduler may preempt; a runtime longer than Kueue's max exec time or the Job's
//! `activeDeadlineSeconds`, which would kill it; serving without a latency objective; batch work
//! without a deadline or runtime).

use serde::Serialize;

use super::{Deadline, Facts, Intent, Problem, WorkClass};

/// One finding: a rule's name and what it found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// `missing`, `unparsable`, `infeasible`, `contradiction`, `incomplete`.
    pub rule: &'static str,
    pub message: String,
}

fn finding(rule: &'static str, message: impl Into<String>) -> Finding {
    Finding {
        rule,
        message: message.into(),
    }
}

/// A duration as people read it (`1h30m`, `45m`, `90s`), as the configuration prints its own.
pub fn human(s: u64) -> String {
    crate::config::Age(s).to_string()
}

/// The findings for one workload's intent.
pub fn lint(intent: &Intent, problems: &[Problem], facts: &Facts) -> Vec<Finding> {
    let mut out: Vec<Finding> = problems
        .iter()
        .map(|p| finding("unparsable", p.to_string()))
        .collect();
    if intent.is_empty() && problems.is_empty() {
        out.push(finding(
            "missing",
            "declares no intent (gpuledger.io/deadline, runtime, interruptible, … on the root \
             object, or an intent: rule in .gpuledger.yaml)",
        ));
        return out;
    }
    match facts.class {
        WorkClass::Batch => {
            if intent.deadline.is_none() {
                out.push(finding(
                    "incomplete",
                    "batch work without gpuledger.io/deadline: nothing says when its results are needed",
                ));
            }
            if intent.runtime_s.is_none() {
                out.push(finding(
                    "incomplete",
                    "batch work without gpuledger.io/runtime: it cannot be planned",
                ));
            }
        }
        WorkClass::Serving if intent.latency_objective.is_empty() => out.push(finding(
            "incomplete",
            "serving without gpuledger.io/latency-objective (e.g. ttft_p95<=500ms)",
        )),
        _ => {}
    }
    if let Some(runtime) = intent.runtime_s {
        match (&intent.deadline, &intent.earliest_start) {
            (Some(Deadline::At(d)), Some(e)) => {
                let window = d.unix().saturating_sub(e.unix());
                if window < 0 {
                    out.push(finding(
                        "infeasible",
                        format!("the deadline {d} is before the earliest start {e}"),
                    ));
                } else if runtime > window.unsigned_abs() {
                    out.push(finding(
                        "infeasible",
                        format!(
                            "runtime {} is longer than the window from {e} to {d} ({})",
                            human(runtime),
                            human(window.unsigned_abs())
                        ),
                    ));
                }
            }
            (
                Some(Deadline::AfterStart {
                    after_scheduled_start_s: after,
                }),
                _,
            ) if runtime > *after => out.push(finding(
                "infeasible",
                format!(
                    "runtime {} is longer than the deadline of {} after each scheduled start",
                    human(runtime),
                    human(*after)
                ),
            )),
            _ => {}
        }
        for (limit, what) in [
            (
                facts.max_exec_time_s,
                "kueue.x-k8s.io/max-exec-time-seconds",
            ),
            (facts.active_deadline_s, "activeDeadlineSeconds"),
        ] {
            if let Some(l) = limit.filter(|l| runtime > *l) {
                out.push(finding(
                    "contradiction",
                    format!(
                        "runtime {} is longer than its {what} ({}): it would be killed first",
                        human(runtime),
                        human(l)
                    ),
                ));
            }
        }
    }
    if intent.interruptible == Some(false) {
        let mut evictable = Vec::new();
        if facts.safe_to_evict == Some(true) {
            evictable.push("cluster-autoscaler.kubernetes.io/safe-to-evict: \"true\"");
        }
        if facts.volcano_preemptable == Some(true) {
            evictable.push("volcano.sh/preemptable: \"true\"");
        }
        if facts.kai_preemptibility.as_deref() == Some("preemptible") {
            evictable.push("kai.scheduler/preemptibility: preemptible");
        }
        for e in evictable {
            out.push(finding(
                "contradiction",
                format!("gpuledger.io/interruptible is false, but {e} lets it be stopped"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{KEYS, PREFIX, read};
    use super::*;
    use crate::k8s::types::Labels;

    fn lint_of(kind: &str, pairs: &[(&str, &str)], facts: Facts) -> Vec<Finding> {
        let ann: Labels = pairs
            .iter()
            .map(|(k, v)| (format!("{PREFIX}{k}"), v.to_string()))
            .collect();
        let (i, p) = read(&ann, None, kind == "CronJob");
        lint(
            &i,
            &p,
            &Facts {
                class: WorkClass::of(kind),
                cron: kind == "CronJob",
                ..facts
            },
        )
    }

    fn rules(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.rule).collect()
    }

    #[test]
    fn each_lint() {
        assert_eq!(KEYS.len(), 9);
        let ok = [
            ("deadline", "2026-12-02T17:00:00Z"),
            ("earliest-start", "2026-12-02T12:00:00Z"),
            ("runtime", "1h"),
        ];
        assert!(lint_of("Job", &ok, Facts::default()).is_empty());
        assert_eq!(rules(&lint_of("Job", &[], Facts::default())), ["missing"]);
        assert_eq!(
            rules(&lint_of("Job", &[("runtime", "forever")], Facts::default())),
            ["unparsable", "incomplete", "incomplete"]
        );
        let f = lint_of("Job", &[("runtime", "1h")], Facts::default());
        assert_eq!(rules(&f), ["incomplete"]);
        assert!(f[0].message.contains("deadline"));
        let f = lint_of(
            "Job",
            &[
                ("deadline", "2026-12-02T13:00:00Z"),
                ("earliest-start", "2026-12-02T12:00:00Z"),
                ("runtime", "3h"),
            ],
            Facts::default(),
        );
        assert_eq!(rules(&f), ["infeasible"]);
        assert!(
            f[0].message.contains("3h is longer than the window"),
            "{f:?}"
        );
        let f = lint_of(
            "Job",
            &[
                ("deadline", "2026-12-02T11:00:00Z"),
                ("earliest-start", "2026-12-02T12:00:00Z"),
                ("runtime", "1h"),
            ],
            Facts::default(),
        );
        assert!(f[0].message.contains("before the earliest start"), "{f:?}");
        assert_eq!(
            rules(&lint_of(
                "CronJob",
                &[("deadline", "30m"), ("runtime", "1h")],
                Facts::default()
            )),
            ["infeasible"]
        );
        let f = lint_of(
            "Job",
            &ok,
            Facts {
                max_exec_time_s: Some(1800),
                active_deadline_s: Some(600),
                ..Facts::default()
            },
        );
        assert_eq!(rules(&f), ["contradiction", "contradiction"]);
        assert!(
            f[1].message.contains("activeDeadlineSeconds (10m)"),
            "{f:?}"
        );
        let mut strict = ok.to_vec();
        strict.push(("interruptible", "false"));
        let f = lint_of(
            "Job",
            &strict,
            Facts {
                safe_to_evict: Some(true),
                volcano_preemptable: Some(true),
                kai_preemptibility: Some("preemptible".into()),
                ..Facts::default()
            },
        );
        assert_eq!(rules(&f), ["contradiction"; 3]);
        assert_eq!(
            rules(&lint_of(
                "Deployment",
                &[("outcome", "answers")],
                Facts::default()
            )),
            ["incomplete"]
        );
        assert!(
            lint_of(
                "Deployment",
                &[("latency-objective", "ttft_p95<=500ms")],
                Facts::default()
            )
            .is_empty()
        );
    }

    #[test]
    fn durations_read_back() {
        assert_eq!(human(5400), "1h30m");
        assert_eq!(human(45), "45s");
        assert_eq!(human(0), "0s");
    }
}
