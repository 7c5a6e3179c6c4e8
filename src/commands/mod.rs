//! One module per subcommand: each turns its flags into the library's input specs, runs the
//! pipeline on the one runtime `main` made, and returns an [`Outcome`].

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

use std::fmt;
use std::path::{Path, PathBuf};

use gpuledger::error::Error;

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

/// A line for standard error: what a person should know besides the report.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The config file that was read.
    ConfigUsed(String),
    /// The report went to this file.
    Written(PathBuf),
    /// GPU activity could not be read.
    MetricsUnknown(String),
    /// A resource that could not be read: `what` is the report, the live state or the snapshot.
    Incomplete {
        what: &'static str,
        resource: String,
        reason: String,
    },
    /// Apps (or the repository) that failed to render.
    RenderFailed(Vec<String>),
    /// Gates that failed.
    GatesFailed(Vec<String>),
    /// Anything else (what was posted to GitHub, a dry run).
    Say(String),
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::ConfigUsed(p) => write!(f, "using config {p}"),
            Note::Written(p) => write!(f, "report written to {}", p.display()),
            Note::MetricsUnknown(why) => write!(f, "GPUs used are unknown: {why}"),
            Note::Incomplete {
                what,
                resource,
                reason,
            } => write!(f, "{what} incomplete: {resource}: {reason}"),
            Note::RenderFailed(failed) => {
                write!(
                    f,
                    "{} failed to render: {}",
                    failed.len(),
                    failed.join("; ")
                )
            }
            Note::GatesFailed(g) => write!(f, "failed gates: {}", g.join(", ")),
            Note::Say(s) => f.write_str(s),
        }
    }
}

/// What a command produced: the rendered report, notes, and how it ended.
pub struct Outcome {
    /// Text for standard output; `None` when it was written to a file.
    pub stdout: Option<String>,
    /// gpuledger's own workflow commands (annotations), written after the report under Actions.
    pub commands: Vec<String>,
    pub notes: Vec<Note>,
    pub exit: Exit,
}

/// How a report command ends: a note per resource the report is missing and, if any, an error exit
/// (an incomplete report under-counts; it is never a clean run), else `exit`.
pub fn report_outcome(
    incomplete: &[gpuledger::report::IncompleteInput],
    stdout: Option<String>,
    mut notes: Vec<Note>,
    mut exit: Exit,
) -> Outcome {
    for m in incomplete {
        notes.push(Note::Incomplete {
            what: "report",
            resource: m.resource.clone(),
            reason: m.reason.clone(),
        });
        exit = Exit::Error;
    }
    Outcome {
        commands: Vec::new(),
        stdout,
        notes,
        exit,
    }
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
