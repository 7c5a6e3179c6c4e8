//! `gpuledger render`: the desired GPU workloads of a GitOps repository at a ref.

use std::path::Path;

use super::{Outcome, deliver, load};
use crate::cli::RenderArgs;
use crate::render::render_desired;
use crate::report::{RenderReport, SCHEMA};

pub fn run(args: &RenderArgs) -> anyhow::Result<Outcome> {
    let repo = args.repo.repo.as_deref().unwrap_or(Path::new("."));
    let (cfg, cfg_path) = load::config(args.output.config.as_deref(), Some(repo))?;
    let desired = load::desired_state(&args.repo, repo, &cfg, &[])?;

    let mut notes = Vec::new();
    let mut sources = vec![format!("{} ({})", repo.display(), desired.at)];
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(format!("using config {}", p.display()));
    }
    let failed = load::render_failures(&desired);
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
