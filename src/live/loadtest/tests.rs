use super::guidellm::percentile as guidellm_percentile;
use super::*;
use crate::intent::LatencyBound;

fn bound(metric: &str, percentile: u8, max_ms: f64) -> LatencyBound {
    LatencyBound {
        metric: metric.into(),
        percentile,
        max_ms,
    }
}

const VLLM: &str = r#"{"date":"20261201-120000","backend":"vllm","model_id":"Qwen/Qwen3-8B",
  "num_prompts":1000,"request_rate":8.0,"max_concurrency":null,"duration":125.3,
  "completed":998,"failed":2,"request_throughput":7.96,"p95_ttft_ms":410.0,"p99_ttft_ms":610.0,
  "p95_itl_ms":41.0,"p99.9_itl_ms":90.0,"p95_e2el_ms":5000,"gpu_type":"NVIDIA-H100-80GB-HBM3","gpus":1,
  "replicas":1,"max_num_seqs":"256"}"#;

#[test]
fn vllm_bench_serve() {
    let lt = parse(VLLM, "lt.json").unwrap();
    assert_eq!(lt.format, Format::VllmBench);
    assert_eq!(lt.tested.model.as_deref(), Some("Qwen/Qwen3-8B"));
    assert_eq!(lt.tested.gpus_per_replica, Some(1));
    assert_eq!(lt.tested.settings["max_num_seqs"], "256");
    let r = &lt.runs[0];
    assert_eq!(r.offered, Offered::Rate(8.0));
    assert_eq!(r.latency_ms["ttft_p95"], 410.0);
    assert_eq!(r.latency_ms["itl_p99.9"], 90.0);
    assert_eq!(r.latency_ms["e2e_p95"], 5000.0);
    assert_eq!(r.error_share(), Some(0.002));
    let c = capacity(&lt, &[bound("ttft", 95, 500.0)], 0.01).unwrap();
    assert_eq!(c.rps, 7.96);
    let e = capacity(&lt, &[bound("ttft", 90, 500.0)], 0.01)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ttft_p95, ttft_p99 but not ttft_p90"), "{e}");
}

#[test]
fn highest_rate_that_met_the_objective_and_error_limit() {
    let run = |rate: f64, rps: f64, ttft: f64, failed: u32| {
        format!(
            r#"{{"model_id":"m","request_rate":{rate},"completed":100,"failed":{failed},"request_throughput":{rps},"p95_ttft_ms":{ttft}}}"#
        )
    };
    let sweep = format!(
        "[{},{},{},{}]",
        run(2.0, 2.0, 100.0, 0),
        run(4.0, 3.9, 300.0, 0),
        run(6.0, 5.8, 450.0, 5),
        run(8.0, 6.1, 900.0, 0)
    );
    let lt = parse(&sweep, "sweep.json").unwrap();
    let c = capacity(&lt, &[bound("ttft", 95, 500.0)], 0.01).unwrap();
    // 6 req/s met latency but failed 5/105 > 1%; 8 req/s broke latency.
    assert_eq!((c.rps, c.runs_met, c.runs), (3.9, 2, 4));
    assert_eq!(c.run, "rate 4 req/s");
    let c = capacity(&lt, &[bound("ttft", 95, 500.0)], 0.05).unwrap();
    assert_eq!(c.rps, 5.8);
    let e = capacity(&lt, &[bound("ttft", 95, 50.0)], 0.01)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ttft_p95 100 ms > 50 ms"), "{e}");
    assert!(capacity(&lt, &[], 0.01).is_err());
}

#[test]
fn aiperf_profile_export() {
    let text = r#"{"schema_version":"1.4","input_config":{"endpoint":{"model_names":["meta-llama/Llama-3.2-1B-Instruct"]},"loadgen":{"concurrency":32}},
      "request_count":{"avg":256,"unit":"requests"},"error_request_count":null,
      "request_throughput":{"avg":1.82,"unit":"requests/sec"},
      "time_to_first_token":{"avg":1240.09,"p50":786.0,"p95":1900.0,"p99":2093.6,"unit":"ms"},
      "request_latency":{"p95":2.5,"unit":"s"},"was_cancelled":false,"error_summary":[]}"#;
    let lt = parse(text, "p.json").unwrap();
    assert_eq!(lt.format, Format::Aiperf);
    assert_eq!(
        lt.tested.model.as_deref(),
        Some("meta-llama/Llama-3.2-1B-Instruct")
    );
    let r = &lt.runs[0];
    assert_eq!(r.offered, Offered::Concurrency(32));
    assert_eq!(r.failed, Some(0.0));
    assert_eq!(r.latency_ms["e2e_p95"], 2500.0);
    assert_eq!(
        capacity(&lt, &[bound("ttft", 95, 2000.0)], 0.0)
            .unwrap()
            .rps,
        1.82
    );
}

