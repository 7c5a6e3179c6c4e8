//! Serving headroom: the capacity a load test measured at a workload's latency objective against
//! the request rate production asks of it.
//!
//! The data flows one way: [`fleet`] splits production's serving series by live workload and
//! takes their p95 and peak; [`capacity`] holds a load test against one configuration of a
//! workload (the live one, or the head's of a change) and judges a capacity against a rate;
//! [`change`] does it for the serving workloads a change reshapes, at the head's shape, with
//! production's rate as [`fleet`] computes it.
//!
//! The capacity comes only from a load test (`gpuledger.io/load-test`, or an `intent:` rule's
//! `load-test`), through [`crate::live::loadtest::capacity`]; it is never scaled to fit a
//! configuration it was not measured at (unless `headroom.scale` says so).

mod capacity;
mod change;
mod fleet;

pub use capacity::{Configuration, Held, Side, held, verdict};
pub use change::{ProductionNow, Reshaped, at_head, reshaped};
pub use fleet::{MODEL_LABEL, engine_flags, headroom, objective_text};
