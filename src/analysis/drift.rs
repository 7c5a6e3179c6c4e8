//! Drift in both directions: the live GPU workloads against the workloads Git declares.
//!
//! Live workloads come in as [`Workload`]s, not report rows, and drift builds its own rows. They
//! match on their [`WorkloadId`] — namespace + API group + kind + name; a manifest without a
//! namespace, and no app to place it, lands in `default`, as `kubectl apply` would put it. They are
//! compared as normalised GPU shapes — per role: replicas, GPUs per replica, nodes per replica —
//! never as raw YAML, so a live DynamoGraphDeployment served as `v1beta1` matches its `v1alpha1`
//! manifest and `"8"` equals `8`. Replicas owned by an autoscaler (a Dynamo scaling adapter or
//! Planner, an HPA that targets the workload) are not compared; GPUs per replica still are.
//!
//! Accepted-drift rules hide matching drift until their date; an expired rule hides nothing and is
//! reported. "Today" is an input. Every live GPU workload lands in exactly one of unmanaged, changed,
//! in sync or accepted, so their GPUs add up to the fleet's requested GPUs.

use std::collections::{BTreeMap, HashMap, HashSet};

use similar::TextDiff;

use crate::config::{AcceptRule, Config};
use crate::k8s::object::{Body, Object, group_of};
use crate::report::{
    AcceptedBy, Desired, DesiredWorkloadRow, Drift, DriftCategory, DriftRow, ExpiredRule,
    ShapeSource, TenantCoverage,
};
use crate::util::date::Date;
use crate::util::number::{Digits, percent};
use crate::util::sum::{self, Named, Overflow};
use crate::util::text::count;
use crate::workload::claims::Dra;
use crate::workload::kinds::{declared_shape_with, shape_is_guess};
use crate::workload::{GpuShape, Role, Workload, WorkloadId, describe_change};

use super::shape_text::shape_text;
use super::tenancy::Resolver;

pub const ARGO_TRACKING: &str = "argocd.argoproj.io/tracking-id";
pub const ARGO_INSTANCE: &str = "app.kubernetes.io/instance";
pub const FLUX_KUSTOMIZATION: &str = "kustomize.toolkit.fluxcd.io/name";
pub const FLUX_HELM: &str = "helm.toolkit.fluxcd.io/name";

/// The key drift matches on: the workload's id where it is applied.
fn key(ns: &str, group: &str, kind: &str, name: &str) -> WorkloadId {
    WorkloadId::new(ns, group, kind, name).placed()
}

/// The GitOps app a live object names, if its tracking metadata is about this very object.
pub fn tracked_by(o: &Object) -> Option<String> {
    let a = &o.meta.annotations;
    if let Some(id) = a.get(ARGO_TRACKING) {
        // <app>:<group>/<Kind>:<namespace>/<name>; a copied annotation names another object: ignored.
        let mut parts = id.splitn(3, ':');
        let (app, gk, nn) = (parts.next()?, parts.next()?, parts.next()?);
        let (group, kind) = gk.split_once('/')?;
        let (ns, name) = nn.split_once('/')?;
        let same =
            group == o.group() && kind == o.kind && ns == o.namespace() && name == o.meta.name;
        return same.then(|| format!("argocd:{app}"));
    }
    let l = &o.meta.labels;
    if let Some(app) = l.get(ARGO_INSTANCE) {
        return Some(format!("argocd:{app}"));
    }
    if let Some(k) = l.get(FLUX_KUSTOMIZATION) {
        return Some(format!("flux-kustomization:{k}"));
    }
    l.get(FLUX_HELM).map(|h| format!("flux-helmrelease:{h}"))
}

/// How live tracking metadata ([`tracked_by`]) names an app of the repository.
fn tracking_name(kind: &str, name: &str) -> String {
    match kind {
        "Kustomization" => format!("flux-kustomization:{name}"),
        "HelmRelease" => format!("flux-helmrelease:{name}"),
        _ => format!("argocd:{name}"),
    }
}

