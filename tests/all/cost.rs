//! Cost per verified outcome, end to end: the OpenCost stand-in serving recorded responses (both
//! field generations, NaN, a 500) through the production client, outcome-record files, and the
//! real Prometheus for a workload's outcome counter.

use gpuledger::util::date::Timestamp;
use serde_json::Value;

use super::opencost_fake::{Answer, OpenCost};
use super::prometheus_harness::{HISTORY_MINUTES, Prometheus, Series};
use super::support::{fixture, gpuledger, root};

const NOW: &str = "2026-12-02T12:00:00Z";

fn opencost(allocation: &str, inference: bool) -> OpenCost {
    let mut routes = vec![("/allocation", Answer::fixture(allocation))];
    if inference {
        routes.push((
            "/inferenceCost/total",
            Answer::fixture("inference-total.json"),
        ));
    }
    OpenCost::start(&routes)
}

/// `gpuledger cost` on the cost fixture with `extra` flags; (exit code, stdout, stderr).
fn cost(url: &str, outcomes: &str, extra: &[&str]) -> (i32, String, String) {
    let out = gpuledger(&root())
        .arg("cost")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .arg("--config")
        .arg(fixture("tests/fixtures/cost/.gpuledger.yaml"))
        .args(["--opencost", url, "--outcomes"])
        .arg(fixture(outcomes))
        .args(["--window", "1h", "--now", NOW])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json(url: &str) -> Value {
    let (code, out, err) = cost(
        url,
        "tests/fixtures/cost/outcomes.csv",
        &["--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn row<'a>(rows: &'a Value, name: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name} in {rows:#}"))
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 0.005)
}

#[test]
fn both_field_generations_give_the_same_cost() {
    let old = opencost("allocation-gen1.json", false);
    let new = opencost("allocation-gen2.json", true);
    let (a, b) = (json(&old.url()), json(&new.url()));
    for field in [
        "workloads",
        "tenants",
        "product_lines",
        "other",
        "total_cost",
    ] {
        assert_eq!(a["cost"][field], b["cost"][field], "{field}");
    }
    // What was asked: the window ending --now, per pod, idle apart and not shared by OpenCost.
    let asked = &new.requests()[0];
    assert!(
        asked.starts_with("/allocation?window=2026-12-02T11%3A00%3A00Z%2C2026-12-02T12%3A00%3A00Z&aggregate=namespace%2CcontrollerKind%2Ccontroller%2Cpod&accumulate=true&includeIdle=true&shareIdle=false"),
        "{asked}"
    );
    let c = &b["cost"];
    // Every allocation once (idle and the shared namespace included) and the outside cost.
    assert!(
        close(
            &c["total_cost"],
            2.0 + 1.5 + 1.0 + 3.7 + 0.5 + 0.7 + 1.0 + 0.25
        ),
        "{c:#}"
    );
    assert!(close(&c["idle_cost"], 1.0));
    // The shared namespace's own cost and its share of the idle CPU and RAM cost.
    assert!(
        close(&c["shared_cost"], 0.7 + 0.5 / 1.25 * 0.1 + 0.2 / 0.55 * 0.1),
        "{c:#}"
    );
    // The tenants' totals add up to the whole: idle and shared were spread, nothing lost.
    let tenants: f64 = c["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["total_cost"].as_f64().unwrap())
        .sum();
    assert!((tenants - c["total_cost"].as_f64().unwrap()).abs() < 1e-9);
    let small = row(&c["workloads"], "eval/Job/grade-small");
    assert_eq!(small["suitable"], false, "{small:#}");
    assert!(close(&small["pass_rate"], 0.9));
    let qwen = row(&c["workloads"], "eval/Job/grade-qwen");
    assert_eq!(qwen["suitable"], true);
    assert!(close(&qwen["verified_outcomes"], 990.0));
    // Sampled: half of the first record and all of the second are in the window; 57 of 60 passed.
    let sampled = row(&c["workloads"], "eval/Job/grade-sampled");
    assert!(
        close(&sampled["verified_outcomes"], (95.0 + 100.0) * 57.0 / 60.0),
        "{sampled:#}"
    );
    assert_eq!(sampled["sample"], 60);
    assert!(sampled["cost_per_1000_interval"].is_array());
    // A finished job's pod stays with its namespace; the chat counter needs a Prometheus.
    assert_eq!(c["other"][0]["namespace"], "eval");
    let chat = row(&c["workloads"], "chat/Deployment/chat");
    assert!(chat["verified_outcomes"].is_null());
    assert!(
        chat["unknown"]["verified_outcomes"]
            .as_str()
            .unwrap()
            .contains("--prometheus"),
        "{chat:#}"
    );
    // Inference cost beside it where served, and why not where not.
    assert!(close(
        &b["cost"]["inference"][0]["cost_per_million_tokens"],
        2.47
    ));
    assert!(
        a["cost"]["inference_unknown"]
            .as_str()
            .unwrap()
            .contains("does not serve /inferenceCost")
    );
}

fn sum(rows: &Value) -> f64 {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["total_cost"]
                .as_f64()
                .unwrap_or_else(|| panic!("unknown cost in {r:#}"))
        })
        .sum()
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

