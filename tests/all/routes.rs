//! The routing blast radius of a change (issue 33 §1): `check.routes[]` on small repositories
//! built here — a host move and a path change, an ALB group whose scheme flips for one member, a
//! LoadBalancer Service turned internal, an HTTPRoute whose parent Gateway changes, a Service whose
//! selector re-routes — each with its exact routes, backends and GPUs.

use serde_json::{Value, json};

use super::support::{Repo, gpuledger};

/// The 16-GPU serving Deployment of the issue (2 × 8), its Service, and a tenant with a contact.
const CHAT: &str = "apiVersion: v1
kind: Namespace
metadata: {name: chat, labels: {tenant: chat}, annotations: {gpuledger.io/contact: '@team-chat'}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat, namespace: chat}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: chat}}
    spec:
      containers: [{name: vllm, resources: {limits: {nvidia.com/gpu: 8}}}]
---
apiVersion: v1
kind: Service
metadata: {name: chat, namespace: chat}
spec: {selector: {app: chat}, ports: [{port: 80}]}
";

/// A second, smaller serving Deployment in the same namespace (1 × 4) with its own Service.
const CHAT_V2: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: chat-v2, namespace: chat}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: chat-v2}}
    spec:
      containers: [{name: vllm, resources: {limits: {nvidia.com/gpu: 4}}}]
";

fn ingress(name: &str, annotations: &str, host: &str, path: &str, service: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {name}
  namespace: chat
  annotations: {{{annotations}}}
spec:
  ingressClassName: alb
  rules:
  - host: {host}
    http:
      paths:
      - path: {path}
        pathType: Prefix
        backend: {{service: {{name: {service}, port: {{number: 80}}}}}}
"
    )
}

/// A repository whose `main` holds `base` and whose `feature` branch holds `head` (files by path).
fn repo(base: &[(&str, &str)], head: &[(&str, &str)]) -> Repo {
    let r = Repo::new();
    for (p, t) in base {
        r.write(p, t);
    }
    r.commit("base");
    r.git(&["checkout", "-q", "-b", "feature"]);
    for (p, t) in head {
        r.write(p, t);
    }
    r.commit("head");
    r.git(&["checkout", "-q", "main"]);
    r
}

