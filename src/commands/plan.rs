//! `gpuledger plan`: when each batch job should start so that every deadline is met within a GPU
//! pool, and the pool that would be needed otherwise. Jobs come from `--jobs FILE`, from intent in
//! Git (`--repo`) and from the cluster's waiting batch work (`--pending`), all through one seam,
//! [`plan_jobs`]; the cluster (a snapshot or the API) gives the pool and its nodes.

use std::sync::Arc;

use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::PlanArgs;
use gpuledger::error::Error;
use gpuledger::input::{LiveSpec, Timeouts};
use gpuledger::k8s::object::Object;
use gpuledger::live::kube::Progress;
use gpuledger::plan::{self, Job, Plan, Pool, Settings};
use gpuledger::render::plan::PlanReport;
use gpuledger::render::render_plan;
use gpuledger::report::SCHEMA;
use gpuledger::util::date::Timestamp;

/// The seam: jobs and a pool in, a plan out.
pub fn plan_jobs(jobs: Vec<Job>, pool: &Pool, settings: &Settings) -> Plan {
    plan::plan(jobs, pool, settings)
}

pub fn run(args: &PlanArgs, rt: &Runtime, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    args.output.not_prometheus("plan")?;
    let now = args.now.unwrap_or_else(Timestamp::now);
    let now_s = now.seconds_since(Timestamp::from_unix(0));
    let mut jobs = Vec::new();
    let mut sources = Vec::new();
    let mut notes = Vec::new();
    if let Some(path) = &args.jobs {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.clone(),
            source,
        })?;
        jobs.extend(plan::file::parse_jobs(&text, &file, now_s).map_err(Error::from)?);
        sources.push(file);
    }
    if args.repo.repo.is_some() {
        // Batch work with intent in Git, as `render` finds it; what cannot be planned is said.
        let spec = args.repo.spec();
        let (cfg, _) = gpuledger::input::config(args.output.config.as_deref(), Some(&spec.path))?;
        let desired = gpuledger::input::desired_state(&spec, &cfg, &[])?;
        gpuledger::input::ensure_rendered(&desired, &spec)?;
        let failed = gpuledger::input::render_failures(&desired);
        anyhow::ensure!(
            failed.is_empty(),
            "the repository did not render completely, so its batch work is unknown: {}",
            failed.join("; ")
        );
        let (from_git, left_out) = plan::from_git::jobs(&desired.workloads, now_s);
        jobs.extend(from_git);
        notes.extend(
            left_out
                .into_iter()
                .map(|l| Note::Say(format!("not planned: {l}"))),
        );
        sources.push(format!("{} ({})", spec.path.display(), desired.at));
    }
    let cluster = cluster(args, rt, progress, &mut sources)?;
    if args.pending {
        let objects = cluster.as_deref().unwrap_or_default();
        let (cfg, _) = gpuledger::input::config(args.output.config.as_deref(), None)?;
        let waiting = plan::live::waiting(objects, &cfg, now_s, args.queue.as_deref())?;
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
                args.queue.as_deref().unwrap_or_default()
            )));
        }
    }
    let pool = pool(args, cluster.as_deref(), &mut sources)?;
    let settings = Settings::new(args.objective, args.slot, now_s);
    let plan = plan_jobs(jobs, &pool, &settings);
    let feasible = plan.feasible;
    let report = PlanReport {
        schema: SCHEMA,
        sources,
        plan,
    };
    let text = render_plan(&report, args.output.format, &args.output.style());
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    if !feasible {
        notes.push(Note::Say(gpuledger::render::plan::verdict(&report.plan)));
    }
    Ok(Outcome {
        commands: Vec::new(),
        stdout,
        notes,
        exit: if feasible || !args.fail_on_miss {
            Exit::Clean
        } else {
            Exit::Findings
        },
    })
}

/// The cluster's objects: the snapshot files, else the API when a context, a kubeconfig, a queue or
/// the waiting work asks for the cluster, else none. A read that missed a resource is an error:
/// the pool and the waiting work would be guesses.
fn cluster(
    args: &PlanArgs,
    rt: &Runtime,
    progress: &Arc<Progress>,
    sources: &mut Vec<String>,
) -> anyhow::Result<Option<Vec<Object>>> {
    if !args.snapshot.is_empty() {
        let mut objects = Vec::new();
        for path in &args.snapshot {
            let read = gpuledger::k8s::read::read_objects(path)?;
            objects.extend(gpuledger::workload::checked(read)?);
            sources.push(path.display().to_string());
        }
        return Ok(Some(objects));
    }
    let wants =
        args.context.is_some() || args.kubeconfig.is_some() || args.pending || args.queue.is_some();
    if !wants {
        return Ok(None);
    }
    let spec = LiveSpec::Clusters {
        kubeconfig: args.kubeconfig.clone(),
        contexts: args.context.iter().cloned().collect(),
        timeouts: Timeouts::from_secs(args.timeout, gpuledger::input::DEFAULT_REQUEST_TIMEOUT_S),
    };
    let live = rt.block_on(gpuledger::input::live(&spec, progress))?;
    let (part, live_sources) = live.single("plan")?;
    if !part.incomplete.is_empty() {
        let missing: Vec<String> = part
            .incomplete
            .iter()
            .map(|m| format!("{} ({})", m.resource, m.reason))
            .collect();
        anyhow::bail!(
            "the cluster was read incompletely, so its pool and waiting work are unknown: {}",
            missing.join("; ")
        );
    }
    sources.extend(live_sources);
    Ok(Some(part.objects))
}

/// The pool: `--pool`, else the `--queue`'s quota, else the cluster's placeable GPUs minus what
/// non-batch workloads hold; its nodes: `--node`, else the cluster's placeable GPU nodes.
fn pool(
    args: &PlanArgs,
    objects: Option<&[Object]>,
    sources: &mut Vec<String>,
) -> anyhow::Result<Pool> {
    let mut node_sizes = args.node.clone();
    let Some(objects) = objects else {
        return Ok(Pool {
            gpus: args.pool.unwrap_or(0),
            node_sizes,
        });
    };
    let (cfg, _) = gpuledger::input::config(args.output.config.as_deref(), None)?;
    let (live, how) = plan::live::batch_pool(objects, &cfg)?;
    if node_sizes.is_empty() {
        node_sizes = live.node_sizes;
    }
    let gpus = match (args.pool, &args.queue) {
        (Some(n), _) => n,
        (None, Some(q)) => {
            let (gpus, text) =
                plan::kueue::pool(objects, q, args.borrow).map_err(anyhow::Error::msg)?;
            sources.push(text);
            gpus
        }
        (None, None) => {
            sources.push(how);
            live.gpus
        }
    };
    Ok(Pool { gpus, node_sizes })
}
