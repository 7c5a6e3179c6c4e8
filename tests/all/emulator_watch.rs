//! The API emulator's watches (tests/support/kube_emulator_watch.rs) checked with the real
//! `kubectl`: `kubectl get pods --watch` follows the changes a test makes while the emulator
//! serves, and the raw stream (`kubectl get --raw`) is kube-apiserver's wire format — one
//! `{"type","object"}` a line, bookmarks when asked, changes after a resourceVersion, and an
//! ERROR event with a 410 `Expired` Status for a compacted one. kubectl is required: these tests
//! fail, never skip, without it.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::kube_emulator::{Emulator, EmulatorOptions};
use super::support::fixture;

fn demo() -> Emulator {
    Emulator::start(EmulatorOptions {
        snapshots: vec![fixture("fixtures/demo/cluster.yaml")],
        bookmark_interval: Duration::from_millis(200),
        ..EmulatorOptions::default()
    })
}

fn kubectl(emu: &Emulator) -> Command {
    let mut c = Command::new("kubectl");
    c.arg("--kubeconfig")
        .arg(emu.kubeconfig_path())
        .arg("--cache-dir")
        .arg(emu.dir().join("kubectl-cache"))
        .env_remove("KUBECONFIG");
    c
}

fn kubectl_ok(emu: &Emulator, args: &[&str]) -> String {
    let out = kubectl(emu).args(args).output().unwrap_or_else(|e| {
        panic!("kubectl is required by the emulator tests (install it on PATH): {e}")
    });
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every JSON value of a stream of them (kubectl prints one object after another).
fn values(text: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("not a stream of JSON values ({e}):\n{text}"))
}

/// A raw watch's lines, each checked to be one `{"type","object"}` event.
fn events(text: &str) -> Vec<(String, Value)> {
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["object", "type"], "{l}");
            (v["type"].as_str().unwrap().to_string(), v["object"].clone())
        })
        .collect()
}

fn pod(emu: &Emulator, ns: &str, name: &str) -> Value {
    emu.object("v1", "Pod", ns, name)
        .unwrap_or_else(|| panic!("no pod {ns}/{name}"))
}

