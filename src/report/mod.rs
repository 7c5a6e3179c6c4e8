//! The reports: plain serializable data that analyses fill and renderers read, one file per kind.
//!
//! Every report is an envelope `{schema, kind, …}`: `schema` is `gpuledger.report/v1`, a public,
//! versioned interface whose fields are only ever added; `kind` names what the report is
//! (`inventory`, `drift`, `check`, `render`, `plan`, `cost`, `headroom`, `trend`, `docs`). A figure
//! that could not be computed is `null` with its reason beside it ([`Known`], written into the
//! `unknown` map of the object that holds it): unknown is never written as zero. Every list is
//! sorted, so the same input gives the same bytes.
//!
//! Nothing here computes: this folder imports only the domain types it names (workload ids and
//! roles, intent, the config's age), so every other layer may use it and it uses none of them.

pub mod check;
pub mod compare;
pub mod cost;
pub mod deadlines;
pub mod desired;
pub mod dra;
pub mod drift;
pub mod envelope;
pub mod facts;
pub mod headroom;
pub mod inventory;
pub mod nodes;
pub mod plan;
pub mod provenance;
pub mod queues;
pub mod routes;
pub mod series;
pub mod trend;

pub use check::*;
pub use desired::*;
pub use dra::*;
pub use drift::*;
pub use envelope::*;
pub use headroom::*;
pub use inventory::*;
pub use nodes::*;
pub use provenance::*;
pub use routes::*;
