use super::*;
use crate::analysis::inventory::inventory;
use crate::k8s::read::read_str;
use crate::report::DesiredWorkloadRow;

fn desired(yaml: &str, cfg: &Config) -> Desired {
    let objs = read_str(yaml, "git.yaml").unwrap();
    Desired {
        at: "t".into(),
        gpus_declared: Some(0),
        gpus_declared_rendered: 0,
        unknown: Default::default(),
        tenant_sources: Default::default(),
        intent_coverage: None,
        workloads: inventory(&objs, cfg, vec![])
            .unwrap()
            .workloads
            .into_iter()
            .map(|workload| DesiredWorkloadRow {
                workload,
                app: "a".into(),
                app_kind: "directory".into(),
                cluster: None,
                lineage: vec![],
                gpu_models: Vec::new(),
                ask: None,
            })
            .collect(),
        tenants: vec![],
        apps: vec![],
        clusters: vec![],
        cluster: None,
        not_deployed: vec![],
        duplicates: vec![],
        problems: vec![],
        tenancy: vec![],
        without_gpus: vec![],
        source_hosts: Default::default(),
        routing: objs.into_iter().filter(routing).collect(),
        queues: Vec::new(),
    }
}

const LWS: &str = "apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: big, namespace: ml}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      metadata: {labels: {app: big, role: leader}}
      spec: {containers: [{name: l, resources: {limits: {nvidia.com/gpu: 8}}}]}
    workerTemplate:
      metadata: {labels: {app: big, role: worker}}
      spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}
---
apiVersion: v1
kind: Service
metadata: {name: big, namespace: ml}
spec: {selector: {app: big, role: leader}}
";

fn ingress(host: &str, backend: &str, scheme: &str) -> String {
    format!(
        "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: big, namespace: ml, annotations: {{alb.ingress.kubernetes.io/scheme: {scheme}}}}}\nspec:\n  rules:\n  - host: {host}\n    http: {{paths: [{{path: /, backend: {{service: {{name: {backend}}}}}}}]}}\n"
    )
}

/// A Service traced to a LeaderWorkerSet through its leader template; a route added on a Service
/// that selects nothing says so rather than counting zero GPUs as the truth.
#[test]
fn added_and_removed_routes_traced_through_pod_templates() {
    let cfg = Config::default();
    let base = desired(
        &format!(
            "{LWS}{}",
            ingress("old.example.com", "big", "internet-facing")
        ),
        &cfg,
    );
    let head = desired(
        &format!(
            "{LWS}{}---\napiVersion: v1\nkind: Service\nmetadata: {{name: none, namespace: ml}}\nspec: {{selector: {{app: nothing}}}}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: other, namespace: ml, annotations: {{alb.ingress.kubernetes.io/scheme: internet-facing}}}}\nspec:\n  rules:\n  - host: new.example.com\n    http: {{paths: [{{path: /, backend: {{service: {{name: none}}}}}}]}}\n",
            ingress("old.example.com", "big", "internal")
        ),
        &cfg,
    );
    let r = routes(&base, &head, &cfg, None, &[]).unwrap();
    let got: Vec<(RouteChangeKind, &str, &str, u64)> = r
        .iter()
        .map(|x| (x.change, x.host.as_str(), x.summary.as_str(), x.gpus))
        .collect();
    assert_eq!(
        got,
        [
            (
                RouteChangeKind::Exposure,
                "old.example.com",
                "internet-facing → internal (Ingress ml/big)",
                32
            ),
            (
                RouteChangeKind::Added,
                "new.example.com",
                "new internet-facing route on Ingress ml/other",
                0
            ),
        ]
    );
    assert_eq!(r[0].backends, ["ml/LeaderWorkerSet/big"]);
    assert!(r[0].today.is_none(), "no live state, no today");
}

/// An internal route that stays internal is no public route, whatever the change does to it.
#[test]
fn internal_routes_are_not_in_the_blast_radius() {
    let cfg = Config::default();
    let base = desired(
        &format!("{LWS}{}", ingress("a.internal", "big", "internal")),
        &cfg,
    );
    let head = desired(
        &format!("{LWS}{}", ingress("b.internal", "big", "internal")),
        &cfg,
    );
    assert!(routes(&base, &head, &cfg, None, &[]).unwrap().is_empty());
}
