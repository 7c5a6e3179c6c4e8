//! `gpuledger plan`: when each batch job should start so that every deadline is met within a GPU
//! pool, and the pool that would be needed otherwise. Jobs come from `--jobs FILE` for now; other
//! sources (intent in Git, pending Jobs, Kueue) feed the same seam, [`plan_jobs`].

use super::{Exit, Note, Outcome, deliver};
use crate::cli::PlanArgs;
use gpuledger::error::Error;
use gpuledger::plan::{self, Job, Plan, Pool, Settings};
use gpuledger::render::plan::PlanReport;
use gpuledger::render::render_plan;
use gpuledger::report::SCHEMA;
use gpuledger::util::date::Timestamp;

/// The seam: jobs and a pool in, a plan out.
pub fn plan_jobs(jobs: Vec<Job>, pool: &Pool, settings: &Settings) -> Plan {
    plan::plan(jobs, pool, settings)
}

pub fn run(args: &PlanArgs) -> anyhow::Result<Outcome> {
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
    let pool = pool(args, &mut sources)?;
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

/// The pool: `--pool`, else the `--queue`'s quota, else the snapshot's placeable GPUs minus what
/// non-batch workloads hold; its nodes: `--node`, else the snapshot's placeable GPU nodes.
fn pool(args: &PlanArgs, sources: &mut Vec<String>) -> anyhow::Result<Pool> {
    let mut node_sizes = args.node.clone();
    if args.snapshot.is_empty() {
        return Ok(Pool {
            gpus: args.pool.unwrap_or(0),
            node_sizes,
        });
    }
    let (cfg, _) = gpuledger::input::config(args.output.config.as_deref(), None)?;
    let mut objects = Vec::new();
    for path in &args.snapshot {
        objects.extend(gpuledger::k8s::read::read_objects(path)?);
        sources.push(path.display().to_string());
    }
    let (live, how) = plan::live::batch_pool(&objects, &cfg)?;
    if node_sizes.is_empty() {
        node_sizes = live.node_sizes;
    }
    let gpus = match (args.pool, &args.queue) {
        (Some(n), _) => n,
        (None, Some(q)) => {
            let (gpus, text) =
                plan::kueue::pool(&objects, q, args.borrow).map_err(anyhow::Error::msg)?;
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
