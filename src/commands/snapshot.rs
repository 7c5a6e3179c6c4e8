//! `gpuledger snapshot`: the cluster, as a kubectl-compatible List file that says where and when it
//! was read (context, server, read time and gpuledger version, in the list's annotations).

use std::io::BufWriter;
use std::sync::Arc;

use anyhow::Context as _;
use tokio::runtime::Runtime;

use super::{Done, Exit};
use crate::cli::fleet::SnapshotArgs;
use gpuledger::live::kube::{Progress, write_snapshot};
use gpuledger::pipeline::Note;
use gpuledger::pipeline::input::{Timeouts, cluster_source};

pub fn run(args: &SnapshotArgs, rt: &Runtime, progress: &Arc<Progress>) -> anyhow::Result<Done> {
    let src = cluster_source(
        args.kubeconfig.clone(),
        args.context.clone(),
        Timeouts::from_secs(args.timeout, args.request_timeout),
    );
    // Written to a temporary name first: an interrupted run never leaves half a snapshot.
    let tmp = args.output.with_extension("partial");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    let mut out = BufWriter::new(file);
    let written = rt.block_on(write_snapshot(src, progress.clone(), &mut out));
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
    let mut notes = vec![Note::Say(format!(
        "{} objects from {} written to {}{}",
        written.objects,
        written.name,
        args.output.display(),
        written
            .meta
            .read_at
            .map(|t| format!(" (read at {t})"))
            .unwrap_or_default()
    ))];
    for m in &written.missing {
        notes.push(Note::Incomplete {
            what: "snapshot",
            resource: m.resource.clone(),
            reason: m.reason.clone(),
        });
    }
    Ok(Done {
        commands: Vec::new(),
        stdout: None,
        notes,
        exit: if written.missing.is_empty() {
            Exit::Clean
        } else {
            Exit::Error
        },
    })
}
