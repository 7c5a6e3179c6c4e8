//! Small helpers with no domain knowledge: glob matching and running subprocesses safely.

pub mod date;
pub mod glob;
pub mod process;
pub mod retry;
