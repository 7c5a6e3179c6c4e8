//! Prometheus queries answered as plain series: the one reader of the query API's answers for the
//! history `gpuledger trend` reads (gpuledger keeps none of its own: "regenerate, don't
//! remember"), the serving rates and histograms of headroom ([`super::serving`]) and the outcome
//! counters of cost ([`super::outcomes`]). The DCGM reader ([`super::prometheus`]) keeps its own,
//! which counts the samples it drops.
//!
//! A matrix or vector answer becomes plain series (labels and `(unix seconds, value)` samples,
//! oldest first); a non-finite sample is dropped, never read as zero. A failed request, a body that
//! is not an API answer or an error answer is an `Err` naming the URL (never the token) and the
//! query. So is a `success` answer that carries `warnings` ([`RangeError::Partial`]): Thanos and
//! Mimir say so when a store or shard did not answer, and what these readers compute from series
//! (a change per week, a rate's percentile, a counter's increase) is no bound on the truth when
//! some series are missing, so the figure is unknown with the warnings as the reason. (GPUs used,
//! a count that only grows with more series, is read as a lower bound instead: see
//! [`super::prometheus`].)

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::http::{Client, HttpError, excerpt};
use super::prometheus::{StatusError, http_error};

/// One series of a matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSeries {
    pub labels: BTreeMap<String, String>,
    /// `(unix seconds, value)`, oldest first.
    pub samples: Vec<(i64, f64)>,
}

/// Why a query could not be answered as series; each message names the URL and the query.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    #[error(transparent)]
    Http(#[from] HttpError),
    #[error(transparent)]
    Status(#[from] StatusError),
    #[error(
        "Prometheus at {base}, query `{query}`: not a Prometheus API response ({source}): {excerpt}"
    )]
    NotApi {
        base: String,
        query: String,
        #[source]
        source: serde_json::Error,
        excerpt: String,
    },
    /// An error answer: Prometheus's message, else its status.
    #[error("Prometheus at {base}, query `{query}`: {reason}")]
    Failed {
        base: String,
        query: String,
        reason: String,
    },
    #[error("Prometheus at {base}, query `{query}`: no data")]
    NoData { base: String, query: String },
    /// A `success` answer with `warnings`: some series may be missing.
    #[error(
        "Prometheus at {base}, query `{query}`: a partial answer (warnings: {}), so the figure is not known",
        warnings.join("; ")
    )]
    Partial {
        base: String,
        query: String,
        warnings: Vec<String>,
    },
    #[error(
        "Prometheus at {base}, query `{query}`: a {result_type} answer, not a matrix or vector"
    )]
    ResultType {
        base: String,
        query: String,
        result_type: String,
    },
}

/// A Prometheus to ask, for one command's run.
pub struct Range {
    client: Client,
}

#[derive(Deserialize)]
struct Answer {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    error: Option<String>,
    /// A partial response's (Thanos, Mimir) and PromQL's own warnings; `infos` are not read.
    #[serde(default)]
    warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    metric: BTreeMap<String, String>,
    #[serde(default)]
    values: Vec<(f64, String)>,
    #[serde(default)]
    value: Option<(f64, String)>,
}

impl Range {
    pub fn new(url: &str, token: Option<&str>, timeout: Duration) -> Result<Range, RangeError> {
        Ok(Range {
            client: Client::new("Prometheus", url, token, timeout)?,
        })
    }

    /// The base URL as messages show it.
    pub fn shown_url(&self) -> &str {
        self.client.shown_url()
    }

    /// `query` evaluated from `start` to `end` every `step` seconds.
    pub async fn range(
        &self,
        query: &str,
        start: i64,
        end: i64,
        step: u64,
    ) -> Result<Vec<RangeSeries>, RangeError> {
        let (start, end, step) = (start.to_string(), end.to_string(), step.to_string());
        self.ask(
            "/api/v1/query_range",
            query,
            &[("start", &start), ("end", &end), ("step", &step)],
        )
        .await
    }

    /// `query` at `time`: each series with its one sample.
    pub async fn instant(&self, query: &str, time: i64) -> Result<Vec<RangeSeries>, RangeError> {
        let time = time.to_string();
        self.ask("/api/v1/query", query, &[("time", &time)]).await
    }

    async fn ask(
        &self,
        path: &str,
        query: &str,
        extra: &[(&str, &str)],
    ) -> Result<Vec<RangeSeries>, RangeError> {
        let mut params = vec![("query", query)];
        params.extend_from_slice(extra);
        let base = self.client.shown_url();
        let response = self.client.get(path, &params).await?;
        if !response.status.is_success() {
            return Err(http_error(
                base,
                query,
                response.status,
                &response.body,
                self.client.has_token(),
            )
            .into());
        }
        let (base, query) = (base.to_string(), query.to_string());
        let answer: Answer = match serde_json::from_slice(&response.body) {
            Ok(a) => a,
            Err(source) => {
                return Err(RangeError::NotApi {
                    base,
                    query,
                    source,
                    excerpt: excerpt(&response.body),
                });
            }
        };
        if answer.status != "success" {
            return Err(RangeError::Failed {
                base,
                query,
                reason: answer.error.unwrap_or(answer.status),
            });
        }
        if !answer.warnings.is_empty() {
            return Err(RangeError::Partial {
                base,
                query,
                warnings: answer.warnings,
            });
        }
        let Some(data) = answer.data else {
            return Err(RangeError::NoData { base, query });
        };
        if data.result_type != "matrix" && data.result_type != "vector" {
            return Err(RangeError::ResultType {
                base,
                query,
                result_type: data.result_type,
            });
        }
        Ok(data
            .result
            .into_iter()
            .map(|i| RangeSeries {
                labels: i.metric,
                samples: i
                    .values
                    .into_iter()
                    .chain(i.value)
                    .filter_map(|(t, v)| {
                        let v: f64 = v.parse().ok()?;
                        // Sample times are whole seconds at the steps asked for.
                        #[allow(clippy::cast_possible_truncation)]
                        v.is_finite().then_some((t.round() as i64, v))
                    })
                    .collect(),
            })
            .collect())
    }
}
