//! Documents whose counted facts regenerate: markers in markdown that gpuledger fills from a
//! fresh report, so a document never states a count someone typed a month ago.
//!
//! A document marks a figure, `<!-- gpuledger:fact fleet.gpus.placeable -->503<!-- /gpuledger:fact -->`
//! (any field of the report's JSON by path, in a format: [`field`]), or a whole table of the report,
//! `<!-- gpuledger:table tenants -->…<!-- /gpuledger:table -->`, laid out by the same markdown
//! writer as the report itself (the renderer's (passed in as [`Tables`])). [`scan`] finds the markers with
//! their lines; [`evaluate`] says of each marked span whether its text is current, stale (with the
//! new text) or unknown (with why); [`Evaluated::rewritten`] is the document with every stale span
//! replaced and every other byte as it was. An unknown value never replaces a document's text: a
//! figure the report could not compute, a tenant that is gone, or a report that is incomplete
//! (part of the cluster could not be read, so every count may be short) keeps what is written.
//!
//! Pure: bytes in, text and findings out. Reading and writing files is the binary's job.

pub mod field;
pub mod scan;

use serde_json::Value;

use crate::error::InputError;
use crate::report::Known;
use crate::report::Report;
use crate::report::facts::{DocFinding, DocsStatus};
use field::{Lookup, MarkerError};
use scan::{Kind, Marker};

/// The report's own tables as markdown, by the name a `gpuledger:table` marker gives, in the
/// order they are offered. The renderer lays them out (the pipeline passes
/// `crate::render::facts::tables` of the same report): this module never imports the renderer.
pub type Tables = Vec<(&'static str, String)>;

/// What the markers of a document are filled from: one report, as JSON for paths and as the
/// report's own tables.
pub struct Facts<'a> {
    /// Made on first use: most documents mark no table, and laying a large fleet's tables out
    /// costs more than reading its figures.
    tables: std::cell::OnceCell<Tables>,
    make_tables: Box<dyn Fn() -> Tables + 'a>,
    json: Value,
    /// Why nothing is known: the report is incomplete.
    incomplete: Option<String>,
}

impl<'a> Facts<'a> {
    /// The facts of `report`, its tables made by `tables` when a marker first asks for one.
    pub fn new(report: &Report, tables: impl Fn() -> Tables + 'a) -> Facts<'a> {
        let json = crate::report::to_json(report).unwrap_or(Value::Null);
        let incomplete = (!report.complete || !report.incomplete.is_empty()).then(|| {
            let what: Vec<String> = report
                .incomplete
                .iter()
                .map(|m| format!("{}: {}", m.resource, m.reason))
                .collect();
            format!(
                "the report is incomplete, so its counts may be short ({})",
                what.join("; ")
            )
        });
        Facts {
            tables: std::cell::OnceCell::new(),
            make_tables: Box::new(tables),
            json,
            incomplete,
        }
    }

    /// The text of one marker with `newline` as its line ending, or why it is unknown. `Err` for a
    /// marker the report cannot answer at all (no such field, table or format).
    fn text(&self, kind: &Kind, newline: &str) -> Result<Known<String>, MarkerError> {
        match kind {
            Kind::Fact { path, format } => {
                field::check_format(format)?;
                let looked = field::lookup(&self.json, path)?;
                // The path is checked first: a wrong field is an error even in an incomplete report.
                if let Some(why) = &self.incomplete {
                    return Ok(Known::Unknown(why.clone()));
                }
                match looked {
                    Lookup::Unknown(why) => Ok(Known::Unknown(why)),
                    Lookup::Value(v) => {
                        let text = field::format(&v, format, path)?;
                        // A value can come from the cluster (a tenant's name from a label): it is
                        // escaped as the report's markdown escapes it, so it can neither open a
                        // tag or a comment nor break the table it stands in. Line breaks (a
                        // free-text field) become spaces: a fact is inline text.
                        Ok(Known::Value(crate::doc::markdown::esc(&text)))
                    }
                }
            }
            Kind::Table { name } => {
                let table = self.table(name)?;
                if let Some(why) = &self.incomplete {
                    return Ok(Known::Unknown(why.clone()));
                }
                // Blank lines around the table: a table must not touch the comments around it, or
                // a markdown reader takes them for one block.
                let body = table.replace('\n', newline);
                Ok(Known::Value(format!("{newline}{newline}{body}{newline}")))
            }
        }
    }
}

impl Facts<'_> {
    /// The table a marker names; `Err` for a name that is no table.
    fn table(&self, name: &str) -> Result<&str, MarkerError> {
        let tables = self.tables.get_or_init(|| (self.make_tables)());
        match tables.iter().find(|(n, _)| *n == name) {
            Some((_, t)) => Ok(t),
            None => {
                let names: Vec<&str> = tables.iter().map(|(n, _)| *n).collect();
                Err(MarkerError(format!(
                    "no table named {name:?}: one of {}",
                    names.join(", ")
                )))
            }
        }
    }
}

/// What became of one marked span.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Current,
    /// The report says otherwise: the new text.
    Stale(String),
    /// The report cannot say: why. The document's text is kept.
    Unknown(String),
}

/// One marker and what the report says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub marker: Marker,
    /// The text the document holds now.
    pub old: String,
    pub state: State,
}

