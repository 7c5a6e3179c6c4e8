//! Public routes: every way the internet reaches the fleet, traced to the workloads behind it.
//!
//! Counting rules: each Ingress (host, path) counts once when the Ingress is public — its AWS load
//! balancer scheme is `internet-facing` (Ingresses that share `alb.ingress.kubernetes.io/group.name`
//! share one load balancer and so one scheme; AWS defaults to `internal`), its class is listed as
//! public in the config, or it carries `gpuledger.io/public: "true"`. Each internet-facing Service of
//! `type: LoadBalancer` counts once. Each HTTPRoute (hostname, match) counts once when a parent
//! Gateway is public. Every route is traced backend Service → selector → pods → root workload →
//! tenant, so the report answers "what is behind this host".

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::config::Config;
use crate::k8s::object::{Body, Kind, Object};
use crate::k8s::types::{IngressBackend, LabelMap, ServiceSpec, Text};
use crate::report::RouteRow;
use crate::util::sum::{self, Named, Overflow};
use crate::workload::owners::{PodState, Workloads};

use super::tenancy::Resolver;

pub const PUBLIC_ANNOTATION: &str = "gpuledger.io/public";
const ALB_SCHEME: &str = "alb.ingress.kubernetes.io/scheme";
const ALB_GROUP: &str = "alb.ingress.kubernetes.io/group.name";
const ALB_LISTEN_PORTS: &str = "alb.ingress.kubernetes.io/listen-ports";
const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
const AWS_LB_SCHEME: &str = "service.beta.kubernetes.io/aws-load-balancer-scheme";
const AWS_LB_TYPE: &str = "service.beta.kubernetes.io/aws-load-balancer-type";
const AWS_LBC_CLASS: &str = "service.k8s.aws/nlb";
/// Annotations that make a cloud load balancer internal, with the values that mean "internal".
const INTERNAL_MARKERS: [(&str, Option<&str>); 4] = [
    (
        "service.beta.kubernetes.io/aws-load-balancer-internal",
        None,
    ),
    ("networking.gke.io/load-balancer-type", Some("Internal")),
    ("cloud.google.com/load-balancer-type", Some("Internal")),
    (
        "service.beta.kubernetes.io/azure-load-balancer-internal",
        None,
    ),
];

fn annotated_public(a: &LabelMap) -> bool {
    a.get(PUBLIC_ANNOTATION).is_some_and(|v| v == "true")
}

/// Why an Ingress is public, or `None` when it is internal.
fn ingress_public(
    o: &Object,
    class: Option<&str>,
    cfg: &Config,
    public_groups: &HashSet<&str>,
) -> Option<String> {
    let a = &o.meta.annotations;
    if annotated_public(a) {
        return Some(format!("annotation {PUBLIC_ANNOTATION}"));
    }
    if let Some(c) = class.filter(|c| cfg.exposure.public_ingress_classes.iter().any(|p| p == c)) {
        return Some(format!("ingress class {c}"));
    }
    if a.get(ALB_SCHEME).is_some_and(|s| s == "internet-facing") {
        return Some("ALB scheme internet-facing".into());
    }
    if let Some(g) = a
        .get(ALB_GROUP)
        .filter(|g| public_groups.contains(g.as_str()))
    {
        return Some(format!("ALB group {g} is internet-facing"));
    }
    None
}

/// Why a `type: LoadBalancer` Service is public, or `None`.
fn service_public(o: &Object, s: &ServiceSpec) -> Option<String> {
    if s.type_.as_deref() != Some("LoadBalancer") {
        return None;
    }
    let a = &o.meta.annotations;
    if annotated_public(a) {
        return Some(format!("annotation {PUBLIC_ANNOTATION}"));
    }
    match a.get(AWS_LB_SCHEME).map(Text::as_str) {
        Some("internet-facing") => return Some("AWS load balancer scheme internet-facing".into()),
        Some(_) => return None,
        None => {}
    }
    let internal = INTERNAL_MARKERS.iter().any(|(k, want)| {
        a.get(k).is_some_and(|v| match want {
            Some(w) => v.eq_ignore_ascii_case(w),
            None => v != "false",
        })
    });
    // The AWS Load Balancer Controller makes internal load balancers unless told otherwise.
    let lbc = a
        .get(AWS_LB_TYPE)
        .is_some_and(|t| t == "external" || t == "nlb-ip")
        || s.load_balancer_class.as_deref() == Some(AWS_LBC_CLASS);
    if internal || lbc {
        return None;
    }
    Some("LoadBalancer without an internal marker (cloud default: public)".into())
}

