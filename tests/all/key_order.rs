//! A dump reads the same whatever its key order and whatever it carries that gpuledger never
//! reads (issue 36 item 3): every object with `kind` and `apiVersion` last, `managedFields`, a
//! last-applied annotation and large unread fields (env, volumes, probes, container statuses, a
//! node's image list) gives exactly the report of the same objects in the API's order, so the
//! pruned read keeps everything the pipeline uses (owners, node, phase, requests and claims, the
//! labels tenancy and routes read, Services, Ingresses and Gateway routes). A Secret in the dump
//! is still never read: its value appears in neither report.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{fixture, gpuledger};

const SECRET: &str = "c2VjcmV0LXRoYXQtbXVzdC1uZXZlci1iZS1wcmludGVk";

/// The objects of a fixture (JSON or multi-document YAML), with a Secret added.
fn objects(rel: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(fixture(rel)).unwrap();
    let docs: Vec<Value> = if rel.ends_with(".json") {
        vec![serde_json::from_str(&text).unwrap()]
    } else {
        serde_saphyr::from_multiple(&text).unwrap()
    };
    let mut out = Vec::new();
    for d in docs {
        match d.get("items").and_then(Value::as_array) {
            Some(items) => out.extend(items.iter().cloned()),
            None if d.is_object() => out.push(d),
            None => {}
        }
    }
    out.push(
        json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "hf-token", "namespace": "default"}, "data": {"token": SECRET}}),
    );
    out
}

/// What only costs bytes, added to an object as a real dump carries it.
fn bloat(o: &mut Value) {
    let filler = "x".repeat(2000);
    let kind = o["kind"].as_str().unwrap_or_default().to_string();
    let Some(obj) = o.as_object_mut() else {
        return;
    };
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert(
            "managedFields".into(),
            json!([{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}, "f:spec": {"f:filler": filler}}}]),
        );
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        annotations["kubectl.kubernetes.io/last-applied-configuration"] = json!(filler);
        meta.insert("resourceVersion".into(), json!("123456"));
    }
    let spec = obj.get_mut("spec").and_then(Value::as_object_mut);
    match (kind.as_str(), spec) {
        ("Pod", Some(spec)) => {
            spec.insert(
                "volumes".into(),
                json!([{"name": "cache", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": filler}}]),
            );
            spec.insert(
                "tolerations".into(),
                json!([{"key": "nvidia.com/gpu", "operator": "Exists"}]),
            );
            if let Some(cs) = spec.get_mut("containers").and_then(Value::as_array_mut) {
                for c in cs {
                    c["env"] = json!([{"name": "FILLER", "value": filler}]);
                    c["readinessProbe"] = json!({"httpGet": {"path": "/health", "port": 8000}});
                    c["volumeMounts"] = json!([{"name": "cache", "mountPath": "/cache"}]);
                }
            }
            let status = obj.entry("status").or_insert_with(|| json!({}));
            status["containerStatuses"] = json!([{"name": "c", "ready": true, "image": filler}]);
            status["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        }
        ("Node", _) => {
            let status = obj.entry("status").or_insert_with(|| json!({}));
            status["images"] = json!([{"names": [filler], "sizeBytes": 1}]);
            status["nodeInfo"] = json!({"kubeletVersion": "v1.31.0"});
        }
        _ => {}
    }
}

/// JSON with every object's `kind` and `apiVersion` after all its other keys.
fn kind_last(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let keys = m
                .keys()
                .filter(|k| *k != "kind" && *k != "apiVersion")
                .chain(m.keys().filter(|k| *k == "kind"))
                .chain(m.keys().filter(|k| *k == "apiVersion"));
            out.push('{');
            for (i, k) in keys.enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                kind_last(&m[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                kind_last(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The report of `args` run in `dir` (JSON), as text with `dir` taken out, after its exit code
/// (drift exits 1 when it finds drift).
fn report(dir: &Path, args: &[&str]) -> String {
    let out = gpuledger(dir)
        .args(args)
        .args(["--format", "json", "--now", "2026-11-30"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap();
    assert!(code <= 1, "{args:?}: {stderr}");
    assert!(!stderr.contains(SECRET));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains(SECRET), "a Secret's value was read");
    format!("{code}\n{}", text.replace(dir.to_str().unwrap(), "<dir>"))
}

/// The same objects written in the API's order (the canonical dump) and kind-last with the
/// bloat, each as `cluster.json` in a directory of its own.
fn both(rel: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let items = objects(rel);
    let canonical = tempfile::tempdir().unwrap();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(
        canonical.path().join("cluster.json"),
        serde_json::to_string_pretty(&list).unwrap(),
    )
    .unwrap();
    let mut bloated = list;
    for o in bloated["items"].as_array_mut().unwrap() {
        bloat(o);
    }
    let mut text = String::new();
    kind_last(&bloated, &mut text);
    assert!(text.starts_with(r#"{"items":[{"#), "{}", &text[..40]);
    let reordered = tempfile::tempdir().unwrap();
    std::fs::write(reordered.path().join("cluster.json"), text).unwrap();
    (canonical, reordered)
}

#[test]
fn kind_last_and_unread_bloat_give_the_same_inventory_and_drift() {
    for rel in [
        "tests/fixtures/synthetic-small.json",
        "tests/fixtures/dra/cluster.yaml",
        "tests/fixtures/drift/cluster.yaml",
    ] {
        let (canonical, reordered) = both(rel);
        let args = ["inventory", "--snapshot", "cluster.json"];
        let want = report(canonical.path(), &args);
        assert_eq!(report(reordered.path(), &args), want, "{rel}");
        // The report is not empty of what the pruning must keep.
        assert!(want.starts_with("0\n"), "{rel}: {want}");
        let v: Value = serde_json::from_str(&want[2..]).unwrap();
        assert!(!v["workloads"].as_array().unwrap().is_empty(), "{rel}");
    }
    // drift reads the live side's owners, labels and routes against the repository's.
    let (canonical, reordered) = both("tests/fixtures/drift/cluster.yaml");
    let repo = crate::drift::repo();
    let args = [
        "drift",
        "--repo",
        repo.path().to_str().unwrap(),
        "--snapshot",
        "cluster.json",
    ];
    let want = report(canonical.path(), &args);
    assert_eq!(report(reordered.path(), &args), want);
    let v: Value = serde_json::from_str(&want[2..]).unwrap();
    assert!(!v["workloads"].as_array().unwrap().is_empty(), "{want}");
}
