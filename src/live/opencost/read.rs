//! The two requests to OpenCost over one window, and what their statuses mean: an error status is
//! an [`OpenCostError`] with OpenCost's own message and a hint; `/inferenceCost` not served is no
//! inference cost, not a failure.

use http::StatusCode;
use serde::Deserialize;

use super::types::Coverage;
use super::types::{CostData, OpenCostError, OpenCostSource, Window};
use super::wire::{parse_answer, parse_inference, without_nan};
use crate::live::http::{Client, excerpt};

const ALLOCATION_PATH: &str = "/allocation";
const INFERENCE_PATH: &str = "/inferenceCost/total";

/// Reads the allocations (and inference cost) over `window`; see the module documentation.
pub async fn read(src: &OpenCostSource, window: Window) -> Result<CostData, OpenCostError> {
    if window.seconds() <= 0 {
        return Err(OpenCostError::EmptyWindow);
    }
    let client = Client::new(
        "OpenCost",
        &src.url,
        src.bearer_token.as_deref(),
        src.timeout,
    )?;
    let base = client.shown_url().to_string();
    let w = window.param();
    let query = [
        ("window", w.as_str()),
        ("aggregate", "namespace,controllerKind,controller,pod"),
        ("accumulate", "true"),
        ("includeIdle", "true"),
        ("shareIdle", "false"),
    ];
    let response = client.get(ALLOCATION_PATH, &query).await?;
    if !response.status.is_success() {
        return Err(http_error(
            &base,
            ALLOCATION_PATH,
            response.status,
            &response.body,
            client.has_token(),
        ));
    }
    let answer = parse_answer(&response.body).map_err(|reason| OpenCostError::Answer {
        base: base.clone(),
        path: ALLOCATION_PATH,
        reason,
    })?;
    let inference = match client
        .get(
            INFERENCE_PATH,
            &[
                ("window", w.as_str()),
                ("aggregate", "model_name,namespace"),
            ],
        )
        .await
    {
        Err(e) => Err(e.into()),
        // Not served: an OpenCost before 1.121, or INFERENCE_COST_ENABLED unset.
        Ok(r) if r.status == StatusCode::NOT_FOUND => Ok(None),
        Ok(r) if !r.status.is_success() => Err(http_error(
            &base,
            INFERENCE_PATH,
            r.status,
            &r.body,
            client.has_token(),
        )),
        Ok(r) => parse_inference(&r.body)
            .map(Some)
            .map_err(|reason| OpenCostError::Answer {
                base: base.clone(),
                path: INFERENCE_PATH,
                reason,
            }),
    };
    Ok(CostData {
        source: base,
        coverage: Coverage::of(&answer.periods, answer.undated, window),
        allocations: answer.allocations,
        inference,
    })
}

pub(super) fn http_error(
    base: &str,
    path: &'static str,
    status: StatusCode,
    body: &[u8],
    has_token: bool,
) -> OpenCostError {
    let detail = match serde_json::from_slice::<ErrorBody>(&without_nan(body)) {
        Ok(ErrorBody {
            message: Some(m), ..
        }) if !m.is_empty() => m,
        _ => excerpt(body),
    };
    let hint = match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN if has_token => {
            " (check the bearer token)"
        }
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => " (a bearer token may be needed)",
        StatusCode::NOT_FOUND => " (is the URL the OpenCost API, port 9003?)",
        _ => "",
    };
    OpenCostError::Status {
        base: base.to_string(),
        path,
        status,
        hint,
        detail: (!detail.is_empty()).then_some(detail),
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: Option<String>,
}
