//! `gpuledger render`: the desired GPU workloads of a GitOps repository at a ref.

use std::time::Duration;

use anyhow::Context;

use super::{Outcome, deliver};
use crate::analysis::desired::desired;
use crate::cli::RenderArgs;
use crate::config::Config;
use crate::desired::render::{Tools, render_all};
use crate::desired::{discover, tree::Tree};
use crate::render::render_desired;
use crate::report::{RenderReport, SCHEMA};

pub fn run(args: &RenderArgs) -> anyhow::Result<Outcome> {
    let repo = &args.repo;
    anyhow::ensure!(repo.is_dir(), "--repo {}: not a directory", repo.display());
    let (cfg, cfg_path) = Config::discover(args.output.config.as_deref(), repo)?;
    let tree = Tree::open(repo, args.git_ref.as_deref())
        .with_context(|| format!("cannot read the repository {}", repo.display()))?;
    let plan = discover::plan(&tree, &cfg.render, &args.repo_url);
    let tools = Tools::detect(Duration::from_secs(args.render_timeout));
    let rendered = render_all(&tree, plan, &tools);
    let desired = desired(&rendered, &cfg);

    let mut notes = Vec::new();
    let mut sources = vec![format!("{} ({})", repo.display(), tree.label)];
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(format!("using config {}", p.display()));
    }
    let failed: Vec<String> = desired
        .apps
        .iter()
        .filter(|a| a.status == "error")
        .map(|a| format!("{} {}", a.kind, a.name))
        .chain(desired.problems.iter().cloned())
        .collect();
    let report = RenderReport {
        schema: SCHEMA,
        sources,
        desired,
    };
    let text = render_desired(&report, args.output.format);
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    let exit_code = if failed.is_empty() {
        0
    } else {
        notes.push(format!(
            "{} failed to render: {}",
            failed.len(),
            failed.join("; ")
        ));
        2
    };
    Ok(Outcome {
        stdout,
        notes,
        exit_code,
    })
}
