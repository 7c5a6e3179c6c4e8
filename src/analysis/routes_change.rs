//! The routing blast radius of a change: every public route the change adds, removes or alters,
//! each traced before and after to what is behind it — Service → workloads → GPUs → tenants.
//!
//! Routes are those [`super::exposure`] counts (Ingress rules, `type: LoadBalancer` Services,
//! HTTPRoute matches), read on both sides of the change whether public or internal, so that a route
//! that turns internal ↔ internet-facing is seen from both sides. A route is shown when it is public
//! on either side. Exposure follows the load balancer a route rides on: all Ingresses of one ALB
//! group share one load balancer and so one scheme (the scheme annotation is "Exclusive" within an
//! IngressGroup, and `internal` by default — AWS Load Balancer Controller, Ingress annotations:
//! https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/),
//! so one member's scheme change moves every route of the group; an HTTPRoute is exposed by the
//! Gateways its `parentRefs` attach it to (Gateway API, HTTPRoute:
//! https://gateway-api.sigs.k8s.io/api-types/httproute/#attaching-to-gateways).
//!
//! Git holds no pods, so a Service is traced to the objects whose pod templates its selector
//! matches (a Deployment's, a Job's, a LeaderWorkerSet's), and their GPUs are the declared ones.
//! A route that leaves an object and reappears on the same object with the same Services at
//! another host or path has moved; one that keeps its host and path but reaches other workloads
//! (a backend, or a Service's selector, changed) is re-routed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::config::Config;
use crate::k8s::object::{Body, Kind, Object};
use crate::k8s::types::LabelMap;
use crate::report::{Desired, RouteChange, RouteChangeKind, RouteRow, RouteSide, RouteToday};
use crate::util::sum::{self, Named, Overflow};
use crate::workload::WorkloadId;

use super::exposure;
use super::tenancy::Resolver;

/// Whether a rendered object is one a route is made of or traced through (kept in
/// [`Desired::routing`]).
pub fn routing(o: &Object) -> bool {
    matches!(
        o.typed_kind(),
        Kind::Service | Kind::Ingress | Kind::Gateway | Kind::HttpRoute | Kind::Namespace
    ) || (o.meta.owner_references.is_empty()
        && (!templates(o).is_empty() || o.typed_kind() == Kind::DynamoGraphDeployment))
}

/// The pod-template labels of an object that runs pods (its own labels for a bare Pod).
fn templates(o: &Object) -> Vec<&LabelMap> {
    match &o.body {
        Body::Pod(_) => vec![&o.meta.labels],
        Body::Replicated(s) => vec![&s.template.metadata.labels],
        Body::Job(j) => vec![&j.spec.template.metadata.labels],
        Body::CronJob(c) => vec![&c.job_template.spec.template.metadata.labels],
        Body::LeaderWorkerSet(l) => {
            let t = &l.leader_worker_template;
            let mut v = vec![&t.worker_template.metadata.labels];
            v.extend(t.leader_template.as_ref().map(|l| &l.metadata.labels));
            v
        }
        _ => Vec::new(),
    }
}

type Key = (&'static str, String, String);

/// An object that runs pods, as a Service's selector finds it.
struct Runner<'a> {
    /// Its pod templates' labels.
    templates: Vec<&'a LabelMap>,
    /// `namespace/Kind/name`.
    id: String,
    /// Its declared GPUs.
    gpus: u64,
    tenant: String,
}

/// One route on one side, merged over the objects that declare it and traced.
#[derive(Debug, Clone)]
struct Traced {
    kind: &'static str,
    side: RouteSide,
    public: bool,
    /// The workloads behind it with their declared GPUs.
    gpus: BTreeMap<String, u64>,
    tenants: BTreeSet<String>,
}

