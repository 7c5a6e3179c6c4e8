//! What is read from OpenCost and handed to the cost analysis: where the server is, the window,
//! the allocations and inference costs it answered, and why it gave none.

use std::collections::BTreeMap;
use std::time::Duration;

use http::StatusCode;

use crate::live::http::HttpError;
use crate::util::date::Timestamp;

/// Where OpenCost is and how to read it.
#[derive(Clone)]
pub struct OpenCostSource {
    /// The API base URL (`http://opencost.opencost:9003`); `/allocation` is appended.
    pub url: String,
    pub bearer_token: Option<String>,
    /// For the whole read (both queries).
    pub timeout: Duration,
}

// By hand, so that the token never reaches a log line through `{:?}`.
impl std::fmt::Debug for OpenCostSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenCostSource")
            .field("url", &self.url)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The period costs and outcomes are counted over: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: Timestamp,
    pub end: Timestamp,
}

impl Window {
    /// The `window` that ends at `end`.
    pub fn ending(end: Timestamp, length: Duration) -> Window {
        let secs = i64::try_from(length.as_secs()).unwrap_or(i64::MAX);
        Window {
            start: Timestamp::from_unix(end.unix().saturating_sub(secs)),
            end,
        }
    }

    pub fn seconds(&self) -> i64 {
        self.end.seconds_since(self.start)
    }

    pub fn hours(&self) -> f64 {
        self.seconds() as f64 / 3600.0
    }

    /// OpenCost's `window` parameter: an RFC 3339 pair.
    pub fn param(&self) -> String {
        format!("{},{}", self.start, self.end)
    }
}

/// One allocation of the accumulated response, with the fields gpuledger uses. Every figure is
/// `None` when OpenCost did not give a finite number.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allocation {
    /// The aggregation key (`team-a/deployment/chat/chat-7d9f-x2`, `__idle__`).
    pub key: String,
    pub cluster: Option<String>,
    pub namespace: Option<String>,
    /// Lower case, as OpenCost writes it (`deployment`, `statefulset`, `job`).
    pub controller_kind: Option<String>,
    pub controller: Option<String>,
    pub pod: Option<String>,
    /// Pod labels, keys sanitised by OpenCost.
    pub labels: BTreeMap<String, String>,
    /// Namespace labels, keys sanitised by OpenCost.
    pub namespace_labels: BTreeMap<String, String>,
    pub gpu_hours: Option<f64>,
    pub costs: Costs,
    /// Average GPUs requested and used over the window (either field generation).
    pub gpu_request_average: Option<f64>,
    pub gpu_usage_average: Option<f64>,
    /// When it ran inside the window (`start`/`end`, else its `window`, else `minutes` before the
    /// end it has); over several steps, the first start and the last end.
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    /// `minutes`: how long it ran (summed over steps).
    pub minutes: Option<f64>,
}

impl Allocation {
    /// OpenCost's reserved names: `__idle__`, `__unallocated__`, `__unmounted__`, `__shared__`,
    /// `__external__`.
    pub fn is_idle(&self) -> bool {
        self.key == "__idle__" || self.key.starts_with("__idle__/")
    }
}

/// The cost of one allocation by resource, in the currency OpenCost is configured with.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Costs {
    pub gpu: Option<f64>,
    pub cpu: Option<f64>,
    pub ram: Option<f64>,
    pub pv: Option<f64>,
    pub network: Option<f64>,
    pub load_balancer: Option<f64>,
    pub shared: Option<f64>,
    pub external: Option<f64>,
    /// OpenCost's own total (adjustments included).
    pub total: Option<f64>,
}

/// The part of the asked window an answer covers: the union of the periods its allocations (the
/// idle one included, which spans the nodes' time) say they ran, over every step it returned. A
/// store that only holds the last hours, or a step missing from a per-step answer, leaves a gap.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coverage {
    /// Disjoint `[start, end)` spans inside the window, oldest first.
    pub spans: Vec<(Timestamp, Timestamp)>,
    /// Allocations that did not say when they ran.
    pub undated: usize,
}

impl Coverage {
    /// The union of `periods`, clipped to `window`.
    pub fn of(periods: &[(Timestamp, Timestamp)], undated: usize, window: Window) -> Coverage {
        let mut clipped: Vec<(i64, i64)> = periods
            .iter()
            .map(|(s, e)| {
                (
                    s.unix().max(window.start.unix()),
                    e.unix().min(window.end.unix()),
                )
            })
            .filter(|(s, e)| s < e)
            .collect();
        clipped.sort_unstable();
        let mut spans: Vec<(i64, i64)> = Vec::new();
        for (s, e) in clipped {
            match spans.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => spans.push((s, e)),
            }
        }
        Coverage {
            spans: spans
                .into_iter()
                .map(|(s, e)| (Timestamp::from_unix(s), Timestamp::from_unix(e)))
                .collect(),
            undated,
        }
    }

    /// Seconds covered.
    pub fn seconds(&self) -> i64 {
        self.spans.iter().map(|(s, e)| e.seconds_since(*s)).sum()
    }
}

/// Cost per model from `/inferenceCost/total`.
#[derive(Debug, Clone, PartialEq)]
pub struct InferenceCost {
    pub model: String,
    pub namespace: Option<String>,
    pub total_cost: Option<f64>,
    pub total_tokens: Option<f64>,
    pub cost_per_million_tokens: Option<f64>,
    /// `allocation` (reconciles to the bill) or `usage`.
    pub cost_basis: Option<String>,
}

/// What OpenCost answered.
#[derive(Debug, Clone, PartialEq)]
pub struct CostData {
    pub source: String,
    pub allocations: Vec<Allocation>,
    /// The part of the asked window the answer covers.
    pub coverage: Coverage,
    /// `Ok(None)` when the server does not serve inference cost (older than 1.121, or disabled).
    pub inference: Result<Option<Vec<InferenceCost>>, OpenCostError>,
}

/// Why OpenCost gave no cost (or no inference cost); the report shows the cost as unknown with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpenCostError {
    #[error("the cost window is empty")]
    EmptyWindow,
    #[error(transparent)]
    Http(#[from] HttpError),
    /// An error status, with OpenCost's own message when the body has one and a hint.
    #[error("OpenCost at {base} answered {status}{hint} to {path}{}", detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    Status {
        base: String,
        path: &'static str,
        status: StatusCode,
        hint: &'static str,
        detail: Option<String>,
    },
    #[error("OpenCost at {base}{path}: {reason}")]
    Answer {
        base: String,
        path: &'static str,
        #[source]
        reason: AnswerError,
    },
}

/// What is wrong with a body OpenCost sent with a success status. The JSON parser's message is
/// kept as text so that the answer (and the report built from it) can be cloned and compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnswerError {
    #[error("not an allocation response ({reason}): {excerpt}")]
    NotAllocations { reason: String, excerpt: String },
    #[error("error code {code}: {message}")]
    Code { code: i64, message: String },
    /// `detail` is OpenCost's message, else the start of the body.
    #[error("a response without data: {detail}")]
    NoData { detail: String },
    #[error("not an inference cost response ({reason}): {excerpt}")]
    NotInference { reason: String, excerpt: String },
    #[error("no data.inferenceCosts in {excerpt}")]
    NoInferenceCosts { excerpt: String },
}
