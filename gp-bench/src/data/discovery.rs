//! Where real data sets are looked for: `--data-dir`, else the `GP_DATA_DIR` environment
//! variable, else `../shared/datasets` beside the workspace when that folder exists.
//!
//! [`resolve_data_dir`] takes the environment variable's value as an argument, so the order
//! can be tested without touching the process environment.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::BenchError;

/// The environment variable naming the data directory.
pub const DATA_DIR_ENV: &str = "GP_DATA_DIR";

/// Which rule chose the data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataDirOrigin {
    /// The `--data-dir` argument.
    Argument,
    /// The `GP_DATA_DIR` environment variable.
    Environment,
    /// `../shared/datasets` relative to the workspace root.
    WorkspaceDefault,
    /// No directory: every real data set except the embedded one is replaced by its
    /// synthetic stand-in.
    NotFound,
}

impl fmt::Display for DataDirOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Argument => "from --data-dir",
            Self::Environment => "from GP_DATA_DIR",
            Self::WorkspaceDefault => "default ../shared/datasets beside the workspace",
            Self::NotFound => "no data directory found",
        })
    }
}

/// The chosen data directory (if any) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    /// The directory, `None` when none was given or found.
    pub path: Option<PathBuf>,
    /// The rule that chose it.
    pub origin: DataDirOrigin,
}

impl DataDir {
    /// One line for reports: the path and the rule.
    pub fn describe(&self) -> String {
        match &self.path {
            Some(p) => format!("{} ({})", p.display(), self.origin),
            None => format!(
                "none ({}; set --data-dir or {DATA_DIR_ENV} to use real data)",
                self.origin
            ),
        }
    }
}

/// Chooses the data directory: `explicit` (the `--data-dir` argument) first, then
/// `env_value` (the value of `GP_DATA_DIR`; an empty value counts as unset), then
/// `workspace_root/../shared/datasets` when it is a directory, else none.
///
/// Errors: [`BenchError::MissingDirectory`] when the argument or the environment variable
/// names a directory that does not exist (a typo should not silently switch to synthetic
/// stand-ins), [`BenchError::NotADirectory`] when it names a file.
pub fn resolve_data_dir(
    explicit: Option<&Path>,
    env_value: Option<&OsStr>,
    workspace_root: Option<&Path>,
) -> Result<DataDir, BenchError> {
    let chosen = |path: &Path, origin: DataDirOrigin, label: &str| {
        if path.is_dir() {
            Ok(DataDir {
                path: Some(path.to_path_buf()),
                origin,
            })
        } else if path.exists() {
            Err(BenchError::NotADirectory {
                path: path.to_path_buf(),
                origin: label.to_string(),
            })
        } else {
            Err(BenchError::MissingDirectory {
                path: path.to_path_buf(),
                origin: label.to_string(),
            })
        }
    };
    if let Some(p) = explicit {
        return chosen(p, DataDirOrigin::Argument, "given by --data-dir");
    }
    if let Some(v) = env_value.filter(|v| !v.is_empty()) {
        return chosen(
            Path::new(v),
            DataDirOrigin::Environment,
            "given by GP_DATA_DIR",
        );
    }
    if let Some(root) = workspace_root {
        let p = root.join("..").join("shared").join("datasets");
        if p.is_dir() {
            return Ok(DataDir {
                path: Some(std::fs::canonicalize(&p).unwrap_or(p)),
                origin: DataDirOrigin::WorkspaceDefault,
            });
        }
    }
    Ok(DataDir {
        path: None,
        origin: DataDirOrigin::NotFound,
    })
}

/// The Cargo workspace root: the nearest ancestor of `start` whose `Cargo.toml` has a
/// `[workspace]` table, else the workspace this crate was built in when it still exists.
pub fn find_workspace_root(start: &Path) -> Option<PathBuf> {
    let is_root = |dir: &Path| {
        std::fs::read_to_string(dir.join("Cargo.toml"))
            .map(|s| s.contains("[workspace]"))
            .unwrap_or(false)
    };
    if let Some(dir) = start.ancestors().find(|d| is_root(d)) {
        return Some(dir.to_path_buf());
    }
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    is_root(built_in).then(|| built_in.to_path_buf())
}
