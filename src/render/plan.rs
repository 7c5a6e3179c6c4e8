//! The plan as people read it: the verdict ("stagger or buy") in one line, the objective, the
//! figures, the demand over time (a sparkline on a terminal, a mermaid gantt chart in markdown) and
//! the jobs with their slack; JSON is the plan itself.

use super::page::duration;
use crate::doc::{Block, Chart, Doc, GanttBar, Table, Text};
use crate::report::plan::{Bound, Objective, Plan, PlanReport};
use crate::util::date::Timestamp;

/// The one-line verdict ("stagger or buy"), as the report states it.
pub fn verdict(p: &Plan) -> String {
    p.verdict()
}

/// The objective, as every output states it.
pub fn objective(p: &Plan) -> String {
    match p.objective {
        Objective::Earliest => "Objective: meet every deadline within the pool, then finish all work as early as possible (earliest).".into(),
        Objective::MinPeak => "Objective: meet every deadline within the pool, then use the fewest GPUs at once, then finish as early as possible (min-peak).".into(),
    }
}

fn short(t: Timestamp) -> String {
    t.human()
}

/// `▁▂▅█`: GPUs in use per slot, scaled to the pool.
pub fn sparkline(profile: &[u64], pool: u64) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let top = pool.max(profile.iter().copied().max().unwrap_or(0)).max(1);
    profile
        .iter()
        .map(|v| {
            if *v == 0 {
                ' '
            } else {
                let i = usize::try_from((v.saturating_mul(8) - 1) / top).unwrap_or(7);
                BARS.get(i.min(7)).copied().unwrap_or('█')
            }
        })
        .collect()
}

