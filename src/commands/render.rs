//! `gpuledger render`: the desired GPU workloads of a GitOps repository at a ref.

use super::{Exit, Note, Outcome, deliver};
use crate::cli::RenderArgs;
use gpuledger::input;
use gpuledger::render::render_desired;
use gpuledger::report::{RenderReport, SCHEMA};

pub fn run(args: &RenderArgs) -> anyhow::Result<Outcome> {
    args.output.not_prometheus("render")?;
    let spec = args.repo.spec();
    let (cfg, cfg_path) = input::config(args.output.config.as_deref(), Some(&spec.path))?;
    let desired = input::desired_state(&spec, &cfg, &[])?;
    input::ensure_rendered(&desired, &spec)?;
    let mut notes = Vec::new();
    let mut sources = vec![format!("{} ({})", spec.path.display(), desired.at)];
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(Note::ConfigUsed(p.display().to_string()));
    }
    let failed = input::render_failures(&desired);
    let report = RenderReport {
        schema: SCHEMA,
        kind: gpuledger::report::Kind::Render,
        sources,
        desired,
    };
    let text = render_desired(&report, args.output.format, &args.output.style());
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    let exit = if failed.is_empty() {
        Exit::Clean
    } else {
        notes.push(Note::RenderFailed(failed));
        Exit::Error
    };
    Ok(Outcome {
        commands: Vec::new(),
        stdout,
        notes,
        exit,
    })
}
