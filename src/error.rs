//! Errors the library reports to its caller.
//!
//! Every variant says what went wrong and where, so the user can fix the input: an input error names
//! the file and, when the parser knows it, the line and column. Findings about the fleet (drift, a
//! broken node) are never errors: they are data in the report. Errors are reserved for inputs the tool
//! cannot read, which `main` maps to exit code 2.

use std::fmt;
use std::path::PathBuf;

/// A problem with one input file (snapshot or config), located as precisely as the parser allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// A YAML parser's error in `file`, located where the parser says: shared by every reader of
    /// YAML (manifests, the configuration, jobs files).
    pub fn from_yaml(e: &serde_saphyr::Error, file: &str) -> InputError {
        let loc = e.location();
        let line = loc.map(|l| l.line()).filter(|&l| l > 0);
        let column = loc.map(|l| l.column()).filter(|&c| c > 0);
        InputError {
            file: file.to_string(),
            line: line.and_then(|l| u32::try_from(l).ok()),
            column: column.and_then(|c| u32::try_from(c).ok()),
            message: yaml_message(e),
        }
    }
}

/// The error's own message, without the location and source snippet the Display form adds.
fn yaml_message(e: &serde_saphyr::Error) -> String {
    let full = e.to_string();
    let first = full.lines().next().unwrap_or("").trim();
    // serde-saphyr writes "error: line L column C: message" or "message at line L, column C".
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let first = first.split_once(" at line ").map_or(first, |(m, _)| m);
    let first = match first.strip_prefix("line ") {
        Some(rest) => rest.split_once(": ").map_or(rest, |(_, m)| m),
        None => first,
    };
    if first.starts_with("budget breached") {
        return format!(
            "{first}: the YAML expands beyond what its size allows (an alias bomb or runaway nesting), refused"
        );
    }
    first.to_string()
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A snapshot or config file that exists but cannot be understood.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A file that cannot be opened or read at all.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An output file that cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
