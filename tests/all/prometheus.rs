//! GPU activity read from the real Prometheus (tests/support/prometheus.rs), backfilled with
//! DCGM-shaped series: the labels a DCGM exporter scraped by a ServiceMonitor really carries, the
//! MIG and fallback cases, and every way the read can fail. Expected activities are the means of
//! the samples the harness wrote, not numbers the client computed. The error cases that need a
//! misbehaving server (silent, 401) use a few lines of raw TCP instead.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use gpuledger::live::prometheus::{
    DcgmRead, GPU_UTIL, GR_ENGINE_ACTIVE, GpuActivity, PromSource, gpu_activity,
};

use super::prometheus_harness::{Prometheus, Series};

const HOUR: Duration = Duration::from_secs(3600);

fn source(url: &str, window: Duration, timeout: Duration) -> PromSource {
    PromSource {
        url: url.to_string(),
        bearer_token: None,
        window,
        timeout,
        cluster_selector: None,
    }
}

fn read_all(src: &PromSource) -> Result<DcgmRead, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
        .block_on(gpu_activity(src))
        .map_err(|e| e.to_string())
}

fn read(src: &PromSource) -> Result<Vec<GpuActivity>, String> {
    read_all(src).map(|r| r.gpus)
}

fn read_hour(prom: &Prometheus) -> Result<Vec<GpuActivity>, String> {
    read(&source(&prom.url(), HOUR, Duration::from_secs(10)))
}