/// The GPU-relevant spec as text, for a readable unified diff.
fn spec_text(kind: &str, roles: &[Role]) -> String {
    let mut s = format!("kind: {kind}\nroles:\n");
    for r in roles {
        s.push_str(&format!(
            "  {}:\n    replicas: {}{}\n    gpus_per_replica: {}\n    nodes_per_replica: {}\n",
            r.name,
            r.replicas,
            if r.autoscaled { "  # autoscaled" } else { "" },
            r.gpus_per_replica,
            r.nodes_per_replica
        ));
    }
    s
}

/// Whether two shapes differ, ignoring replicas of autoscaled roles.
fn differs(git: &[Role], live: &[Role], hpa: bool) -> bool {
    let by_name = |roles: &[Role]| {
        roles
            .iter()
            .map(|r| (r.name.clone(), r.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    let (g, l) = (by_name(git), by_name(live));
    if g.keys().ne(l.keys()) {
        return true;
    }
    g.iter().any(|(name, a)| {
        let Some(b) = l.get(name) else {
            return true;
        };
        let auto = hpa || a.autoscaled || b.autoscaled;
        a.gpus_per_replica != b.gpus_per_replica
            || a.nodes_per_replica != b.nodes_per_replica
            || (!auto && a.replicas != b.replicas)
    })
}

fn shape_str(roles: &[Role]) -> String {
    if roles.is_empty() {
        "no GPUs".into()
    } else {
        GpuShape {
            roles: roles.to_vec(),
            ..GpuShape::default()
        }
        .to_string()
    }
}

fn rule_label(r: &AcceptRule) -> String {
    let m = &r.matches;
    format!(
        "{}/{}/{}",
        m.namespace.as_deref().unwrap_or("*"),
        m.kind.as_deref().unwrap_or("*"),
        m.name.as_deref().unwrap_or("*")
    )
}

/// `live` are the live GPU workloads of `objects` ([`super::inventory::live_workloads`]).
/// Tenants resolve through `tenancy`, the run's resolver: the live fleet's
/// ([`super::live::LiveFleet::tenancy`]), built once and read by every step of the run.
pub fn drift(
    live: &[Workload],
    objects: &[Object],
    tenancy: &Resolver<'_>,
    desired: &Desired,
    cfg: &Config,
    today: Date,
) -> Result<Drift, Overflow> {
    // Live objects by key, for tracking metadata and for desired workloads whose live object holds
    // no GPUs (then it is changed, not missing).
    let mut by_key: HashMap<WorkloadId, &Object> = HashMap::new();
    let mut hpa_targets: HashSet<WorkloadId> = HashSet::new();
    for o in objects {
        if let Body::Hpa(h) = &o.body {
            let t = &h.scale_target_ref;
            hpa_targets.insert(key(
                o.namespace(),
                group_of(&t.api_version),
                &t.kind,
                &t.name,
            ));
        }
        if o.meta.owner_references.is_empty() {
            by_key.insert(key(o.namespace(), o.group(), &o.kind, &o.meta.name), o);
        }
    }
    let mut git: BTreeMap<WorkloadId, &DesiredWorkloadRow> = BTreeMap::new();
    // Every app that declares an object: two in one cluster make Git's side ambiguous.
    let mut apps_of: BTreeMap<WorkloadId, Vec<String>> = BTreeMap::new();
    for d in &desired.workloads {
        let id = d.workload.id().placed();
        let apps = apps_of.entry(id.clone()).or_default();
        let app = format!("{} {}", d.app_kind, d.app);
        if !apps.contains(&app) {
            apps.push(app);
        }
        git.entry(id).or_insert(d);
    }
    let ambiguous = |k: &WorkloadId| -> Vec<String> {
        apps_of
            .get(k)
            .filter(|a| a.len() > 1)
            .cloned()
            .unwrap_or_default()
    };
    // The first app that declares it without GPUs names it, as for `git`.
    let mut without_gpus: HashMap<WorkloadId, &str> = HashMap::new();
    for c in &desired.without_gpus {
        without_gpus
            .entry(c.id.clone().placed())
            .or_insert(c.app.as_str());
    }
    // A live object's claim templates and device classes, for the shape it declares.
    let dra = Dra::new(objects);

    let (active, expired_rules): (Vec<&AcceptRule>, Vec<&AcceptRule>) = cfg
        .accepted_drift
        .iter()
        .partition(|r| r.expires.is_none_or(|e| e >= today));
    let accept = |ns: &str, kind: &str, name: &str| {
        active
            .iter()
            .find(|r| r.matches.matches(ns, kind, name))
            .copied()
    };

    let mut out = Drift {
        summary: String::new(),
        coverage: None,
        coverage_by_tenant: Vec::new(),
        unmanaged: Vec::new(),
        missing: Vec::new(),
        changed: Vec::new(),
        in_sync: Vec::new(),
        queued: Vec::new(),
        accepted: Vec::new(),
        unknown: Vec::new(),
        expired: Vec::new(),
        desired_at: desired.at.clone(),
        desired_incomplete: desired.apps.iter().any(|a| a.unknown())
            || !desired.problems.is_empty(),
    };
    let mut tenants: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut matched: HashSet<WorkloadId> = HashSet::new();
    let mut drifted: Vec<WorkloadId> = Vec::new();

    // The apps that did not render (failed, or not rendered: a remote source offline, a plugin),
    // as live tracking metadata names them: a live workload one of them applied is unknown, not
    // unmanaged — what Git says of it could not be read.
    let failed: HashSet<String> = desired
        .apps
        .iter()
        .filter(|a| a.unknown())
        .map(|a| tracking_name(&a.kind, &a.name))
        .collect();
    // An app that failed to render may have applied apps of its own: a live workload tracked by an
    // app Git does not know is then unknown too, since that app may sit below the failed one.
    let known_apps: HashSet<String> = desired
        .apps
        .iter()
        .map(|a| tracking_name(&a.kind, &a.name))
        .collect();
    let below_failed = |t: &String| !failed.is_empty() && !known_apps.contains(t);
    let mut place = |out: &mut Drift, category: DriftCategory, mut row: DriftRow| {
        if category == DriftCategory::Unmanaged
            && let Some(app) = row
                .tracked_by
                .as_ref()
                .filter(|t| failed.contains(*t) || below_failed(t))
        {
            row.app = Some(app.clone());
            out.unknown.push(row);
            return;
        }
        if category != DriftCategory::InSync {
            drifted.push(row.workload_id());
            if let Some(r) = accept(&row.namespace, &row.kind, &row.name) {
                row.accepted_as = Some(category);
                row.rule = Some(AcceptedBy {
                    reason: r.reason.clone(),
                    owner: r.owner.clone(),
                    expires: r.expires.map(|d| d.to_string()),
                });
                out.accepted.push(row);
                return;
            }
        }
        match category {
            DriftCategory::Unmanaged => out.unmanaged.push(row),
            DriftCategory::Missing => out.missing.push(row),
            DriftCategory::Changed => out.changed.push(row),
            DriftCategory::InSync => out.in_sync.push(row),
            DriftCategory::Queued => out.queued.push(row),
        }
    };
    // Where each live job's Kueue Workload stands: one in Git's shape that waits for its quota is
    // queued, not in sync.
    let queue_states = super::queues::job_states(&crate::queues::Admission::read(objects));

    for w in live {
        let k = w.id.clone().placed();
        let tenant = tenancy.tenant(&w.labels, &w.id.namespace);
        let gpus = w.requested.whole;
        let roles = &w.shape.roles;
        let t = tenants.entry(tenant.clone()).or_default();
        let named_tenant = format!("tenant {tenant}");
        sum::add_to(&mut t.0, gpus).named(&named_tenant, "GPUs requested")?;
        let tracked = by_key.get(&k).and_then(|o| tracked_by(o));
        let hpa = hpa_targets.contains(&k);
        let mut row = DriftRow {
            namespace: w.id.namespace.clone(),
            api_group: w.id.group.clone(),
            kind: w.id.kind.clone(),
            name: w.id.name.clone(),
            tenant,
            gpus,
            gpus_git: Some(0),
            app: None,
            tracked_by: tracked,
            git: None,
            live: Some(roles.clone()),
            git_shape: None,
            live_shape: Some(noted(shape_text(&w.shape), w.shape_guessed)),
            autoscaled: hpa || roles.iter().any(|r| r.autoscaled),
            diff: None,
            change: None,
            created: w.created.map(|t| t.to_string()),
            age_days: w.created.map(|t| today.days_since(t.date()).max(0)),
            accepted_as: None,
            rule: None,
            git_source: None,
            ambiguous: Vec::new(),
            queue_state: queue_states
                .get(&format!("{}/{}/{}", w.id.namespace, w.id.kind, w.id.name))
                .copied(),
        };
        let cpu_only = without_gpus.get(&k);
        match git.get(&k) {
            // Git declares this workload without GPUs: it is managed, and its shape changed.
            None if cpu_only.is_some() => {
                matched.insert(k.clone());
                sum::add_to(&mut t.1, gpus).named(&named_tenant, "GPUs managed by Git")?;
                row.app = cpu_only.map(|app| app.to_string());
                row.git = Some(Vec::new());
                row.git_shape = Some(shape_str(&[]));
                set_diff(&mut row, &w.id.kind, &[], roles);
                place(&mut out, DriftCategory::Changed, row);
            }
            None => place(&mut out, DriftCategory::Unmanaged, row),
            Some(d) => {
                row.ambiguous = ambiguous(&k);
                matched.insert(k);
                sum::add_to(&mut t.1, gpus).named(&named_tenant, "GPUs managed by Git")?;
                let g = &d.workload;
                row.gpus_git = g.gpus_declared;
                row.app = Some(d.app.clone());
                row.git = Some(g.roles.clone());
                row.git_shape = Some(noted(g.shape.clone(), g.shape_source == ShapeSource::Guess));
                row.git_source = g.source.clone();
                row.autoscaled |= g.roles.iter().any(|r| r.autoscaled);
                if differs(&g.roles, roles, hpa) {
                    set_diff(&mut row, &w.id.kind, &g.roles, roles);
                    place(&mut out, DriftCategory::Changed, row);
                } else if row.queue_state.is_some() {
                    place(&mut out, DriftCategory::Queued, row);
                } else {
                    place(&mut out, DriftCategory::InSync, row);
                }
            }
        }
    }

    for (k, d) in &git {
        if matched.contains(k) {
            continue;
        }
        let g = &d.workload;
        let mut row = DriftRow {
            namespace: k.namespace.clone(),
            api_group: g.api_group.clone(),
            kind: g.kind.clone(),
            name: g.name.clone(),
            tenant: g.tenant.clone(),
            gpus: 0,
            gpus_git: g.gpus_declared,
            app: Some(d.app.clone()),
            tracked_by: None,
            git: Some(g.roles.clone()),
            live: None,
            git_shape: Some(noted(g.shape.clone(), g.shape_source == ShapeSource::Guess)),
            live_shape: None,
            autoscaled: g.roles.iter().any(|r| r.autoscaled),
            diff: None,
            change: None,
            created: None,
            age_days: None,
            accepted_as: None,
            rule: None,
            git_source: g.source.clone(),
            ambiguous: ambiguous(k),
            queue_state: None,
        };
        // The object is live but holds no GPUs now (scaled down, or a Job that has finished):
        // compare what it declares.
        if let Some(o) = by_key.get(k) {
            let roles = declared_shape_with(o, &|_, _, _| None, &dra)?
                .map(|s| s.roles)
                .unwrap_or_default();
            row.tracked_by = tracked_by(o);
            row.live_shape = Some(noted(shape_str(&roles), shape_is_guess(o)));
            if differs(&g.roles, &roles, hpa_targets.contains(k)) {
                set_diff(&mut row, &g.kind, &g.roles, &roles);
                row.live = Some(roles);
                place(&mut out, DriftCategory::Changed, row);
            } else {
                row.live = Some(roles);
                place(&mut out, DriftCategory::InSync, row);
            }
        } else {
            place(&mut out, DriftCategory::Missing, row);
        }
    }

    for r in expired_rules {
        out.expired.push(ExpiredRule {
            rule: rule_label(r),
            reason: r.reason.clone(),
            owner: r.owner.clone(),
            expired: r.expires.map(|d| d.to_string()).unwrap_or_default(),
            would_match: drifted
                .iter()
                .filter(|id| r.matches.matches(&id.namespace, &id.kind, &id.name))
                .map(ToString::to_string)
                .collect(),
        });
    }

    // Managed GPUs were counted as each live workload met Git, accepted or not.
    let total = sum::sum(tenants.values().map(|t| t.0)).named("the fleet", "GPUs requested")?;
    let managed =
        sum::sum(tenants.values().map(|t| t.1)).named("the fleet", "GPUs managed by Git")?;
    out.coverage = sum::ratio(managed, total);
    out.coverage_by_tenant = tenants
        .into_iter()
        .map(|(tenant, (req, man))| TenantCoverage {
            tenant,
            gpus_requested: req,
            gpus_managed: man,
            coverage: sum::ratio(man, req),
        })
        .collect();
    out.coverage_by_tenant.sort_by(|a, b| {
        b.gpus_requested
            .cmp(&a.gpus_requested)
            .then_with(|| a.tenant.cmp(&b.tenant))
    });

    let order = |v: &mut Vec<DriftRow>| {
        v.sort_by(|a, b| {
            (b.gpus.max(b.gpus_git.unwrap_or(0)))
                .cmp(&a.gpus.max(a.gpus_git.unwrap_or(0)))
                .then_with(|| {
                    (&a.namespace, &a.kind, &a.name).cmp(&(&b.namespace, &b.kind, &b.name))
                })
        })
    };
    for v in [
        &mut out.unknown,
        &mut out.unmanaged,
        &mut out.missing,
        &mut out.changed,
        &mut out.in_sync,
        &mut out.queued,
        &mut out.accepted,
    ] {
        order(v);
    }

    let unmanaged_gpus = sum::sum(out.unmanaged.iter().map(|r| r.gpus))
        .named("the unmanaged workloads", "GPUs requested")?;
    let mut summary = format!(
        "GitOps covers {} of requested GPUs; {} unmanaged workload{} hold{} {}; {} missing; {} changed",
        out.coverage
            .map_or("n/a".to_string(), |c| percent(c, Digits::Whole)),
        out.unmanaged.len(),
        if out.unmanaged.len() == 1 { "" } else { "s" },
        if out.unmanaged.len() == 1 { "s" } else { "" },
        count(unmanaged_gpus, "GPU"),
        out.missing.len(),
        out.changed.len()
    );
    if !out.queued.is_empty() {
        summary.push_str(&format!(
            "; {} waiting for queue quota",
            count(sum::count(out.queued.len()), "workload")
        ));
    }
    if !out.accepted.is_empty() {
        summary.push_str(&format!("; {} accepted", out.accepted.len()));
    }
    if !out.unknown.is_empty() {
        summary.push_str(&format!(
            "; {} unknown (applied by an app that failed to render)",
            out.unknown.len()
        ));
    }
    if !out.expired.is_empty() {
        summary.push_str(&format!(
            "; {} expired",
            count(sum::count(out.expired.len()), "acceptance rule")
        ));
    }
    out.summary = summary;
    Ok(out)
}

/// A changed row's unified diff and its one-line description, from Git's roles to the live ones.
fn set_diff(row: &mut DriftRow, kind: &str, git: &[Role], live: &[Role]) {
    row.diff = Some(diff(kind, git, live));
    row.change = Some(describe_change(git, live)).filter(|c| !c.is_empty());
}

fn diff(kind: &str, git: &[Role], live: &[Role]) -> String {
    let (a, b) = (spec_text(kind, git), spec_text(kind, live));
    TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header("git", "live")
        .to_string()
}

/// Rules that would accept today's unaccepted drift, as `.gpuledger.yaml` text for the user to edit.
pub fn suggest_accept(d: &Drift, today: Date) -> String {
    let mut out = String::from(
        "# Accepted-drift rules for today's drift: review, give each a reason and an owner, and commit to\n# .gpuledger.yaml. Each expires in 30 days unless you change the date.\naccepted_drift:\n",
    );
    let rows = d
        .unmanaged
        .iter()
        .map(|r| (DriftCategory::Unmanaged, r))
        .chain(d.missing.iter().map(|r| (DriftCategory::Missing, r)))
        .chain(d.changed.iter().map(|r| (DriftCategory::Changed, r)));
    let mut any = false;
    for (category, r) in rows {
        any = true;
        let gpus = |n: u64| {
            if n == 1 {
                "1 GPU".to_string()
            } else {
                format!("{n} GPUs")
            }
        };
        // The tenant answers for its drift until a person or team is named.
        out.push_str(&format!(
            "- match: {{namespace: {}, kind: {}, name: {}}}\n  reason: \"{}: {} live, {} in Git — explain why this is fine\"\n  owner: {} # the tenant: name the person or team who answers for it\n  expires: {}\n",
            yaml_str(&r.namespace),
            yaml_str(&r.kind),
            yaml_str(&r.name),
            category.as_str(),
            gpus(r.gpus),
            r.gpus_git.map_or("unknown".into(), |g| g.to_string()),
            yaml_str(&r.tenant),
            today.plus_days(30)
        ));
    }
    if !any {
        out.push_str("  [] # no unaccepted drift today\n");
    }
    out
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A shape as a drift row shows it, saying when it is a guess (a kind gpuledger does not model).
fn noted(shape: String, guess: bool) -> String {
    if guess {
        format!("{shape} (shape is a guess: unmodelled kind)")
    } else {
        shape
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::analysis::inventory::{inventory, live_workloads};
    use crate::k8s::read::read_str;
    use crate::report::WithoutGpus;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn deployment(ns: &str, name: &str, replicas: u64, gpus: u64) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {ns}, uid: {ns}-{name}}}\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers: [{{resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]\n---\n"
        )
    }

    fn pod(ns: &str, owner: &str, i: u64, gpus: u64, bound: bool) -> String {
        let node = if bound { "  nodeName: n1\n" } else { "" };
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {owner}-{i}\n  namespace: {ns}\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: {owner}, uid: {ns}-{owner}, controller: true}}]\nspec:\n{node}  containers: [{{resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]\n---\n"
        )
    }

    fn desired_from(yaml: &str, cfg: &Config) -> Desired {
        let git = read_str(yaml, "git.yaml").unwrap();
        Desired {
            at: "t".into(),
            gpus_declared: Some(0),
            gpus_declared_rendered: 0,
            unknown: Default::default(),
            source_hosts: Default::default(),
            routing: Vec::new(),
            queues: Vec::new(),
            intent_coverage: None,
            workloads: inventory(&git, cfg, vec![])
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
            tenancy: vec![],
            tenant_sources: Default::default(),
            duplicates: vec![],
            problems: vec![],
            without_gpus: vec![],
        }
    }

    #[test]
    fn a_finished_job_in_git_is_in_sync_not_changed() {
        let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n  parallelism: 2\n  template:\n    spec:\n      containers: [{resources: {limits: {nvidia.com/gpu: 4}}}]\n";
        let live = format!("{job}status:\n  conditions: [{{type: Complete, status: \"True\"}}]\n");
        let live_objs = read_str(&live, "live.yaml").unwrap();
        let cfg = Config::default();
        let report = inventory(&live_objs, &cfg, vec![]).unwrap();
        assert!(report.workloads.is_empty(), "a finished Job is history");
        let d = drift(
            &live_workloads(&live_objs).unwrap(),
            &live_objs,
            &Resolver::new(&cfg.tenancy, &live_objs),
            &desired_from(job, &cfg),
            &cfg,
            Date::parse("2026-11-30").unwrap(),
        )
        .unwrap();
        assert_eq!(
            (d.in_sync.len(), d.changed.len(), d.missing.len()),
            (1, 0, 0)
        );
        // A Job whose live spec asks for other GPUs is changed, with a diff.
        let other = read_str(&live.replace("gpu: 4", "gpu: 8"), "live.yaml").unwrap();
        let d = drift(
            &[],
            &other,
            &Resolver::new(&cfg.tenancy, &other),
            &desired_from(job, &cfg),
            &cfg,
            Date::parse("2026-11-30").unwrap(),
        )
        .unwrap();
        assert_eq!(d.changed.len(), 1);
        assert!(
            d.changed[0]
                .diff
                .as_deref()
                .unwrap()
                .contains("+    gpus_per_replica: 8")
        );
    }

    #[test]
    fn a_live_gpu_workload_declared_without_gpus_in_git_is_changed() {
        let mut live = deployment("ml", "web", 1, 2);
        live.push_str(&pod("ml", "web", 0, 2, true));
        let live_objs = read_str(&live, "live.yaml").unwrap();
        let cfg = Config::default();
        let mut desired = desired_from(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n",
            &cfg,
        );
        desired.without_gpus.push(WithoutGpus {
            id: WorkloadId::new("ml", "apps", "Deployment", "web"),
            app: "a".into(),
        });
        let d = drift(
            &live_workloads(&live_objs).unwrap(),
            &live_objs,
            &Resolver::new(&cfg.tenancy, &live_objs),
            &desired,
            &cfg,
            Date::parse("2026-11-30").unwrap(),
        )
        .unwrap();
        assert_eq!((d.changed.len(), d.unmanaged.len()), (1, 0));
        assert_eq!(d.changed[0].git_shape.as_deref(), Some("no GPUs"));
        assert_eq!(d.coverage, Some(1.0));
    }

    #[test]
    fn an_hpa_owns_the_replicas_of_its_target() {
        let mut live = deployment("ml", "web", 5, 1);
        for i in 0..5 {
            live.push_str(&pod("ml", "web", i, 1, true));
        }
        live.push_str("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: ml}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n");
        let live_objs = read_str(&live, "live.yaml").unwrap();
        let cfg = Config::default();
        let desired_for = |gpus: u64| desired_from(&deployment("ml", "web", 2, gpus), &cfg);
        let today = Date::parse("2026-11-30").unwrap();
        let d = drift(
            &live_workloads(&live_objs).unwrap(),
            &live_objs,
            &Resolver::new(&cfg.tenancy, &live_objs),
            &desired_for(1),
            &cfg,
            today,
        )
        .unwrap();
        assert_eq!(
            d.in_sync.len(),
            1,
            "replicas 2 in Git, 5 live under an HPA: not drift"
        );
        assert!(d.in_sync[0].autoscaled);
        // GPUs per replica are still compared.
        let d = drift(
            &live_workloads(&live_objs).unwrap(),
            &live_objs,
            &Resolver::new(&cfg.tenancy, &live_objs),
            &desired_for(2),
            &cfg,
            today,
        )
        .unwrap();
        assert_eq!(d.changed.len(), 1);
    }

    #[test]
    fn an_unmanaged_workload_says_how_old_it_is_and_a_changed_one_what_changed() {
        let mut live = deployment("ml", "rogue", 1, 2).replace(
            "uid: ml-rogue}",
            "uid: ml-rogue, creationTimestamp: \"2026-11-18T09:00:00Z\"}",
        );
        live.push_str(&pod("ml", "rogue", 0, 2, true));
        live.push_str(&deployment("ml", "web", 4, 1));
        for i in 0..4 {
            live.push_str(&pod("ml", "web", i, 1, true));
        }
        let live_objs = read_str(&live, "live.yaml").unwrap();
        let cfg = Config::default();
        let git = desired_from(&deployment("ml", "web", 2, 1), &cfg);
        let today = Date::parse("2026-11-30").unwrap();
        let d = drift(
            &live_workloads(&live_objs).unwrap(),
            &live_objs,
            &Resolver::new(&cfg.tenancy, &live_objs),
            &git,
            &cfg,
            today,
        )
        .unwrap();
        let rogue = &d.unmanaged[0];
        assert_eq!(rogue.created.as_deref(), Some("2026-11-18T09:00:00Z"));
        assert_eq!(rogue.age_days, Some(12));
        assert_eq!(
            d.changed[0].change.as_deref(),
            Some("main replicas 2 → 4, +2 GPUs")
        );
    }

    /// Property: over many random fleets and repositories, every live GPU workload lands in exactly
    /// one category, every desired one too, and the live categories' GPUs add up to the fleet's
    /// requested GPUs.
    #[test]
    fn every_workload_lands_in_exactly_one_category() {
        for seed in 1..=150u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let (mut live, mut git) = (String::new(), String::new());
            for w in 0..(3 + rng.below(12)) {
                let ns = format!("ns{}", rng.below(4));
                let name = format!("w{w}");
                let (replicas, gpus) = (rng.below(4), 1 + rng.below(8));
                if rng.below(5) > 0 {
                    live.push_str(&deployment(&ns, &name, replicas, gpus));
                    for i in 0..replicas {
                        live.push_str(&pod(&ns, &name, i, gpus, rng.below(4) > 0));
                    }
                }
                match rng.below(4) {
                    0 => {}
                    1 => git.push_str(&deployment(&ns, &name, replicas + 1, gpus)),
                    _ => git.push_str(&deployment(&ns, &name, replicas, gpus)),
                }
            }
            if live.is_empty() {
                live.push_str(&deployment("ns0", "only", 1, 1));
            }
            let live_objs = read_str(&live, "live.yaml").unwrap();
            let cfg = Config::parse(
                &format!(
                    "accepted_drift:\n- match: {{namespace: ns{}}}\n  reason: r\n  expires: 2026-12-{:02}\n",
                    rng.below(4),
                    1 + rng.below(28)
                ),
                "c",
            )
            .unwrap();
            let report = inventory(&live_objs, &cfg, vec![]).unwrap();
            let desired = desired_from(&git, &cfg);
            let d = drift(
                &live_workloads(&live_objs).unwrap(),
                &live_objs,
                &Resolver::new(&cfg.tenancy, &live_objs),
                &desired,
                &cfg,
                Date::parse("2026-12-10").unwrap(),
            )
            .unwrap();

            let mut seen: BTreeMap<WorkloadId, usize> = BTreeMap::new();
            let mut live_gpus = 0;
            for r in d
                .unmanaged
                .iter()
                .chain(&d.changed)
                .chain(&d.in_sync)
                .chain(&d.accepted)
                .chain(&d.missing)
            {
                *seen.entry(r.workload_id()).or_default() += 1;
                live_gpus += r.gpus;
            }
            assert!(seen.values().all(|&n| n == 1), "seed {seed}: {seen:?}");
            for w in &report.workloads {
                assert!(
                    seen.contains_key(&w.id()),
                    "seed {seed}: live {} lost",
                    w.name
                );
            }
            for w in &desired.workloads {
                let x = &w.workload;
                assert!(
                    seen.contains_key(&x.id()),
                    "seed {seed}: git {} lost",
                    x.name
                );
            }
            assert_eq!(live_gpus, report.fleet.gpus.requested, "seed {seed}");
            assert!(
                d.coverage.is_none_or(|c| (0.0..=1.0).contains(&c)),
                "seed {seed}: coverage {:?}",
                d.coverage
            );
            let managed: u64 = d.coverage_by_tenant.iter().map(|t| t.gpus_managed).sum();
            let matched: u64 = d
                .changed
                .iter()
                .chain(&d.in_sync)
                .chain(&d.accepted)
                .filter(|r| r.app.is_some())
                .map(|r| r.gpus)
                .sum();
            assert_eq!(
                managed, matched,
                "seed {seed}: managed GPUs are the live GPUs that match Git"
            );
            assert!(d.missing.iter().all(|r| r.gpus == 0));
        }
    }
}
