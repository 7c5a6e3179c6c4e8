//! What every report shares: the schema it is written under, the kind of report it is, and the inputs
//! it could not read.
//!
//! A consumer tells reports apart by `kind` (`inventory`, `drift`, `check`, …) under one `schema`
//! (`gpuledger.report/v1`, only ever added to). A report read back (`github comment
//! --from-report`) must be of this schema and of the kind expected.

use serde::{Deserialize, Deserializer, Serialize};

pub const SCHEMA: &str = "gpuledger.report/v1";

/// What a report is: the command (or job) that made it. Written right after `schema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The fleet: `gpuledger inventory` (and `serve`).
    Inventory,
    /// The fleet with drift against Git leading: `gpuledger drift`, the drift issue.
    Drift,
    /// A change, base against head: `gpuledger check`, the pull-request comment.
    Check,
    /// What Git declares: `gpuledger render`.
    Render,
    /// The stagger plan: `gpuledger plan`.
    Plan,
    /// Cost per verified outcome: `gpuledger cost`.
    Cost,
    /// Serving headroom: `gpuledger headroom`.
    Headroom,
    /// GPUs over a window: `gpuledger trend`.
    Trend,
    /// Marked facts of documents against the fleet: `gpuledger docs`.
    Docs,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Inventory => "inventory",
            Kind::Drift => "drift",
            Kind::Check => "check",
            Kind::Render => "render",
            Kind::Plan => "plan",
            Kind::Cost => "cost",
            Kind::Headroom => "headroom",
            Kind::Trend => "trend",
            Kind::Docs => "docs",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `&'static str` under another name: serde's derive takes a field written `&'static str` as
/// borrowed from the input (so the report could only be read from a `'static` buffer), even with
/// `deserialize_with`; through this alias it is read as [`this_schema`] says.
pub type SchemaName = &'static str;

/// Reads a report's `schema` back: only [`SCHEMA`], so an older or foreign document is refused by
/// name rather than half understood.
pub(super) fn this_schema<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    if s == SCHEMA {
        Ok(SCHEMA)
    } else {
        Err(serde::de::Error::custom(format!(
            "schema {s:?} is not {SCHEMA:?}"
        )))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct IncompleteInput {
    pub resource: String,
    pub reason: String,
}

/// Reads a check report's `kind` back: only `check` (a report written before `kind` existed has
/// none, and is a check report by its shape), so an inventory is never posted as a pull request's
/// check.
pub(super) fn check_kind<'de, D: Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
    match Kind::deserialize(d)? {
        Kind::Check => Ok(Kind::Check),
        other => Err(serde::de::Error::custom(format!(
            "a {other} report is not a check report"
        ))),
    }
}

/// [`Kind::Check`], for a check report read back without a `kind`.
pub(super) fn kind_check() -> Kind {
    Kind::Check
}
