//! The Kubernetes API emulator (tests/support/kube_emulator.rs) checked against the real
//! `kubectl`, the `kube` client and raw HTTP, on the demo fleet. The expected objects come from a
//! plain text scan of the YAML (top-level `kind:` and the first `  name:`/`  namespace:` of each
//! document), not from a parser the emulator shares. kubectl is required: these tests fail, never
//! skip, without it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kube_emulator::{Emulator, EmulatorOptions};
use super::support::fixture;

const DEMO: &str = "fixtures/demo/cluster.yaml";

fn demo(opts: EmulatorOptions) -> Emulator {
    Emulator::start(EmulatorOptions {
        snapshots: vec![fixture(DEMO)],
        ..opts
    })
}

/// `(namespace, name)` of every demo object of `kind`, sorted, by a text scan of the file.
fn demo_objects(kind: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(fixture(DEMO)).unwrap();
    let mut out = Vec::new();
    for doc in text.split("\n---\n") {
        if !doc.lines().any(|l| l == format!("kind: {kind}")) {
            continue;
        }
        let field = |key: &str| {
            doc.lines()
                .find_map(|l| l.strip_prefix(&format!("  {key}: ")))
                .unwrap_or_default()
                .trim_matches('"')
                .to_string()
        };
        out.push((field("namespace"), field("name")));
    }
    out.sort();
    assert!(!out.is_empty(), "no {kind} in {DEMO}");
    out
}

/// Runs the real kubectl against the emulator, with a discovery cache private to this emulator.
fn kubectl(emu: &Emulator, args: &[&str]) -> Output {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(emu.kubeconfig_path())
        .arg("--cache-dir")
        .arg(emu.dir().join("kubectl-cache"))
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap_or_else(|e| {
            panic!("kubectl is required by the emulator tests (install it on PATH): {e}")
        })
}

