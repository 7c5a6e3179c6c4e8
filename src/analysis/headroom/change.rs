//! Serving headroom at a change's head: for every serving workload the change reshapes — its
//! roles (replicas, GPUs per replica), or its pod template's GPU model (`nodeSelector`
//! `nvidia.com/gpu.product`), served model or engine flags — the capacity of the load test the
//! head names, held against the head's configuration ([`super::capacity`]), against production's
//! rate now, as `gpuledger headroom` computes it ([`super::fleet`]).
//!
//! A load test of another configuration than the head's is stale: unknown, with what it tested
//! against what the head declares. Without production (no live state, no Prometheus, no series
//! for the workload's pods) the headroom is unknown with why — never zero, never "fits".

use std::collections::{BTreeMap, BTreeSet};

use crate::config::HeadroomConfig;
use crate::intent::{LatencyBound, WorkClass};
use crate::k8s::object::{Body, Object};
use crate::k8s::types::{DynamoGraphSpec, PodTemplate, Text};
use crate::live::loadtest::{LoadTests, SETTINGS};
use crate::report::{
    Desired, DesiredWorkloadRow, Headroom, HeadroomChange, HeadroomRow, HeadroomVerdict,
};

use super::capacity::{self, Configuration, Side};
use super::fleet::{MODEL_LABEL, engine_flags};
use crate::analysis::nodes::GPU_PRODUCT_LABEL;

/// What a side's pod template says of the configuration: the served model, the GPU product it
/// selects, the serving-setting flags (each with every value its containers give, `""`: unset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Template {
    read: bool,
    model: Option<String>,
    gpu_types: BTreeSet<String>,
    settings: BTreeMap<String, BTreeSet<String>>,
}

/// A serving workload the change reshapes: its row at each side and its head's template.
pub struct Reshaped<'a> {
    base: &'a DesiredWorkloadRow,
    head: &'a DesiredWorkloadRow,
    template: Template,
}

impl Reshaped<'_> {
    /// `gpuledger.io/load-test` at the head, as written.
    pub fn load_test(&self) -> Option<&str> {
        self.head.workload.intent.as_ref()?.load_test.as_deref()
    }
}

/// Whether a workload is one headroom is about: a serving workload, or one whose intent names a
/// load test or a latency objective (as `gpuledger headroom` chooses them).
fn serving(w: &DesiredWorkloadRow) -> bool {
    let intent = w.workload.intent.as_ref();
    w.workload.intent_facts.class == WorkClass::Serving
        || intent.is_some_and(|i| i.load_test.is_some() || !i.latency_objective.is_empty())
}

/// The serving workloads on both sides whose roles or pod template the change reshapes.
pub fn reshaped<'a>(base: &'a Desired, head: &'a Desired) -> Vec<Reshaped<'a>> {
    let key = |w: &DesiredWorkloadRow| (w.cluster.clone(), w.workload.id());
    let b: BTreeMap<_, &DesiredWorkloadRow> = base.workloads.iter().map(|w| (key(w), w)).collect();
    let mut out = Vec::new();
    for h in head.workloads.iter().filter(|w| serving(w)) {
        let Some(bw) = b.get(&key(h)) else { continue };
        let (bt, ht) = (template(&base.routing, bw), template(&head.routing, h));
        if bw.workload.roles != h.workload.roles || bt != ht {
            out.push(Reshaped {
                base: bw,
                head: h,
                template: ht,
            });
        }
    }
    out
}

