//! The marked facts of documents against a report: how many, which are stale (with the new text),
//! which the report cannot confirm, and which documents could not be read. `gpuledger docs`
//! writes it; the check and the drift issue carry it as a section.

use serde::{Deserialize, Serialize};

use super::envelope::Kind;

/// A marked span whose text differs from the report, or that the report cannot confirm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocFinding {
    /// The document, relative to the repository (or as given).
    pub file: String,
    /// The line of its opening marker.
    pub line: u32,
    /// `fleet.gpus.placeable`, `fleet.utilisation (percent)`, `table tenants`.
    pub marker: String,
    /// What the document says (a table: its row count).
    pub old: String,
    /// What the report says; `null` when it is unknown.
    pub new: Option<String>,
    /// Why the value is unknown (the text is kept).
    pub unknown: Option<String>,
}

/// What `gpuledger docs --format json` prints: the status under the report's schema, with the
/// inputs the report was computed from.
#[derive(Debug, Clone, Serialize)]
pub struct DocsReport {
    pub schema: &'static str,
    /// Always [`Kind::Docs`].
    pub kind: Kind,
    pub sources: Vec<String>,
    pub docs: DocsStatus,
}

/// The marked facts of a set of documents against one report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocsStatus {
    /// Documents with at least one marker.
    pub documents: u64,
    /// Marked spans in them.
    pub markers: u64,
    /// Stale spans: the text differs from the report.
    pub stale: Vec<DocFinding>,
    /// Spans the report could not confirm (text kept).
    pub unknown: Vec<DocFinding>,
    /// Documents that could not be read: a malformed marker, a field the report does not have,
    /// a file that is not UTF-8 (each `file:line: message`).
    pub errors: Vec<String>,
    /// Facts that open their line: markdown takes such a line for a block of HTML and cuts the
    /// sentence around the fact in two (`file:line`, with what to do).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Documents rewritten (by `docs --write`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<String>,
}

impl DocsStatus {
    /// Whether every marked fact is confirmed and no document failed.
    pub fn clean(&self) -> bool {
        self.stale.is_empty() && self.unknown.is_empty() && self.errors.is_empty()
    }

    /// `2 of 14 marked facts in 3 documents are stale; 1 unknown`.
    pub fn summary(&self) -> String {
        let docs = crate::util::text::count(self.documents, "document");
        let mut s = if self.markers == 0 {
            "No marked facts".to_string()
        } else if self.stale.is_empty() && self.unknown.is_empty() {
            format!(
                "All {} marked facts in {docs} match the report",
                self.markers
            )
        } else if self.stale.is_empty() {
            let unknown = u64::try_from(self.unknown.len()).unwrap_or(u64::MAX);
            format!(
                "{} of {} marked facts in {docs} match the report",
                self.markers.saturating_sub(unknown),
                self.markers
            )
        } else if !self.written.is_empty() {
            format!(
                "{} of {} marked facts in {docs} rewritten ({})",
                self.stale.len(),
                self.markers,
                self.written.join(", ")
            )
        } else {
            format!(
                "{} of {} marked facts in {docs} {} stale",
                self.stale.len(),
                self.markers,
                if self.stale.len() == 1 { "is" } else { "are" }
            )
        };
        if !self.unknown.is_empty() {
            s = format!("{s}; {} unknown (text kept)", self.unknown.len());
        }
        if !self.errors.is_empty() {
            s = format!(
                "{s}; {} could not be read",
                crate::util::text::count(
                    u64::try_from(self.errors.len()).unwrap_or(u64::MAX),
                    "document"
                )
            );
        }
        s
    }
}
