//! What gpuledger writes to its standard streams, and the one path it takes there.
//!
//! Reports and messages quote text from repositories and clusters. Before anything is written it
//! goes through [`gpuledger::util::redact`] (no secret leaves) and is made printable (no terminal
//! escapes; a message is one bounded line). Under GitHub Actions (`GITHUB_ACTIONS=true`) the runner
//! also reads both streams for workflow commands — `::cmd::` at the start of a line, the legacy
//! `##[cmd]` anywhere — so:
//! - a report on standard output, and the messages on standard error, are each written between
//!   `::stop-commands::TOKEN` and `::TOKEN::`, with a token from the operating system's random
//!   source that no input can predict;
//! - a JSON report is not wrapped (a tool may be reading it through a pipe), and cannot hold a
//!   command: no line of it starts with `::`, and `##[` is written as the equal JSON `#\u0023[`;
//! - `##[` in any other text gets a zero-width space inside it;
//! - gpuledger's own commands (annotations) are written after the quoted report, their values
//!   escaped as the runner reads them.

use std::io::Write;

use gpuledger::util::redact::redact;
use gpuledger::util::text::{MAX_MESSAGE_CHARS, line, printable, printable_styled};

/// The streams of one run.
pub struct Streams {
    /// Set under GitHub Actions: quote what is written.
    actions: bool,
}

impl Streams {
    pub fn from_env() -> Streams {
        Streams {
            actions: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
        }
    }

    /// Writes a report (or any text gpuledger laid out) to standard output.
    pub fn stdout(&self, text: &str) -> std::io::Result<()> {
        let text = redact(text);
        // A terminal keeps the table's own colour (SGR only); anything else is plain text.
        let text = if std::io::IsTerminal::is_terminal(&std::io::stdout()) && !self.actions {
            std::borrow::Cow::Owned(printable_styled(&text))
        } else {
            printable(&text)
        };
        let json = text.starts_with('{') && text.trim_end().ends_with('}');
        let text = if json {
            text.replace("##[", "#\\u0023[")
        } else {
            no_legacy_command(&text)
        };
        let text = if self.actions && !json && !stdout_is_a_file() {
            quoted(&text)?
        } else {
            text
        };
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()
    }

    /// gpuledger's own workflow commands, after the report (their values are already escaped).
    pub fn commands(&self, commands: &[String]) -> std::io::Result<()> {
        if commands.is_empty() {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        for c in commands {
            writeln!(out, "{}", redact(c))?;
        }
        out.flush()
    }

    /// Writes messages to standard error, one bounded line each, prefixed `gpuledger: `.
    pub fn messages(&self, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        let mut text = String::new();
        for l in lines {
            text.push_str("gpuledger: ");
            text.push_str(&no_legacy_command(&line(&redact(l), MAX_MESSAGE_CHARS)));
            text.push('\n');
        }
        self.write_stderr(text);
    }

    /// Writes text gpuledger did not lay out as messages (clap's usage errors) to standard error:
    /// redacted, printable, and quoted under Actions.
    pub fn stderr(&self, text: &str) {
        self.write_stderr(no_legacy_command(&printable(&redact(text))));
    }

    /// Standard error, quoted under Actions. Its lines are safe on their own (no line starts a
    /// command), so without a random source they are still written, unquoted.
    fn write_stderr(&self, text: String) {
        let text = match self.actions.then(|| quoted(&text)) {
            Some(Ok(q)) => q,
            _ => text,
        };
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes()).and_then(|_| err.flush());
    }
}

/// An error and its causes, one line each (`error: …`, `  caused by: …`). A cause whose text is
/// already printed — an error whose message quotes its source, as `cannot read FILE: SOURCE` does —
/// is not printed again.
pub fn error_lines(e: &anyhow::Error) -> Vec<String> {
    let mut shown = e.to_string();
    let mut lines = vec![format!("error: {shown}")];
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if text.is_empty() || shown.contains(&text) {
            continue;
        }
        lines.push(format!("  caused by: {text}"));
        shown.push('\n');
        shown.push_str(&text);
    }
    lines
}

/// `text` between `::stop-commands::TOKEN` and `::TOKEN::`, with a fresh token.
fn quoted(text: &str) -> std::io::Result<String> {
    let t = token()?;
    Ok(format!(
        "::stop-commands::{t}\n{text}{}::{t}::\n",
        newline(text)
    ))
}

fn newline(text: &str) -> &'static str {
    if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    }
}

/// `##[` (the runner's legacy command syntax, read anywhere in a line) with a zero-width space.
pub fn no_legacy_command(text: &str) -> String {
    text.replace("##[", "#\u{200B}#[")
}

/// 128 bits from the operating system's random source, as hex.
fn token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| std::io::Error::other(format!("no random source: {e}")))?;
    Ok(format!(
        "gpuledger-{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}

/// Standard output redirected to a file is not read by the runner: it stays exactly the report.
fn stdout_is_a_file() -> bool {
    std::fs::metadata("/dev/stdout").is_ok_and(|m| m.is_file())
}
