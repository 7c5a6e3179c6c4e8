//! Running an external renderer (kustomize, helm) safely: no shell, an argument vector, a trimmed
//! environment, a working directory, and a timeout after which the process is killed. Output is
//! captured up to a bound, so a runaway renderer cannot exhaust memory.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Captured stdout is refused beyond this size.
const MAX_OUTPUT: u64 = 256 * 1024 * 1024;

/// Why a renderer gave no output; each message names the program.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("cannot run {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// `stdout` or `stderr` could not be captured.
    #[error("no {0}")]
    NoPipe(&'static str),
    #[error("{program} timed out after {seconds}s and was stopped")]
    Timeout { program: String, seconds: u64 },
    #[error("waiting for {program}: {source}")]
    Wait {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{program} wrote more than {MAX_OUTPUT} bytes: refused")]
    TooMuchOutput { program: String },
    /// `stderr` is the bounded tail of what it wrote there.
    #[error("{program} failed ({status}): {stderr}")]
    Failed {
        program: String,
        status: std::process::ExitStatus,
        stderr: String,
    },
    #[error("{program} wrote output that is not UTF-8")]
    NotUtf8 { program: String },
}

pub struct Run<'a> {
    pub program: &'a Path,
    pub args: Vec<String>,
    pub cwd: &'a Path,
    /// The only environment variables the child sees (besides PATH, which is kept).
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

/// Runs the command; `Ok(stdout)` on exit code 0, else an error with stderr's tail.
pub fn run(r: &Run<'_>) -> Result<String, ProcessError> {
    let name = r.program.display().to_string();
    let mut cmd = Command::new(r.program);
    cmd.args(&r.args)
        .current_dir(r.cwd)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    for (k, v) in &r.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|source| ProcessError::Spawn {
        program: name.clone(),
        source,
    })?;
    let mut out = child.stdout.take().ok_or(ProcessError::NoPipe("stdout"))?;
    let mut err = child.stderr.take().ok_or(ProcessError::NoPipe("stderr"))?;
    let out_t = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut out).take(MAX_OUTPUT + 1).read_to_end(&mut buf);
        buf
    });
    let err_t = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut err).take(1024 * 1024).read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > r.timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ProcessError::Timeout {
                    program: name,
                    seconds: r.timeout.as_secs(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(source) => {
                return Err(ProcessError::Wait {
                    program: name,
                    source,
                });
            }
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    if stdout.len() as u64 > MAX_OUTPUT {
        return Err(ProcessError::TooMuchOutput { program: name });
    }
    if !status.success() {
        let msg = String::from_utf8_lossy(&stderr);
        let msg = msg.trim();
        let tail: String = msg
            .lines()
            .rev()
            .take(8)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        // A renderer's error is quoted into reports: bounded, whatever it wrote.
        let tail = crate::util::text::bounded(&tail, crate::util::text::MAX_MESSAGE_CHARS);
        return Err(ProcessError::Failed {
            program: name,
            status,
            stderr: tail,
        });
    }
    String::from_utf8(stdout).map_err(|_| ProcessError::NotUtf8 { program: name })
}

/// The first executable called `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
}