/// The plan as blocks; `terminal` picks the sparkline over the gantt chart.
pub fn plan_doc(report: &PlanReport, terminal: bool) -> Doc {
    let p = &report.plan;
    let mut d = Doc::new();
    let n = p.job_count();
    if n == 0 {
        // Nothing to plan: one sentence, no figures of nothing.
        d.heading(2, "GPU plan: nothing to plan");
        d.paragraph(Text::new().strong(p.verdict()));
        if let Some(x) = &report.deadlines {
            d.extend(super::deadlines::section(x, "How the last runs did"));
        }
        return d;
    }
    d.heading(
        2,
        format!(
            "GPU plan: {n} job{} on {} GPUs",
            if n == 1 { "" } else { "s" },
            p.pool
        ),
    );
    let verdict = Text::new().strong(p.verdict());
    if p.feasible {
        d.paragraph(verdict);
    } else {
        d.push(Block::Alert {
            kind: crate::doc::Alert::Caution,
            lines: vec![verdict],
        });
    }
    d.paragraph(objective(p));
    let proof = if p.exact {
        "optimal (the search completed)".to_string()
    } else {
        match p.lower_bound {
            Some(Bound::Finish(t)) => format!(
                "heuristic: no plan finishes before {}; gap at most {:.1}%",
                short(t),
                p.gap * 100.0
            ),
            Some(Bound::Gpus(g)) => format!(
                "heuristic: no plan meeting every deadline peaks below {g} GPUs; gap at most {:.1}%",
                p.gap * 100.0
            ),
            None => "heuristic".to_string(),
        }
    };
    let min_pool = match (p.min_pool, &p.min_pool_why) {
        (Some(m), None) => format!("{m} GPUs"),
        (Some(m), Some(why)) => format!("{m} GPUs ({why})"),
        (None, Some(why)) => format!("none: {why}"),
        (None, None) => "unknown".to_string(),
    };
    // One job: its verdict says it all. No job can run: no peak or finish to speak of.
    if n > 1 && p.jobs.is_empty() {
        d.push(Block::List(vec![
            Text::from(format!(
                "None of the jobs can run on the pool's {} GPUs",
                p.pool
            )),
            Text::from(format!("Smallest pool meeting every deadline: {min_pool}")),
        ]));
    } else if n > 1 {
        d.push(Block::List(vec![
            Text::from(format!(
                "Peak: {} GPUs (each started as soon as it may: {})",
                p.peak, p.peak_all_at_once
            )),
            Text::from(format!(
                "Done: {}",
                p.finish.map_or_else(|| "nothing to run".to_string(), short)
            )),
            Text::from(format!("GPU-hours: {}", p.gpu_hours)),
            Text::from(format!("Smallest pool meeting every deadline: {min_pool}")),
            Text::from(format!("Plan: {proof}")),
        ]));
    }
    if !p.profile.is_empty() {
        if terminal {
            let start = p.now.map_or_else(String::new, short);
            d.paragraph(Text::from(format!(
                "Demand per {} from {start} (pool {}):",
                duration(i64::try_from(p.slot_s).unwrap_or(0)),
                p.pool
            )));
            d.push(Block::Fence {
                info: String::new(),
                lines: sparkline(&p.profile, p.pool)
                    .chars()
                    .collect::<Vec<_>>()
                    .chunks(72)
                    .map(|c| c.iter().collect())
                    .collect(),
            });
        } else {
            d.push(Block::Chart(gantt(p)));
        }
    }
    let mut t = Table::new(&[
        "Job",
        ">GPUs",
        "Start (UTC)",
        "End (UTC)",
        "Deadline (UTC)",
        ">Slack",
    ]);
    // A terminal drops the year (the figures above carry it) so that a row fits 80 columns.
    let when = |t: Timestamp| {
        let full = gantt_time(t);
        if terminal {
            full.get(5..).unwrap_or_default().to_string()
        } else {
            full
        }
    };
    for j in &p.jobs {
        t.row(vec![
            Text::from(format!("{}/{}", j.namespace, j.name)),
            Text::from(j.gpus.to_string()),
            Text::from(when(j.start)),
            Text::from(when(j.end)),
            Text::from(j.deadline.map(when).unwrap_or_default()),
            Text::from(j.slack_s.map(duration).unwrap_or_default()),
        ]);
    }
    d.section("Jobs", t.drop_empty_columns(), None);
    let mut m = Table::new(&["Job", ">Late", "Why"]);
    for x in &p.missed {
        m.row(vec![
            Text::from(format!("{}/{}", x.namespace, x.name)),
            Text::from(x.late_s.map_or_else(|| "cannot run".to_string(), duration)),
            Text::from(x.reason.clone().unwrap_or_default()),
        ]);
    }
    d.section("Missed deadlines", m.drop_empty_columns(), None);
    if let Some(x) = &report.deadlines {
        d.extend(super::deadlines::section(x, "How the last runs did"));
    }
    d.push(Block::Small(Text::from(
        "The plan is advice: gpuledger changes nothing. Hold a job until its start with Kueue's admission-gated-by annotation or the Job's spec.suspend.",
    )));
    d
}

fn gantt(p: &Plan) -> Chart {
    let mut sections: Vec<(String, Vec<GanttBar>)> = Vec::new();
    let slot_min = p.slot_s / 60;
    for j in &p.jobs {
        let late = j.slack_s.is_some_and(|s| s < 0);
        let bars = j.runs.iter().map(|(first, len)| {
            let start = p.now.map(|n| {
                Timestamp::from_unix(
                    n.seconds_since(Timestamp::from_unix(0))
                        + i64::try_from(first * p.slot_s).unwrap_or(0),
                )
            });
            GanttBar {
                name: j.name.clone(),
                start: start.map(gantt_time).unwrap_or_default(),
                minutes: (len * slot_min).max(1),
                late,
            }
        });
        match sections.iter_mut().find(|(s, _)| *s == j.namespace) {
            Some((_, v)) => v.extend(bars),
            None => sections.push((j.namespace.clone(), bars.collect())),
        }
    }
    Chart::Gantt {
        title: format!(
            "Plan {} - peak {} of {} GPUs",
            p.objective.name(),
            p.peak,
            p.pool
        ),
        sections,
    }
}

/// `2026-12-02 12:00` (UTC): gantt's date format, and short enough for a table at 80 columns.
fn gantt_time(t: Timestamp) -> String {
    let s = t.to_string();
    format!(
        "{} {}",
        s.get(..10).unwrap_or(""),
        s.get(11..16).unwrap_or("")
    )
}
