//! `check` (and the pull-request comment): the repository at base against head — what the change
//! does to the GPUs per tenant, the workloads it adds, removes or reshapes — and, with the live
//! state, the drift it resolves or introduces, whether it fits the fleet, whether the batch work it
//! adds fits by staggering, the serving headroom at the head's shape of the serving workloads it
//! reshapes, the trend and cost of the tenants it moves, and the head's documents against the
//! cluster. The gates asked for decide the outcome.
//!
//! The configuration is the base's (`.gpuledger.yaml` as committed at the base ref): a change
//! cannot relax its own gates; what the head changes in it is listed for a reviewer.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use super::fleet::{self, Signals};
use super::input::{self, LiveSpec, RepoSpec};
use super::{Context, Error, Note, Outcome, Result, Run};
use crate::analysis::drift::drift;
use crate::analysis::impact::{LiveView, impact, mark_touched};
use crate::analysis::inventory;
use crate::analysis::live::LiveFleet;
use crate::analysis::routes_change;
use crate::analysis::usage::Metrics;
use crate::config::{Config, review};
use crate::desired::tree::changed_paths;
use crate::report::facts::DocsStatus;
use crate::report::{CheckReport, Column, ConfigReview, Gate, GateName, Kind, Provenance, SCHEMA};
use crate::util::date::Timestamp;

/// What a check compares and with what.
#[derive(Debug, Clone)]
pub struct CheckJob {
    /// The repository at the head (`git_ref` `None`: the working tree).
    pub repo: RepoSpec,
    /// The ref the change starts from; the pull request's base when Actions runs on one.
    pub base: Option<String>,
    /// The live state, when one was named: a check without it stays offline.
    pub live: Option<LiveSpec>,
    pub signals: Signals,
    /// The gates that make the check a finding when they fail.
    pub gates: Vec<GateName>,
    /// `--config`: applies to base and head alike.
    pub config: Option<PathBuf>,
    pub now: Option<Timestamp>,
    /// What the report is about (GitHub's `--scope`); the live state's context otherwise.
    pub scope: Option<String>,
}