/// A document with every marker checked against a report.
#[derive(Debug, Clone)]
pub struct Evaluated {
    /// The document as it should be named in findings (a path relative to the repository).
    pub name: String,
    text: String,
    pub markers: Vec<Checked>,
}

/// Reads a document (`bytes`, named `name` in errors) and checks each marker against `facts`.
/// `Err` for a document that is not UTF-8, a malformed marker, or a marker naming no field, table
/// or format: all at their line.
pub fn evaluate(name: &str, bytes: &[u8], facts: &Facts<'_>) -> Result<Evaluated, InputError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t.to_string(),
        Err(e) => {
            let at = e.valid_up_to();
            let before = bytes.get(..at).unwrap_or_default();
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            return Err(InputError {
                file: name.to_string(),
                line: Some(u32::try_from(line).unwrap_or(u32::MAX)),
                column: None,
                message: format!(
                    "is not UTF-8 (byte {at} is not valid UTF-8): gpuledger rewrites only UTF-8 markdown, and leaves this file as it is"
                ),
            });
        }
    };
    // The document's own line ending, for the lines a table adds.
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut markers = Vec::new();
    for m in scan::markers(name, &text)? {
        let old = text.get(m.content.clone()).unwrap_or_default().to_string();
        let answer = facts.text(&m.kind, newline).map_err(|message| InputError {
            file: name.to_string(),
            line: Some(m.line),
            column: None,
            message: message.to_string(),
        })?;
        let state = match answer {
            Known::Value(new) if new == old => State::Current,
            Known::Value(new) => State::Stale(new),
            Known::Unknown(why) => State::Unknown(why),
        };
        markers.push(Checked {
            marker: m,
            old,
            state,
        });
    }
    Ok(Evaluated {
        name: name.to_string(),
        text,
        markers,
    })
}

impl Evaluated {
    /// Adds this document to `status`.
    pub fn count_into(&self, status: &mut DocsStatus) {
        if self.markers.is_empty() {
            return;
        }
        status.documents += 1;
        status.markers += u64::try_from(self.markers.len()).unwrap_or(u64::MAX);
        for c in &self.markers {
            if c.marker.starts_line && matches!(c.marker.kind, Kind::Fact { .. }) {
                status.warnings.push(format!(
                    "{}:{}: this fact starts its line, so markdown reads the line as HTML and cuts the sentence in two: put a word before it",
                    self.name, c.marker.line
                ));
            }
        }
        for f in self.findings() {
            if f.new.is_some() {
                status.stale.push(f);
            } else {
                status.unknown.push(f);
            }
        }
    }

    /// Whether any marked span would change.
    pub fn stale(&self) -> bool {
        self.markers
            .iter()
            .any(|c| matches!(c.state, State::Stale(_)))
    }

    /// The document with each stale span replaced; every other byte as it was.
    pub fn rewritten(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        let mut at = 0;
        for c in &self.markers {
            if let State::Stale(new) = &c.state {
                out.push_str(
                    self.text
                        .get(at..c.marker.content.start)
                        .unwrap_or_default(),
                );
                out.push_str(new);
                at = c.marker.content.end;
            }
        }
        out.push_str(self.text.get(at..).unwrap_or_default());
        out
    }

    /// The findings of this document: every stale and unknown marker.
    pub fn findings(&self) -> Vec<DocFinding> {
        self.markers
            .iter()
            .filter_map(|c| {
                let (new, unknown) = match &c.state {
                    State::Current => return None,
                    State::Stale(new) => (Some(new.clone()), None),
                    State::Unknown(why) => (None, Some(why.clone())),
                };
                let (marker, old, new) = match &c.marker.kind {
                    Kind::Fact { path, format } => (
                        if format == "plain" {
                            path.clone()
                        } else {
                            format!("{path} ({format})")
                        },
                        short(&c.old),
                        new.map(|n| short(&n)),
                    ),
                    Kind::Table { name } => {
                        let (old, new) = table_change(&c.old, new.as_deref());
                        (format!("table {name}"), old, new)
                    }
                };
                Some(DocFinding {
                    file: self.name.clone(),
                    line: c.marker.line,
                    marker,
                    old,
                    new,
                    unknown,
                })
            })
            .collect()
    }
}

/// Longest text shown for a fact's old or new value.
const SHOWN: usize = 60;

fn short(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() <= SHOWN {
        return s.to_string();
    }
    let mut out: String = s.chars().take(SHOWN).collect();
    out.push('…');
    out
}

/// A table's change in a few words: its rows before, and after with how many differ.
fn table_change(old: &str, new: Option<&str>) -> (String, Option<String>) {
    // The data rows: the lines of the table after its header and delimiter rows.
    let rows = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.trim().to_string())
            .filter(|l| l.starts_with('|'))
            .skip(2)
            .collect()
    };
    let noun = |n: usize| if n == 1 { "row" } else { "rows" };
    let before = rows(old);
    let old_text = format!("{} {}", before.len(), noun(before.len()));
    let Some(new) = new else {
        return (old_text, None);
    };
    let after = rows(new);
    let known: std::collections::BTreeSet<&String> = before.iter().collect();
    let differ = after.iter().filter(|l| !known.contains(l)).count();
    (
        old_text,
        Some(format!(
            "{} {}, {differ} new or changed",
            after.len(),
            noun(after.len())
        )),
    )
}

#[cfg(test)]
mod tests;
