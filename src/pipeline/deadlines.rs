//! The deadline-attainment step `cost`, `drift` and `plan --pending` share: the runs of batch work
//! with a deadline from the live state's Jobs and, with a Prometheus, from kube-state-metrics over a
//! window, put together per workload and tenant ([`crate::analysis::deadlines`]). A failed
//! kube-state-metrics read leaves the live runs counted and says why in the section and a note.

use std::time::Duration;

use super::input::MetricsSpec;
use super::{Context, Note};
use crate::analysis::deadlines::{self, Scope};
use crate::analysis::live::LiveFleet;
use crate::config::Config;
use crate::live::http::duration_text;
use crate::report::deadlines::Deadlines;
use crate::util::date::Timestamp;

/// What the step reads besides the live fleet.
#[derive(Debug, Clone, Copy)]
pub struct DeadlineInputs<'a> {
    /// Prometheus with kube-state-metrics' Jobs, when given.
    pub metrics: Option<&'a MetricsSpec>,
    /// The window kube-state-metrics is read over, ending at `end`.
    pub ksm_window: Duration,
    pub end: Timestamp,
    /// Count only the runs whose deadline falls in this window (`cost --compare`).
    pub only: Option<(Timestamp, Timestamp)>,
    pub now: Timestamp,
}

/// The section, or `None` when no batch work declares a deadline and no run with one was read.
pub fn section(
    fleet: &LiveFleet<'_>,
    cfg: &Config,
    inputs: DeadlineInputs<'_>,
    cx: &Context<'_>,
    notes: &mut Vec<Note>,
) -> Option<Deadlines> {
    let mut runs = deadlines::live_runs(fleet.objects, &cfg.intent, &fleet.tenancy);
    let mut scope = Scope {
        window: inputs.only,
        sources: vec!["the live state's Jobs".into()],
        ..Scope::default()
    };
    if let Some(m) = inputs.metrics {
        let read = cx.rt.block_on(crate::live::jobs::jobs(
            &m.url,
            m.token.as_deref(),
            m.timeout,
            inputs.end.unix(),
            inputs.ksm_window,
        ));
        match read {
            Ok(jobs) => {
                scope.kube_state_metrics = true;
                scope.sources.push(format!(
                    "kube-state-metrics' Jobs over the {} to {}",
                    duration_text(inputs.ksm_window),
                    inputs.end.human()
                ));
                runs.extend(deadlines::ksm_runs(
                    &jobs,
                    fleet.objects,
                    &cfg.intent,
                    &fleet.tenancy,
                ));
            }
            Err(e) => {
                let why = format!("kube-state-metrics' Jobs could not be read: {e}");
                notes.push(Note::Say(format!("deadline attainment: {why}")));
                scope.unknown.push(("kube_state_metrics".into(), why));
            }
        }
    }
    let declared = deadlines::declared(fleet);
    if declared.is_empty() && runs.is_empty() {
        return None;
    }
    Some(deadlines::attainment(&runs, &declared, &scope, inputs.now))
}