/// Renders base and head (and reads the live state when asked) and computes the check.
pub fn run(job: &CheckJob, cx: &Context<'_>) -> Result<Run<CheckReport>> {
    let base_ref = match (&job.base, &cx.actions.event.pull_request) {
        (Some(b), _) => b.clone(),
        (None, Some(pr)) => pr.base.sha.clone(),
        (None, None) => {
            return Err(Error::Usage(
                "--base is required: the ref the change starts from, e.g. --base origin/main (it defaults to the pull request's base only on a pull_request event)".into(),
            ));
        }
    };
    let mut head_spec = job.repo.clone();
    head_spec.cluster_hint = job.scope.clone();
    let mut notes = Vec::new();
    let mut sources = Vec::new();
    let (cfg, review) = check_config(
        job.config.as_deref(),
        &head_spec.path,
        &base_ref,
        head_spec.git_ref.as_deref(),
    )?;
    sources.push(review.applied.clone());
    notes.push(Note::ConfigUsed(review.applied.clone()));
    // The configuration's `clusters:` may name the cluster of the live state given.
    let live_spec = job.live.clone().map(|mut l| {
        input::cluster_live(&mut head_spec, &mut l, &cfg);
        l
    });
    let head_spec = head_spec;
    let repo = head_spec.path.as_path();
    let live = match live_spec {
        Some(spec) => {
            let (part, live_sources) = cx
                .rt
                .block_on(input::live(&spec, &cx.progress))?
                .single("check")?;
            sources.extend(live_sources);
            Some(part)
        }
        None => None,
    };
    let objects = live
        .as_ref()
        .map(|p| p.objects.as_slice())
        .unwrap_or_default();
    let checkout = fleet::checkout(&cx.actions);
    let git = vec![
        super::commits::git_side(repo, "base", Some(&base_ref), checkout),
        super::commits::git_side(repo, "head", head_spec.git_ref.as_deref(), checkout),
    ];
    // One cache and one fetcher for both sides: an app whose inputs are the same at base and head
    // renders once, a chart both use is fetched once. The head fetches only from the source hosts
    // the base uses (and render.remote.allow of the applied configuration): a pull request
    // cannot point rendering at a host of its choosing.
    let run = input::RenderRun::new(&cfg, &head_spec);
    let base =
        input::desired_state_cached(&head_spec.at(Some(base_ref.clone())), &cfg, objects, &run)?;
    let mut head_only = head_spec.clone();
    head_only.base_hosts = Some(base.source_hosts.clone());
    let head = input::desired_state_cached(&head_only, &cfg, objects, &run)?;
    // A change may empty a repository, or fill an empty one; neither side rendering anything means
    // the wrong --repo.
    if base.apps.is_empty() {
        input::ensure_rendered(&head, &head_spec)?;
    }
    sources.push(format!(
        "{} (base {}, head {})",
        repo.display(),
        base.at,
        head.at
    ));

    let now = job.now.unwrap_or_else(Timestamp::now);
    let today = now.date();
    // The live fleet, read once: its inventory, the drift of each side, and (below) the cost of
    // the tenants the change moves all read this one model.
    let model = live
        .as_ref()
        .map(|p| {
            LiveFleet::read(&p.objects, &cfg, &Metrics::NotConfigured).map(|m| m.unread(p.unread()))
        })
        .transpose()?;
    let live_view = live
        .as_ref()
        .zip(model.as_ref())
        .map(|(p, m)| -> Result<_> {
            let report = inventory::report(m, &cfg, vec![])?;
            let workloads = &m.workloads.list;
            let base_drift = drift(workloads, &p.objects, &m.tenancy, &base, &cfg, today)?;
            let head_drift = drift(workloads, &p.objects, &m.tenancy, &head, &cfg, today)?;
            let incomplete: Vec<String> = p
                .fleet_incomplete()
                .iter()
                .map(|m| format!("{}: {}", m.resource, m.reason))
                .collect();
            Ok((report, base_drift, head_drift, incomplete))
        })
        .transpose()?;
    let view = live_view
        .as_ref()
        .map(|(report, base_drift, head_drift, incomplete)| LiveView {
            report,
            base_drift,
            head_drift,
            incomplete: Vec::clone(incomplete),
        });
    let mut check = impact(&base, &head, view.as_ref(), &cfg, &job.gates, review)?;
    if let Some(changed) = changed_paths(repo, &base_ref, head_spec.git_ref.as_deref()) {
        mark_touched(&mut check, &head, &changed);
    }
    // The routing blast radius, traced through Git on both sides and, with the live state,
    // through what serves each route today.
    let live_routes = live_view.as_ref().map(|(r, ..)| r.routes.as_slice());
    let live_objects = live.as_ref().map_or(&[][..], |p| p.objects.as_slice());
    check.routes = routes_change::routes(&base, &head, &cfg, live_routes, live_objects)?;
    if let Some(why) = routes_change::unknown(&base, &head) {
        check.unknown.set("routes", why);
    }
    // The queues each workload the change adds or reshapes joins, and the quotas it moves, read
    // as they will be once it syncs.
    queue_sections(&mut check, &base, &head, model.as_ref(), live.is_some());
    // Serving headroom at the head's shape: the load tests the head names, read at the head ref,
    // against production's rate split by the live pods.
    check.headroom = super::check_headroom::rows(
        &super::check_headroom::Inputs {
            base: &base,
            head: &head,
            repo,
            head_ref: head_spec.git_ref.as_deref(),
            live: model.as_ref(),
            signals: &job.signals,
            cfg: &cfg,
        },
        cx,
    )?;
    if let Some(g) = check
        .gates
        .iter_mut()
        .find(|g| g.name == GateName::Headroom.as_str())
    {
        *g = super::check_headroom::gate(&check.headroom);
    }
    // Named as the provenance names them: a commit and its subject, never "working tree" on Actions.
    if let [b, h] = git.as_slice() {
        check.base_at = b.describe.clone();
        check.head_at = h.describe.clone();
    }
    // Batch work the change adds, with a runtime in its intent: does it fit the batch pool by
    // staggering, or would it need more GPUs?
    if let Some(m) = model
        .as_ref()
        .filter(|_| live.as_ref().is_some_and(|p| p.incomplete.is_empty()))
    {
        let added_ids: HashSet<_> = check
            .added
            .iter()
            .map(|a| (&a.cluster, &a.workload_id))
            .collect();
        let added: Vec<_> = head
            .workloads
            .iter()
            .filter(|w| added_ids.contains(&(&w.cluster, &w.workload.id())))
            .cloned()
            .collect();
        let now_s = now.unix();
        let (jobs, _) = crate::analysis::plan::jobs(&added, now_s);
        if !jobs.is_empty() {
            let (pool, _) = crate::analysis::plan::batch_pool(m)?;
            let settings =
                crate::plan::Settings::new(crate::plan::Objective::Earliest, 15 * 60, now_s);
            let plan = crate::plan::plan(jobs, &pool, &settings);
            check.stagger = Some(plan.verdict());
        }
    }
    // With a Prometheus, each moved tenant's trend; with cost inputs, allocated → busy → valuable
    // of the tenants the change moves: both read against the live state, beside the change.
    if let (Some(m), Some((report, ..))) = (&model, &live_view) {
        if job.signals.metrics.is_some() {
            let mut r = report.clone();
            super::trend::column(&mut r, &job.signals, &cfg.tenancy, now, cx, &mut notes);
            for row in &mut check.tenants {
                row.gpus_per_week = r
                    .tenants
                    .iter()
                    .find(|t| t.name == row.name)
                    .map_or(Column::Unknown, |t| t.gpus_per_week);
            }
            if let Some(why) = r.fleet.unknown.get("tenants.gpus_per_week") {
                check.unknown.set("tenants.gpus_per_week", why.clone());
            }
        }
        if job.signals.cost.is_some() {
            let mut r = report.clone();
            fleet::attach_cost(&mut r, m, &cfg, &job.signals, now, cx, &mut notes)?;
            let moved: BTreeSet<&str> = check
                .tenants
                .iter()
                .filter(|t| t.delta != 0)
                .map(|t| t.name.as_str())
                .collect();
            check.valuable = r.cost.map(|mut c| {
                c.tenants.retain(|t| moved.contains(t.name.as_str()));
                c.workloads
                    .retain(|w| w.tenant.as_deref().is_some_and(|t| moved.contains(t)));
                c.product_lines.clear();
                // The headline decides over the workloads it shows.
                c.decision = crate::analysis::cost::decide(&c.workloads);
                c
            });
        }
    }
    // The head's documents against the live state: the marked facts the change would leave
    // stale. Read from git's objects at the head ref (or the working tree), never run.
    let docs = match (&live, &live_view) {
        (Some(p), Some((report, _, head_drift, _))) => {
            let mut r = report.clone();
            r.complete = p.incomplete.is_empty();
            r.incomplete = p.incomplete.clone();
            r.drift = Some(head_drift.clone());
            Some(super::facts::status_of_repo(
                repo,
                head_spec.git_ref.as_deref(),
                &r,
            )?)
        }
        _ => None,
    };
    if let Some(gate) = check
        .gates
        .iter_mut()
        .find(|g| g.name == GateName::StaleDocs.as_str())
    {
        *gate = docs_gate(docs.as_ref());
    }
    check.docs = docs.filter(|d| d.markers > 0 || !d.errors.is_empty());
    if let Some(p) = &live {
        for m in &p.incomplete {
            notes.push(Note::Incomplete {
                what: "live state",
                resource: m.resource.clone(),
                reason: m.reason.clone(),
            });
        }
    }
    let failed: Vec<String> = check
        .gates
        .iter()
        .filter(|g| g.failed)
        .map(|g| g.name.clone())
        .collect();
    let incomplete = live.as_ref().is_some_and(|p| !p.incomplete.is_empty());
    let outcome = if failed.is_empty() {
        Outcome::Clean
    } else {
        notes.push(Note::GatesFailed(failed));
        Outcome::Findings
    };
    // An incomplete read is an error, whatever the gates say (as `inventory` and `drift` do).
    let outcome = if incomplete {
        Outcome::Incomplete
    } else {
        outcome
    };
    let provenance = Provenance::new(
        job.scope.clone(),
        live.map(|p| p.provenance).unwrap_or_default(),
        git,
        now,
        cfg.snapshot.stale_after,
    );
    Ok(Run {
        report: CheckReport {
            schema: SCHEMA,
            kind: Kind::Check,
            sources,
            check,
            provenance,
        },
        notes,
        outcome,
    })
}