/// Every route of one side, public or not, traced through that side's objects; tenants resolved
/// as every section resolves them (the cluster's Namespace labels in `live` first).
fn side<'a>(
    d: &'a Desired,
    cfg: &'a Config,
    live: &'a [Object],
) -> Result<BTreeMap<Key, Traced>, Overflow> {
    let objects = d.routing.as_slice();
    let resolver = Resolver::of_run(&cfg.tenancy, live, objects);
    // A GPU workload's declared GPUs and its tenant as the desired state resolved it (the
    // cluster's Namespace labels when the live state was read: the tenant every other section
    // shows); a workload without GPUs gets its tenant from this side's objects.
    let declared: HashMap<(&str, &str, &str), (u64, &str)> = d
        .workloads
        .iter()
        .map(|w| {
            let x = &w.workload;
            (
                (x.namespace.as_str(), x.kind.as_str(), x.name.as_str()),
                // Its declared GPUs; when a DRA claim cannot be counted (`gpus_declared` null),
                // what can be counted of them (a desired row's `gpus`), and the check's delta
                // says unknown.
                (x.gpus_declared.unwrap_or(x.gpus), x.tenant.as_str()),
            )
        })
        .collect();
    let services: HashMap<(&str, &str), &LabelMap> = objects
        .iter()
        .filter_map(|o| match &o.body {
            Body::Service(s) => Some(((o.namespace(), o.meta.name.as_str()), &s.selector)),
            _ => None,
        })
        .collect();
    let mut runners: HashMap<&str, Vec<Runner<'_>>> = HashMap::new();
    for o in objects
        .iter()
        .filter(|o| o.meta.owner_references.is_empty())
    {
        let t = templates(o);
        if t.is_empty() {
            continue;
        }
        let ns = o.namespace();
        let id = WorkloadId::new(ns, o.group(), &o.kind, &o.meta.name).to_string();
        let (gpus, tenant) = match declared.get(&(ns, o.kind.as_str(), o.meta.name.as_str())) {
            Some(&(gpus, tenant)) => (gpus, tenant.to_string()),
            None => (0, resolver.tenant(&o.meta.labels, ns)),
        };
        runners.entry(ns).or_default().push(Runner {
            templates: t,
            id,
            gpus,
            tenant,
        });
    }

    struct Merged {
        objects: BTreeSet<String>,
        why: BTreeSet<String>,
        lbs: BTreeSet<String>,
        listeners: BTreeSet<String>,
        backends: BTreeSet<(String, String)>,
    }
    let mut merged: BTreeMap<Key, Merged> = BTreeMap::new();
    for f in exposure::collect(objects, cfg) {
        let m = merged
            .entry((f.kind, f.host, f.path))
            .or_insert_with(|| Merged {
                objects: BTreeSet::new(),
                why: BTreeSet::new(),
                lbs: BTreeSet::new(),
                listeners: BTreeSet::new(),
                backends: BTreeSet::new(),
            });
        m.objects.insert(f.object);
        m.why.extend(f.why);
        m.lbs.insert(f.load_balancer);
        m.listeners.extend(f.listeners);
        m.backends.extend(f.backends);
    }

    let mut out = BTreeMap::new();
    for (key, m) in merged {
        let mut gpus = BTreeMap::new();
        let mut tenants = BTreeSet::new();
        for (ns, name) in &m.backends {
            let Some(selector) = services.get(&(ns.as_str(), name.as_str())) else {
                continue;
            };
            if selector.is_empty() {
                continue;
            }
            for w in runners.get(ns.as_str()).into_iter().flatten() {
                if w.templates
                    .iter()
                    .any(|l| selector.iter().all(|(k, v)| l.get(k) == Some(v)))
                {
                    gpus.insert(w.id.clone(), w.gpus);
                    tenants.insert(w.tenant.clone());
                }
            }
        }
        let public = !m.why.is_empty();
        let name = format!("{} route {}{}", key.0, key.1, key.2);
        let total = sum::sum(gpus.values().copied()).named(&name, "GPUs behind it")?;
        let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        let side = RouteSide {
            host: key.1.clone(),
            path: key.2.clone(),
            exposure: if public {
                "internet-facing"
            } else {
                "internal"
            }
            .into(),
            public_because: m.why.iter().cloned().collect::<Vec<_>>().join("; "),
            load_balancer: join(&m.lbs),
            listeners: (!m.listeners.is_empty()).then(|| join(&m.listeners)),
            objects: m.objects.into_iter().collect(),
            services: m
                .backends
                .iter()
                .map(|(ns, n)| format!("{ns}/{n}"))
                .collect(),
            workloads: gpus.keys().cloned().collect(),
            tenants: tenants.iter().cloned().collect(),
            gpus: total,
        };
        let kind = key.0;
        out.insert(
            key,
            Traced {
                kind,
                side,
                public,
                gpus,
                tenants,
            },
        );
    }
    Ok(out)
}

