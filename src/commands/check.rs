//! `gpuledger check`: base against head, with the live state when given.

use std::sync::Arc;

use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::CheckArgs;
use gpuledger::analysis::drift::drift;
use gpuledger::analysis::impact::{LiveView, impact, mark_touched};
use gpuledger::analysis::inventory::{inventory, live_workloads};
use gpuledger::config::{Config, review};
use gpuledger::desired::cache::RenderCache;
use gpuledger::desired::tree::changed_paths;
use gpuledger::github::event::Runtime as Actions;
use gpuledger::input::{self, Checkout};
use gpuledger::live::kube::Progress;
use gpuledger::render::render_check;
use gpuledger::report::{CheckReport, ConfigReview, Provenance, SCHEMA};
use gpuledger::util::date::Timestamp;

pub fn run(args: &CheckArgs, rt: &Runtime, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    args.output.not_prometheus("check")?;
    let actions = Actions::from_env(|k| std::env::var(k).ok()).map_err(anyhow::Error::msg)?;
    let (report, mut notes, exit) = compute(args, &actions, None, rt, progress)?;
    let text = render_check(&report, args.output.format, &args.output.style());
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    Ok(Outcome {
        commands: Vec::new(),
        stdout,
        notes,
        exit,
    })
}

/// The Actions runtime for naming commits; outside Actions, or with an event payload that cannot
/// be read (the commands that post say so themselves), the local defaults.
pub fn actions_env() -> Actions {
    Actions::from_env(|k| std::env::var(k).ok()).unwrap_or_default()
}

/// How the working tree was checked out: under Actions it is a commit (on a pull request, its head
/// or the merge of its head into the base), which a report names instead of "working tree".
pub fn checkout(rt: &Actions) -> Checkout<'_> {
    if rt.in_actions {
        Checkout::Actions {
            pr_head: rt.event.pull_request.as_ref().map(|p| p.head.sha.as_str()),
        }
    } else {
        Checkout::Local
    }
}