/// The check's admission verdicts, quota changes and `quota` gate. The live queues are unknown
/// without a live state, or where what waits in them could not be read.
fn queue_sections(
    check: &mut crate::report::Check,
    base: &crate::report::Desired,
    head: &crate::report::Desired,
    model: Option<&LiveFleet<'_>>,
    live: bool,
) {
    use crate::analysis::queues::change::{self, Joining};
    use crate::report::Known;
    let admission = match model {
        Some(m) => match &m.unread.queued {
            Some(why) => Known::Unknown(format!("what waits in the queues is unknown: {why}")),
            None => Known::Value(&m.admission),
        },
        None if live => Known::Unknown("the live state was not read".into()),
        None => Known::Unknown(
            "no live state: what the queue holds and what waits in it were not read (--snapshot, --context)".into(),
        ),
    };
    let rows = |list: &[crate::report::ChangeRow], reshaped: bool| {
        list.iter()
            .filter_map(|c| {
                head.workloads
                    .iter()
                    .find(|w| w.cluster == c.cluster && w.workload.id() == c.workload_id)
                    .and_then(|w| w.ask.as_ref())
                    .map(|ask| Joining {
                        ask,
                        reshaped,
                        cluster: c.cluster.clone(),
                    })
            })
            .collect::<Vec<_>>()
    };
    let mut joining = rows(&check.added, false);
    joining.extend(rows(&check.reshaped, true));
    check.admission = change::admission(&admission, &head.queues, &joining);
    check.quota = change::quota(&base.queues, &head.queues, &admission);
    if let Some(g) = check
        .gates
        .iter_mut()
        .find(|g| g.name == GateName::Quota.as_str())
    {
        *g = change::gate(&check.admission, &check.quota);
    }
    if let Some(s) = change::summary(&check.admission, &check.quota) {
        check.summary.push_str(&format!("; {s}"));
    }
}