fn at(s: &RouteSide) -> String {
    if s.path.is_empty() {
        s.host.clone()
    } else if s.path.starts_with('/') {
        format!("{}{}", s.host, s.path)
    } else {
        format!("{} {}", s.host, s.path)
    }
}

fn workloads(s: &RouteSide) -> String {
    if s.workloads.is_empty() {
        "no workload found".into()
    } else {
        format!("{} ({} GPUs)", s.workloads.join(", "), s.gpus)
    }
}

/// What changed between two sides of one route, when anything did.
fn compare(b: &Traced, h: &Traced) -> Option<(RouteChangeKind, String)> {
    let (x, y) = (&b.side, &h.side);
    if b.public != h.public {
        let lb = if x.load_balancer == y.load_balancer {
            y.load_balancer.clone()
        } else {
            format!("{} → {}", x.load_balancer, y.load_balancer)
        };
        return Some((
            RouteChangeKind::Exposure,
            format!("{} → {} ({lb})", x.exposure, y.exposure),
        ));
    }
    if x.workloads != y.workloads {
        return Some((
            RouteChangeKind::Rerouted,
            format!("reaches {} instead of {}", workloads(y), workloads(x)),
        ));
    }
    if x.load_balancer != y.load_balancer {
        return Some((
            RouteChangeKind::Altered,
            format!(
                "carried by {} instead of {}",
                y.load_balancer, x.load_balancer
            ),
        ));
    }
    if x.listeners != y.listeners {
        let l = |s: &Option<String>| s.clone().unwrap_or_else(|| "the default".into());
        return Some((
            RouteChangeKind::Altered,
            format!("listeners {} → {}", l(&x.listeners), l(&y.listeners)),
        ));
    }
    if x.services != y.services {
        return Some((
            RouteChangeKind::Rerouted,
            format!(
                "backend {} → {}",
                x.services.join(", "),
                y.services.join(", ")
            ),
        ));
    }
    None
}