/// The pod templates of the object that declares `w`, read into a [`Template`].
fn template(objects: &[Object], w: &DesiredWorkloadRow) -> Template {
    let x = &w.workload;
    let Some(o) = objects.iter().find(|o| {
        o.meta.owner_references.is_empty()
            && o.kind == x.kind
            && o.group() == x.api_group
            && o.meta.name == x.name
            && (o.namespace() == x.namespace || o.namespace().is_empty())
    }) else {
        return Template::default();
    };
    if let Body::DynamoGraph(g) = &o.body {
        return dynamo_template(g);
    }
    let templates: Vec<&PodTemplate> = match &o.body {
        Body::Replicated(s) => vec![&s.template],
        Body::Job(j) => vec![&j.spec.template],
        Body::CronJob(c) => vec![&c.job_template.spec.template],
        Body::LeaderWorkerSet(l) => {
            let t = &l.leader_worker_template;
            let mut v = vec![&t.worker_template];
            v.extend(t.leader_template.as_ref());
            v
        }
        _ => Vec::new(),
    };
    if templates.is_empty() {
        return Template::default();
    }
    let mut t = Template {
        read: true,
        ..Template::default()
    };
    for p in templates {
        let (model, flags) = engine_flags(
            p.spec
                .containers
                .iter()
                .flat_map(|c| c.command.iter().chain(&c.args).map(Text::as_str)),
        );
        if t.model.is_none() {
            t.model = model.or_else(|| p.metadata.labels.get(MODEL_LABEL).map(|m| m.to_string()));
        }
        if let Some(g) = p.spec.node_selector.get(GPU_PRODUCT_LABEL) {
            t.gpu_types.insert(g.to_string());
        }
        for k in SETTINGS {
            let v = flags.get(k).cloned().unwrap_or_default();
            t.settings.entry(k.to_string()).or_default().insert(v);
        }
    }
    t
}

/// A Dynamo graph's workers (`componentType: worker`, ai-dynamo/dynamo
/// `deploy/operator/api/v1alpha1/dynamographdeployment_types.go`): the model and serving flags of
/// each one's `extraPodSpec.mainContainer`. Its frontends serve no model and set no engine flag.
fn dynamo_template(g: &DynamoGraphSpec) -> Template {
    let mut t = Template {
        read: true,
        ..Template::default()
    };
    let workers = g.services.iter().flatten().map(|(_, s)| s);
    for s in workers.filter(|s| s.component_type.as_deref() == Some("worker")) {
        let main = s.extra_pod_spec.main_container.as_ref();
        let (model, flags) = engine_flags(
            main.into_iter()
                .flat_map(|c| c.command.iter().chain(&c.args).map(String::as_str)),
        );
        if t.model.is_none() {
            t.model = model;
        }
        for k in SETTINGS {
            let v = flags.get(k).cloned().unwrap_or_default();
            t.settings.entry(k.to_string()).or_default().insert(v);
        }
    }
    t
}

/// Production now, by workload: the live fleet's headroom section (its production figures), or
/// why production is unknown for every workload.
pub type ProductionNow<'a> = Result<&'a Headroom, String>;

