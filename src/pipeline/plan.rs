//! `plan`: when each batch job should start so that every deadline is met within a GPU pool, and
//! the pool that would be needed otherwise. Jobs come from a jobs file, from intent in Git and
//! from the cluster's waiting batch work, all through the planner's one seam
//! ([`crate::plan::plan`]); the cluster gives the pool and its nodes.

use std::path::PathBuf;

use super::input::{self, LiveSpec, RepoSpec};
use super::{Context, Error, Note, Outcome, Result, Run};
use crate::analysis::live::LiveFleet;
use crate::analysis::usage::Metrics;
use crate::k8s::object::Object;
use crate::plan::{self, Objective, Pool, Settings};
use crate::report::plan::PlanReport;
use crate::report::{Kind, SCHEMA};
use crate::util::date::Timestamp;

/// What `plan` reads and how it plans.
#[derive(Debug, Clone)]
pub struct PlanJob {
    /// A YAML list of jobs.
    pub jobs_file: Option<PathBuf>,
    /// Batch workloads with intent in this repository.
    pub repo: Option<RepoSpec>,
    /// The cluster: for the pool, its nodes and the waiting work.
    pub live: Option<LiveSpec>,
    /// Also plan the cluster's waiting batch work.
    pub pending: bool,
    /// The pool is this Kueue ClusterQueue's quota (and the waiting work, its own).
    pub queue: Option<String>,
    /// With `queue`: what it may borrow in its cohort.
    pub borrow: bool,
    /// GPUs in the pool, overriding the cluster's.
    pub pool: Option<u64>,
    /// GPUs of each node, overriding the cluster's.
    pub nodes: Vec<u64>,
    pub objective: Objective,
    pub slot_s: u64,
    /// A missed deadline is a finding.
    pub fail_on_miss: bool,
    pub config: Option<PathBuf>,
    pub now: Option<Timestamp>,
}

pub fn run(job: &PlanJob, cx: &Context<'_>) -> Result<Run<PlanReport>> {
    let now = job.now.unwrap_or_else(Timestamp::now);
    let now_s = now.seconds_since(Timestamp::from_unix(0));
    let mut jobs = Vec::new();
    let mut sources = Vec::new();
    let mut notes = Vec::new();
    if let Some(path) = &job.jobs_file {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| crate::error::Error::Read {
            path: path.clone(),
            source,
        })?;
        jobs.extend(
            plan::file::parse_jobs(&text, &file, now_s).map_err(crate::error::Error::from)?,
        );
        sources.push(file);
    }
    if let Some(spec) = &job.repo {
        // Batch work with intent in Git, as `render` finds it; what cannot be planned is said.
        let (cfg, _) = input::config(job.config.as_deref(), Some(&spec.path))?;
        let desired = input::desired_state(spec, &cfg, &[])?;
        input::ensure_rendered(&desired, spec)?;
        let failed = input::render_failures(&desired);
        if !failed.is_empty() {
            return Err(Error::Incomplete(format!(
                "the repository did not render completely, so its batch work is unknown: {}",
                failed.join("; ")
            )));
        }
        let (from_git, left_out) = crate::analysis::plan::jobs(&desired.workloads, now_s);
        jobs.extend(from_git);
        notes.extend(
            left_out
                .into_iter()
                .map(|l| Note::Say(format!("not planned: {l}"))),
        );
        sources.push(format!("{} ({})", spec.path.display(), desired.at));
    }
    let cluster = cluster(job, cx, &mut sources)?;
    // The cluster's fleet model, read once: the pool and the waiting work come from the same one
    // `inventory` reads, so the plan's placeable GPUs are the inventory's.
    let cfg = if cluster.is_some() || job.pending {
        input::config(job.config.as_deref(), None)?.0
    } else {
        crate::config::Config::default()
    };
    let (objects, unread) = match &cluster {
        Some((objects, unread)) => (objects.as_slice(), unread.clone()),
        None => (&[][..], Default::default()),
    };
    let fleet = LiveFleet::read(objects, &cfg, &Metrics::NotConfigured)?.unread(unread);
    if job.pending {
        let waiting = crate::analysis::plan::waiting(&fleet, &cfg, now_s, job.queue.as_deref())?;
        sources.push(format!(
            "the cluster's waiting batch work: {} job{}",
            waiting.jobs.len(),
            if waiting.jobs.len() == 1 { "" } else { "s" }
        ));
        jobs.extend(waiting.jobs);
        notes.extend(
            waiting
                .left_out
                .into_iter()
                .map(|l| Note::Say(format!("not planned: {l}"))),
        );
        if waiting.other_queues > 0 {
            notes.push(Note::Say(format!(
                "not planned: {} waiting batch workload{} queued to other ClusterQueues than {}",
                waiting.other_queues,
                if waiting.other_queues == 1 { "" } else { "s" },
                job.queue.as_deref().unwrap_or_default()
            )));
        }
    }
    // How the last runs of the cluster's batch work with a deadline did, beside the plan for the
    // waiting work (the live state's Jobs; `plan` reads no Prometheus).
    let deadlines = if job.pending && cluster.is_some() {
        super::deadlines::section(
            &fleet,
            &cfg,
            super::deadlines::DeadlineInputs {
                metrics: None,
                ksm_window: std::time::Duration::ZERO,
                end: now,
                only: None,
                now,
            },
            cx,
            &mut notes,
        )
    } else {
        None
    };
    let pool = pool(job, cluster.is_some().then_some(&fleet), &mut sources)?;
    let settings = Settings::new(job.objective, job.slot_s, now_s);
    let plan = plan::plan(jobs, &pool, &settings);
    let outcome = if plan.feasible {
        Outcome::Clean
    } else {
        notes.push(Note::Say(plan.verdict()));
        if job.fail_on_miss {
            Outcome::Findings
        } else {
            Outcome::Clean
        }
    };
    Ok(Run {
        report: PlanReport {
            schema: SCHEMA,
            kind: Kind::Plan,
            sources,
            plan,
            deadlines,
        },
        notes,
        outcome,
    })
}

