//! `gpuledger inventory`: read snapshots, compute the inventory, render it.

use anyhow::Context;

use super::{Outcome, deliver};
use crate::analysis::inventory::inventory;
use crate::cli::InventoryArgs;
use crate::config::Config;
use crate::k8s::read::read_objects;
use crate::render::render;

pub fn run(args: &InventoryArgs) -> anyhow::Result<Outcome> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (cfg, cfg_path) = Config::discover(args.output.config.as_deref(), &cwd)?;
    let mut objects = Vec::new();
    let mut sources = Vec::new();
    for path in &args.snapshot {
        let objs = read_objects(path)?;
        tracing::debug!(file = %path.display(), objects = objs.len(), "read snapshot");
        objects.extend(objs);
        sources.push(path.display().to_string());
    }
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(format!("using config {}", p.display()));
    }
    let report = inventory(&objects, &cfg, sources);
    let text = render(&report, args.output.format);
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    Ok(Outcome {
        stdout,
        notes,
        exit_code: 0,
    })
}