/// The routes the change adds, removes or alters, exposure flips first, then by GPUs behind them.
/// `live` is the live inventory's public routes, when the check has a live state;
/// `live_objects` the live objects (empty without a live state), whose Namespace labels decide
/// tenants as they do everywhere else.
pub fn routes(
    base: &Desired,
    head: &Desired,
    cfg: &Config,
    live: Option<&[RouteRow]>,
    live_objects: &[Object],
) -> Result<Vec<RouteChange>, Overflow> {
    let (b, h) = (
        side(base, cfg, live_objects)?,
        side(head, cfg, live_objects)?,
    );
    let mut rows: Vec<(Option<&Traced>, Option<&Traced>, RouteChangeKind, String)> = Vec::new();
    let mut removed: Vec<&Traced> = Vec::new();
    let mut added: Vec<&Traced> = Vec::new();
    for (k, x) in &b {
        match h.get(k) {
            Some(y) => {
                if (x.public || y.public)
                    && let Some((change, summary)) = compare(x, y)
                {
                    rows.push((Some(x), Some(y), change, summary));
                }
            }
            None if x.public => removed.push(x),
            None => {}
        }
    }
    for (k, y) in &h {
        if y.public && !b.contains_key(k) {
            added.push(y);
        }
    }
    // A route that left an object and reappears on it, with the same Services, has moved.
    for x in removed {
        let same = |y: &&Traced| {
            y.side.objects == x.side.objects
                && y.side.services == x.side.services
                && !y.side.services.is_empty()
        };
        match added.iter().position(same) {
            Some(i) => {
                let y = added.remove(i);
                let summary = format!("moved from {} to {}", at(&x.side), at(&y.side));
                rows.push((Some(x), Some(y), RouteChangeKind::Moved, summary));
            }
            None => rows.push((
                Some(x),
                None,
                RouteChangeKind::Removed,
                format!("no longer served (was on {})", x.side.load_balancer),
            )),
        }
    }
    for y in added {
        rows.push((
            None,
            Some(y),
            RouteChangeKind::Added,
            format!("new {} route on {}", y.side.exposure, y.side.load_balancer),
        ));
    }

    let head_resolver = Resolver::of_run(&cfg.tenancy, live_objects, &head.routing);
    let mut out = Vec::new();
    for (x, y, change, summary) in rows {
        let mut gpus: BTreeMap<&String, u64> = BTreeMap::new();
        let mut tenants = BTreeSet::new();
        for t in x.into_iter().chain(y) {
            gpus.extend(t.gpus.iter().map(|(w, g)| (w, *g)));
            tenants.extend(t.tenants.iter().cloned());
        }
        let shown = y.or(x).map(|t| &t.side);
        let (host, path, kind) = match shown {
            Some(s) => (
                s.host.clone(),
                s.path.clone(),
                x.or(y).map_or("", |t| t.kind).to_string(),
            ),
            None => continue,
        };
        let name = format!("{kind} route {host}{path}");
        // Namespaces of the workloads behind it, for the contact keys of Git's Namespaces.
        let namespaces: BTreeSet<&str> = gpus.keys().filter_map(|w| w.split('/').next()).collect();
        let contacts: BTreeSet<String> = tenants
            .iter()
            .flat_map(|t| head_resolver.contacts(t, namespaces.iter().copied()))
            .collect();
        let today = live.map(|rows| {
            let want = x.or(y).map(|t| &t.side);
            let row = want.and_then(|w| {
                rows.iter()
                    .find(|r| r.kind == kind && r.host == w.host && r.path == w.path)
            });
            match row {
                Some(r) => RouteToday {
                    public: true,
                    workloads: r.workloads.clone(),
                    tenants: r.tenants.clone(),
                    gpus: r.gpus,
                },
                None => RouteToday {
                    public: false,
                    workloads: Vec::new(),
                    tenants: Vec::new(),
                    gpus: 0,
                },
            }
        });
        out.push(RouteChange {
            change,
            kind,
            host,
            path,
            summary,
            before: x.map(|t| t.side.clone()),
            after: y.map(|t| t.side.clone()),
            backends: gpus.keys().map(|w| w.to_string()).collect(),
            tenants: tenants.into_iter().collect(),
            contacts: contacts.into_iter().collect(),
            gpus: sum::sum(gpus.values().copied()).named(&name, "GPUs behind it")?,
            today,
        });
    }
    out.sort_by(|a, b| {
        (a.change != RouteChangeKind::Exposure)
            .cmp(&(b.change != RouteChangeKind::Exposure))
            .then(b.gpus.cmp(&a.gpus))
            .then_with(|| (&a.kind, &a.host, &a.path).cmp(&(&b.kind, &b.host, &b.path)))
    });
    Ok(out)
}

/// Why the routes are not all known: the apps that did not render on either side.
pub fn unknown(base: &Desired, head: &Desired) -> Option<String> {
    let why: Vec<String> = [("base", base), ("head", head)]
        .iter()
        .filter_map(|(side, d)| {
            d.unknown
                .get("gpus_declared")
                .map(|w| format!("at the {side}: {w}"))
        })
        .collect();
    (!why.is_empty()).then(|| {
        format!(
            "the routes of apps that did not render are unknown ({})",
            why.join("; ")
        )
    })
}

#[cfg(test)]
mod tests;
