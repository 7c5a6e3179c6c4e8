//! The `gpuledger` binary: parse the command line, run the command, print, and map the outcome to an
//! exit code (0 clean, 1 findings the user asked to fail on, 2 error).

#![deny(clippy::indexing_slicing, clippy::string_slice)]

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use clap::Parser;
use gpuledger::live::kube::Progress;
use gpuledger::pipeline::Context;

mod cli;
mod commands;
mod output;

use cli::{Cli, Command, GithubCommand};

/// mimalloc instead of the system allocator: reading a fleet allocates millions of small strings
/// and vectors, and glibc's malloc made a 100,000-pod inventory about 1.6 times slower (3.4 s
/// against 2.1 s on the compact JSON of `scripts/bench.sh`, same peak memory).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` and `mi_option_purge_delay` in `mi_option_e` (mimalloc.h, the
/// same in its v2 and v3).
#[cfg(target_os = "linux")]
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
#[cfg(target_os = "linux")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Arenas are committed as they are used, not whole (mimalloc commits them eagerly where the OS
/// overcommits): the kernel then clears only pages the program touches, which cut the system time
/// of a 100,000-pod inventory by half or more and kept a 10,000-pod YAML read below its file's
/// size. Memory freed is given back to the OS after 1 ms, not 10: a read frees its growing
/// buffers and vectors while it allocates the objects that follow, and with the default delay
/// the pages it freed were still held when its peak came (100,000 pods: 210 MiB peak, 163 MiB with
/// this, the same time). Runs before `main`, ahead of the first arena, from Linux's ELF
/// initialisers (elsewhere mimalloc keeps its defaults).
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static MIMALLOC_OPTIONS: extern "C" fn() = {
    extern "C" fn set() {
        // SAFETY: sets integer options; mimalloc reads them when it next reserves an arena or
        // purges.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
        // mimalloc's own variable, when set, wins.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: as above.
            unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1) };
        }
    }
    set
};

