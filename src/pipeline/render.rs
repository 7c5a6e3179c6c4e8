//! `render`: what Git says should run — the GitOps repository rendered at a ref (or its working
//! tree) as the controllers would, the GPU workloads it declares per tenant and app. An app that
//! fails to render is an incomplete run; the others are still reported.

use std::path::Path;

use super::input::{self, RepoSpec};
use super::{Note, Outcome, Result, Run, fleet};
use crate::report::{Kind, RenderReport, SCHEMA};

pub fn run(repo: &RepoSpec, config: Option<&Path>) -> Result<Run<RenderReport>> {
    let mut notes = Vec::new();
    let (cfg, cfg_path) = fleet::config(config, Some(&repo.path), &mut notes)?;
    let desired = input::desired_state(repo, &cfg, &[])?;
    input::ensure_rendered(&desired, repo)?;
    let mut sources = vec![format!("{} ({})", repo.path.display(), desired.at)];
    sources.extend(cfg_path);
    let failed = input::render_failures(&desired);
    let outcome = if failed.is_empty() {
        Outcome::Clean
    } else {
        notes.push(Note::RenderFailed(failed));
        Outcome::Incomplete
    };
    Ok(Run {
        report: RenderReport {
            schema: SCHEMA,
            kind: Kind::Render,
            sources,
            desired,
        },
        notes,
        outcome,
    })
}