#[test]
fn kubectl_get_pods_watch_follows_changes_made_while_serving() {
    let emu = demo();
    let ns = "reasoning";
    let listed = values(&kubectl_ok(&emu, &["get", "pods", "-n", ns, "-o", "json"]));
    let names: Vec<String> = listed[0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.len() >= 2, "{names:?}");
    emu.clear_requests();

    let mut child = kubectl(&emu)
        .args(["get", "pods", "-n", ns, "--watch", "-o", "json"])
        .arg("--output-watch-events")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl");
    let out = Arc::new(Mutex::new(String::new()));
    let mut stdout = child.stdout.take().unwrap();
    let sink = out.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let wait_for = |what: &str, done: &dyn Fn(&[Value]) -> bool| {
        let start = Instant::now();
        loop {
            let text = out.lock().unwrap().clone();
            let complete = text.trim_end().ends_with('}');
            if complete {
                let got = values(&text);
                if done(&got) {
                    return got;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "kubectl --watch did not show {what}:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    // The list, as ADDED events, first.
    wait_for("the pods", &|got| got.len() == names.len());

    // Change one pod, delete another: kubectl shows both, as they happen.
    let mut changed = pod(&emu, ns, &names[0]);
    changed["metadata"]["labels"]["watched"] = "yes".into();
    let rv = emu.apply(changed);
    let gone = emu.delete("v1", "Pod", ns, &names[1]).expect("deleted");
    let got = wait_for("the change and the deletion", &|got| {
        got.len() == names.len() + 2
    });
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();

    let initial: Vec<&Value> = got[..names.len()].iter().collect();
    assert!(initial.iter().all(|e| e["type"] == "ADDED"), "{initial:?}");
    let (m, d) = (&got[names.len()], &got[names.len() + 1]);
    assert_eq!(m["type"], "MODIFIED");
    assert_eq!(m["object"]["metadata"]["name"], names[0].as_str());
    assert_eq!(m["object"]["metadata"]["labels"]["watched"], "yes");
    assert_eq!(m["object"]["metadata"]["resourceVersion"], rv.to_string());
    assert_eq!(d["type"], "DELETED");
    assert_eq!(d["object"]["metadata"]["name"], names[1].as_str());
    assert_eq!(d["object"]["metadata"]["resourceVersion"], gone.to_string());

    // kubectl listed, then watched from the list's resourceVersion.
    let reqs = emu.requests();
    let pods: Vec<_> = reqs
        .iter()
        .filter(|r| r.path() == format!("/api/v1/namespaces/{ns}/pods"))
        .collect();
    let list = pods
        .iter()
        .find(|r| r.query("watch").is_none())
        .expect("a list");
    let watch = pods
        .iter()
        .find(|r| matches!(r.query("watch").as_deref(), Some("true" | "1")))
        .unwrap_or_else(|| panic!("no watch request: {reqs:?}"));
    assert_eq!(list.status, 200);
    assert_eq!(watch.status, 200);
    let from = watch
        .query("resourceVersion")
        .expect("watch from a version");
    assert!(from.parse::<u64>().unwrap() < rv, "{from} {rv}");
}

#[test]
fn raw_watch_is_the_apiserver_wire_format_with_bookmarks_and_410() {
    let emu = demo();
    let list: Value =
        serde_json::from_str(&kubectl_ok(&emu, &["get", "--raw", "/api/v1/pods"])).unwrap();
    let rv0 = emu.resource_version();
    // Lists carry the current resourceVersion.
    assert_eq!(list["metadata"]["resourceVersion"], rv0.to_string());
    let all = list["items"].as_array().unwrap().len();
    assert!(all > 10);

    // Without a version: the state as ADDED events (each object with its kind), then nothing but
    // bookmarks until the timeout.
    let raw = kubectl_ok(
        &emu,
        &[
            "get",
            "--raw",
            "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=1",
        ],
    );
    let evs = events(&raw);
    let added: Vec<_> = evs.iter().filter(|(t, _)| t == "ADDED").collect();
    assert_eq!(added.len(), all);
    assert!(
        added
            .iter()
            .all(|(_, o)| o["kind"] == "Pod" && o["apiVersion"] == "v1")
    );
    let marks: Vec<_> = evs.iter().filter(|(t, _)| t == "BOOKMARK").collect();
    assert!(
        (2..=6).contains(&marks.len()),
        "a bookmark every 200 ms for 1 s: {}",
        marks.len()
    );
    for (_, b) in &marks {
        assert_eq!(b["kind"], "Pod");
        assert_eq!(b["metadata"], json!({"resourceVersion": rv0.to_string()}));
    }
    // Without bookmarks asked for, none come.
    let raw = kubectl_ok(
        &emu,
        &["get", "--raw", "/api/v1/pods?watch=true&timeoutSeconds=1"],
    );
    assert!(events(&raw).iter().all(|(t, _)| t == "ADDED"));

    // From a version: only what changed after it, in order, then bookmarks at the newest version.
    let mut p = list["items"][0].clone();
    p["apiVersion"] = "v1".into();
    p["kind"] = "Pod".into();
    let ns = p["metadata"]["namespace"].as_str().unwrap().to_string();
    p["metadata"]["labels"]["step"] = "1".into();
    let rv1 = emu.apply(p.clone());
    p["metadata"]["labels"]["step"] = "2".into();
    let rv2 = emu.apply(p.clone());
    let legacy = format!(
        "/api/v1/watch/namespaces/{ns}/pods?resourceVersion={rv0}&allowWatchBookmarks=true&timeoutSeconds=1"
    );
    let path = format!(
        "/api/v1/pods?watch=1&resourceVersion={rv0}&allowWatchBookmarks=true&timeoutSeconds=1"
    );
    for target in [path, legacy] {
        let evs = events(&kubectl_ok(&emu, &["get", "--raw", &target]));
        let (t1, o1) = &evs[0];
        let (t2, o2) = &evs[1];
        assert_eq!(
            (t1.as_str(), t2.as_str()),
            ("MODIFIED", "MODIFIED"),
            "{target}"
        );
        assert_eq!(o1["metadata"]["resourceVersion"], rv1.to_string());
        assert_eq!(o2["metadata"]["labels"]["step"], "2");
        assert_eq!(o2["metadata"]["resourceVersion"], rv2.to_string());
        assert!(
            evs[2..]
                .iter()
                .all(|(t, o)| t == "BOOKMARK"
                    && o["metadata"]["resourceVersion"] == *rv2.to_string())
        );
    }
    // A watch from the newest version has nothing to replay.
    let raw = kubectl_ok(
        &emu,
        &[
            "get",
            "--raw",
            &format!("/api/v1/pods?watch=1&resourceVersion={rv2}&timeoutSeconds=1"),
        ],
    );
    assert_eq!(raw, "");
    // The list now says the newest version.
    let list: Value =
        serde_json::from_str(&kubectl_ok(&emu, &["get", "--raw", "/api/v1/pods"])).unwrap();
    assert_eq!(list["metadata"]["resourceVersion"], rv2.to_string());

    // Compacted: a watch from before is one ERROR event, a 410 Expired Status, in a 200 stream.
    emu.compact();
    let raw = kubectl_ok(
        &emu,
        &[
            "get",
            "--raw",
            &format!("/api/v1/pods?watch=1&resourceVersion={rv0}"),
        ],
    );
    let evs = events(&raw);
    assert_eq!(evs.len(), 1, "{raw}");
    let (t, status) = &evs[0];
    assert_eq!(t, "ERROR");
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["code"], 410);
    assert_eq!(status["reason"], "Expired");
    assert_eq!(
        status["message"],
        format!("too old resource version: {rv0} ({rv2})")
    );
    let last = emu.requests().pop().unwrap();
    assert_eq!(last.status, 200);
}

#[test]
fn another_process_changes_objects_through_the_control_endpoint() {
    let emu = demo();
    let dir = tempfile::tempdir().unwrap();
    let node = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-new-001", "labels": {"added": "by-control"}},
        "status": {"allocatable": {"nvidia.com/gpu": "8"}},
    });
    let file = dir.path().join("node.json");
    std::fs::write(&file, node.to_string()).unwrap();
    let f = file.to_str().unwrap();
    let out = kubectl_ok(&emu, &["create", "--raw", "/emulator/apply", "-f", f]);
    let rv: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rv["resourceVersion"], emu.resource_version().to_string());
    let got = kubectl_ok(&emu, &["get", "node", "gpu-new-001", "-o", "json"]);
    let got: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(got["metadata"]["labels"]["added"], "by-control");
    assert_eq!(got["metadata"]["resourceVersion"], rv["resourceVersion"]);

    std::fs::write(&file, node.to_string()).unwrap();
    kubectl_ok(&emu, &["create", "--raw", "/emulator/delete", "-f", f]);
    let out = kubectl(&emu)
        .args(["get", "node", "gpu-new-001"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));
    // A write through the API itself is still refused: the emulator is read-only.
    let out = kubectl(&emu)
        .args(["create", "--raw", "/api/v1/nodes", "-f", f])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("MethodNotAllowed")
            || String::from_utf8_lossy(&out.stderr).contains("not allow"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn faults_turned_on_while_serving_are_what_kubectl_sees() {
    let emu = demo();
    let dir = tempfile::tempdir().unwrap();
    let post = |fault: &str, body: Value| {
        let file = dir.path().join("fault.json");
        std::fs::write(&file, body.to_string()).unwrap();
        let path = format!("/emulator/{fault}");
        kubectl_ok(
            &emu,
            &["create", "--raw", &path, "-f", file.to_str().unwrap()],
        );
    };
    let fails = |args: &[&str]| {
        let out = kubectl(&emu).args(args).output().unwrap();
        assert!(!out.status.success(), "kubectl {args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // Forbidden, as a role that loses the verb: kubectl's own words for a 403.
    post("forbid", json!({"resource": "pods"}));
    let err = fails(&["get", "pods", "-A"]);
    assert!(
        err.contains("Forbidden") || err.contains("forbidden"),
        "{err}"
    );
    kubectl_ok(&emu, &["get", "nodes"]);
    post("allow", json!({"resource": "pods"}));
    assert!(kubectl_ok(&emu, &["get", "pods", "-A", "-o", "name"]).contains("pod/"));
    // Credentials refused for one resource: kubectl's own words for a 401.
    post("unauthorize", json!({"resource": "pods"}));
    let err = fails(&["get", "pods", "-A"]);
    assert!(err.contains("Unauthorized"), "{err}");
    kubectl_ok(&emu, &["get", "nodes"]);
    post("allow", json!({"resource": "pods"}));
    assert!(kubectl_ok(&emu, &["get", "pods", "-A", "-o", "name"]).contains("pod/"));
    // A kind removed (its CRD deleted): 404 on its list.
    post(
        "remove",
        json!({"resource": "leaderworkersets.leaderworkerset.x-k8s.io"}),
    );
    let err = fails(&[
        "get",
        "--raw",
        "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets",
    ]);
    assert!(
        err.contains("NotFound") || err.contains("not found"),
        "{err}"
    );
    post(
        "restore",
        json!({"resource": "leaderworkersets.leaderworkerset.x-k8s.io"}),
    );
    kubectl_ok(
        &emu,
        &[
            "get",
            "--raw",
            "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets",
        ],
    );
    // Every list answers 500 for a while, then lists again.
    post("fail", json!({"status": 500, "seconds": 2}));
    let err = fails(&["get", "nodes", "--request-timeout", "5s"]);
    assert!(
        err.contains("500") || err.contains("InternalError"),
        "{err}"
    );
    std::thread::sleep(std::time::Duration::from_millis(2200));
    kubectl_ok(&emu, &["get", "nodes"]);
}
