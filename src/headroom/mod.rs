//! Serving headroom: how much more a serving workload can take, from the only honest source of a
//! capacity figure, a load test at fixed model, hardware and settings.
//!
//! [`loadtest`] reads the result files serving teams already have (vLLM `bench serve`, AIPerf and
//! GenAI-Perf, GuideLLM) into one shape: what was tested (model, GPUs, replicas, settings, where
//! the format records them) and one [`loadtest::Run`] per offered load. [`loadtest::capacity`]
//! applies the rule: the tested capacity is the highest sustained request rate of a run that met
//! every bound of the latency objective and stayed within the error limit. A percentile the file
//! does not report is never interpolated from the ones it does: the capacity is then unknown with
//! that reason. What production asks for comes from Prometheus (`live::serving`); the join and the
//! verdict are `analysis::headroom`.

pub mod loadtest;

use std::path::{Component, Path};

use crate::analysis::headroom::{LoadTests, Production};
use crate::live::prometheus::PromSource;
use crate::report::WorkloadRow;

/// Reads the load test each workload's intent names, once per path, relative to the repository
/// root. A path that is absolute or climbs out of the repository (`..`) is refused: it came from
/// an annotation, and gpuledger reads only the repository it was given. Without a repository every
/// load test is unread, which the analysis reports. A file that cannot be read or parsed is kept as
/// its error (`file:line: …`) for the row and returned for the command to exit on.
pub fn read_load_tests(repo: Option<&Path>, rows: &[WorkloadRow]) -> (LoadTests, Vec<String>) {
    let mut out = LoadTests::new();
    let mut errors = Vec::new();
    let Some(repo) = repo else {
        return (out, errors);
    };
    for path in rows
        .iter()
        .filter_map(|r| r.intent.as_ref()?.load_test.as_deref())
    {
        if out.contains_key(path) {
            continue;
        }
        let p = Path::new(path);
        let inside = p
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        // A symlink in the repository may still point out of it: the resolved path must stay in.
        let full = repo.join(p);
        let escapes = match (full.canonicalize(), repo.canonicalize()) {
            (Ok(f), Ok(r)) => !f.starts_with(r),
            _ => false,
        };
        let result = if !inside || escapes {
            Err(format!(
                "{path}: a load test must be a relative path inside the repository"
            ))
        } else {
            loadtest::read(&full, path).map_err(|e| e.to_string())
        };
        if let Err(e) = &result {
            errors.push(e.clone());
        }
        out.insert(path.to_string(), result);
    }
    (out, errors)
}

/// What production asks of the serving workloads, or why it is unknown.
pub async fn production(src: Option<&PromSource>) -> Production {
    match src {
        None => Production::NotConfigured,
        Some(s) => match crate::live::serving::serving(s, None).await {
            Ok(m) => Production::Read(m),
            Err(e) => Production::Failed(e),
        },
    }
}
