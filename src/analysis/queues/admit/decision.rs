//! A verdict on one workload, as admission gives it.

use crate::report::queues::Verdict;

/// The verdict on one workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub queue: Option<String>,
    pub flavor: Option<String>,
    pub verdict: Verdict,
    pub why: String,
}

impl Decision {
    pub(super) fn unknown(queue: Option<String>, why: impl Into<String>) -> Decision {
        Decision {
            queue,
            flavor: None,
            verdict: Verdict::Unknown,
            why: why.into(),
        }
    }
}
