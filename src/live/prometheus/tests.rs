use super::gpus::merge;
use super::*;

/// An answer of the stats query: each series as `(labels, avg, min, max)` with 10 samples.
fn stats(series: &[(&str, f64, f64, f64)]) -> String {
    let mut result = Vec::new();
    for (labels, avg, min, max) in series {
        for (stat, v) in [("avg", *avg), ("count", 10.0), ("min", *min), ("max", *max)] {
            let v = match v {
                v if v.is_nan() => "NaN".to_string(),
                v if v == f64::INFINITY => "+Inf".to_string(),
                v if v == f64::NEG_INFINITY => "-Inf".to_string(),
                v => v.to_string(),
            };
            let sep = if labels.is_empty() { "" } else { "," };
            result.push(format!(
                r#"{{"metric":{{{labels}{sep}"gpuledger_stat":"{stat}"}},"value":[1700000000.123,"{v}"]}}"#
            ));
        }
    }
    format!(
        r#"{{"status":"success","data":{{"resultType":"vector","result":[{}]}}}}"#,
        result.join(",")
    )
}

/// Constant series: avg = min = max.
fn steady(series: &[(&str, f64)]) -> String {
    let s: Vec<(&str, f64, f64, f64)> = series.iter().map(|(l, v)| (*l, *v, *v, *v)).collect();
    stats(&s)
}

fn samples(body: &str) -> Vec<Sample> {
    parse_response(body.as_bytes()).unwrap().samples
}

fn parse(body: &str) -> Vec<GpuActivity> {
    let (gpus, unsound) = merge(&samples(body), &[]);
    assert!(unsound.is_empty(), "{unsound:?}");
    gpus
}

fn pod_of(a: &GpuActivity) -> (Option<&str>, Option<&str>, Option<&str>) {
    let h = &a.holders[0];
    (
        h.namespace.as_deref(),
        h.pod.as_deref(),
        h.container.as_deref(),
    )
}

#[test]
fn exported_labels_win_over_the_exporter_pod() {
    let body = steady(&[
        (
            r#""gpu":"0","UUID":"GPU-a","Hostname":"node-1","job":"gpu-metrics","namespace":"gpu-operator","pod":"nvidia-dcgm-exporter-x1","container":"nvidia-dcgm-exporter","exported_namespace":"team-a","exported_pod":"trainer-0","exported_container":"main""#,
            0.75,
        ),
        // Idle GPU on the same scrape: DCGM's empty pod label was not renamed, so the plain
        // ones are the exporter's.
        (
            r#""gpu":"1","UUID":"GPU-b","Hostname":"node-1","job":"gpu-metrics","namespace":"gpu-operator","pod":"node-exporter-lookalike","container":"exporter""#,
            0.0,
        ),
    ]);
    let got = parse(&body);
    assert_eq!(got.len(), 2);
    assert_eq!(
        pod_of(&got[0]),
        (Some("team-a"), Some("trainer-0"), Some("main"))
    );
    assert_eq!(got[0].activity, 0.75);
    assert_eq!(got[0].id.node.as_deref(), Some("node-1"));
    assert_eq!(got[0].id.uuid.as_deref(), Some("GPU-a"));
    assert_eq!(got[0].metric, GR_ENGINE_ACTIVE);
    assert_eq!(pod_of(&got[1]), (None, None, None));
    assert_eq!(got[1].activity, 0.0);
}

#[test]
fn plain_labels_are_the_workload_with_honor_labels() {
    let body = steady(&[
        (
            r#""gpu":"0","hostname":"node-2","job":"dcgm","namespace":"team-b","pod":"serve-1","container":"vllm""#,
            0.5,
        ),
        (
            r#""gpu":"1","hostname":"node-2","job":"dcgm","namespace":"","pod":"","container":"""#,
            0.01,
        ),
    ]);
    let got = parse(&body);
    assert_eq!(
        pod_of(&got[0]),
        (Some("team-b"), Some("serve-1"), Some("vllm"))
    );
    assert_eq!(
        got[0].id.node.as_deref(),
        Some("node-2"),
        "lower-case hostname is accepted"
    );
    assert_eq!(
        pod_of(&got[1]),
        (None, None, None),
        "empty labels mean no pod"
    );
}