fn check(r: &Repo, extra: &[&str]) -> Value {
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args(["--now", "2026-11-30", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

/// Each route as (change, kind, host, path, backends, gpus).
fn routes(j: &Value) -> Vec<(String, String, String, String, Vec<String>, u64)> {
    j["check"]["routes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            (
                r["change"].as_str().unwrap().to_string(),
                r["kind"].as_str().unwrap().to_string(),
                r["host"].as_str().unwrap().to_string(),
                r["path"].as_str().unwrap().to_string(),
                r["backends"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b.as_str().unwrap().to_string())
                    .collect(),
                r["gpus"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn row(
    change: &str,
    kind: &str,
    host: &str,
    path: &str,
    backends: &[&str],
    gpus: u64,
) -> (String, String, String, String, Vec<String>, u64) {
    (
        change.into(),
        kind.into(),
        host.into(),
        path.into(),
        backends.iter().map(|b| b.to_string()).collect(),
        gpus,
    )
}

const PUBLIC: &str = "alb.ingress.kubernetes.io/scheme: internet-facing";

/// The example: a public ALB Ingress in front of the 16-GPU Deployment moves from
/// chat.example.com/v1 to api.example.com/; a second Ingress changes only its path.
#[test]
fn a_host_move_and_a_path_change_are_traced_to_the_gpus_behind_them() {
    let r = repo(
        &[
            ("chat.yaml", CHAT),
            (
                "ingress.yaml",
                &ingress("chat", PUBLIC, "chat.example.com", "/v1", "chat"),
            ),
            (
                "docs.yaml",
                &ingress("docs", PUBLIC, "docs.example.com", "/v1", "chat"),
            ),
        ],
        &[
            (
                "ingress.yaml",
                &ingress("chat", PUBLIC, "api.example.com", "/", "chat"),
            ),
            (
                "docs.yaml",
                &ingress("docs", PUBLIC, "docs.example.com", "/v2", "chat"),
            ),
        ],
    );
    let j = check(&r, &[]);
    assert_eq!(
        routes(&j),
        [
            row(
                "moved",
                "Ingress",
                "api.example.com",
                "/",
                &["chat/Deployment/chat"],
                16
            ),
            row(
                "moved",
                "Ingress",
                "docs.example.com",
                "/v2",
                &["chat/Deployment/chat"],
                16
            ),
        ]
    );
    let moved = &j["check"]["routes"][0];
    assert_eq!(
        moved["summary"],
        "moved from chat.example.com/v1 to api.example.com/"
    );
    assert_eq!(moved["before"]["host"], "chat.example.com");
    assert_eq!(moved["before"]["path"], "/v1");
    assert_eq!(moved["before"]["exposure"], "internet-facing");
    assert_eq!(moved["after"]["services"], json!(["chat/chat"]));
    assert_eq!(
        moved["after"]["load_balancer"],
        "Ingress chat/chat, class alb"
    );
    assert_eq!(moved["tenants"], json!(["chat"]));
    assert_eq!(moved["contacts"], json!(["@team-chat"]));
    // The GPU delta is still zero: only the routes say what this change does.
    assert_eq!(j["check"]["gpu_delta"], 0);
}

/// Two Ingresses of ALB group `shared` are internet-facing; the change makes one of them say
/// `internal` while the other keeps `internet-facing`. The AWS Load Balancer Controller refuses a
/// group with conflicting schemes and reconciles none of it: every route of the group is in the
/// blast radius, and the conflict is named.
#[test]
fn conflicting_schemes_in_an_alb_group_put_every_route_of_it_in_the_blast_radius() {
    let group = "alb.ingress.kubernetes.io/group.name: shared";
    let r = repo(
        &[
            ("chat.yaml", CHAT),
            ("v2.yaml", CHAT_V2),
            (
                "svc-v2.yaml",
                "apiVersion: v1\nkind: Service\nmetadata: {name: chat-v2, namespace: chat}\nspec: {selector: {app: chat-v2}}\n",
            ),
            (
                "a.yaml",
                &ingress(
                    "a",
                    &format!("{group}, {PUBLIC}"),
                    "chat.example.com",
                    "/",
                    "chat",
                ),
            ),
            (
                "b.yaml",
                &ingress(
                    "b",
                    &format!("{group}, {PUBLIC}"),
                    "beta.example.com",
                    "/",
                    "chat-v2",
                ),
            ),
        ],
        &[(
            "b.yaml",
            &ingress(
                "b",
                &format!("{group}, alb.ingress.kubernetes.io/scheme: internal"),
                "beta.example.com",
                "/",
                "chat-v2",
            ),
        )],
    );
    let j = check(&r, &[]);
    let rows = j["check"]["routes"].as_array().unwrap();
    let hosts: Vec<&str> = rows.iter().map(|r| r["host"].as_str().unwrap()).collect();
    assert_eq!(hosts.len(), 2, "{rows:#?}");
    assert!(hosts.contains(&"chat.example.com") && hosts.contains(&"beta.example.com"));
    for r in rows {
        assert!(
            r["summary"]
                .as_str()
                .unwrap()
                .contains("conflicting schemes"),
            "{r:#}"
        );
    }
}

/// Two Ingresses share ALB group `shared`; the change makes one of them internal. The group has
/// one load balancer and so one scheme: both members' routes turn internal, the untouched one too.
#[test]
fn a_scheme_flip_for_one_member_of_an_alb_group_moves_every_route_of_the_group() {
    let group = "alb.ingress.kubernetes.io/group.name: shared";
    let r = repo(
        &[
            ("chat.yaml", CHAT),
            ("v2.yaml", CHAT_V2),
            (
                "svc-v2.yaml",
                "apiVersion: v1\nkind: Service\nmetadata: {name: chat-v2, namespace: chat}\nspec: {selector: {app: chat-v2}}\n",
            ),
            (
                "a.yaml",
                &ingress(
                    "a",
                    &format!("{group}, {PUBLIC}"),
                    "chat.example.com",
                    "/",
                    "chat",
                ),
            ),
            (
                "b.yaml",
                &ingress("b", group, "beta.example.com", "/", "chat-v2"),
            ),
            // Another group, public, untouched: not in the blast radius.
            (
                "c.yaml",
                &ingress(
                    "c",
                    &format!("alb.ingress.kubernetes.io/group.name: other, {PUBLIC}"),
                    "other.example.com",
                    "/",
                    "chat",
                ),
            ),
        ],
        &[(
            "a.yaml",
            &ingress(
                "a",
                &format!("{group}, alb.ingress.kubernetes.io/scheme: internal"),
                "chat.example.com",
                "/",
                "chat",
            ),
        )],
    );
    let j = check(&r, &[]);
    assert_eq!(
        routes(&j),
        [
            row(
                "exposure",
                "Ingress",
                "chat.example.com",
                "/",
                &["chat/Deployment/chat"],
                16
            ),
            row(
                "exposure",
                "Ingress",
                "beta.example.com",
                "/",
                &["chat/Deployment/chat-v2"],
                4
            ),
        ]
    );
    let b = &j["check"]["routes"][1];
    assert_eq!(
        b["summary"],
        "internet-facing → internal (ALB group shared)"
    );
    assert_eq!(
        b["before"]["public_because"],
        "ALB group shared is internet-facing"
    );
    assert_eq!(b["after"]["exposure"], "internal");
    assert_eq!(b["after"]["objects"], json!(["chat/b"]));
    // The comment's opening sentence says it, and the flips lead the routes table in bold.
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args(["--now", "2026-11-30", "--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    let first = md.lines().find(|l| l.starts_with("**")).unwrap();
    assert_eq!(
        first,
        "**Keeps the declared GPUs at 20 (20 → 20); was not checked against the fleet (no live state); changes 2 public routes (2 turned internal) — the largest in front of 16 GPUs.**",
        "{md}"
    );
    assert!(
        md.contains("| **exposure** | Ingress chat.example.com/ | internet-facing → internal (ALB group shared) | chat/Deployment/chat | 16 | chat (\\@\u{200b}team-chat) |"),
        "{md}"
    );
}

/// A `type: LoadBalancer` Service turned internal by the AWS annotation, and another made public.
#[test]
fn a_load_balancer_service_turned_internal() {
    let lb = |name: &str, selector: &str, annotations: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: chat\n  annotations: {{{annotations}}}\nspec: {{type: LoadBalancer, selector: {{app: {selector}}}}}\n"
        )
    };
    let scheme = "service.beta.kubernetes.io/aws-load-balancer-scheme";
    let r = repo(
        &[
            ("chat.yaml", CHAT),
            ("v2.yaml", CHAT_V2),
            (
                "lb.yaml",
                &lb("chat-lb", "chat", &format!("{scheme}: internet-facing")),
            ),
            (
                "lb2.yaml",
                &lb(
                    "v2-lb",
                    "chat-v2",
                    "service.beta.kubernetes.io/aws-load-balancer-internal: \"true\"",
                ),
            ),
        ],
        &[
            (
                "lb.yaml",
                &lb("chat-lb", "chat", &format!("{scheme}: internal")),
            ),
            ("lb2.yaml", &lb("v2-lb", "chat-v2", "")),
        ],
    );
    let j = check(&r, &[]);
    assert_eq!(
        routes(&j),
        [
            row(
                "exposure",
                "Service",
                "chat/chat-lb",
                "",
                &["chat/Deployment/chat"],
                16
            ),
            row(
                "exposure",
                "Service",
                "chat/v2-lb",
                "",
                &["chat/Deployment/chat-v2"],
                4
            ),
        ]
    );
    assert_eq!(
        j["check"]["routes"][0]["summary"],
        "internet-facing → internal (Service chat/chat-lb)"
    );
    assert_eq!(
        j["check"]["routes"][1]["summary"],
        "internal → internet-facing (Service chat/v2-lb)"
    );
}

const GATEWAYS: &str = "apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: internal, namespace: infra}
spec: {gatewayClassName: eg, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: public, namespace: infra, annotations: {gpuledger.io/public: 'true'}}
spec: {gatewayClassName: eg, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra, annotations: {gpuledger.io/public: 'true'}}
spec: {gatewayClassName: eg, listeners: [{name: http, port: 80, protocol: HTTP}]}
";

fn http_route(name: &str, gateway: &str, host: &str, service: &str) -> String {
    format!(
        "apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: {name}, namespace: chat}}
spec:
  parentRefs: [{{name: {gateway}, namespace: infra}}]
  hostnames: [{host}]
  rules:
  - matches: [{{path: {{type: PathPrefix, value: /v1}}}}]
    backendRefs: [{{name: {service}, port: 80}}]
"
    )
}

/// An HTTPRoute moved from an internal Gateway to a public one is exposed; one moved between two
/// public Gateways is carried by another load balancer.
#[test]
fn an_http_route_whose_parent_gateway_changes() {
    let r = repo(
        &[
            ("chat.yaml", CHAT),
            ("gateways.yaml", GATEWAYS),
            (
                "route.yaml",
                &http_route("chat", "internal", "chat.example.com", "chat"),
            ),
            (
                "route2.yaml",
                &http_route("chat2", "public", "api.example.com", "chat"),
            ),
        ],
        &[
            (
                "route.yaml",
                &http_route("chat", "public", "chat.example.com", "chat"),
            ),
            (
                "route2.yaml",
                &http_route("chat2", "edge", "api.example.com", "chat"),
            ),
        ],
    );
    let j = check(&r, &[]);
    assert_eq!(
        routes(&j),
        [
            row(
                "exposure",
                "HTTPRoute",
                "chat.example.com",
                "PathPrefix /v1",
                &["chat/Deployment/chat"],
                16
            ),
            row(
                "altered",
                "HTTPRoute",
                "api.example.com",
                "PathPrefix /v1",
                &["chat/Deployment/chat"],
                16
            ),
        ]
    );
    let rs = &j["check"]["routes"];
    assert_eq!(
        rs[0]["summary"],
        "internal → internet-facing (Gateway infra/internal → Gateway infra/public)"
    );
    assert_eq!(
        rs[1]["summary"],
        "carried by Gateway infra/edge instead of Gateway infra/public"
    );
}

/// The Ingress does not change; its Service's selector now picks the other Deployment's pods.
#[test]
fn a_selector_that_re_routes_a_public_route() {
    let svc = |app: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: chat, namespace: chat}}\nspec: {{selector: {{app: {app}}}}}\n"
        )
    };
    let deployments = CHAT
        .split("---\n")
        .filter(|d| !d.contains("kind: Service"))
        .collect::<Vec<_>>()
        .join("---\n");
    let r = repo(
        &[
            ("chat.yaml", &deployments),
            ("v2.yaml", CHAT_V2),
            ("svc.yaml", &svc("chat")),
            (
                "ingress.yaml",
                &ingress("chat", PUBLIC, "chat.example.com", "/v1", "chat"),
            ),
        ],
        &[("svc.yaml", &svc("chat-v2"))],
    );
    let j = check(&r, &[]);
    assert_eq!(
        routes(&j),
        [row(
            "rerouted",
            "Ingress",
            "chat.example.com",
            "/v1",
            &["chat/Deployment/chat", "chat/Deployment/chat-v2"],
            20
        )]
    );
    let x = &j["check"]["routes"][0];
    assert_eq!(
        x["summary"],
        "reaches chat/Deployment/chat-v2 (4 GPUs) instead of chat/Deployment/chat (16 GPUs)"
    );
    assert_eq!(x["before"]["gpus"], 16);
    assert_eq!(x["after"]["gpus"], 4);
}

/// A change that touches no route has none, and says nothing of routes.
#[test]
fn a_change_without_routes_has_no_routes() {
    let r = repo(
        &[
            ("chat.yaml", CHAT),
            (
                "ingress.yaml",
                &ingress("chat", PUBLIC, "chat.example.com", "/v1", "chat"),
            ),
        ],
        &[("chat.yaml", &CHAT.replace("replicas: 2", "replicas: 3"))],
    );
    let j = check(&r, &[]);
    assert!(j["check"].get("routes").is_none(), "{}", j["check"]);
    assert_eq!(j["check"]["gpu_delta"], 8);
}

/// With the live state, each route says what serves its base host and path today: the live
/// Ingress, Service and pods of the host move, traced as the inventory traces public routes.
#[test]
fn with_live_state_a_route_says_what_serves_it_today() {
    let r = repo(
        &[
            ("chat.yaml", CHAT),
            (
                "ingress.yaml",
                &ingress("chat", PUBLIC, "chat.example.com", "/v1", "chat"),
            ),
        ],
        &[(
            "ingress.yaml",
            &ingress("chat", PUBLIC, "api.example.com", "/", "chat"),
        )],
    );
    let pod = |i: u32| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: chat-{i}\n  namespace: chat\n  labels: {{app: chat}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: chat, uid: chat-chat, controller: true}}]\nspec:\n  nodeName: gpu-{i}\n  containers: [{{name: vllm, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]\nstatus: {{phase: Running}}\n---\napiVersion: v1\nkind: Node\nmetadata: {{name: gpu-{i}}}\nstatus:\n  capacity: {{nvidia.com/gpu: \"8\"}}\n  allocatable: {{nvidia.com/gpu: \"8\"}}\n  conditions: [{{type: Ready, status: \"True\"}}]\n---\n"
        )
    };
    let live = format!(
        "{}---\n{}---\n{}{}",
        CHAT.replace(
            "metadata: {name: chat, namespace: chat}\nspec:\n  replicas",
            "metadata: {name: chat, namespace: chat, uid: chat-chat}\nspec:\n  replicas"
        ),
        ingress("chat", PUBLIC, "chat.example.com", "/v1", "chat"),
        pod(0),
        pod(1)
    );
    let snapshot = r.path().join("live.yaml");
    std::fs::write(&snapshot, live).unwrap();
    let j = check(&r, &["--snapshot", snapshot.to_str().unwrap()]);
    let today = &j["check"]["routes"][0]["today"];
    assert_eq!(
        today,
        &json!({
            "public": true,
            "workloads": ["chat/Deployment/chat"],
            "tenants": ["chat"],
            "gpus": 16
        }),
        "{}",
        j["check"]
    );
    // The example, as the comment opens: no GPU moves, one public route does.
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args(["--now", "2026-11-30", "--format", "markdown", "--snapshot"])
        .arg(&snapshot)
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    let first = md.lines().find(|l| l.starts_with("**")).unwrap();
    assert!(
        first.starts_with("**Keeps the declared GPUs at 16 (16 → 16); ")
            && first.ends_with(
                "; moves the public route Ingress chat.example.com/v1 to api.example.com/ in front of 16 GPUs.**"
            ),
        "{md}"
    );
    assert!(
        md.contains("| moved | Ingress api.example.com/ | moved from chat.example.com/v1 to api.example.com/ | chat/Deployment/chat | 16 | chat (\\@\u{200b}team-chat) | serves chat/Deployment/chat (16 GPUs) |"),
        "{md}"
    );
}

/// A route's tenants are the ones every other section shows: when the cluster's Namespace labels
/// name another tenant than Git's Namespace object, a route says the cluster's — behind a GPU
/// workload and behind one without GPUs alike — as the check's workload rows and `today` do (it
/// said Git's before).
#[test]
fn a_routes_tenant_is_the_tenant_the_rest_of_the_check_shows() {
    // Beside the GPU Deployment, a web front end without GPUs whose route moves too.
    let web = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: chat}
spec:
  replicas: 1
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: chat}
spec: {selector: {app: web}, ports: [{port: 80}]}
";
    let web_ingress = |host: &str| ingress("web", PUBLIC, host, "/", "web");
    let r = repo(
        &[
            ("chat.yaml", CHAT),
            ("web.yaml", web),
            (
                "ingress.yaml",
                &ingress("chat", PUBLIC, "chat.example.com", "/v1", "chat"),
            ),
            ("web-ingress.yaml", &web_ingress("www.example.com")),
        ],
        &[
            (
                "ingress.yaml",
                &ingress("chat", PUBLIC, "api.example.com", "/", "chat"),
            ),
            ("web-ingress.yaml", &web_ingress("web.example.com")),
        ],
    );
    let live = format!(
        "{}---\n{}",
        CHAT.replace("labels: {tenant: chat}", "labels: {tenant: assistant}"),
        ingress("chat", PUBLIC, "chat.example.com", "/v1", "chat"),
    );
    let snapshot = r.path().join("live.yaml");
    std::fs::write(&snapshot, live).unwrap();
    let j = check(&r, &["--snapshot", snapshot.to_str().unwrap()]);
    let routes = j["check"]["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 2, "{}", j["check"]);
    for r in routes {
        assert_eq!(r["tenants"], json!(["assistant"]), "{r}");
    }
    assert_eq!(
        j["check"]["tenant_sources"]["chat"], "cluster",
        "{}",
        j["check"]["tenant_sources"]
    );
}