fn main() -> ExitCode {
    // clap's own output (help, usage errors that echo a value) takes the same path as ours.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let streams = output::Streams::from_env();
            let text = e.render().to_string();
            if e.use_stderr() {
                streams.stderr(&text);
            } else if let Err(err) = streams.stdout(&text)
                && err.kind() != std::io::ErrorKind::BrokenPipe
            {
                return ExitCode::from(2);
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    register_secrets(&cli);
    match &cli.command {
        Command::Serve(a) => init_logging(Some((
            a.verbose,
            a.log_format == cli::fleet::LogFormat::Json,
        ))),
        _ => init_logging(None),
    }
    let progress = Arc::new(Progress::default());
    let quiet = match &cli.command {
        Command::Inventory(a) => a.live.quiet(),
        Command::Drift(a) => a.live.quiet(),
        Command::Snapshot(a) => a.quiet,
        Command::Check(_) | Command::Github(_) => true,
        Command::Plan(a) => a.live.quiet(),
        Command::Render(_) | Command::Serve(_) | Command::Trend(_) => true,
        Command::Docs(a) => a.live.quiet(),
        Command::Cost(a) => a.live.quiet(),
        Command::Headroom(a) => a.live.quiet(),
    };
    // The one async runtime: every command that talks to a server runs its futures on it.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("gpuledger: error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let reporter = (!quiet && show_progress()).then(|| spawn_progress(progress.clone()));
    // Outside Actions, or with an event payload that cannot be read (the commands that need it say
    // so themselves), the local defaults name the checked-out commit.
    let actions =
        gpuledger::github::event::Runtime::from_env(|k| std::env::var(k).ok()).unwrap_or_default();
    let cx = Context {
        rt: &rt,
        progress: progress.clone(),
        actions,
    };
    let result = match &cli.command {
        Command::Inventory(args) => commands::inventory::run(args, &cx),
        Command::Render(args) => commands::render::run(args),
        Command::Plan(args) => commands::plan::run(args, &cx),
        Command::Docs(args) => commands::docs::run(args, &cx),
        Command::Cost(args) => commands::cost::run(args, &cx),
        Command::Headroom(args) => commands::headroom::run(args, &cx),
        Command::Serve(args) => commands::serve::run(args, &cx),
        Command::Trend(args) => commands::trend::run(args, &cx),
        Command::Drift(args) => commands::drift::run(args, &cx),
        Command::Snapshot(args) => commands::snapshot::run(args, &rt, &progress),
        Command::Check(args) => commands::check::run(args, &cx),
        Command::Github(GithubCommand::Comment(args)) => commands::github::comment(args, &cx),
        Command::Github(GithubCommand::Issue(args)) => commands::github::issue(args, &cx),
    };
    if let Some((stop, handle)) = reporter {
        stop.store(true, Ordering::Relaxed);
        let _ = handle.join();
    }
    let streams = output::Streams::from_env();
    match result {
        Ok(outcome) => {
            if let Some(text) = outcome.stdout
                && let Err(e) = streams.stdout(&text)
                && e.kind() != std::io::ErrorKind::BrokenPipe
            {
                streams.messages(&[format!("cannot write to standard output: {e}")]);
                return ExitCode::from(2);
            }
            let _ = streams.commands(&outcome.commands);
            let notes: Vec<String> = outcome.notes.iter().map(ToString::to_string).collect();
            streams.messages(&notes);
            ExitCode::from(outcome.exit.code())
        }
        Err(e) => {
            streams.messages(&output::error_lines(&e));
            ExitCode::from(2)
        }
    }
}

/// Every token gpuledger may be handed is known to the redactor before anything is printed.
fn register_secrets(cli: &Cli) {
    let mut vars = vec![
        "GITHUB_TOKEN".to_string(),
        "GH_TOKEN".to_string(),
        "GPULEDGER_PROMETHEUS_TOKEN".to_string(),
        "GPULEDGER_OPENCOST_TOKEN".to_string(),
    ];
    match &cli.command {
        Command::Github(GithubCommand::Comment(a)) => {
            vars.push(a.github.token_env.clone());
            vars.push(a.check.metrics.prometheus_token_env.clone());
            vars.push(a.check.cost.opencost_token_env.clone());
        }
        Command::Check(a) => {
            vars.push(a.metrics.prometheus_token_env.clone());
            vars.push(a.cost.opencost_token_env.clone());
        }
        Command::Github(GithubCommand::Issue(a)) => {
            vars.push(a.github.token_env.clone());
            vars.push(a.metrics.prometheus_token_env.clone());
            vars.push(a.cost.opencost_token_env.clone());
        }
        Command::Inventory(a) => {
            vars.push(a.metrics.prometheus_token_env.clone());
            vars.push(a.cost.opencost_token_env.clone());
        }
        Command::Cost(a) => {
            vars.push(a.metrics.prometheus_token_env.clone());
            vars.push(a.cost.opencost_token_env.clone());
        }
        Command::Drift(a) => vars.push(a.metrics.prometheus_token_env.clone()),
        Command::Docs(a) => vars.push(a.metrics.prometheus_token_env.clone()),
        Command::Headroom(a) => vars.push(a.metrics.prometheus_token_env.clone()),
        Command::Serve(a) => vars.push(a.metrics.prometheus_token_env.clone()),
        Command::Trend(a) => vars.push(a.prometheus_token_env.clone()),
        _ => {}
    }
    for v in vars {
        if let Ok(secret) = std::env::var(&v) {
            gpuledger::util::redact::register(&secret);
        }
    }
}

/// Diagnostics go to stderr, filtered by `GPULEDGER_LOG` (e.g. `GPULEDGER_LOG=debug`); by default
/// gpuledger's warnings and a watched resource's changes of state only, the libraries' own lines
/// with `verbose` (`serve -v`). serve's lines are its own (`WARN pods: …`, or one JSON object a
/// line with `--log-format json`).
fn init_logging(serve: Option<(bool, bool)>) {
    let (verbose, json) = serve.unwrap_or_default();
    use commands::serve::log;
    let filter = tracing_subscriber::EnvFilter::try_from_env("GPULEDGER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(log::default_filter(verbose)));
    let fmt = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| Diagnostics);
    if json {
        fmt.event_format(log::JsonLines).init();
    } else if serve.is_some() {
        fmt.event_format(log::TextLines).init();
    } else {
        fmt.with_ansi(std::io::stderr().is_terminal())
            .without_time()
            .init();
    }
}

/// A progress line only on an interactive terminal, never in CI.
fn show_progress() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// Redraws `listing 7/19 resources, 12,345 objects` on stderr until told to stop, then clears it.
fn spawn_progress(p: Arc<Progress>) -> (Arc<AtomicBool>, JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut shown = false;
        while !flag.load(Ordering::Relaxed) {
            let total = p.resources_total.load(Ordering::Relaxed);
            if total > 0 {
                eprint!(
                    "\r\x1b[2Klisting {}/{total} resources, {} objects",
                    p.resources_done.load(Ordering::Relaxed),
                    p.objects.load(Ordering::Relaxed)
                );
                shown = true;
            }
            std::thread::sleep(Duration::from_millis(150));
        }
        if shown {
            eprint!("\r\x1b[2K");
        }
    });
    (stop, handle)
}

/// Standard error for diagnostics: redacted, printable, and never a workflow command.
struct Diagnostics;

impl Write for Diagnostics {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // One event is one write: it becomes one bounded, redacted, printable line (a newline
        // inside, from data, could otherwise start a workflow command on a line of its own).
        let text = String::from_utf8_lossy(buf);
        let text = gpuledger::util::text::line(&text, gpuledger::util::text::MAX_MESSAGE_CHARS);
        let text = output::no_legacy_command(&text);
        let mut err = std::io::stderr().lock();
        err.write_all(text.as_bytes())?;
        err.write_all(b"\n")?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
