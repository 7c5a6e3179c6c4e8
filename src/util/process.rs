//! Running an external renderer (kustomize, helm) safely: no shell, an argument vector, a trimmed
//! environment, a working directory, and a timeout after which the process is killed. Output is
//! captured up to a bound, so a runaway renderer cannot exhaust memory.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Captured stdout is refused beyond this size.
const MAX_OUTPUT: u64 = 256 * 1024 * 1024;

pub struct Run<'a> {
    pub program: &'a Path,
    pub args: Vec<String>,
    pub cwd: &'a Path,
    /// The only environment variables the child sees (besides PATH, which is kept).
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

/// Runs the command; `Ok(stdout)` on exit code 0, else an error with stderr's tail.
pub fn run(r: &Run<'_>) -> Result<String, String> {
    let name = r.program.display();
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
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {name}: {e}"))?;
    let mut out = child.stdout.take().ok_or("no stdout")?;
    let mut err = child.stderr.take().ok_or("no stderr")?;
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
                return Err(format!(
                    "{name} timed out after {}s and was stopped",
                    r.timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for {name}: {e}")),
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    if stdout.len() as u64 > MAX_OUTPUT {
        return Err(format!(
            "{name} wrote more than {MAX_OUTPUT} bytes: refused"
        ));
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
        return Err(format!("{name} failed ({status}): {tail}"));
    }
    String::from_utf8(stdout).map_err(|_| format!("{name} wrote output that is not UTF-8"))
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
