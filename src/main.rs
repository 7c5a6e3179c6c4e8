//! The `gpuledger` binary: parse the command line, run the command, print, and map the outcome to an
//! exit code (0 clean, 1 findings the user asked to fail on, 2 error).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use gpuledger::cli::{Cli, Command};
use gpuledger::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let result = match &cli.command {
        Command::Inventory(args) => commands::inventory::run(args),
        Command::Render(args) => commands::render::run(args),
        Command::Drift(args) => commands::drift::run(args),
    };
    match result {
        Ok(outcome) => {
            if let Some(text) = outcome.stdout {
                let mut out = std::io::stdout().lock();
                if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush())
                    && e.kind() != std::io::ErrorKind::BrokenPipe
                {
                    eprintln!("gpuledger: cannot write to standard output: {e}");
                    return ExitCode::from(2);
                }
            }
            for n in outcome.notes {
                eprintln!("gpuledger: {n}");
            }
            ExitCode::from(u8::try_from(outcome.exit_code).unwrap_or(2))
        }
        Err(e) => {
            eprintln!("gpuledger: error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}

/// Diagnostics go to stderr, filtered by `GPULEDGER_LOG` (e.g. `GPULEDGER_LOG=debug`); off by default.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("GPULEDGER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .without_time()
        .init();
}
