use std::time::Duration;

use http::StatusCode;

use super::read::http_error;
use super::*;
use crate::util::date::Timestamp;

#[test]
fn both_field_generations_are_read() {
    let old = br#"{"code":200,"status":"success","data":[{"a/deployment/x/x-1":{"name":"a/deployment/x/x-1","properties":{"namespace":"a","controllerKind":"deployment","controller":"x","pod":"x-1","labels":{"gpuledger_io_tenant":"acme"}},"gpuHours":2,"gpuCost":4.5,"cpuCost":0.5,"ramCost":0.25,"totalCost":5.25,"gpuRequestAverage":1,"gpuUsageAverage":0.4}}]}"#;
    let new = br#"{"code":200,"status":"success","data":[{"a/deployment/x/x-1":{"properties":{"namespace":"a","controllerKind":"Deployment","controller":"x","pod":"x-1"},"gpuHours":2,"gpuCost":4.5,"totalCost":5.25,"gpuAllocation":{"gpuDevice":"nvidia0","gpuModel":"Tesla T4","isGPUShared":false,"gpuUsageAverage":0.4,"gpuRequestAverage":1}}}]}"#;
    for body in [&old[..], &new[..]] {
        let a = parse_allocations(body).unwrap();
        assert_eq!(a.len(), 1);
        let a = &a[0];
        assert_eq!(a.namespace.as_deref(), Some("a"));
        assert_eq!(a.controller_kind.as_deref(), Some("deployment"));
        assert_eq!(a.gpu_request_average, Some(1.0));
        assert_eq!(a.gpu_usage_average, Some(0.4));
        assert_eq!(a.costs.total, Some(5.25));
    }
    let a = parse_allocations(old).unwrap();
    assert_eq!(a[0].labels.get("gpuledger_io_tenant").unwrap(), "acme");
}