fn kubectl_ok(emu: &Emulator, args: &[&str]) -> String {
    let out = kubectl(emu, args);
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}\nrequests:\n{}",
        String::from_utf8_lossy(&out.stderr),
        log(emu)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn kubectl_err(emu: &Emulator, args: &[&str]) -> String {
    let out = kubectl(emu, args);
    assert!(!out.status.success(), "kubectl {args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

fn log(emu: &Emulator) -> String {
    let lines: Vec<String> = emu.requests().iter().map(|r| r.to_string()).collect();
    lines.join("\n")
}

/// A blocking HTTP/1.1 GET: (status, headers, JSON body).
fn get(emu: &Emulator, target: &str, accept: &str) -> (u16, String, Value) {
    let mut s = TcpStream::connect(emu.addr()).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n",
        emu.addr()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("HTTP response");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{target}: {e}: {body}"));
    (status, head.to_string(), body)
}

fn get_json(emu: &Emulator, target: &str) -> (u16, Value) {
    let (status, _, body) = get(emu, target, "application/json");
    (status, body)
}

#[test]
fn kubectl_lists_exactly_the_demo_nodes() {
    let emu = demo(EmulatorOptions::default());
    let got = kubectl_ok(&emu, &["get", "nodes", "-o", "name"]);
    let want: Vec<String> = demo_objects("Node")
        .into_iter()
        .map(|(_, n)| format!("node/{n}\n"))
        .collect();
    assert_eq!(got, want.concat());
}

#[test]
fn kubectl_pages_through_all_pods() {
    // 12 a page: kubectl's own client-side rate limit (QPS 5, burst 10) would make each page
    // beyond the tenth wait 200 ms, and this test must stay fast.
    let emu = demo(EmulatorOptions {
        page_size: Some(12),
        ..EmulatorOptions::default()
    });
    let list: Value = serde_json::from_str(&kubectl_ok(&emu, &["get", "pods", "-A", "-o", "json"]))
        .expect("kubectl -o json");
    let got: Vec<(String, String)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!(
                p["kind"], "Pod",
                "kubectl restores the kind of typed list items"
            );
            let m = &p["metadata"];
            (
                m["namespace"].as_str().unwrap().into(),
                m["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = demo_objects("Pod");
    assert_eq!(got.len(), 114);
    assert_eq!(got, want, "all pods, sorted by namespace/name");
    // kubectl asks for 500 at a time; the server's cap of 12 makes it follow `continue`.
    let lists: Vec<_> = emu
        .requests()
        .into_iter()
        .filter(|r| r.path() == "/api/v1/pods")
        .collect();
    assert_eq!(lists.len(), want.len().div_ceil(12), "{}", log(&emu));
    assert!(
        lists
            .iter()
            .all(|r| r.status == 200 && r.query("limit").as_deref() == Some("500"))
    );
    assert!(lists[0].query("continue").is_none());
    assert!(lists[1..].iter().all(|r| r.query("continue").is_some()));
}

#[test]
fn kubectl_default_output_is_a_server_side_table() {
    let emu = demo(EmulatorOptions::default());
    let table = kubectl_ok(&emu, &["get", "pods", "-A", "--chunk-size", "50"]);
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAMESPACE", "NAME", "AGE"]);
    let rows: Vec<(String, String)> = lines
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            (c[0].to_string(), c[1].to_string())
        })
        .collect();
    assert_eq!(rows, demo_objects("Pod"));
    let lists: Vec<_> = emu
        .requests()
        .into_iter()
        .filter(|r| r.path() == "/api/v1/pods")
        .collect();
    assert_eq!(lists.len(), 114usize.div_ceil(50), "{}", log(&emu));
    for r in lists {
        assert_eq!(r.query("limit").as_deref(), Some("50"), "--chunk-size");
        assert!(
            r.accept
                .starts_with("application/json;as=Table;v=v1;g=meta.k8s.io"),
            "{}",
            r.accept
        );
    }
}

#[test]
fn kubectl_yaml_and_single_objects() {
    let emu = demo(EmulatorOptions::default());
    let yaml = kubectl_ok(
        &emu,
        &["get", "services", "-n", "assistant-prod", "-o", "yaml"],
    );
    assert!(yaml.starts_with("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Service\n"));
    let (ns, name) = &demo_objects("Pod")[0];
    let pod = kubectl_ok(&emu, &["get", "pod", name, "-n", ns, "-o", "json"]);
    let pod: Value = serde_json::from_str(&pod).unwrap();
    assert_eq!(pod["metadata"]["name"], name.as_str());
    let err = kubectl_err(&emu, &["get", "pod", "no-such-pod", "-n", ns]);
    assert!(
        err.contains(r#"Error from server (NotFound): pods "no-such-pod" not found"#),
        "{err}"
    );
}

#[test]
fn kubectl_discovers_crds_and_their_versions() {
    let emu = demo(EmulatorOptions::default());
    // The demo has DynamoGraphDeployments as nvidia.com/v1alpha1 and one as v1beta1: the group
    // prefers v1beta1, and each object is served only under its own version.
    let beta = kubectl_ok(&emu, &["get", "dynamographdeployments", "-A", "-o", "name"]);
    assert_eq!(beta, "dynamographdeployment.nvidia.com/deepseek-r1\n");
    let alpha = kubectl_ok(
        &emu,
        &[
            "get",
            "dynamographdeployments.v1alpha1.nvidia.com",
            "-A",
            "-o",
            "name",
        ],
    );
    assert_eq!(
        alpha.lines().count(),
        demo_objects("DynamoGraphDeployment").len() - 1
    );
    let out = kubectl_ok(&emu, &["get", "lws,isvc,httproutes", "-A", "-o", "name"]);
    let mut want: Vec<String> = Vec::new();
    for (kind, prefix) in [
        (
            "LeaderWorkerSet",
            "leaderworkerset.leaderworkerset.x-k8s.io",
        ),
        ("InferenceService", "inferenceservice.serving.kserve.io"),
        ("HTTPRoute", "httproute.gateway.networking.k8s.io"),
    ] {
        want.extend(
            demo_objects(kind)
                .iter()
                .map(|(_, n)| format!("{prefix}/{n}")),
        );
    }
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
}

#[test]
fn kubectl_reports_forbidden_resources() {
    let emu = demo(EmulatorOptions {
        forbidden: vec!["pods".into(), "dynamographdeployments.nvidia.com".into()],
        ..EmulatorOptions::default()
    });
    let err = kubectl_err(&emu, &["get", "pods", "-A"]);
    assert!(
        err.contains(concat!(
            r#"Error from server (Forbidden): pods is forbidden: User "#,
            r#""system:serviceaccount:gpuledger:gpuledger" cannot list resource "pods" "#,
            r#"in API group "" at the cluster scope"#,
        )),
        "{err}"
    );
    let err = kubectl_err(&emu, &["get", "pods", "-n", "reasoning"]);
    assert!(
        err.contains(r#"in API group "" in the namespace "reasoning""#),
        "{err}"
    );
    let err = kubectl_err(&emu, &["get", "dynamographdeployments", "-A"]);
    assert!(
        err.contains("dynamographdeployments.nvidia.com is forbidden"),
        "{err}"
    );
    // As with RBAC, the resource is still discovered; other resources still work.
    let (_, core) = get_json(&emu, "/api/v1");
    assert!(
        core["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "pods")
    );
    assert!(kubectl_ok(&emu, &["get", "nodes", "-o", "name"]).starts_with("node/"));
}

#[test]
fn kubectl_reports_unknown_resources_and_never_sees_secrets() {
    let emu = demo(EmulatorOptions::default());
    for r in ["foos", "secrets"] {
        let err = kubectl_err(&emu, &["get", r, "-A"]);
        assert!(
            err.contains(&format!(r#"the server doesn't have a resource type "{r}""#)),
            "{err}"
        );
    }
    let (status, body) = get_json(&emu, "/api/v1/secrets");
    assert_eq!((status, body["reason"].as_str()), (404, Some("NotFound")));
}

#[test]
fn kubectl_retries_injected_503s() {
    let emu = demo(EmulatorOptions {
        fail_first: 2,
        ..EmulatorOptions::default()
    });
    let got = kubectl_ok(&emu, &["get", "nodes", "-o", "name"]);
    assert_eq!(got.lines().count(), demo_objects("Node").len());
    let statuses: Vec<u16> = emu
        .requests()
        .iter()
        .filter(|r| r.path() == "/api/v1/nodes")
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [503, 503, 200], "{}", log(&emu));
}

#[test]
fn raw_lists_pages_and_errors_look_like_the_api_server() {
    let emu = demo(EmulatorOptions::default());
    // Typed list: kind PodList, items without apiVersion/kind, sorted, no continue when complete.
    let (status, list) = get_json(&emu, "/api/v1/namespaces/reasoning/pods");
    assert_eq!(status, 200);
    assert_eq!(
        (list["kind"].as_str(), list["apiVersion"].as_str()),
        (Some("PodList"), Some("v1"))
    );
    assert!(list["metadata"]["resourceVersion"].is_string());
    assert!(list["metadata"].get("continue").is_none());
    let items = list["items"].as_array().unwrap();
    let want: Vec<_> = demo_objects("Pod")
        .into_iter()
        .filter(|(ns, _)| ns == "reasoning")
        .collect();
    assert_eq!(items.len(), want.len());
    assert!(
        items
            .iter()
            .all(|i| i.get("apiVersion").is_none() && i.get("kind").is_none())
    );

    // limit/continue without a configured page size.
    let (_, page) = get_json(&emu, "/apis/apps/v1/deployments?limit=10");
    assert_eq!(page["items"].as_array().unwrap().len(), 10);
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    let remaining = page["metadata"]["remainingItemCount"].as_u64().unwrap();
    assert_eq!(remaining as usize + 10, demo_objects("Deployment").len());
    let (_, next) = get_json(
        &emu,
        &format!("/apis/apps/v1/deployments?limit=100&continue={token}"),
    );
    assert_eq!(next["items"].as_array().unwrap().len() as u64, remaining);
    assert!(next["metadata"].get("continue").is_none());

    // A token for another list, or garbage, is 410 Gone / Expired.
    for target in [
        format!("/api/v1/pods?limit=5&continue={token}"),
        "/api/v1/pods?limit=5&continue=bm90LWEtdG9rZW4=".to_string(),
    ] {
        let (status, body) = get_json(&emu, &target);
        assert_eq!(
            (status, body["reason"].as_str()),
            (410, Some("Expired")),
            "{target}"
        );
        assert_eq!(body["kind"], "Status");
    }

    // A single object carries its type; a missing one is a NotFound Status naming it.
    let (_, one) = get_json(
        &emu,
        "/apis/nvidia.com/v1beta1/namespaces/reasoning/dynamographdeployments/deepseek-r1",
    );
    assert_eq!(one["kind"], "DynamoGraphDeployment");
    let (status, nf) = get_json(
        &emu,
        "/apis/nvidia.com/v1beta1/namespaces/reasoning/dynamographdeployments/nope",
    );
    assert_eq!(status, 404);
    assert_eq!(
        nf["message"],
        r#"dynamographdeployments.nvidia.com "nope" not found"#
    );
    assert_eq!(nf["details"]["group"], "nvidia.com");
    let (status, nf) = get_json(&emu, "/apis/nvidia.com/v1/dynamographdeployments");
    assert_eq!((status, nf["code"].as_u64()), (404, Some(404)));
    assert_eq!(
        nf["message"],
        "the server could not find the requested resource"
    );
    // The object is not served under the other version of its group.
    let (status, _) = get_json(
        &emu,
        "/apis/nvidia.com/v1alpha1/namespaces/reasoning/dynamographdeployments/deepseek-r1",
    );
    assert_eq!(status, 404);

    // Selectors (watches: emulator_watch.rs).
    let (_, sel) = get_json(
        &emu,
        "/api/v1/pods?fieldSelector=metadata.namespace%3Dreasoning",
    );
    assert_eq!(sel["items"].as_array().unwrap().len(), want.len());
    let (_, sel) = get_json(
        &emu,
        "/api/v1/nodes?labelSelector=kubernetes.io%2Fhostname%3Dgpu-h100-001",
    );
    assert_eq!(sel["items"][0]["metadata"]["name"], "gpu-h100-001");
    assert_eq!(sel["items"].as_array().unwrap().len(), 1);

    // Table for kubectl's default output.
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let (_, _, table) = get(&emu, "/api/v1/nodes?limit=3", accept);
    assert_eq!(
        (table["kind"].as_str(), table["apiVersion"].as_str()),
        (Some("Table"), Some("meta.k8s.io/v1"))
    );
    assert_eq!(table["rows"].as_array().unwrap().len(), 3);
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert!(table["metadata"]["continue"].is_string());
}

#[test]
fn raw_discovery_faults_and_extra_versions() {
    let emu = demo(EmulatorOptions {
        latency: Duration::from_millis(40),
        fail_first: 1,
        extra_versions: vec!["serving.kserve.io/v1".into(), "argoproj.io/v1alpha1".into()],
        ..EmulatorOptions::default()
    });
    let (_, api) = get_json(&emu, "/api");
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], serde_json::json!(["v1"]));
    let (_, version) = get_json(&emu, "/version");
    assert_eq!(version["gitVersion"], "v1.33.0");
    let (_, groups) = get_json(&emu, "/apis");
    let group = |name: &str| {
        groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .cloned()
    };
    let nvidia = group("nvidia.com").expect("CRD group from the snapshot");
    assert_eq!(
        nvidia["preferredVersion"]["groupVersion"],
        "nvidia.com/v1beta1"
    );
    assert_eq!(nvidia["versions"].as_array().unwrap().len(), 2);
    // --serve-version: v1 served (and preferred) with no objects; a group with none at all.
    assert_eq!(
        group("serving.kserve.io").unwrap()["preferredVersion"]["version"],
        "v1"
    );
    let (_, argo) = get_json(&emu, "/apis/argoproj.io/v1alpha1");
    let names: Vec<&str> = argo["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"applications"), "{names:?}");
    let apps = "/apis/argoproj.io/v1alpha1/applications";
    assert_eq!(
        get_json(&emu, apps).0,
        503,
        "fail_first counts per resource"
    );
    assert_eq!(get_json(&emu, apps).1["kind"], "ApplicationList");

    // The first list of each resource fails with a 503 Status and Retry-After; then it works.
    let started = Instant::now();
    let (status, head, body) = get(&emu, "/api/v1/nodes", "application/json");
    assert!(
        started.elapsed() >= Duration::from_millis(40),
        "latency injected"
    );
    assert_eq!(
        (status, body["reason"].as_str()),
        (503, Some("ServiceUnavailable"))
    );
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 0"),
        "{head}"
    );
    assert_eq!(get_json(&emu, "/api/v1/nodes").0, 200);
    let statuses: Vec<_> = emu
        .requests()
        .iter()
        .filter(|r| r.path() == "/api/v1/nodes")
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [503, 200]);
}

/// The `kube` crate client (what gpuledger uses): legacy discovery, typed lists, paging, CRDs.
#[tokio::test]
async fn kube_client_discovers_and_pages() {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, DynamicObject, ListParams};
    use kube::config::{KubeConfigOptions, Kubeconfig};

    let emu = demo(EmulatorOptions {
        page_size: Some(25),
        ..EmulatorOptions::default()
    });
    let kubeconfig = Kubeconfig::read_from(emu.kubeconfig_path()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let discovery = kube::Discovery::new(client.clone()).run().await.unwrap();
    let nvidia = discovery.get("nvidia.com").expect("nvidia.com discovered");
    assert_eq!(nvidia.preferred_version(), Some("v1beta1"));
    let (dgd, _) = nvidia.recommended_kind("DynamoGraphDeployment").unwrap();
    assert_eq!(dgd.plural, "dynamographdeployments");

    let pods: Api<Pod> = Api::all(client.clone());
    let (mut names, mut pages, mut token) = (Vec::new(), 0, None::<String>);
    loop {
        let mut lp = ListParams::default().limit(500);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = pods.list(&lp).await.unwrap();
        pages += 1;
        names.extend(page.items.iter().map(|p| {
            let m = &p.metadata;
            (m.namespace.clone().unwrap(), m.name.clone().unwrap())
        }));
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(names, demo_objects("Pod"));
    assert_eq!(pages, 114usize.div_ceil(25));

    let dgds: Api<DynamicObject> = Api::all_with(client, &dgd);
    let list = dgds.list(&ListParams::default()).await.unwrap();
    let got: Vec<_> = list
        .items
        .iter()
        .map(|o| o.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(got, ["deepseek-r1"]);
}

#[test]
fn convert_versions_serves_every_object_under_each_version() {
    let emu = demo(EmulatorOptions {
        convert_versions: true,
        extra_versions: vec!["nvidia.com/v1".into()],
        ..EmulatorOptions::default()
    });
    let all = demo_objects("DynamoGraphDeployment");
    for v in ["v1alpha1", "v1beta1", "v1"] {
        let (_, list) = get_json(
            &emu,
            &format!("/apis/nvidia.com/{v}/dynamographdeployments"),
        );
        let items = list["items"].as_array().unwrap();
        assert_eq!(items.len(), all.len(), "{v}");
    }
    let (ns, name) = all.iter().find(|(_, n)| n != "deepseek-r1").unwrap();
    let path = format!("/apis/nvidia.com/v1/namespaces/{ns}/dynamographdeployments/{name}");
    assert_eq!(get_json(&emu, &path).1["apiVersion"], "nvidia.com/v1");
    // Kinds stay per version: DynamoComponentDeployments exist only as v1alpha1 (and the extra v1).
    let (status, _) = get_json(&emu, "/apis/nvidia.com/v1beta1/dynamocomponentdeployments");
    assert_eq!(status, 404);
}

/// The body of a GET as the server wrote it.
fn get_text(emu: &Emulator, target: &str) -> String {
    let mut s = TcpStream::connect(emu.addr()).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\nConnection: close\r\n\r\n",
        emu.addr()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw.split_once("\r\n\r\n")
        .expect("HTTP response")
        .1
        .to_string()
}

/// kube-apiserver writes `kind` first (its structs' order); `kubectl get -o json` writes keys
/// alphabetically, `items` before `kind`. The emulator does the first, and the second on request,
/// with the same content.
#[test]
fn keys_come_in_the_api_servers_order_or_kubectls() {
    let server = demo(EmulatorOptions::default());
    let kubectl_order = demo(EmulatorOptions {
        alphabetical_keys: true,
        ..EmulatorOptions::default()
    });
    let target = "/api/v1/namespaces/reasoning/pods";
    let (a, b) = (get_text(&server, target), get_text(&kubectl_order, target));
    assert!(
        a.starts_with(r#"{"kind":"PodList","apiVersion":"v1","metadata":{"#),
        "{}",
        &a[..80.min(a.len())]
    );
    assert!(
        a.contains(r#"{"metadata":{"#),
        "items open with their metadata"
    );
    assert!(
        b.starts_with(r#"{"apiVersion":"v1","items":["#),
        "{}",
        &b[..80.min(b.len())]
    );
    let (a, b): (Value, Value) = (
        serde_json::from_str(&a).unwrap(),
        serde_json::from_str(&b).unwrap(),
    );
    assert_eq!(a["items"], b["items"]);
    // kubectl reads both.
    for emu in [&server, &kubectl_order] {
        assert!(kubectl_ok(emu, &["get", "pods", "-A", "-o", "name"]).contains("pod/"));
    }
}
