//! The pure middle of the pipeline: objects and config in, report sections out.
//!
//! No I/O, no clock, no network: the same inputs always give the same report, which is what makes
//! these modules the place where most tests live.

pub mod compare;
pub mod cost;
pub mod deadlines;
pub mod desired;
pub mod dra;
pub mod drift;
pub mod exposure;
pub mod fleets;
pub mod headroom;
pub mod impact;
pub mod inventory;
pub mod live;
pub mod nodes;
pub mod pins;
pub mod placement;
pub mod plan;
pub mod projection;
pub mod queues;
pub mod routes_change;
mod shape_text;
mod shortage;
pub mod tenancy;
pub mod trend;
pub mod unread;
pub mod unrendered;
pub mod usage;