/// One route before it is traced, public or not.
pub(super) struct Found {
    pub kind: &'static str,
    pub host: String,
    pub path: String,
    pub object: String,
    /// Why it is public; `None` when it is internal.
    pub why: Option<String>,
    /// The load balancer (or Gateway) that carries it: `ALB group shared`, `Ingress web/chat, class nginx`,
    /// `Service web/api`, `Gateway infra/public`. What one route's change moves with it.
    pub load_balancer: String,
    /// Listener settings of its load balancer that a route can change (ALB `listen-ports`).
    pub listeners: Option<String>,
    /// Backend services as (namespace, name).
    pub backends: Vec<(String, String)>,
}

pub struct Routes {
    pub rows: Vec<RouteRow>,
    /// Public routes reaching each workload (by `Workloads::list` index).
    pub per_workload: HashMap<usize, u64>,
    /// Public routes reaching each tenant.
    pub per_tenant: HashMap<String, u64>,
}

/// Fails only when the GPUs behind one route, summed over its workloads, overflow.
pub fn public_routes(
    objects: &[Object],
    cfg: &Config,
    workloads: &mut Workloads<'_>,
    tenants: &Resolver<'_>,
) -> Result<Routes, Overflow> {
    let found = collect(objects, cfg)
        .into_iter()
        .filter(|f| f.why.is_some())
        .collect();
    trace(objects, found, workloads, tenants)
}