/// Every figure adds up to its total: tenants, product lines (with "no product line") and
/// workloads with the pods of no live workload and the tenants' outside costs, each plus what went
/// to nobody; a tenant's cost per outcome is its cost column over its verified outcomes, and an
/// unsuitable workload adds cost and no verified outcome.
#[test]
fn the_cost_adds_up_to_its_total() {
    let oc = opencost("allocation-gen2.json", false);
    let c = &json(&oc.url())["cost"];
    let total = c["total_cost"].as_f64().unwrap();
    assert!(close(&c["unassigned_cost"], 0.0), "{c:#}");
    assert!((sum(&c["tenants"]) - total).abs() < 1e-9, "{c:#}");
    // The outside cost that names tenant research has no product line: it is "(none)"'s.
    assert!((sum(&c["product_lines"]) - total).abs() < 1e-9, "{c:#}");
    assert!(close(
        &row(&c["product_lines"], "(none)")["total_cost"],
        0.25
    ));
    assert!(close(&c["tenant_external_cost"], 0.25));
    let workloads =
        sum(&c["workloads"]) + sum(&c["other"]) + c["tenant_external_cost"].as_f64().unwrap();
    assert!((workloads - total).abs() < 1e-9, "{workloads} {total}");

    // grade-small is below its threshold: its 900 passing results are not verified outcomes.
    let small = row(&c["workloads"], "eval/Job/grade-small");
    assert!(close(&small["verified_outcomes"], 0.0), "{small:#}");
    assert!(close(&small["passing"], 900.0));
    assert!(small["cost_per_1000"].is_null());
    assert!(small["total_cost"].as_f64().unwrap() > 0.0);
    let research = row(&c["tenants"], "research");
    let verified = 990.0 + (95.0 + 100.0) * 57.0 / 60.0;
    assert!(
        close(&research["verified_outcomes"], verified),
        "{research:#}"
    );
    // Its cost per 1,000 is its cost column (outside cost included) over them.
    let per = research["total_cost"].as_f64().unwrap() / verified * 1000.0;
    assert!(close(&research["cost_per_1000"], per), "{research:#}");
    assert!(close(&research["total_cost"], 6.37));

    // The decision the headline states.
    let d = &c["decision"];
    assert_eq!(d["cheapest"]["workload"], "eval/Job/grade-qwen", "{d:#}");
    assert_eq!(d["dearest"]["workload"], "eval/Job/grade-sampled");
    assert_eq!(names(&d["unsuitable"]), ["eval/Job/grade-small"]);
    assert_eq!(names(&d["unpriced"]), ["chat/Deployment/chat"]);
    let (_, md, _) = cost(
        &oc.url(),
        "tests/fixtures/cost/outcomes.csv",
        &["--format", "markdown"],
    );
    let lead = md
        .lines()
        .find(|l| l.starts_with("**Cheapest verified outcome**"))
        .unwrap_or_else(|| panic!("no decision in {md}"));
    assert!(
        lead.contains("`eval/Job/grade-qwen` at $2.43 per 1,000"),
        "{lead}"
    );
    assert!(lead.contains("**Unsuitable** whatever it costs: `eval/Job/grade-small`"));
    assert!(md.contains("| no product line | $0.25 |"), "{md}");
    // Each table closes on the total, with the lines that make its column add up.
    assert_eq!(md.matches("| **total** | $10.65 |").count(), 3, "{md}");
    assert!(md.contains("| pods of no live workload | $0.65 |"), "{md}");
    assert!(
        md.contains("| outside costs that name a tenant | $0.25 |"),
        "{md}"
    );
}