/// `(gpu, namespace, pod, activity)` per entry (the pod with the largest part), for compact
/// assertions.
fn rows(acts: &[GpuActivity]) -> Vec<(String, Option<String>, Option<String>, f64)> {
    acts.iter()
        .map(|a| {
            let h = &a.holders[0];
            (
                a.id.gpu.clone(),
                h.namespace.clone(),
                h.pod.clone(),
                a.activity,
            )
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The labels of a DCGM series scraped with `honorLabels: false`: the plain pod labels name the
/// exporter, DCGM's own are `exported_` (present only where DCGM's value was non-empty).
fn scraped<'a>(
    gpu: &'a str,
    uuid: &'a str,
    workload: Option<(&'a str, &'a str)>,
) -> Vec<(&'a str, &'a str)> {
    let mut labels = vec![
        ("gpu", gpu),
        ("UUID", uuid),
        ("Hostname", "gpu-node-1"),
        ("modelName", "NVIDIA H100 80GB HBM3"),
        ("job", "nvidia-dcgm-exporter"),
        ("instance", "10.1.2.3:9400"),
        ("namespace", "gpu-operator"),
        ("pod", "nvidia-dcgm-exporter-q8x2m"),
        ("container", "nvidia-dcgm-exporter"),
    ];
    if let Some((ns, pod)) = workload {
        labels.extend([
            ("exported_namespace", ns),
            ("exported_pod", pod),
            ("exported_container", "main"),
        ]);
    }
    labels
}

#[test]
fn engine_activity_per_pod_from_exported_labels() {
    let busy = Series::cycling(
        GR_ENGINE_ACTIVE,
        &scraped("0", "GPU-aaaa", Some(("team-a", "trainer-0"))),
        &[0.2, 0.6, 0.9],
    );
    let steady = Series::new(
        GR_ENGINE_ACTIVE,
        &scraped("1", "GPU-bbbb", Some(("team-b", "serve-7"))),
        0.25,
    );
    // Idle: DCGM's pod labels were empty, so Prometheus left the exporter's in the plain ones.
    let idle = Series::new(GR_ENGINE_ACTIVE, &scraped("2", "GPU-cccc", None), 0.0);
    let prom = Prometheus::start(&[busy.clone(), steady, idle]);

    let acts = read_hour(&prom).unwrap();
    let got = rows(&acts);
    assert_eq!(got.len(), 3, "{acts:#?}");
    assert_eq!(
        (got[0].1.as_deref(), got[0].2.as_deref()),
        (Some("team-a"), Some("trainer-0"))
    );
    assert!(
        close(got[0].3, busy.mean()),
        "avg_over_time of the cycle: {} vs {}",
        got[0].3,
        busy.mean()
    );
    assert_eq!(
        (got[1].1.as_deref(), got[1].2.as_deref()),
        (Some("team-b"), Some("serve-7"))
    );
    assert!(close(got[1].3, 0.25));
    assert_eq!(
        (got[2].0.as_str(), got[2].1.as_deref(), got[2].2.as_deref()),
        ("2", None, None)
    );
    assert_eq!(got[2].3, 0.0);

    let first = &acts[0];
    assert_eq!(first.id.node.as_deref(), Some("gpu-node-1"));
    assert_eq!(first.id.uuid.as_deref(), Some("GPU-aaaa"));
    assert_eq!(first.holders[0].container.as_deref(), Some("main"));
    assert_eq!(
        (
            first.id.mig_profile.as_deref(),
            first.id.mig_instance.as_deref()
        ),
        (None, None)
    );
    assert!(acts.iter().all(|a| a.metric == GR_ENGINE_ACTIVE));
}

#[test]
fn mig_instances_and_plain_pod_labels() {
    // honorLabels: true (no exported_ anywhere): the plain labels are DCGM's, lower-case hostname.
    let mig = |id, profile, pod, v| {
        Series::new(
            GR_ENGINE_ACTIVE,
            &[
                ("gpu", "3"),
                ("UUID", "GPU-mig0"),
                ("hostname", "gpu-node-2"),
                ("GPU_I_PROFILE", profile),
                ("GPU_I_ID", id),
                ("namespace", "inference"),
                ("pod", pod),
                ("container", "vllm"),
            ],
            v,
        )
    };
    let prom = Prometheus::start(&[
        mig("9", "1g.10gb", "small-0", 0.125),
        mig("1", "3g.40gb", "large-0", 0.75),
    ]);
    let acts = read_hour(&prom).unwrap();
    assert_eq!(acts.len(), 2, "{acts:#?}");
    let a = &acts[0];
    assert_eq!(
        (a.id.mig_instance.as_deref(), a.id.mig_profile.as_deref()),
        (Some("1"), Some("3g.40gb"))
    );
    assert_eq!(
        (a.holders[0].pod.as_deref(), a.activity),
        (Some("large-0"), 0.75)
    );
    let b = &acts[1];
    assert_eq!(
        (b.id.mig_instance.as_deref(), b.id.mig_profile.as_deref()),
        (Some("9"), Some("1g.10gb"))
    );
    assert_eq!(
        (b.holders[0].pod.as_deref(), b.activity),
        (Some("small-0"), 0.125)
    );
    assert_eq!(b.id.node.as_deref(), Some("gpu-node-2"));
    assert_eq!(
        (
            b.id.gpu.as_str(),
            b.id.uuid.as_deref(),
            b.holders[0].namespace.as_deref()
        ),
        ("3", Some("GPU-mig0"), Some("inference"))
    );
}

#[test]
fn falls_back_to_gpu_util_percent() {
    let util = Series::cycling(
        GPU_UTIL,
        &[
            ("gpu", "0"),
            ("Hostname", "old-node"),
            ("namespace", "batch"),
            ("pod", "render-1"),
        ],
        &[40.0, 60.0],
    );
    let idle = Series::new(GPU_UTIL, &[("gpu", "1"), ("Hostname", "old-node")], 0.0);
    // Memory series are no activity: they must not count as "some DCGM series".
    let fb = Series::new(
        "DCGM_FI_DEV_FB_USED",
        &[("gpu", "0"), ("Hostname", "old-node")],
        30000.0,
    );
    let prom = Prometheus::start(&[util.clone(), idle, fb]);
    let acts = read_hour(&prom).unwrap();
    assert_eq!(
        rows(&acts),
        vec![
            (
                "0".to_string(),
                Some("batch".to_string()),
                Some("render-1".to_string()),
                util.mean() / 100.0
            ),
            ("1".to_string(), None, None, 0.0),
        ]
    );
    assert!(acts.iter().all(|a| a.metric == GPU_UTIL));
}

#[test]
fn engine_activity_wins_over_gpu_util() {
    let labels = [("gpu", "0"), ("Hostname", "n")];
    let prom = Prometheus::start(&[
        Series::new(GR_ENGINE_ACTIVE, &labels, 0.5),
        Series::new(GPU_UTIL, &labels, 97.0),
    ]);
    let acts = read_hour(&prom).unwrap();
    assert_eq!(acts.len(), 1);
    assert_eq!((acts[0].metric, acts[0].activity), (GR_ENGINE_ACTIVE, 0.5));
}

#[test]
fn empty_pod_labels_mean_no_pod_and_nan_is_unknown() {
    let prom = Prometheus::start(&[
        Series::new(
            GR_ENGINE_ACTIVE,
            &[
                ("gpu", "0"),
                ("Hostname", "n"),
                ("namespace", ""),
                ("pod", ""),
                ("container", ""),
            ],
            0.0625,
        ),
        Series::new(
            GR_ENGINE_ACTIVE,
            &[("gpu", "1"), ("Hostname", "n")],
            f64::NAN,
        ),
    ]);
    let r = read_all(&source(&prom.url(), HOUR, Duration::from_secs(10))).unwrap();
    assert_eq!(rows(&r.gpus), vec![("0".to_string(), None, None, 0.0625)]);
    assert_eq!(r.gpus[0].holders[0].container, None);
    // NaN is not idle: the GPU is unknown, with what was wrong.
    assert_eq!(r.unsound.len(), 1);
    assert_eq!(r.unsound[0].id.gpu, "1");
    assert_eq!(
        r.unsound[0].reason,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE: NaN or ±Inf samples; no DCGM_FI_DEV_GPU_UTIL series to fall back to"
    );
    assert!(r.warnings.is_empty());
}

#[test]
fn no_dcgm_series_is_an_error_not_zero() {
    let prom = Prometheus::start(&[Series::new("DCGM_FI_DEV_FB_USED", &[("gpu", "0")], 1.0)]);
    let err = read_hour(&prom).unwrap_err();
    assert_eq!(
        err,
        format!(
            "no DCGM series (DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_DEV_GPU_UTIL) in {} over 1h",
            prom.url()
        )
    );
    // An empty server too.
    let empty = Prometheus::start(&[]);
    let err = read_hour(&empty).unwrap_err();
    assert!(err.starts_with("no DCGM series"), "{err}");
}

#[test]
fn the_window_is_honoured() {
    // The newest sample is a minute old: a 30-second window sees none of it.
    let prom = Prometheus::start(&[Series::new(GR_ENGINE_ACTIVE, &[("gpu", "0")], 0.5)]);
    let short = read(&source(
        &prom.url(),
        Duration::from_secs(30),
        Duration::from_secs(10),
    ))
    .unwrap_err();
    assert!(short.ends_with(" over 30s"), "{short}");
    let acts = read(&source(
        &prom.url(),
        Duration::from_secs(5 * 60),
        Duration::from_secs(10),
    ))
    .unwrap();
    assert_eq!(acts.len(), 1);
}

#[test]
fn prometheus_errors_are_reported_with_the_url() {
    let prom = Prometheus::start(&[]);
    // A window PromQL cannot represent: the real server's 400 `bad_data` body.
    let huge = Duration::from_secs(1_000_000_000_000_000);
    let err = read(&source(&prom.url(), huge, Duration::from_secs(10))).unwrap_err();
    assert!(
        err.starts_with(&format!(
            "Prometheus at {} answered 400 Bad Request",
            prom.url()
        )),
        "{err}"
    );
    assert!(
        err.contains("bad_data: invalid parameter \"query\""),
        "{err}"
    );

    // Not the base URL: Prometheus's plain-text 404.
    let wrong = format!("{}/prometheus", prom.url());
    let err = read(&source(&wrong, HOUR, Duration::from_secs(10))).unwrap_err();
    assert!(
        err.starts_with(&format!("Prometheus at {wrong} answered 404 Not Found")),
        "{err}"
    );
    assert!(err.contains("404 page not found"), "{err}");

    // https:// to a plain-HTTP server: the rustls path is taken and fails as a connection error
    // (not a panic over a missing crypto provider).
    let tls = prom.url().replace("http://", "https://");
    let err = read(&source(&tls, HOUR, Duration::from_secs(10))).unwrap_err();
    assert!(
        err.starts_with(&format!("cannot reach Prometheus at {tls}: ")),
        "{err}"
    );
}

#[test]
fn unreachable_prometheus_fails_fast() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let start = Instant::now();
    let err = read(&source(&url, HOUR, Duration::from_secs(30))).unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "took {:?}",
        start.elapsed()
    );
    assert!(
        err.starts_with(&format!("cannot reach Prometheus at {url}: ")),
        "{err}"
    );
    assert!(err.to_lowercase().contains("connection refused"), "{err}");
}