/// Every route the objects declare — Ingress rules, `type: LoadBalancer` Services, HTTPRoute
/// matches — public or internal, with the load balancer each rides on.
pub(super) fn collect(objects: &[Object], cfg: &Config) -> Vec<Found> {
    let mut found = Vec::new();

    // Ingresses: schemes shared through ALB groups first.
    let public_groups: HashSet<&str> = objects
        .iter()
        .filter(|o| o.typed_kind() == Kind::Ingress)
        .filter(|o| {
            o.meta
                .annotations
                .get(ALB_SCHEME)
                .is_some_and(|s| s == "internet-facing")
        })
        .filter_map(|o| o.meta.annotations.get(ALB_GROUP).map(Text::as_str))
        .collect();
    // A group whose members declare both schemes is refused by the AWS Load Balancer Controller
    // ("conflicting scheme", aws-load-balancer-controller pkg/ingress/model_build_load_balancer.go):
    // it reconciles none of the group, so no route of it follows Git.
    let mut schemes: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for o in objects.iter().filter(|o| o.typed_kind() == Kind::Ingress) {
        let a = &o.meta.annotations;
        if let (Some(g), Some(s)) = (a.get(ALB_GROUP), a.get(ALB_SCHEME)) {
            schemes.entry(g.as_str()).or_default().insert(s.as_str());
        }
    }
    let conflicting: HashSet<&str> = schemes
        .into_iter()
        .filter(|(_, s)| s.len() > 1)
        .map(|(g, _)| g)
        .collect();
    let gateways: HashMap<(&str, &str), &Object> = objects
        .iter()
        .filter(|o| o.typed_kind() == Kind::Gateway)
        .map(|o| ((o.namespace(), o.meta.name.as_str()), o))
        .collect();

    for o in objects {
        // Only these declare routes (a fleet's objects are mostly pods: no names built for them).
        if !matches!(
            &o.body,
            Body::Ingress(_) | Body::Service(_) | Body::HttpRoute(_)
        ) {
            continue;
        }
        let ns = o.namespace().to_string();
        let object = format!("{ns}/{}", o.meta.name);
        match &o.body {
            Body::Ingress(spec) => {
                let class = spec.ingress_class_name.as_deref().or(o
                    .meta
                    .annotations
                    .get(INGRESS_CLASS_ANNOTATION)
                    .map(Text::as_str));
                let why = ingress_public(o, class, cfg, &public_groups);
                let a = &o.meta.annotations;
                // All Ingresses of an ALB group share one load balancer; without a group an
                // Ingress is its own implicit group (AWS Load Balancer Controller, "IngressGroup":
                // https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/).
                let load_balancer = match (a.get(ALB_GROUP), class) {
                    (Some(g), _) if conflicting.contains(g.as_str()) => format!(
                        "ALB group {g} (its Ingresses declare conflicting schemes: the controller reconciles none of its routes)"
                    ),
                    (Some(g), _) => format!("ALB group {g}"),
                    (None, Some(c)) => format!("Ingress {object}, class {c}"),
                    (None, None) => format!("Ingress {object}"),
                };
                let listeners = a.get(ALB_LISTEN_PORTS).map(|p| p.to_string());
                let backend =
                    |b: &IngressBackend| b.service.as_ref().map(|s| (ns.clone(), s.name.clone()));
                for rule in &spec.rules {
                    let host = rule
                        .host
                        .clone()
                        .filter(|h| !h.is_empty())
                        .unwrap_or_else(|| "*".into());
                    let paths = rule
                        .http
                        .as_ref()
                        .map(|h| h.paths.as_slice())
                        .unwrap_or_default();
                    if paths.is_empty() {
                        let backends = spec
                            .default_backend
                            .as_ref()
                            .and_then(backend)
                            .into_iter()
                            .collect();
                        found.push(Found {
                            kind: "Ingress",
                            host: host.clone(),
                            path: "/".into(),
                            object: object.clone(),
                            why: why.clone(),
                            load_balancer: load_balancer.clone(),
                            listeners: listeners.clone(),
                            backends,
                        });
                    }
                    for p in paths {
                        found.push(Found {
                            kind: "Ingress",
                            host: host.clone(),
                            path: p
                                .path
                                .clone()
                                .filter(|p| !p.is_empty())
                                .unwrap_or_else(|| "/".into()),
                            object: object.clone(),
                            why: why.clone(),
                            load_balancer: load_balancer.clone(),
                            listeners: listeners.clone(),
                            backends: backend(&p.backend).into_iter().collect(),
                        });
                    }
                }
                if spec.rules.is_empty()
                    && let Some(b) = spec.default_backend.as_ref().and_then(backend)
                {
                    found.push(Found {
                        kind: "Ingress",
                        host: "*".into(),
                        path: "/".into(),
                        object,
                        why,
                        load_balancer,
                        listeners,
                        backends: vec![b],
                    });
                }
            }
            Body::Service(s) if s.type_.as_deref() == Some("LoadBalancer") => {
                found.push(Found {
                    kind: "Service",
                    host: object.clone(),
                    path: String::new(),
                    object: object.clone(),
                    why: service_public(o, s),
                    load_balancer: format!("Service {object}"),
                    listeners: None,
                    backends: vec![(ns, o.meta.name.clone())],
                });
            }
            Body::HttpRoute(r) => {
                let why = r.parent_refs.iter().find_map(|p| {
                    if p.kind.as_deref().is_some_and(|k| k != "Gateway") {
                        return None;
                    }
                    let gns = p.namespace.as_deref().unwrap_or(&ns);
                    let key = format!("{gns}/{}", p.name);
                    if cfg.exposure.public_gateways.contains(&key) {
                        return Some(format!("gateway {key} is public (config)"));
                    }
                    gateways
                        .get(&(gns, p.name.as_str()))
                        .filter(|g| annotated_public(&g.meta.annotations))
                        .map(|_| format!("gateway {key} is annotated {PUBLIC_ANNOTATION}"))
                });
                // A route rides on every Gateway it names (Gateway API, HTTPRoute `parentRefs`:
                // https://gateway-api.sigs.k8s.io/api-types/httproute/#spec).
                let parents: Vec<String> = r
                    .parent_refs
                    .iter()
                    .filter(|p| p.kind.as_deref().is_none_or(|k| k == "Gateway"))
                    .map(|p| format!("{}/{}", p.namespace.as_deref().unwrap_or(&ns), p.name))
                    .collect();
                let load_balancer = format!("Gateway {}", parents.join(", "));
                let hosts: Vec<String> = if r.hostnames.is_empty() {
                    vec!["*".into()]
                } else {
                    r.hostnames.clone()
                };
                for rule in &r.rules {
                    let backends: Vec<(String, String)> = rule
                        .backend_refs
                        .iter()
                        .filter(|b| b.kind.as_deref().is_none_or(|k| k == "Service"))
                        .map(|b| {
                            (
                                b.namespace.clone().unwrap_or_else(|| ns.clone()),
                                b.name.clone(),
                            )
                        })
                        .collect();
                    let matches: Vec<String> = if rule.matches.is_empty() {
                        vec!["PathPrefix /".into()]
                    } else {
                        rule.matches
                            .iter()
                            .map(|m| {
                                let mut s = match &m.path {
                                    Some(p) => format!(
                                        "{} {}",
                                        p.type_.as_deref().unwrap_or("PathPrefix"),
                                        p.value.as_deref().unwrap_or("/")
                                    ),
                                    None => "PathPrefix /".into(),
                                };
                                if let Some(method) = &m.method {
                                    s.push_str(&format!(" method={method}"));
                                }
                                if !m.headers.is_empty() {
                                    s.push_str(&format!(" +{} header match(es)", m.headers.len()));
                                }
                                s
                            })
                            .collect()
                    };
                    for h in &hosts {
                        for m in &matches {
                            found.push(Found {
                                kind: "HTTPRoute",
                                host: h.clone(),
                                path: m.clone(),
                                object: object.clone(),
                                why: why.clone(),
                                load_balancer: load_balancer.clone(),
                                listeners: None,
                                backends: backends.clone(),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// Merges duplicate (kind, host, path) routes and follows each to its pods and workloads.
fn trace(
    objects: &[Object],
    found: Vec<Found>,
    workloads: &mut Workloads<'_>,
    tenants: &Resolver<'_>,
) -> Result<Routes, Overflow> {
    let services: HashMap<(&str, &str), &ServiceSpec> = objects
        .iter()
        .filter_map(|o| match &o.body {
            Body::Service(s) => Some(((o.namespace(), o.meta.name.as_str()), &**s)),
            _ => None,
        })
        .collect();
    let mut pods_by_ns: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, o) in objects.iter().enumerate() {
        if matches!(o.body, Body::Pod(_)) && PodState::of(o) != PodState::Terminal {
            pods_by_ns.entry(o.namespace()).or_default().push(i);
        }
    }

    struct Merged {
        objects: BTreeSet<String>,
        why: BTreeSet<String>,
        backends: BTreeSet<(String, String)>,
    }
    let mut merged: BTreeMap<(&'static str, String, String), Merged> = BTreeMap::new();
    for f in found {
        let m = merged
            .entry((f.kind, f.host, f.path))
            .or_insert_with(|| Merged {
                objects: BTreeSet::new(),
                why: BTreeSet::new(),
                backends: BTreeSet::new(),
            });
        m.objects.insert(f.object);
        m.why.extend(f.why);
        m.backends.extend(f.backends);
    }

    let mut routes = Routes {
        rows: Vec::new(),
        per_workload: HashMap::new(),
        per_tenant: HashMap::new(),
    };
    for ((kind, host, path), m) in merged {
        let mut workload_names = BTreeSet::new();
        let mut tenant_names = BTreeSet::new();
        let mut gpu_workloads = BTreeSet::new();
        for (ns, name) in &m.backends {
            let Some(spec) = services.get(&(ns.as_str(), name.as_str())) else {
                continue;
            };
            if spec.selector.is_empty() {
                continue;
            }
            for &p in pods_by_ns
                .get(ns.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let Some(pod) = objects.get(p) else {
                    continue;
                };
                let labels = &pod.meta.labels;
                if !spec.selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                    continue;
                }
                let Some(r) = workloads
                    .roots
                    .resolve(p)
                    .and_then(|root| workloads.roots.list.get(root))
                else {
                    continue;
                };
                workload_names.insert(r.id.to_string());
                if let Some(top) = objects.get(r.top) {
                    tenant_names.insert(tenants.tenant(&top.meta.labels, &r.id.namespace));
                }
                if let Some(w) = workloads.workload_of_object(p) {
                    gpu_workloads.insert(w);
                }
            }
        }
        for w in &gpu_workloads {
            *routes.per_workload.entry(*w).or_default() += 1;
        }
        for t in &tenant_names {
            *routes.per_tenant.entry(t.clone()).or_default() += 1;
        }
        let route_name = format!("{kind} route {host}{path}");
        routes.rows.push(RouteRow {
            kind: kind.to_string(),
            host,
            path,
            objects: m.objects.into_iter().collect(),
            public_because: m.why.into_iter().collect::<Vec<_>>().join("; "),
            services: m
                .backends
                .iter()
                .map(|(ns, n)| format!("{ns}/{n}"))
                .collect(),
            workloads: workload_names.into_iter().collect(),
            tenants: tenant_names.into_iter().collect(),
            gpus: sum::sum(
                gpu_workloads
                    .iter()
                    .filter_map(|&w| workloads.list.get(w))
                    .map(|w| w.requested.whole),
            )
            .named(&route_name, "GPUs behind it")?,
        });
    }
    Ok(routes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;
    use crate::workload::owners;

    const BACKEND: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: web, labels: {tenant: acme}}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: web}
spec: {selector: {app: api}}
---
apiVersion: v1
kind: Pod
metadata: {name: api-0, namespace: web, labels: {app: api}}
spec:
  nodeName: n1
  containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]
"#;

    fn routes(extra: &str, cfg: &str) -> Vec<RouteRow> {
        let objs = read_str(&format!("{BACKEND}---\n{extra}"), "t.yaml").unwrap();
        let cfg = Config::parse(cfg, "c").unwrap();
        let mut w = owners::build(&objs).unwrap();
        let t = Resolver::new(&cfg.tenancy, &objs);
        public_routes(&objs, &cfg, &mut w, &t).unwrap().rows
    }

    fn ingress(name: &str, annotations: &str, class: &str, rules: &str) -> String {
        format!(
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {name}\n  namespace: web\n  annotations: {{{annotations}}}\nspec:\n  {class}\n  rules:\n{rules}\n"
        )
    }

    const TWO_PATHS: &str = "  - host: a.example.com\n    http:\n      paths:\n      - {path: /v1, backend: {service: {name: api}}}\n      - {path: /v2, backend: {service: {name: api}}}";

    #[test]
    fn alb_scheme_decides_and_defaults_to_internal() {
        let r = routes(
            &ingress(
                "i",
                "alb.ingress.kubernetes.io/scheme: internet-facing",
                "",
                TWO_PATHS,
            ),
            "",
        );
        assert_eq!(r.len(), 2, "each (host, path) counts once");
        assert_eq!(r[0].tenants, ["acme"]);
        assert_eq!(r[0].gpus, 2);
        assert_eq!(r[0].workloads, ["web/Pod/api-0"]);
        assert!(routes(&ingress("i", "", "", TWO_PATHS), "").is_empty());
        assert!(
            routes(
                &ingress(
                    "i",
                    "alb.ingress.kubernetes.io/scheme: internal",
                    "",
                    TWO_PATHS
                ),
                ""
            )
            .is_empty()
        );
    }

    #[test]
    fn an_ingress_group_shares_one_scheme() {
        let rule = "  - host: b.example.com\n    http:\n      paths:\n      - {path: /, backend: {service: {name: api}}}";
        let docs = format!(
            "{}---\n{}---\n{}",
            ingress(
                "a",
                "alb.ingress.kubernetes.io/group.name: shared, alb.ingress.kubernetes.io/scheme: internet-facing",
                "",
                TWO_PATHS
            ),
            ingress(
                "b",
                "alb.ingress.kubernetes.io/group.name: shared",
                "",
                rule
            ),
            ingress(
                "c",
                "alb.ingress.kubernetes.io/group.name: other",
                "",
                "  - host: c.example.com\n    http:\n      paths:\n      - {path: /, backend: {service: {name: api}}}"
            ),
        );
        let r = routes(&docs, "");
        let hosts: Vec<&str> = r.iter().map(|x| x.host.as_str()).collect();
        assert_eq!(hosts, ["a.example.com", "a.example.com", "b.example.com"]);
        assert!(r[2].public_because.contains("ALB group shared"));
    }

    #[test]
    fn public_class_and_annotation() {
        let r = routes(
            &ingress("i", "", "ingressClassName: nginx-public", TWO_PATHS),
            "exposure: {public_ingress_classes: [nginx-public]}\n",
        );
        assert_eq!(r.len(), 2);
        assert!(r[0].public_because.contains("nginx-public"));
        assert!(
            routes(
                &ingress("i", "", "ingressClassName: nginx-public", TWO_PATHS),
                ""
            )
            .is_empty()
        );
        let r = routes(
            &ingress("i", "gpuledger.io/public: \"true\"", "", TWO_PATHS),
            "",
        );
        assert_eq!(r.len(), 2);
        // The same (host, path) in two public Ingresses is one route.
        let docs = format!(
            "{}---\n{}",
            ingress("x", "gpuledger.io/public: \"true\"", "", TWO_PATHS),
            ingress("y", "gpuledger.io/public: \"true\"", "", TWO_PATHS)
        );
        let r = routes(&docs, "");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].objects, ["web/x", "web/y"]);
    }

    fn lb(annotations: &str, extra_spec: &str) -> usize {
        let svc = format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: lb\n  namespace: web\n  annotations: {{{annotations}}}\nspec:\n  type: LoadBalancer\n  selector: {{app: api}}\n{extra_spec}"
        );
        routes(&svc, "").len()
    }

    #[test]
    fn load_balancer_services() {
        assert_eq!(
            lb("", ""),
            1,
            "a plain LoadBalancer is public by cloud default"
        );
        assert_eq!(
            lb(
                "service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing",
                ""
            ),
            1
        );
        assert_eq!(
            lb(
                "service.beta.kubernetes.io/aws-load-balancer-internal: \"true\"",
                ""
            ),
            0
        );
        assert_eq!(lb("networking.gke.io/load-balancer-type: Internal", ""), 0);
        assert_eq!(
            lb(
                "service.beta.kubernetes.io/azure-load-balancer-internal: \"true\"",
                ""
            ),
            0
        );
        // Managed by the AWS Load Balancer Controller: internal unless the scheme says otherwise.
        assert_eq!(
            lb(
                "service.beta.kubernetes.io/aws-load-balancer-type: external",
                ""
            ),
            0
        );
        assert_eq!(lb("", "  loadBalancerClass: service.k8s.aws/nlb\n"), 0);
        assert_eq!(
            lb(
                "service.beta.kubernetes.io/aws-load-balancer-type: external, service.beta.kubernetes.io/aws-load-balancer-scheme: internet-facing",
                ""
            ),
            1
        );
        let cluster_ip = "apiVersion: v1\nkind: Service\nmetadata: {name: c, namespace: web}\nspec: {selector: {app: api}}\n";
        assert!(routes(cluster_ip, "").is_empty());
    }

    const ROUTE: &str = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: web}\nspec:\n  parentRefs: [{name: gw, namespace: infra}]\n  hostnames: [a.example.com, b.example.com]\n  rules:\n  - matches: [{path: {type: PathPrefix, value: /v1}}, {path: {type: Exact, value: /health}}]\n    backendRefs: [{name: api, port: 80}]\n";

    #[test]
    fn httproutes_count_per_hostname_and_match_behind_public_gateways() {
        let gw = |annotations: &str| {
            format!(
                "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: gw\n  namespace: infra\n  annotations: {{{annotations}}}\n---\n{ROUTE}"
            )
        };
        assert!(
            routes(&gw(""), "").is_empty(),
            "an unlisted gateway is not public"
        );
        let r = routes(&gw(""), "exposure: {public_gateways: [infra/gw]}\n");
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].tenants, ["acme"]);
        assert_eq!(routes(&gw("gpuledger.io/public: \"true\""), "").len(), 4);
    }
}
