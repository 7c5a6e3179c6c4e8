//! Small helpers with no domain knowledge: glob matching, running subprocesses safely, dates, retries
//! and checked arithmetic.

pub mod date;
pub mod glob;
pub mod process;
pub mod retry;
pub mod sum;