#[test]
fn exported_wins_only_when_non_empty() {
    let body = steady(&[(
        r#""gpu":"0","namespace":"team-c","pod":"job-7","exported_namespace":"","exported_pod":"""#,
        0.3,
    )]);
    // Here the exported twins exist in the job, so the plain labels are target labels.
    assert_eq!(pod_of(&parse(&body)[0]), (None, None, None));
    let body = steady(&[(
        r#""gpu":"0","namespace":"team-c","pod":"job-7","exported_pod":"real-pod""#,
        0.3,
    )]);
    // `exported_namespace` never appears, so `namespace` is DCGM's own.
    assert_eq!(
        pod_of(&parse(&body)[0]),
        (Some("team-c"), Some("real-pod"), None)
    );
}

#[test]
fn an_idle_fleet_is_not_billed_to_the_exporter() {
    // honorLabels: false and every GPU idle: no exported_ label anywhere to learn from.
    let body = steady(&[(
        r#""gpu":"0","Hostname":"n","namespace":"gpu-operator","pod":"nvidia-dcgm-exporter-7k2p9","container":"nvidia-dcgm-exporter""#,
        0.0,
    )]);
    assert_eq!(pod_of(&parse(&body)[0]), (None, None, None));
}

#[test]
fn a_gpu_is_one_entry_whatever_pods_it_held() {
    // A pod replaced inside the window: two series of GPU 0, one GPU, two holders.
    let body = stats(&[
        (
            r#""gpu":"0","Hostname":"h","UUID":"GPU-0","pod":"old","namespace":"n""#,
            0.8,
            0.8,
            0.8,
        ),
        (
            r#""gpu":"0","Hostname":"h","UUID":"GPU-0","pod":"new","namespace":"n""#,
            0.4,
            0.4,
            0.4,
        ),
    ]);
    let got = parse(&body);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(
        (got[0].activity - 0.6).abs() < 1e-12,
        "sample-weighted mean"
    );
    let holders: Vec<(&str, f64)> = got[0]
        .holders
        .iter()
        .map(|h| (h.pod.as_deref().unwrap(), h.activity))
        .collect();
    assert_eq!(
        holders,
        [("old", 0.4), ("new", 0.2)],
        "parts add up to the GPU"
    );
}

