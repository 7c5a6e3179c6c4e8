//! Small helpers with no domain knowledge: dates, glob matching, retries, running subprocesses
//! safely, checked arithmetic, why a connection failed, redacting secrets and making quoted text printable.

pub mod date;
pub mod glob;
pub mod net;
pub mod number;
pub mod process;
pub mod redact;
pub mod retry;
pub mod sum;
pub mod text;
