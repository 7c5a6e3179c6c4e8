//! One module per subcommand, each the same few steps: its flags become the library's input specs,
//! a pipeline job runs on the one runtime `main` made, the report is rendered in the format asked,
//! and delivered (standard output, a file, GitHub). What a command leaves to print is a [`Done`].

pub mod check;
pub mod cost;
pub mod docs;
pub mod drift;
pub mod github;
pub mod headroom;
pub mod inventory;
pub mod plan;
pub mod render;
pub mod serve;
pub mod snapshot;
pub mod trend;

use std::path::Path;
use std::time::Duration;

use gpuledger::error::Error;
use gpuledger::pipeline::fleet::{FleetSpec, Signals};
use gpuledger::pipeline::{Note, Outcome, Run};

use crate::cli::shared::{Clock, CostInputs, LiveSource, Metrics, Output, TrendColumn};

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: done, nothing to report.
    Clean,
    /// 1: findings the user asked to fail on (drift, failed gates).
    Findings,
    /// 2: an input could not be read or rendered; the report is incomplete.
    Error,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Clean => 0,
            Exit::Findings => 1,
            Exit::Error => 2,
        }
    }
}

impl From<Outcome> for Exit {
    fn from(o: Outcome) -> Exit {
        match o {
            Outcome::Clean => Exit::Clean,
            Outcome::Findings => Exit::Findings,
            Outcome::Incomplete => Exit::Error,
        }
    }
}

/// What a command leaves to print: the rendered report, notes, and how it ended.
pub struct Done {
    /// Text for standard output; `None` when it was written to a file.
    pub stdout: Option<String>,
    /// gpuledger's own workflow commands (annotations), written after the report under Actions.
    pub commands: Vec<String>,
    pub notes: Vec<Note>,
    pub exit: Exit,
}

/// A report command's ending: `text` delivered where `output` says, after the run's notes.
pub fn report<R>(run: Run<R>, text: String, output: &Output) -> anyhow::Result<Done> {
    let mut notes = run.notes;
    let stdout = deliver(text, output.output.as_deref(), &mut notes)?;
    Ok(Done {
        stdout,
        commands: Vec::new(),
        notes,
        exit: run.outcome.into(),
    })
}

/// Writes `text` to `path`, or returns it for standard output.
pub fn deliver(
    text: String,
    path: Option<&Path>,
    notes: &mut Vec<Note>,
) -> Result<Option<String>, Error> {
    match path {
        None => Ok(Some(text)),
        Some(p) if p == Path::new("-") => Ok(Some(text)),
        Some(p) => {
            std::fs::write(p, gpuledger::util::redact::redact(&text).as_bytes()).map_err(
                |source| Error::Write {
                    path: p.to_path_buf(),
                    source,
                },
            )?;
            notes.push(Note::Written(p.to_path_buf()));
            Ok(None)
        }
    }
}

/// What the fleet's other systems are read with: Prometheus (with the trend column when given)
/// and the cost inputs; each request bounded by `live`'s request timeout.
pub fn signals(
    live: &LiveSource,
    metrics: &Metrics,
    trend: Option<&TrendColumn>,
    cost: Option<&CostInputs>,
) -> Signals {
    Signals {
        metrics: metrics.spec(live.request_timeout),
        trend: trend.map(TrendColumn::spec),
        cost: cost.and_then(CostInputs::spec),
        window: metrics.window,
        request_timeout: Duration::from_secs(live.request_timeout.max(1)),
    }
}

/// The spec of a fleet job from its flag groups.
pub fn fleet_spec(
    live: &LiveSource,
    signals: Signals,
    clock: &Clock,
    config: Option<&Path>,
) -> FleetSpec {
    FleetSpec {
        signals,
        config: config.map(Path::to_path_buf),
        now: clock.now,
        ..FleetSpec::new(live.spec())
    }
}