#[test]
fn bad_samples_make_a_gpu_fall_back_or_unknown() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    // NaN, +Inf, a negative sample and an above-1 sample (with ordinary averages), a sound GPU,
    // and one that is NaN here and out of range in its fallback.
    let active = stats(&[
        (r#""gpu":"0","Hostname":"h""#, nan, 0.5, 0.5),
        (r#""gpu":"1","Hostname":"h""#, inf, 0.5, inf),
        (r#""gpu":"2","Hostname":"h""#, 0.5, -0.001, 0.9),
        (r#""gpu":"3","Hostname":"h""#, 0.9, 0.2, 1.02),
        (r#""gpu":"4","Hostname":"h""#, 0.5, 0.5, 0.5),
        (r#""gpu":"5","Hostname":"h""#, nan, nan, nan),
    ]);
    let util = steady(&[
        (r#""gpu":"0","Hostname":"h""#, 90.0),
        (r#""gpu":"1","Hostname":"h""#, 80.0),
        (r#""gpu":"2","Hostname":"h""#, 70.0),
        (r#""gpu":"3","Hostname":"h""#, 60.0),
        (r#""gpu":"4","Hostname":"h""#, 10.0),
        (r#""gpu":"5","Hostname":"h""#, 120.0),
    ]);
    let (gpus, unsound) = merge(&samples(&active), &samples(&util));
    let got: Vec<(&str, f64, &str)> = gpus
        .iter()
        .map(|g| (g.id.gpu.as_str(), g.activity, g.metric))
        .collect();
    assert_eq!(
        got,
        [
            ("0", 0.9, GPU_UTIL),
            ("1", 0.8, GPU_UTIL),
            ("2", 0.7, GPU_UTIL),
            ("3", 0.6, GPU_UTIL),
            ("4", 0.5, GR_ENGINE_ACTIVE),
        ]
    );
    assert_eq!(unsound.len(), 1);
    assert_eq!(unsound[0].id.gpu, "5");
    assert_eq!(
        unsound[0].reason,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE: NaN or ±Inf samples; DCGM_FI_DEV_GPU_UTIL: samples above 100% (highest 120%)"
    );
}

#[test]
fn gpu_util_alone_and_mig_without_fallback() {
    let active = steady(&[
        (
            r#""gpu":"0","UUID":"GPU-m","Hostname":"h","GPU_I_PROFILE":"1g.10gb","GPU_I_ID":"13","exported_pod":"p13","exported_namespace":"a""#,
            f64::NAN,
        ),
        (
            r#""gpu":"0","UUID":"GPU-m","Hostname":"h","GPU_I_PROFILE":"3g.40gb","GPU_I_ID":"2","exported_pod":"p2","exported_namespace":"b""#,
            0.9,
        ),
    ]);
    // The split GPU's whole-GPU utilisation describes no instance; GPU 1 has only utilisation.
    let util = steady(&[
        (r#""gpu":"0","UUID":"GPU-m","Hostname":"h""#, 50.0),
        (r#""gpu":"1","UUID":"GPU-u","Hostname":"h""#, 40.0),
    ]);
    let (gpus, unsound) = merge(&samples(&active), &samples(&util));
    let got: Vec<(&str, Option<&str>, f64)> = gpus
        .iter()
        .map(|g| (g.id.gpu.as_str(), g.id.mig_instance.as_deref(), g.activity))
        .collect();
    assert_eq!(got, [("0", Some("2"), 0.9), ("1", None, 0.4)]);
    assert_eq!(unsound.len(), 1);
    assert_eq!(unsound[0].id.mig_instance.as_deref(), Some("13"));
    assert!(
        unsound[0].reason.contains("MIG instance"),
        "{}",
        unsound[0].reason
    );
    assert_eq!(unsound[0].holders[0].pod.as_deref(), Some("p13"));
}

#[test]
fn mig_instances_are_separate_entries_in_natural_order() {
    let body = steady(&[
        (
            r#""gpu":"0","UUID":"GPU-m","Hostname":"h","GPU_I_PROFILE":"1g.10gb","GPU_I_ID":"13","exported_namespace":"a","exported_pod":"p13""#,
            0.2,
        ),
        (
            r#""gpu":"0","UUID":"GPU-m","Hostname":"h","GPU_I_PROFILE":"3g.40gb","GPU_I_ID":"2","exported_namespace":"b","exported_pod":"p2""#,
            0.9,
        ),
    ]);
    let got = parse(&body);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].id.mig_instance.as_deref(), Some("2"));
    assert_eq!(got[0].id.mig_profile.as_deref(), Some("3g.40gb"));
    assert_eq!(got[0].holders[0].pod.as_deref(), Some("p2"));
    assert_eq!(got[1].id.mig_instance.as_deref(), Some("13"));
    assert_eq!(got[1].activity, 0.2);
}

#[test]
fn duplicate_scrapes_of_one_gpu_merge() {
    let body = steady(&[
        (
            r#""gpu":"0","Hostname":"h","instance":"10.0.0.1:9400","exported_pod":"p","exported_namespace":"n""#,
            0.4,
        ),
        (
            r#""gpu":"0","Hostname":"h","instance":"10.0.0.2:9400","exported_pod":"p","exported_namespace":"n""#,
            0.6,
        ),
        (r#""gpu":"10","Hostname":"h""#, 0.1),
        (r#""gpu":"2","Hostname":"h""#, 0.1),
    ]);
    let got = parse(&body);
    let gpus: Vec<&str> = got.iter().map(|a| a.id.gpu.as_str()).collect();
    assert_eq!(gpus, vec!["0", "2", "10"]);
    assert!((got[0].activity - 0.5).abs() < 1e-12);
    assert_eq!(got[0].holders.len(), 1, "one pod, scraped twice");
}

#[test]
fn cluster_labels_are_kept_and_split_gpus() {
    let body = steady(&[
        (r#""gpu":"0","Hostname":"h","cluster":"a""#, 0.5),
        (r#""gpu":"0","Hostname":"h","cluster":"b""#, 0.5),
        (
            r#""gpu":"1","Hostname":"h","k8s_cluster_name":"c","region":"eu""#,
            0.5,
        ),
    ]);
    let got = parse(&body);
    let scopes: Vec<String> = got.iter().map(|g| format!("{:?}", g.id.scope)).collect();
    assert_eq!(
        scopes,
        [
            r#"{"cluster": "a"}"#,
            r#"{"cluster": "b"}"#,
            r#"{"k8s_cluster_name": "c"}"#
        ]
    );
}

#[test]
fn gpu_falls_back_to_the_uuid() {
    let got = parse(&steady(&[(r#""UUID":"GPU-1234""#, 0.5)]));
    assert_eq!(got[0].id.gpu, "GPU-1234");
    assert_eq!(got[0].id.node, None);
}

#[test]
fn the_query_asks_four_statistics_scoped_by_the_selector() {
    assert_eq!(
        stats_query("M", "1h", Some(r#"cluster="a""#)),
        r#"label_replace(avg_over_time(M{cluster="a"}[1h]), "gpuledger_stat", "avg", "", "") or label_replace(count_over_time(M{cluster="a"}[1h]), "gpuledger_stat", "count", "", "") or label_replace(min_over_time(M{cluster="a"}[1h]), "gpuledger_stat", "min", "", "") or label_replace(max_over_time(M{cluster="a"}[1h]), "gpuledger_stat", "max", "", "")"#
    );
    assert!(stats_query("M", "5m", None).starts_with("label_replace(avg_over_time(M[5m])"));
}

#[test]
fn warnings_are_kept() {
    let body = br#"{"data":{"result":[],"resultType":"vector"},"status":"success","warnings":["store b timed out"],"infos":["x"]}"#;
    let a = parse_response(body).unwrap();
    assert_eq!(a.warnings, ["store b timed out"]);
    // resultType may follow result.
    let body = br#"{"data":{"result":[{"metric":{"gpu":"0"},"value":[1,"0.5"]}],"resultType":"vector"},"status":"success"}"#;
    assert_eq!(parse_response(body).unwrap().samples.len(), 1);
}

#[test]
fn durations() {
    assert_eq!(
        prom_duration(Duration::from_secs(3600)).as_deref(),
        Some("1h")
    );
    assert_eq!(
        prom_duration(Duration::from_secs(5400)).as_deref(),
        Some("90m")
    );
    assert_eq!(
        prom_duration(Duration::from_millis(1500)).as_deref(),
        Some("1500ms")
    );
    assert_eq!(prom_duration(Duration::from_micros(10)), None);
}

#[test]
fn tokens_stay_out_of_debug_and_errors() {
    let src = PromSource {
        url: "http://p".into(),
        bearer_token: Some("s3cret".into()),
        window: Duration::from_secs(60),
        timeout: Duration::from_secs(1),
        cluster_selector: None,
    };
    assert!(!format!("{src:?}").contains("s3cret"));
}

#[test]
fn error_bodies() {
    let body = br#"{"status":"error","errorType":"bad_data","error":"1:15: parse error: unexpected \"]\""}"#;
    let e = parse_response(body).err().unwrap().to_string();
    assert_eq!(
        e,
        r#"status error: bad_data: 1:15: parse error: unexpected "]""#
    );

    let e = http_error(
        "http://prom:9090",
        "up",
        StatusCode::SERVICE_UNAVAILABLE,
        br#"{"status":"error","errorType":"unavailable","error":"too many queries"}"#,
        false,
    )
    .to_string();
    assert_eq!(
        e,
        "Prometheus at http://prom:9090 answered 503 Service Unavailable to `up`: unavailable: too many queries"
    );

    let e = http_error(
        "https://p",
        "up",
        StatusCode::UNAUTHORIZED,
        b"<html>\n<h1>401</h1>\n</html>",
        true,
    )
    .to_string();
    assert_eq!(
        e,
        "Prometheus at https://p answered 401 Unauthorized (check the bearer token) to `up`: <html> <h1>401</h1> </html>"
    );

    let e = parse_response(b"<html>login</html>")
        .err()
        .unwrap()
        .to_string();
    assert!(e.starts_with("not a Prometheus API response"), "{e}");

    let matrix = br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
    assert!(
        parse_response(matrix)
            .err()
            .unwrap()
            .to_string()
            .contains("matrix")
    );
    let scalar =
        br#"{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}"#;
    assert!(
        parse_response(scalar)
            .err()
            .unwrap()
            .to_string()
            .contains("scalar")
    );
    let empty = br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
    assert!(parse_response(empty).unwrap().samples.is_empty());
}