#[test]
fn nan_in_any_spelling_is_unknown() {
    let body = br#"{"code":200,"data":[{"k":{"gpuCost":NaN,"cpuCost":"NaN","ramCost":null,"pvCost":-Inf,"totalCost":"1.5","name":"NaN inside a string stays"}}]}"#;
    let a = parse_allocations(body).unwrap();
    let c = a[0].costs;
    assert_eq!((c.gpu, c.cpu, c.ram, c.pv), (None, None, None, None));
    assert_eq!(c.total, Some(1.5));
    assert_eq!(
        without_nan(br#"{"a":"NaN \"Inf\"","b":NaN}"#),
        br#"{"a":"NaN \"Inf\"","b":null}"#.to_vec()
    );
}

#[test]
fn steps_are_summed_and_unknown_stays_unknown() {
    let body = br#"{"code":200,"data":[{"k":{"gpuCost":1,"totalCost":2}},{"k":{"gpuCost":1,"totalCost":null}},null]}"#;
    let a = parse_allocations(body).unwrap();
    assert_eq!(a[0].costs.gpu, Some(2.0));
    assert_eq!(a[0].costs.total, None);
}

#[test]
fn error_bodies_are_errors() {
    let e = parse_allocations(br#"{"code":500,"message":"boom"}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "error code 500: boom");
    assert!(
        parse_allocations(b"<html>502</html>")
            .unwrap_err()
            .to_string()
            .starts_with("not an allocation response")
    );
    assert!(
        parse_allocations(br#"{"code":200}"#)
            .unwrap_err()
            .to_string()
            .contains("without data")
    );
    let e = http_error(
        "http://oc:9003",
        "/allocation",
        StatusCode::INTERNAL_SERVER_ERROR,
        br#"{"code":500,"message":"Error: prometheus unreachable"}"#,
        false,
    )
    .to_string();
    assert_eq!(
        e,
        "OpenCost at http://oc:9003 answered 500 Internal Server Error to /allocation: Error: prometheus unreachable"
    );
}

#[test]
fn inference_cost_in_both_shapes() {
    let body = br#"{"data":{"inferenceCosts":{"Qwen/Qwen3-32B:llm":{"properties":{"modelName":"Qwen/Qwen3-32B","namespace":"llm"},"costBasis":"allocation","totalCost":42.5,"totalTokens":15000000,"costPerMillionTokens":2.83}},"window":{}}}"#;
    let c = parse_inference(body).unwrap();
    assert_eq!(c[0].model, "Qwen/Qwen3-32B");
    assert_eq!(c[0].cost_per_million_tokens, Some(2.83));
    let design = br#"{"data":{"totals":{"m:ns":{"totalCost":NaN}}}}"#;
    let c = parse_inference(design).unwrap();
    assert_eq!(c[0].model, "m");
    assert_eq!(c[0].total_cost, None);
}

#[test]
fn labels_are_sanitised_like_prometheus() {
    assert_eq!(sanitize_label("gpuledger.io/tenant"), "gpuledger_io_tenant");
    assert_eq!(sanitize_label("tenant"), "tenant");
}

#[test]
fn window_is_an_rfc3339_pair() {
    let end = Timestamp::parse("2026-12-02T12:00:00Z").unwrap();
    let w = Window::ending(end, Duration::from_secs(3600));
    assert_eq!(w.param(), "2026-12-02T11:00:00Z,2026-12-02T12:00:00Z");
    assert_eq!(w.hours(), 1.0);
}

#[test]
fn each_allocation_says_when_it_ran_and_steps_make_the_coverage() {
    // Own start/end; else the step's window; else one end and minutes; else undated.
    let body = br#"{"code":200,"data":[
        {"a":{"start":"2026-12-02T06:00:00Z","end":"2026-12-02T12:00:00Z","minutes":360,"window":{"start":"2026-12-01T12:00:00Z","end":"2026-12-02T12:00:00Z"},"totalCost":1}},
        {"a":{"window":{"start":"2026-12-01T12:00:00Z","end":"2026-12-01T18:00:00Z"},"totalCost":1},
         "b":{"end":"2026-12-01T20:00:00Z","minutes":60,"totalCost":1},
         "c":{"totalCost":1}},
        null
    ]}"#;
    let answer = parse_answer(body).unwrap();
    let t = |s: &str| Timestamp::parse(s).unwrap();
    assert_eq!(answer.undated, 1);
    assert_eq!(
        answer.periods,
        [
            (t("2026-12-02T06:00:00Z"), t("2026-12-02T12:00:00Z")),
            (t("2026-12-01T12:00:00Z"), t("2026-12-01T18:00:00Z")),
            (t("2026-12-01T19:00:00Z"), t("2026-12-01T20:00:00Z")),
        ]
    );
    // Over steps: the first start, the last end, the minutes added.
    let a = &answer.allocations[0];
    assert_eq!(
        (a.start, a.end, a.minutes),
        (
            Some(t("2026-12-01T12:00:00Z")),
            Some(t("2026-12-02T12:00:00Z")),
            None
        )
    );
    let window = Window::ending(t("2026-12-02T12:00:00Z"), Duration::from_secs(24 * 3600));
    let c = Coverage::of(&answer.periods, answer.undated, window);
    assert_eq!(
        c.spans,
        [
            (t("2026-12-01T12:00:00Z"), t("2026-12-01T18:00:00Z")),
            (t("2026-12-01T19:00:00Z"), t("2026-12-01T20:00:00Z")),
            (t("2026-12-02T06:00:00Z"), t("2026-12-02T12:00:00Z")),
        ]
    );
    assert_eq!(c.seconds(), 13 * 3600);
    // Overlapping and outside periods: merged and clipped to the window.
    let c = Coverage::of(
        &[
            (t("2026-11-30T00:00:00Z"), t("2026-12-01T13:00:00Z")),
            (t("2026-12-01T12:30:00Z"), t("2026-12-01T14:00:00Z")),
        ],
        0,
        window,
    );
    assert_eq!(
        c.spans,
        [(t("2026-12-01T12:00:00Z"), t("2026-12-01T14:00:00Z"))]
    );
}
