//! `gpuledger snapshot`: the cluster, as a kubectl-compatible List file.

use std::io::BufWriter;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::Outcome;
use crate::cli::SnapshotArgs;
use crate::live::kube::{ClusterSource, Progress, write_snapshot};

pub fn run(args: &SnapshotArgs, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    let src = ClusterSource {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        request_timeout: Duration::from_secs(args.request_timeout.max(1)),
        timeout: Duration::from_secs(args.timeout.max(1)),
        page_size: 500,
    };
    // Written to a temporary name first: an interrupted run never leaves half a snapshot.
    let tmp = args.output.with_extension("partial");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    let mut out = BufWriter::new(file);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let written = runtime.block_on(write_snapshot(src, progress.clone(), &mut out));
    drop(out);
    let written = match written {
        Ok(w) => w,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            anyhow::bail!("cannot read the cluster: {e}");
        }
    };
    std::fs::rename(&tmp, &args.output)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let mut notes = vec![format!(
        "{} objects from {} written to {}",
        written.objects,
        written.name,
        args.output.display()
    )];
    for m in &written.missing {
        notes.push(format!("snapshot incomplete: {}: {}", m.resource, m.reason));
    }
    Ok(Outcome {
        stdout: None,
        notes,
        exit_code: if written.missing.is_empty() { 0 } else { 2 },
    })
}