/// The cluster's objects, when the job reads a cluster. A read that missed a resource is an
/// error: the pool and the waiting work would be guesses.
fn cluster(
    job: &PlanJob,
    cx: &Context<'_>,
    sources: &mut Vec<String>,
) -> Result<Option<(Vec<Object>, crate::analysis::unread::Unread)>> {
    let Some(spec) = &job.live else {
        return Ok(None);
    };
    let live = cx.rt.block_on(input::live(spec, &cx.progress))?;
    let (part, live_sources) = live.single("plan")?;
    // Without nodes the pool is unknown, unless the job gives it; so is it without pods (what
    // non-batch work holds), and the waiting work is then what holds no GPU whatever its pods
    // (`analysis::plan::waiting`).
    let mut incomplete = part.fleet_incomplete();
    incomplete.retain(|m| !matches!(m.resource.as_str(), "nodes" | "pods") || job.pool.is_none());
    // What waits for quota matters only to the waiting work planned (which of it holds quota
    // already); a queue's pool is its status.
    incomplete.retain(|m| !m.resource.starts_with("workloads.kueue.x-k8s.io") || job.pending);
    if !incomplete.is_empty() {
        let missing: Vec<String> = incomplete
            .iter()
            .map(|m| format!("{} ({})", m.resource, m.reason))
            .collect();
        return Err(Error::Incomplete(format!(
            "the cluster was read incompletely, so its pool and waiting work are unknown: {}",
            missing.join("; ")
        )));
    }
    sources.extend(live_sources);
    Ok(Some((part.objects, part.unread)))
}

/// The pool: the job's, else the queue's quota, else the cluster's placeable GPUs minus what
/// non-batch workloads hold; its nodes: the job's, else the cluster's placeable GPU nodes.
fn pool(job: &PlanJob, fleet: Option<&LiveFleet<'_>>, sources: &mut Vec<String>) -> Result<Pool> {
    let mut node_sizes = job.nodes.clone();
    let Some(model) = fleet else {
        return Ok(Pool {
            gpus: job.pool.unwrap_or(0),
            node_sizes,
        });
    };
    let (live, how) = crate::analysis::plan::batch_pool(model)?;
    // A queue's flavors name the GPU models its work runs on: only their nodes are its pool's.
    let queue = match (&job.queue, job.pool) {
        (Some(q), None) => Some(
            crate::analysis::queues::pool::pool(&model.admission, q, job.borrow)
                .map_err(|e| Error::Queue(e.to_string()))?,
        ),
        _ => None,
    };
    if node_sizes.is_empty() {
        node_sizes = match queue.as_ref().filter(|q| !q.models.is_empty()) {
            Some(q) => model
                .nodes
                .values()
                .filter(|n| {
                    n.labels
                        .get(crate::analysis::nodes::GPU_PRODUCT_LABEL)
                        .map(|m| m.as_str())
                        .or(n.product)
                        .is_some_and(|m| q.models.iter().any(|x| x == m))
                })
                .map(|n| n.placeable_gpus())
                .filter(|g| *g > 0)
                .collect(),
            None => live.node_sizes,
        };
    }
    let gpus = match (job.pool, queue) {
        (Some(n), _) => n,
        (None, Some(q)) => {
            sources.push(q.text);
            q.gpus
        }
        (None, None) => {
            sources.push(how);
            live.gpus
        }
    };
    Ok(Pool { gpus, node_sizes })
}
