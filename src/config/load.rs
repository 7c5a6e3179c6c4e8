//! Reading `.gpuledger.yaml`: from a named file, from the working directory when one is there, or
//! as committed at a ref (from git objects, never from the work tree, so a pull request cannot
//! change the configuration its own check applies). Unknown keys are errors with file and line;
//! the figures the schema cannot bound (fractions, costs per hour) are checked here, each error
//! naming its key.

use std::path::{Path, PathBuf};

use super::{Config, DEFAULT_FILE};
use crate::error::{Error, InputError};

impl Config {
    /// Parses a config file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Config, InputError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let cfg: Option<Config> =
            serde_saphyr::from_str(text).map_err(|e| InputError::from_yaml(&e, file))?;
        let cfg = cfg.unwrap_or_default();
        for (key, v) in [
            ("headroom.error_limit", cfg.headroom.error_limit),
            ("headroom.near_capacity", cfg.headroom.near_capacity),
        ] {
            if !(0.0..1.0).contains(&v) {
                return Err(InputError {
                    file: file.to_string(),
                    line: None,
                    column: None,
                    message: format!("{key} is {v}: it is a fraction from 0 to 1 (0.01 is 1%)"),
                });
            }
        }
        let t = cfg.metrics.busy_threshold;
        if !(0.0..1.0).contains(&t) {
            return Err(InputError {
                file: file.to_string(),
                line: None,
                column: None,
                message: format!(
                    "metrics.busy_threshold is {t}: it is a fraction of activity from 0 to 1 (0.05 is 5%)"
                ),
            });
        }
        if let Some(sel) = &cfg.metrics.cluster_selector
            && let Err(why) = super::metrics::check_selector(sel)
        {
            return Err(InputError {
                file: file.to_string(),
                line: None,
                column: None,
                message: format!(
                    "metrics.cluster_selector {sel:?} is not a list of PromQL label matchers: {why}"
                ),
            });
        }
        for (i, e) in cfg.cost.external.iter().enumerate() {
            let problem = if !(e.per_hour.is_finite() && e.per_hour >= 0.0) {
                Some(format!("is {}: a cost per hour of at least 0", e.per_hour))
            } else if e.workload.is_some() == e.tenant.is_some() {
                Some("needs exactly one of workload (namespace/Kind/name) or tenant: a cost is counted once".to_string())
            } else {
                None
            };
            if let Some(p) = problem {
                return Err(InputError {
                    file: file.to_string(),
                    line: None,
                    column: None,
                    message: format!("cost.external[{i}] ({}) per_hour {p}", e.name)
                        .replace("per_hour needs", "needs"),
                });
            }
        }
        Ok(cfg)
    }

    pub fn load(path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Config::parse(&text, &path.display().to_string())?)
    }

    /// The explicit file when given (it must exist), else `.gpuledger.yaml` in `dir` when present,
    /// else the defaults. Returns the file used, if any.
    pub fn discover(
        explicit: Option<&Path>,
        dir: &Path,
    ) -> Result<(Config, Option<PathBuf>), Error> {
        if let Some(p) = explicit {
            return Ok((Config::load(p)?, Some(p.to_path_buf())));
        }
        let p = dir.join(DEFAULT_FILE);
        if p.is_file() {
            return Ok((Config::load(&p)?, Some(p)));
        }
        Ok((Config::default(), None))
    }

    /// The `.gpuledger.yaml` committed at `rev` in the repository at `repo` (the defaults when that
    /// commit has none), and the name it is known by in messages (`origin/main:.gpuledger.yaml`).
    /// Read from git objects, never from the work tree, so a pull request's edits cannot reach it.
    pub fn at_ref(repo: &Path, rev: &str) -> Result<(Config, Option<String>), Error> {
        let name = format!("{rev}:{DEFAULT_FILE}");
        let fail = |message: String| {
            Error::Input(InputError {
                file: name.clone(),
                line: None,
                column: None,
                message,
            })
        };
        let git = git2::Repository::open(repo).map_err(|e| {
            fail(format!(
                "{} is not a git repository: {}",
                repo.display(),
                e.message()
            ))
        })?;
        let tree = git
            .revparse_single(rev)
            .and_then(|o| o.peel_to_tree())
            .map_err(|e| {
                fail(format!(
                    "cannot read ref {rev}: {} (fetch it first: `git fetch origin {rev}`, or `fetch-depth: 0` in actions/checkout)",
                    e.message()
                ))
            })?;
        let Ok(entry) = tree.get_path(Path::new(DEFAULT_FILE)) else {
            return Ok((Config::default(), None));
        };
        if entry.filemode() != i32::from(git2::FileMode::Blob)
            && entry.filemode() != i32::from(git2::FileMode::BlobExecutable)
        {
            return Err(fail(
                "is not a regular file (a symlink or a directory): refused".into(),
            ));
        }
        let blob = entry
            .to_object(&git)
            .and_then(|o| o.peel_to_blob())
            .map_err(|e| fail(e.message().to_string()))?;
        let text =
            std::str::from_utf8(blob.content()).map_err(|_| fail("is not UTF-8 text".into()))?;
        Ok((Config::parse(text, &name)?, Some(name)))
    }
}
