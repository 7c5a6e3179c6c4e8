//! One module per subcommand: each wires its flags to the pipeline and returns the text to show.

pub mod check;
pub mod drift;
pub mod github;
pub mod inventory;
pub mod load;
pub mod render;
pub mod snapshot;

use std::path::Path;

use crate::error::Error;

/// What a command produced: the rendered report, and the exit code it asks for.
pub struct Outcome {
    /// Text for standard output; `None` when it was written to a file.
    pub stdout: Option<String>,
    /// Notes for standard error (where the report went, which config was used).
    pub notes: Vec<String>,
    pub exit_code: i32,
}

/// Writes `text` to `path`, or returns it for standard output.
pub fn deliver(
    text: String,
    path: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<Option<String>, Error> {
    match path {
        None => Ok(Some(text)),
        Some(p) if p == Path::new("-") => Ok(Some(text)),
        Some(p) => {
            std::fs::write(p, text).map_err(|source| Error::Write {
                path: p.to_path_buf(),
                source,
            })?;
            notes.push(format!("report written to {}", p.display()));
            Ok(None)
        }
    }
}