#[test]
fn a_silent_server_hits_the_timeout() {
    // Accepts connections (the kernel does) and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let start = Instant::now();
    let err = read(&source(&url, HOUR, Duration::from_secs(1))).unwrap_err();
    let took = start.elapsed();
    assert_eq!(err, format!("Prometheus at {url} did not answer within 1s"));
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(3),
        "took {took:?}"
    );
    drop(listener);
}

#[test]
fn the_token_is_sent_and_never_shown() {
    // One canned 401 from raw TCP, recording the request it answered.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.ends_with(b"\r\n\r\n") {
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0, "connection closed mid-request");
            request.extend_from_slice(&buf[..n]);
        }
        let body =
            r#"{"status":"error","errorType":"unauthorized","error":"token presented rejected"}"#;
        write!(
            stream,
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        tx.send(String::from_utf8(request).unwrap()).unwrap();
    });
    let src = PromSource {
        bearer_token: Some("s3cret-token\n".into()),
        ..source(&url, Duration::from_secs(90 * 60), Duration::from_secs(5))
    };
    let err = read(&src).unwrap_err();
    server.join().unwrap();
    let request = rx.recv().unwrap();

    let first = request.lines().next().unwrap();
    assert!(
        first.starts_with(
            "GET /api/v1/query?query=label_replace%28avg_over_time%28DCGM_FI_PROF_GR_ENGINE_ACTIVE%5B90m%5D%29"
        ),
        "{first}"
    );
    let auth = request.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("authorization")
            .then(|| value.trim())
    });
    assert_eq!(auth, Some("Bearer s3cret-token"), "{request}");
    assert!(!err.contains("s3cret"), "{err}");
    assert!(
        err.starts_with(&format!(
            "Prometheus at {url} answered 401 Unauthorized (check the bearer token) to \
             `label_replace(avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[90m]), \"gpuledger_stat\""
        )),
        "{err}"
    );
    assert!(
        err.ends_with("`: unauthorized: token presented rejected"),
        "{err}"
    );
}