#[test]
fn guidellm_percentile_keys() {
    assert_eq!(guidellm_percentile("p95"), Some(95.0));
    assert_eq!(guidellm_percentile("p05"), Some(5.0));
    assert_eq!(guidellm_percentile("p001"), Some(0.1));
    assert_eq!(guidellm_percentile("p999"), Some(99.9));
}

#[test]
fn guidellm_benchmarks() {
    let lt = parse(
        include_str!("../../../fixtures/headroom/repo/loadtests/rerank-guidellm.json"),
        "g.json",
    )
    .unwrap();
    assert_eq!(lt.format, Format::Guidellm);
    assert_eq!(lt.tested.model.as_deref(), Some("BAAI/bge-reranker-base"));
    assert_eq!(lt.runs.len(), 2);
    assert_eq!(lt.runs[1].offered, Offered::Rate(10.0));
    // Request latency is in seconds in GuideLLM.
    assert!((lt.runs[1].latency_ms["e2e_p99"] - 290.0).abs() < 1e-9);
    assert!((lt.runs[0].latency_ms["e2e_p99.9"] - 300.0).abs() < 1e-9);
    // 10 errored of 1200 is within 1%.
    let c = capacity(&lt, &[bound("e2e", 99, 300.0)], 0.01).unwrap();
    assert_eq!((c.rps, c.runs_met), (9.9, 2));
    let c = capacity(&lt, &[bound("e2e", 99, 250.0)], 0.01).unwrap();
    assert_eq!(c.rps, 4.97);
}

#[test]
fn a_directory_is_one_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let run = |rate: u32, rps: f64, ttft: f64| {
        format!(
            r#"{{"model_id":"m","request_rate":{rate},"completed":10,"failed":0,"request_throughput":{rps},"p95_ttft_ms":{ttft}}}"#
        )
    };
    std::fs::write(dir.path().join("run=1.json"), run(2, 1.9, 100.0)).unwrap();
    std::fs::write(dir.path().join("run=2.json"), run(4, 3.8, 300.0)).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not read").unwrap();
    let lt = read(dir.path(), "sweep/").unwrap();
    assert_eq!(lt.runs.len(), 2);
    assert_eq!(
        capacity(&lt, &[bound("ttft", 95, 200.0)], 0.0).unwrap().rps,
        1.9
    );
    std::fs::write(
        dir.path().join("run=3.json"),
        run(8, 7.0, 900.0).replace("\"m\"", "\"other\""),
    )
    .unwrap();
    let e = read(dir.path(), "sweep/").unwrap_err();
    assert_eq!(e.file, "sweep/run=3.json");
    assert!(e.message.contains("not part of the same load test"), "{e}");
}

#[test]
fn unknown_and_malformed() {
    let e = parse(r#"{"hello": 1}"#, "x.json").unwrap_err();
    assert_eq!(e.file, "x.json");
    assert!(e.message.contains("not a load-test result"), "{e}");
    let e = parse("{\n  \"request_throughput\": 1,\n  oops\n}", "y.json").unwrap_err();
    assert_eq!((e.line, e.file.as_str()), (Some(3), "y.json"));
    let e = parse("[]", "z.json").unwrap_err();
    assert!(e.message.contains("not a load-test result"), "{e}");
}

/// At a ref: the head's blob (not the working tree's file), a directory as one sweep, and a
/// symlink, a path out of the repository or a missing file refused with why.
#[test]
fn load_tests_are_read_from_git_at_the_head_ref() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let run = |rate: u32, rps: f64| {
        format!(
            r#"{{"model_id":"m","request_rate":{rate},"completed":10,"failed":0,"request_throughput":{rps},"p95_ttft_ms":100}}"#
        )
    };
    let p = dir.path();
    git(&["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(p.join("sweep")).unwrap();
    std::fs::write(p.join("lt.json"), run(2, 1.9)).unwrap();
    std::fs::write(p.join("sweep/run=1.json"), run(2, 1.9)).unwrap();
    std::fs::write(p.join("sweep/run=2.json"), run(4, 3.8)).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", p.join("link.json")).unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "head"]);
    // The working tree moves on; the ref is what is read.
    std::fs::write(p.join("lt.json"), run(8, 7.5)).unwrap();
    let lts = read_load_tests_at(
        p,
        "main",
        ["lt.json", "sweep", "link.json", "../x.json", "missing.json"],
    );
    assert_eq!(
        lts["lt.json"].as_ref().unwrap().runs[0].achieved_rps,
        Some(1.9)
    );
    assert_eq!(lts["sweep"].as_ref().unwrap().runs.len(), 2);
    assert_eq!(
        lts["link.json"].as_ref().unwrap_err().to_string(),
        "link.json: a load test must be a relative path inside the repository"
    );
    assert!(matches!(
        lts["../x.json"],
        Err(LoadTestError::OutsideRepository { .. })
    ));
    assert!(
        lts["missing.json"]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("not in the head's tree")
    );
}