/// Each reshaped serving workload's headroom at the head's shape.
pub fn at_head(
    reshaped: &[Reshaped<'_>],
    load_tests: &LoadTests,
    production: &ProductionNow<'_>,
    cfg: &HeadroomConfig,
) -> Vec<HeadroomChange> {
    let mut out: Vec<HeadroomChange> = reshaped
        .iter()
        .map(|r| row(r, load_tests, production, cfg))
        .collect();
    out.sort_by(|a, b| (a.verdict, &a.workload).cmp(&(b.verdict, &b.workload)));
    out
}

fn row(
    r: &Reshaped<'_>,
    load_tests: &LoadTests,
    production: &ProductionNow<'_>,
    cfg: &HeadroomConfig,
) -> HeadroomChange {
    let x = &r.head.workload;
    let id = x.id();
    let objective: &[LatencyBound] = x
        .intent
        .as_ref()
        .map(|i| i.latency_objective.as_slice())
        .unwrap_or(&[]);
    let t = &r.template;
    let c = Configuration {
        side: Side::Head,
        id: &id,
        roles: &x.roles,
        model: t.model.as_deref(),
        gpu_types: Some(&t.gpu_types),
        settings: t.read.then_some(&t.settings),
    };
    let held = capacity::held(r.load_test(), &c, load_tests, objective, cfg);
    let mut row = HeadroomChange {
        workload: id.to_string(),
        namespace: x.namespace.clone(),
        kind: x.kind.clone(),
        name: x.name.clone(),
        cluster: r.head.cluster.clone(),
        tenant: x.tenant.clone(),
        shape: x.shape.clone(),
        shape_base: Some(r.base.workload.shape.clone()),
        load_test: r.load_test().map(str::to_string),
        load_test_format: held.format,
        tested_rps: held.rps,
        tested_run: held.run,
        scaled: held.scaled,
        unverified: held.unverified,
        ..HeadroomChange::default()
    };
    if let Some(why) = held.unknown {
        row.unknown.insert("tested_rps".into(), why);
    }
    let now: Result<&HeadroomRow, String> = match production {
        Err(why) => Err(why.clone()),
        Ok(h) => h.workloads.iter().find(|w| w.id() == id).ok_or_else(|| {
            "not a serving workload of the live state (no pods to read its rate by)".to_string()
        }),
    };
    match now {
        Ok(p) => {
            row.production_metric = p.production_metric.clone();
            row.production_p95_rps = p.production_p95_rps;
            row.production_peak_rps = p.production_peak_rps;
            if let Some(why) = p.unknown.get("production_p95_rps") {
                row.unknown.insert("production_p95_rps".into(), why.clone());
            }
        }
        Err(why) => {
            row.unknown.insert("production_p95_rps".into(), why);
        }
    }
    match capacity::verdict(
        row.tested_rps,
        row.production_p95_rps,
        row.production_peak_rps,
        cfg.near_capacity,
    ) {
        Some((h, v)) => {
            row.headroom = Some(h);
            row.verdict = v;
        }
        None => {
            let why = [
                ("tested_rps", "capacity unknown"),
                ("production_p95_rps", "production unknown"),
            ]
            .iter()
            .filter_map(|(k, label)| Some(format!("{label}: {}", row.unknown.get(*k)?)))
            .collect::<Vec<_>>()
            .join("; ");
            row.unknown.insert(
                "headroom".into(),
                if why.is_empty() {
                    "the tested capacity is zero".into()
                } else {
                    why
                },
            );
            row.verdict = HeadroomVerdict::Unknown;
        }
    }
    row.summary = summary(&row);
    row
}

/// `serve/Deployment/chat: tested 11.9 req/s at the head's main 2×8 = 16, production p95 9.2 —
/// fits with 23%`; or `…: headroom unknown at the head's main 1×1 = 1 — stale load test: …;
/// production p95 2`.
fn summary(r: &HeadroomChange) -> String {
    let tested = r
        .tested_rps
        .map(|t| format!("tested {} req/s", capacity::round(t)));
    let p95 = r
        .production_p95_rps
        .map(|p| format!("production p95 {}", capacity::round(p)));
    let verdict = match (r.verdict, r.headroom) {
        (HeadroomVerdict::Fits, Some(h)) => format!("fits with {}", percent(h)),
        (HeadroomVerdict::NearCapacity, Some(h)) => match r.production_peak_rps.zip(r.tested_rps) {
            Some((peak, t)) if peak > t => format!(
                "near capacity: {} headroom, and the peak {} is above it",
                percent(h),
                capacity::round(peak)
            ),
            _ => format!("near capacity: {} headroom", percent(h)),
        },
        (HeadroomVerdict::Over, Some(h)) => format!("over by {}", percent(-h)),
        _ => {
            let why = |field: &str, known: Option<String>, label: &str| {
                known.unwrap_or_else(|| {
                    let w = r.unknown.get(field).map_or("unknown", String::as_str);
                    format!("{label}{w}")
                })
            };
            return format!(
                "{}: headroom unknown at the head's {} — {}; {}",
                r.workload,
                r.shape,
                why("tested_rps", tested, ""),
                why("production_p95_rps", p95, "production unknown: ")
            );
        }
    };
    format!(
        "{}: {} at the head's {}, {} — {verdict}",
        r.workload,
        tested.unwrap_or_default(),
        r.shape,
        p95.unwrap_or_default()
    )
}

/// `23%`, `7.5%`.
fn percent(x: f64) -> String {
    let p = x * 100.0;
    let s = format!("{p:.1}");
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}