/// Cost that no tenant carries — idle kept apart, an outside cost naming a workload that is not
/// live — is its own stated line, and the tenants plus it still make the total.
#[test]
fn cost_no_one_carries_is_stated_and_still_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("gpuledger.yaml");
    std::fs::write(
        &cfg,
        "cost:
  idle: separate
  shared_namespaces: [kube-system]
  external:
  - {name: judge model API, per_hour: 0.25, tenant: research}
  - {name: old vendor, per_hour: 0.5, workload: eval/Job/gone}
",
    )
    .unwrap();
    let oc = opencost("allocation-gen2.json", false);
    let out = gpuledger(&root())
        .arg("cost")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .arg("--config")
        .arg(&cfg)
        .args(["--opencost", &oc.url(), "--outcomes"])
        .arg(fixture("tests/fixtures/cost/outcomes.csv"))
        .args(["--window", "1h", "--now", NOW, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &r["cost"];
    let total = c["total_cost"].as_f64().unwrap();
    let whats: Vec<&str> = c["unassigned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["what"].as_str().unwrap())
        .collect();
    assert_eq!(whats.len(), 2, "{c:#}");
    assert!(whats[0] == "idle (cost.idle: separate)", "{whats:?}");
    assert!(
        whats[1] == "old vendor (eval/Job/gone is not live)",
        "{whats:?}"
    );
    // The idle cost ($1.00) and the vendor ($0.50) are nobody's.
    assert!(close(&c["unassigned_cost"], 1.5), "{c:#}");
    assert!((sum(&c["tenants"]) + 1.5 - total).abs() < 1e-9, "{c:#}");
    assert!(
        (sum(&c["product_lines"]) + 1.5 - total).abs() < 1e-9,
        "{c:#}"
    );
}

/// One set of numbers: `cost` names the same tenants with the same GPUs as `inventory` on the same
/// fleet, and `inventory` given the same cost inputs carries the same cost section.
#[test]
fn cost_and_inventory_tell_the_same_numbers() {
    let oc = opencost("allocation-gen2.json", false);
    let from_cost = json(&oc.url());
    let out = gpuledger(&root())
        .arg("inventory")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .arg("--config")
        .arg(fixture("tests/fixtures/cost/.gpuledger.yaml"))
        .args(["--opencost", &oc.url(), "--outcomes"])
        .arg(fixture("tests/fixtures/cost/outcomes.csv"))
        .args(["--window", "1h", "--now", NOW, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inv: Value = serde_json::from_slice(&out.stdout).unwrap();
    for t in inv["tenants"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let c = row(&from_cost["cost"]["tenants"], name);
        assert_eq!(c["gpus_requested"], t["gpus_requested"], "{name}");
    }
    assert_eq!(
        inv["tenants"].as_array().unwrap().len(),
        from_cost["cost"]["tenants"].as_array().unwrap().len()
    );
    for w in inv["workloads"].as_array().unwrap() {
        let id = format!(
            "{}/{}/{}",
            w["namespace"].as_str().unwrap(),
            w["kind"].as_str().unwrap(),
            w["name"].as_str().unwrap()
        );
        let c = row(&from_cost["cost"]["workloads"], &id);
        assert_eq!(c["gpus_requested"], w["gpus"], "{id}");
        assert_eq!(c["tenant"], w["tenant"], "{id}");
        assert_eq!(c["product_line"], w["product_line"], "{id}");
    }
    assert_eq!(inv["cost"], from_cost["cost"]);
}

#[test]
fn nan_is_unknown_never_zero() {
    let oc = opencost("allocation-nan.json", false);
    let c = &json(&oc.url())["cost"];
    let chat = row(&c["workloads"], "chat/Deployment/chat");
    assert!(chat["total_cost"].is_null(), "{chat:#}");
    assert!(chat["breakdown"]["gpu"].is_null());
    assert!(
        chat["unknown"]["total_cost"]
            .as_str()
            .unwrap()
            .contains("NaN"),
        "{chat:#}"
    );
    assert!(row(&c["tenants"], "assistant")["total_cost"].is_null());
    assert!(c["total_cost"].is_null());
    assert!(c["unknown"]["total_cost"].is_string());
    // The rest is still known.
    assert!(row(&c["workloads"], "eval/Job/grade-qwen")["total_cost"].is_f64());
}

#[test]
fn opencost_failing_is_unknown_with_the_reason() {
    let oc = OpenCost::start(&[(
        "/allocation",
        Answer::status(500, Answer::fixture("error-500.json").body),
    )]);
    let (code, out, err) = cost(
        &oc.url(),
        "tests/fixtures/cost/outcomes.csv",
        &["--format", "json"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("500 Internal Server Error"), "{err}");
    let c = &serde_json::from_str::<Value>(&out).unwrap()["cost"];
    assert!(c["total_cost"].is_null());
    let why = c["unknown"]["total_cost"].as_str().unwrap();
    assert!(why.contains("failed to query Prometheus"), "{why}");
    // Outcomes do not depend on the cost: they are still counted.
    let qwen = row(&c["workloads"], "eval/Job/grade-qwen");
    assert!(close(&qwen["verified_outcomes"], 990.0));
    assert!(qwen["cost_per_1000"].is_null());

    // A body that is not OpenCost's (a proxy's login page) says so.
    let oc = OpenCost::start(&[("/allocation", Answer::ok("<html>sign in</html>"))]);
    let (code, out, _) = cost(
        &oc.url(),
        "tests/fixtures/cost/outcomes.csv",
        &["--format", "json"],
    );
    assert_eq!(code, 2);
    let c = &serde_json::from_str::<Value>(&out).unwrap()["cost"];
    assert!(
        c["unknown"]["total_cost"]
            .as_str()
            .unwrap()
            .contains("not an allocation response")
    );
}

#[test]
fn a_bad_outcome_line_names_file_and_line_and_the_rest_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("outcomes.jsonl");
    std::fs::write(
        &bad,
        "{\"workload\":\"eval/Job/grade-qwen\",\"start\":\"2026-12-02T11:00:00Z\",\"end\":\"2026-12-02T12:00:00Z\",\"results\":1000,\"verified\":990}\n\
{\"workload\":\"eval/Job/grade-small\",\"start\":\"2026-12-02T11:00:00Z\",\"end\":\"2026-12-02T12:00:00Z\",\"results\":1000,\"verified\":1900}\n",
    )
    .unwrap();
    let oc = opencost("allocation-gen2.json", false);
    let (code, out, err) = cost(&oc.url(), bad.to_str().unwrap(), &["--format", "json"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("outcomes.jsonl:2: verified (1900) is more than results (1000)"),
        "{err}"
    );
    let c = &serde_json::from_str::<Value>(&out).unwrap()["cost"];
    assert!(close(
        &row(&c["workloads"], "eval/Job/grade-qwen")["verified_outcomes"],
        990.0
    ));
    let small = row(&c["workloads"], "eval/Job/grade-small");
    assert!(small["verified_outcomes"].is_null());
    assert!(
        small["unknown"]["verified_outcomes"]
            .as_str()
            .unwrap()
            .contains("outcomes.jsonl:2")
    );
}

#[test]
fn the_outcome_counter_comes_from_prometheus() {
    // A counter of verified answers, 60 a minute over the backfilled history.
    let values: Vec<f64> = (0..HISTORY_MINUTES).map(|i| i as f64 * 60.0).collect();
    let series = [Series::cycling(
        "chat_verified_answers_total",
        &[("namespace", "chat"), ("job", "chat")],
        &values,
    )];
    let prom = Prometheus::start(&series);
    // The window ends now (the backfilled history is relative to the clock), and so does the
    // hour OpenCost answers for: an answer for another hour covers none of the window.
    let now = Timestamp::now();
    let hour_ago = Timestamp::from_unix(now.unix() - 3600);
    let body = std::fs::read_to_string(fixture("tests/fixtures/opencost/allocation-gen2.json"))
        .unwrap()
        .replace("2026-12-02T11:00:00Z", &hour_ago.to_string())
        .replace("2026-12-02T12:00:00Z", &now.to_string());
    let oc = OpenCost::start(&[("/allocation", Answer::ok(body))]);
    let out = gpuledger(&root())
        .arg("cost")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .args(["--opencost", &oc.url(), "--prometheus", &prom.url()])
        .args(["--window", "1h", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let chat = row(&r["cost"]["workloads"], "chat/Deployment/chat");
    assert_eq!(chat["outcome_source"], "counter");
    let v = chat["verified_outcomes"].as_f64().unwrap();
    // 49 minutes of increase at 60 a minute, extrapolated by at most a minute at the end.
    assert!((2900.0..=3100.0).contains(&v), "{v}");
    assert!(chat["cost_per_1000"].is_f64());
    assert!(chat["unknown"]["pass_rate"].is_string());

    // OpenCost holds only the last half hour: the counter is read over that half hour too.
    let half = Timestamp::from_unix(now.unix() - 1800);
    let body = std::fs::read_to_string(fixture("tests/fixtures/opencost/allocation-gen2.json"))
        .unwrap()
        .replace("2026-12-02T11:00:00Z", &half.to_string())
        .replace("2026-12-02T12:00:00Z", &now.to_string());
    let oc = OpenCost::start(&[("/allocation", Answer::ok(body))]);
    let out = gpuledger(&root())
        .arg("cost")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .args(["--opencost", &oc.url(), "--prometheus", &prom.url()])
        .args(["--window", "1h", "--format", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        r["cost"]["partial"]["total_cost"].is_string(),
        "{}",
        r["cost"]
    );
    let chat = row(&r["cost"]["workloads"], "chat/Deployment/chat");
    let v = chat["verified_outcomes"].as_f64().unwrap();
    assert!(
        (1600.0..=1900.0).contains(&v),
        "half an hour at 60 a minute: {v}"
    );
}

#[test]
fn cost_markdown() {
    let oc = opencost("allocation-gen2.json", true);
    let (code, md, err) = cost(
        &oc.url(),
        "tests/fixtures/cost/outcomes.csv",
        &["--format", "markdown"],
    );
    assert_eq!(code, 0, "{err}");
    let md = md
        .replace(&oc.url(), "http://opencost")
        .replace(&format!("{}/", root().display()), "");
    insta::assert_snapshot!("cost_markdown", md);
}

#[test]
fn inventory_carries_the_headline_when_given_opencost() {
    let oc = opencost("allocation-gen2.json", false);
    let out = gpuledger(&root())
        .arg("inventory")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .args(["--opencost", &oc.url(), "--outcomes"])
        .arg(fixture("tests/fixtures/cost/outcomes.csv"))
        .args(["--now", NOW])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Allocated → busy → valuable, per tenant"),
        "{text}"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "wider than 80: {line}");
    }
    // Without cost inputs, no cost section.
    let plain = gpuledger(&root())
        .arg("inventory")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(r.get("cost").is_none());
}

#[test]
fn the_drift_issue_folds_the_headline_in_when_given_cost_inputs() {
    let r = super::support::Repo::new();
    r.write(
        "apps/chat.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: chat, namespace: chat}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{name: vllm, resources: {limits: {nvidia.com/gpu: \"2\"}}}]\n",
    )
    .commit("chat");
    let oc = opencost("allocation-gen2.json", false);
    let out = gpuledger(r.path())
        .args(["github", "issue", "--snapshot"])
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .args(["--repo", ".", "--scope", "gpu-east", "--dry-run"])
        .args(["--github-repo", "acme/gitops", "--now", NOW])
        .args(["--opencost", &oc.url(), "--outcomes"])
        .arg(fixture("tests/fixtures/cost/outcomes.csv"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fold = stdout
        .split("<summary>Fleet inventory")
        .nth(1)
        .unwrap_or_else(|| panic!("no folded inventory in {stdout}"));
    assert!(
        fold.contains("Allocated → busy → valuable, per tenant"),
        "{fold}"
    );
    assert!(fold.contains("| eval/Job/grade-small | 2 | unknown | 0 | **unsuitable** |"));
}

/// A Git repository whose change scales the chat Deployment (tenant assistant, from its Namespace
/// in Git) from 2 to 4 GPUs, on main → feature.
pub(crate) fn chat_change_repo() -> super::support::Repo {
    let r = super::support::Repo::new();
    let deployment = |gpus: u64| {
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: chat, labels: {{tenant: assistant}}}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: chat, namespace: chat}}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\n"
        )
    };
    r.write("chat.yaml", &deployment(2)).commit("chat");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("chat.yaml", &deployment(4))
        .commit("chat on 4 GPUs");
    r
}

/// The pull-request check, given cost inputs with its live state, shows allocated → busy →
/// valuable for the tenants the change moves (assistant), and not the others (research).
#[test]
fn the_check_shows_allocated_busy_valuable_for_the_tenants_it_moves() {
    let oc = opencost("allocation-gen2.json", false);
    let r = chat_change_repo();
    let run = |format: &str| {
        gpuledger(r.path())
            .args([
                "check", "--repo", ".", "--base", "main", "--head", "feature",
            ])
            .arg("--snapshot")
            .arg(fixture("tests/fixtures/cost/cluster.json"))
            .arg("--config")
            .arg(fixture("tests/fixtures/cost/.gpuledger.yaml"))
            .args(["--opencost", &oc.url(), "--outcomes"])
            .arg(fixture("tests/fixtures/cost/outcomes.csv"))
            .args(["--window", "1h", "--now", NOW, "--fail-on", "none"])
            .args(["--format", format])
            .output()
            .unwrap()
    };
    let out = run("json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &j["check"]["valuable"];
    let names = |rows: &Value| -> Vec<String> {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&v["tenants"]), ["assistant"], "{v:#}");
    assert_eq!(names(&v["workloads"]), ["chat/Deployment/chat"]);
    // Its cost is the cost section's figure for the same tenant.
    let whole = json(&oc.url());
    assert_eq!(
        v["tenants"][0]["total_cost"],
        row(&whole["cost"]["tenants"], "assistant")["total_cost"]
    );
    assert_eq!(
        v["tenants"][0],
        row(&whole["cost"]["tenants"], "assistant").clone()
    );
    // The decision is over the workloads it shows, not the research tenant's.
    assert!(v["decision"]["cheapest"].is_null(), "{v:#}");
    assert_eq!(v["decision"]["unpriced"][0], "chat/Deployment/chat");
    let md = String::from_utf8(run("markdown").stdout).unwrap();
    assert!(
        md.contains("Allocated → busy → valuable, per tenant"),
        "{md}"
    );
    assert!(!md.contains("| research |"), "{md}");
    assert!(!md.contains("grade-qwen"), "{md}");
}