/// Renders base and head (and reads the live state when asked) and computes the check: the report,
/// notes for standard error, and the exit its gates ask for. `--base` defaults to the pull
/// request's base commit when Actions runs it on a pull request. `scope` names the report
/// (GitHub's `--scope`); the live state's context otherwise.
pub fn compute(
    args: &CheckArgs,
    actions: &Actions,
    scope: Option<String>,
    rt: &Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<(CheckReport, Vec<Note>, Exit)> {
    let base_ref = match (&args.base, &actions.event.pull_request) {
        (Some(b), _) => b.clone(),
        (None, Some(pr)) => pr.base.sha.clone(),
        (None, None) => anyhow::bail!(
            "--base is required: the ref the change starts from, e.g. --base origin/main (it defaults to the pull request's base only on a pull_request event)"
        ),
    };
    let mut head_spec = args.repo();
    head_spec.cluster_hint = scope.clone();
    let mut notes = Vec::new();
    let mut sources = Vec::new();
    let (cfg, review) = check_config(
        args.output.config.as_deref(),
        &head_spec.path,
        &base_ref,
        head_spec.git_ref.as_deref(),
    )?;
    sources.push(review.applied.clone());
    notes.push(Note::ConfigUsed(review.applied.clone()));
    // The configuration's `clusters:` may name the cluster of the live state given.
    let live_spec = args.live().map(|mut l| {
        input::cluster_live(&mut head_spec, &mut l, &cfg);
        l
    });
    let head_spec = head_spec;
    let repo = head_spec.path.as_path();
    let live = match live_spec {
        Some(spec) => {
            let (part, live_sources) =
                rt.block_on(input::live(&spec, progress))?.single("check")?;
            sources.extend(live_sources);
            Some(part)
        }
        None => None,
    };
    let objects = live
        .as_ref()
        .map(|p| p.objects.as_slice())
        .unwrap_or_default();
    let checkout = checkout(actions);
    let git = vec![
        input::git_side(repo, "base", Some(&base_ref), checkout),
        input::git_side(repo, "head", head_spec.git_ref.as_deref(), checkout),
    ];
    // One cache for both sides: an app whose inputs are the same at base and head renders once.
    let cache = RenderCache::new();
    let base =
        input::desired_state_cached(&head_spec.at(Some(base_ref.clone())), &cfg, objects, &cache)?;
    let head = input::desired_state_cached(&head_spec, &cfg, objects, &cache)?;
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

    let now = args.now.unwrap_or_else(Timestamp::now);
    let today = now.date();
    let live_view = live
        .as_ref()
        .map(|p| -> anyhow::Result<_> {
            let report = inventory(&p.objects, &cfg, vec![])?;
            let workloads = live_workloads(&p.objects)?;
            let base_drift = drift(&workloads, &p.objects, &base, &cfg, today)?;
            let head_drift = drift(&workloads, &p.objects, &head, &cfg, today)?;
            let incomplete: Vec<String> = p
                .incomplete
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
    let mut check = impact(&base, &head, view.as_ref(), &cfg, &args.gates(), review)?;
    if let Some(changed) = changed_paths(repo, &base_ref, head_spec.git_ref.as_deref()) {
        mark_touched(&mut check, &head, &changed);
    }
    // Named as the provenance names them: a commit and its subject, never "working tree" on Actions.
    if let [b, h] = git.as_slice() {
        check.base_at = b.describe.clone();
        check.head_at = h.describe.clone();
    }
    // Batch work the change adds, with a runtime in its intent: does it fit the batch pool by
    // staggering, or would it need more GPUs?
    if let Some(p) = live.as_ref().filter(|p| p.incomplete.is_empty()) {
        let added_ids: std::collections::HashSet<_> = check
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
        let (jobs, _) = gpuledger::analysis::plan::jobs(&added, now_s);
        if !jobs.is_empty() {
            let (pool, _) = gpuledger::analysis::plan::batch_pool(&p.objects, &cfg)?;
            let settings = gpuledger::plan::Settings::new(
                gpuledger::plan::Objective::Earliest,
                15 * 60,
                now_s,
            );
            let plan = gpuledger::plan::plan(jobs, &pool, &settings);
            check.stagger = Some(gpuledger::render::plan::verdict(&plan));
        }
    }
    // With a Prometheus, each moved tenant's trend; with cost inputs, allocated → busy → valuable
    // of the tenants the change moves: both read against the live state, beside the change.
    if let (Some(p), Some((report, ..))) = (&live, &live_view) {
        let metrics = args.metrics_live();
        if args.prometheus.is_some() {
            let mut r = report.clone();
            super::trend::column(&mut r, &metrics, &cfg.tenancy, now, rt, &mut notes);
            for row in &mut check.tenants {
                row.gpus_per_week = r
                    .tenants
                    .iter()
                    .find(|t| t.name == row.name)
                    .and_then(|t| t.gpus_per_week);
            }
        }
        if args.cost.given() {
            let mut r = report.clone();
            super::cost::attach(
                &mut r, &p.objects, &cfg, &args.cost, &metrics, now, rt, &mut notes,
            )?;
            let moved: std::collections::BTreeSet<&str> = check
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
            Some(super::docs::status_of_repo(
                repo,
                head_spec.git_ref.as_deref(),
                &r,
            )?)
        }
        _ => None,
    };
    if let Some(gate) = check.gates.iter_mut().find(|g| g.name == "stale-docs") {
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
    let exit = if failed.is_empty() {
        Exit::Clean
    } else {
        notes.push(Note::GatesFailed(failed));
        Exit::Findings
    };
    // An incomplete read is an error, whatever the gates say (as `inventory` and `drift` do).
    let exit = if incomplete { Exit::Error } else { exit };
    let provenance = Provenance::new(
        scope,
        live.map(|p| p.provenance).unwrap_or_default(),
        git,
        now,
        cfg.snapshot.stale_after,
    );
    let report = CheckReport {
        schema: SCHEMA,
        sources,
        check,
        provenance,
    };
    Ok((report, notes, exit))
}

/// The `stale-docs` gate: fails when a marked fact of the head's documents differs from the live
/// state, and — as every gate — when it cannot be evaluated: no live state, a fact the report
/// cannot confirm, a document that cannot be read.
fn docs_gate(docs: Option<&gpuledger::docs::DocsStatus>) -> gpuledger::report::Gate {
    let gate = |failed: bool, unknown: bool, why: String| gpuledger::report::Gate {
        name: "stale-docs".into(),
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
    explicit: Option<&std::path::Path>,
    repo: &std::path::Path,
    base_ref: &str,
    head_ref: Option<&str>,
) -> anyhow::Result<(Config, ConfigReview)> {
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
fn head_config(repo: &std::path::Path) -> Result<Config, gpuledger::error::Error> {
    let path = repo.join(gpuledger::config::DEFAULT_FILE);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => Err(gpuledger::error::Error::Input(
            gpuledger::error::InputError {
                file: path.display().to_string(),
                line: None,
                column: None,
                message: "is a symlink: refused".into(),
            },
        )),
        Ok(_) => Config::load(&path),
        Err(_) => Ok(Config::default()),
    }
}