/// The `stale-docs` gate: fails when a marked fact of the head's documents differs from the live
/// state, and — as every gate — when it cannot be evaluated: no live state, a fact the report
/// cannot confirm, a document that cannot be read.
fn docs_gate(docs: Option<&DocsStatus>) -> Gate {
    let gate = |failed: bool, unknown: bool, why: String| Gate {
        name: GateName::StaleDocs.to_string(),
        failed,
        unknown,
        why,
    };
    let Some(d) = docs else {
        return gate(
            true,
            true,
            "cannot check stale-docs: it needs the live state (--snapshot, --kubeconfig or --context)".into(),
        );
    };
    if !d.errors.is_empty() {
        return gate(
            true,
            true,
            format!("cannot check stale-docs: {}", d.errors.join("; ")),
        );
    }
    if !d.stale.is_empty() {
        return gate(true, false, d.summary());
    }
    if !d.unknown.is_empty() {
        return gate(
            true,
            true,
            format!("cannot check stale-docs: {}", d.summary()),
        );
    }
    gate(false, false, d.summary())
}

/// The configuration a check applies: `--config` when given, else the base ref's `.gpuledger.yaml`
/// (so the change under review cannot relax its own gates), with the head's changes to it. The
/// head's file is read at `head_ref`, or from the working tree.
fn check_config(
    explicit: Option<&Path>,
    repo: &Path,
    base_ref: &str,
    head_ref: Option<&str>,
) -> Result<(Config, ConfigReview)> {
    if let Some(p) = explicit {
        let cfg = Config::load(p)?;
        // A file of the pull request's own tree is the head's configuration by another name.
        let in_tree = std::fs::canonicalize(p)
            .ok()
            .zip(std::fs::canonicalize(repo).ok())
            .is_some_and(|(f, r)| f.starts_with(r));
        let review = ConfigReview {
            applied: format!(
                "{} (--config, for base and head{})",
                p.display(),
                if in_tree {
                    "; a file of the working tree, so the change under review can edit it"
                } else {
                    ""
                }
            ),
            explicit: true,
            ..ConfigReview::default()
        };
        return Ok((cfg, review));
    }
    let (base, base_name) = Config::at_ref(repo, base_ref)?;
    let head = match head_ref {
        Some(r) => Config::at_ref(repo, r).map(|(c, _)| c),
        None => head_config(repo),
    };
    let (changes, head_error) = match &head {
        Ok(h) => (review::changes(&base, h), None),
        Err(e) => (vec![], Some(e.to_string())),
    };
    let review = ConfigReview {
        applied: base_name
            .unwrap_or_else(|| format!("defaults (no .gpuledger.yaml at {base_ref})")),
        explicit: false,
        changes,
        head_error,
    };
    Ok((base, review))
}

/// The working tree's `.gpuledger.yaml` (the defaults without one); a symlink is refused, as at a
/// ref, so it cannot point the parser (and its error messages) at a file outside the repository.
fn head_config(repo: &Path) -> std::result::Result<Config, crate::error::Error> {
    let path = repo.join(crate::config::DEFAULT_FILE);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => {
            Err(crate::error::Error::Input(crate::error::InputError {
                file: path.display().to_string(),
                line: None,
                column: None,
                message: "is a symlink: refused".into(),
            }))
        }
        Ok(_) => Config::load(&path),
        Err(_) => Ok(Config::default()),
    }
}
