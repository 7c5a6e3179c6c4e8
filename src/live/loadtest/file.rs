//! One load test from disk: a file, or every `.json` file of a directory, in name order, as one
//! sweep (vLLM writes one file per run). The format is told apart by the JSON's shape: a numeric
//! `request_throughput` (or a list of such objects) is vLLM bench serve, a `benchmarks` list is
//! GuideLLM, a `request_throughput` object is AIPerf/GenAI-Perf. A file that is none of these is
//! an error naming it; a file that is not JSON names its line and column.

use std::path::Path;

use serde_json::Value;

use super::types::{Format, LoadTest};
use super::{aiperf, guidellm, vllm};
use crate::error::InputError;

/// Reads a load-test file, or every `.json` file of a directory as one sweep. `shown` names the
/// path in errors (as the annotation wrote it).
pub fn read(path: &Path, shown: &str) -> Result<LoadTest, InputError> {
    let io = |e: std::io::Error| InputError {
        file: shown.to_string(),
        line: None,
        column: None,
        message: format!("cannot read the load test: {e}"),
    };
    if path.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        return sweep(
            shown,
            files.iter().map(|f| {
                let name = format!(
                    "{}/{}",
                    shown.trim_end_matches('/'),
                    f.file_name()
                        .map(|n| n.to_string_lossy())
                        .unwrap_or_default()
                );
                let text = read_capped(f, &name)?;
                Ok((name, text))
            }),
        );
    }
    let text = read_capped(path, shown)?;
    parse(&text, shown)
}

/// The files of a directory, in name order, as one sweep: each is read (`(name, text)`) and
/// parsed in turn, and must be of the same format and tested configuration as the others.
pub(super) fn sweep(
    shown: &str,
    files: impl Iterator<Item = Result<(String, String), InputError>>,
) -> Result<LoadTest, InputError> {
    let mut out: Option<LoadTest> = None;
    for f in files {
        let (name, text) = f?;
        let lt = parse(&text, &name)?;
        match &mut out {
            None => {
                out = Some(LoadTest {
                    file: shown.to_string(),
                    ..lt
                })
            }
            Some(acc) => {
                if acc.format != lt.format || acc.tested != lt.tested {
                    return Err(InputError {
                        file: name,
                        line: None,
                        column: None,
                        message: format!(
                            "is not part of the same load test as the other files of {shown} (another format, model or tested configuration)"
                        ),
                    });
                }
                acc.runs.extend(lt.runs);
            }
        }
    }
    out.ok_or_else(|| InputError {
        file: shown.to_string(),
        line: None,
        column: None,
        message: "is a directory without .json load-test results".into(),
    })
}

/// Load-test results with every request in them (`--save-detailed`) run to tens of megabytes; past
/// this size a file is refused rather than read into memory.
pub(super) const MAX_BYTES: u64 = 256 << 20;

fn read_capped(path: &Path, shown: &str) -> Result<String, InputError> {
    let err = |message: String| InputError {
        file: shown.to_string(),
        line: None,
        column: None,
        message,
    };
    let len = std::fs::metadata(path)
        .map_err(|e| err(format!("cannot read the load test: {e}")))?
        .len();
    if len > MAX_BYTES {
        return Err(err(format!(
            "is {len} bytes, more than the {MAX_BYTES} a load-test result may have"
        )));
    }
    std::fs::read_to_string(path).map_err(|e| err(format!("cannot read the load test: {e}")))
}

/// Parses one load-test file's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<LoadTest, InputError> {
    let err = |message: String| InputError {
        file: file.to_string(),
        line: None,
        column: None,
        message,
    };
    let v: Value = serde_json::from_str(text).map_err(|e| InputError {
        file: file.to_string(),
        line: u32::try_from(e.line()).ok().filter(|l| *l > 0),
        column: u32::try_from(e.column()).ok().filter(|c| *c > 0),
        message: format!("not a JSON load-test result: {e}"),
    })?;
    let (format, tested, runs) = match &v {
        Value::Array(items) if !items.is_empty() && items.iter().all(vllm::is_vllm) => {
            let mut runs = Vec::new();
            let mut tested = None;
            for (i, item) in items.iter().enumerate() {
                let t = vllm::tested(item);
                if tested.as_ref().is_some_and(|x| *x != t) {
                    return Err(err(format!(
                        "run [{i}] tested another model or configuration than run [0]"
                    )));
                }
                tested = Some(t);
                runs.push(vllm::run(item));
            }
            (Format::VllmBench, tested.unwrap_or_default(), runs)
        }
        Value::Object(_) if v.get("benchmarks").is_some_and(Value::is_array) => {
            let (tested, runs) = guidellm::read(&v).map_err(|e| err(e.to_string()))?;
            (Format::Guidellm, tested, runs)
        }
        Value::Object(_) if v.get("request_throughput").is_some_and(Value::is_object) => (
            Format::Aiperf,
            aiperf::tested(&v),
            vec![aiperf::run(&v).map_err(|e| err(e.to_string()))?],
        ),
        Value::Object(_) if vllm::is_vllm(&v) => {
            (Format::VllmBench, vllm::tested(&v), vec![vllm::run(&v)])
        }
        _ => {
            return Err(err(
                "is not a load-test result gpuledger reads: expected vLLM bench serve \
                 (`request_throughput`, a number), AIPerf/GenAI-Perf (`request_throughput.avg`) \
                 or GuideLLM (`benchmarks`)"
                    .into(),
            ));
        }
    };
    if runs.is_empty() {
        return Err(err("has no runs".into()));
    }
    Ok(LoadTest {
        file: file.to_string(),
        format,
        tested,
        runs,
    })
}
