//! Finished folds of cross-validated experiments kept on disk (`--fold-cache DIR`), so that
//! a run of many hours (GRIEF's 10-fold Table 1 at `--full`) can be interrupted and
//! continued: a later run with the same settings loads the folds that finished and runs
//! only the rest. KMCG's dense experiments store each problem (data set × kernel) as fold 0
//! of `<SET>-<kernel>` the same way.
//!
//! Each fold is one JSON file `<dir>/<experiment>/<dataset>-fold<k>.json` holding the
//! result, the settings it was computed with (a string the experiment builds from every
//! option that changes the result, plus [`FOLD_CACHE_FORMAT`]), the gpscale version and
//! the time it was written. A file whose settings differ from the current run's is not used
//! (and is overwritten when the fold is run again), so a cached number is always one the
//! current command would compute with the same code version; experiments bump their own
//! version string in the settings when their code changes a result.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::BenchError;
use crate::report::write_atomic;

/// Version of the file layout; part of every key.
pub const FOLD_CACHE_FORMAT: u32 = 1;

/// A directory of cached fold results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldCache {
    dir: PathBuf,
    cached_only: bool,
}

/// Which fold a result belongs to, and the settings it was computed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldKey<'a> {
    /// `<paper>/<experiment>`, e.g. `grief/table1-folds`.
    pub experiment: &'a str,
    /// The data set's name.
    pub dataset: &'a str,
    /// 0-based fold index.
    pub fold: usize,
    /// Every option that changes the result, as one string (compared verbatim).
    pub settings: String,
}

/// Where a cached result came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// gpscale version that wrote the file.
    pub gpscale_version: String,
    /// Seconds since the Unix epoch when the file was written.
    pub written_unix: u64,
    /// `release` or `debug`.
    pub profile: String,
}

#[derive(Serialize, Deserialize)]
struct Entry<T> {
    format: u32,
    experiment: String,
    dataset: String,
    fold: usize,
    settings: String,
    provenance: Provenance,
    result: T,
}

impl FoldCache {
    /// A cache rooted at `dir` (created on the first store).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            cached_only: false,
        }
    }

    /// The same cache, with folds that are not in it skipped instead of run when
    /// `cached_only` (`--cached-only`: a report of the recorded folds, written in seconds).
    pub fn with_cached_only(self, cached_only: bool) -> Self {
        Self {
            cached_only,
            ..self
        }
    }

    /// Whether folds missing from the cache are skipped rather than run.
    pub fn cached_only(&self) -> bool {
        self.cached_only
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key`.
    pub fn path(&self, key: &FoldKey<'_>) -> PathBuf {
        let file = format!("{}-fold{}.json", sanitize(key.dataset), key.fold);
        self.dir.join(sanitize_path(key.experiment)).join(file)
    }

    /// The cached result of `key` with its provenance, if a file with exactly these
    /// settings exists. A missing, unreadable or differently-keyed file gives `None` (the
    /// fold is then run again).
    pub fn load<T: DeserializeOwned>(&self, key: &FoldKey<'_>) -> Option<(T, Provenance)> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let entry: Entry<T> = serde_json::from_str(&text).ok()?;
        let matches = entry.format == FOLD_CACHE_FORMAT
            && entry.experiment == key.experiment
            && entry.dataset == key.dataset
            && entry.fold == key.fold
            && entry.settings == key.settings;
        matches.then_some((entry.result, entry.provenance))
    }

    /// Writes `result` for `key` (atomically; an existing file is replaced).
    ///
    /// Errors: [`BenchError::Write`] when the file cannot be written, [`BenchError::Json`]
    /// when the result cannot be serialized (a non-finite number is written as `null` and
    /// then fails to load, so the fold is simply run again).
    pub fn store<T: Serialize>(&self, key: &FoldKey<'_>, result: &T) -> Result<(), BenchError> {
        let entry = Entry {
            format: FOLD_CACHE_FORMAT,
            experiment: key.experiment.to_string(),
            dataset: key.dataset.to_string(),
            fold: key.fold,
            settings: key.settings.clone(),
            provenance: Provenance {
                gpscale_version: env!("CARGO_PKG_VERSION").to_string(),
                written_unix: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
                profile: if cfg!(debug_assertions) {
                    "debug"
                } else {
                    "release"
                }
                .to_string(),
            },
            result,
        };
        let text = serde_json::to_string_pretty(&entry)?;
        write_atomic(&self.path(key), text.as_bytes())
    }

    /// Deletes the file of `key` if there is one (a partial result superseded by the
    /// finished one).
    ///
    /// Errors: [`BenchError::Write`] when an existing file cannot be removed.
    pub fn remove(&self, key: &FoldKey<'_>) -> Result<(), BenchError> {
        let path = self.path(key);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(BenchError::Write {
                path,
                reason: e.to_string(),
            }),
        }
    }
}

/// A file-name-safe form of a name (letters, digits, `-`, `_`, `.` kept; others `_`).
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// [`sanitize`] per `/`-separated component, so `paper/experiment` stays two folders.
fn sanitize_path(name: &str) -> PathBuf {
    name.split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .map(sanitize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(settings: &str) -> FoldKey<'static> {
        FoldKey {
            experiment: "grief/table1-folds",
            dataset: "servo",
            fold: 3,
            settings: settings.to_string(),
        }
    }

    #[test]
    fn stores_and_loads_only_the_same_settings() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FoldCache::new(dir.path());
        assert!(cache.load::<Vec<f64>>(&key("a")).is_none());
        cache.store(&key("a"), &vec![1.5, -2.25]).unwrap();
        let (back, provenance) = cache.load::<Vec<f64>>(&key("a")).unwrap();
        assert_eq!(back, vec![1.5, -2.25]);
        assert_eq!(provenance.gpscale_version, env!("CARGO_PKG_VERSION"));
        assert!(cache.load::<Vec<f64>>(&key("b")).is_none());
        let other_fold = FoldKey {
            fold: 4,
            ..key("a")
        };
        assert!(cache.load::<Vec<f64>>(&other_fold).is_none());
        assert_eq!(
            cache.path(&key("a")),
            dir.path()
                .join("grief")
                .join("table1-folds")
                .join("servo-fold3.json")
        );
    }

    #[test]
    fn a_corrupt_or_foreign_file_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let cache = FoldCache::new(dir.path());
        let path = cache.path(&key("a"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{ not json").unwrap();
        assert!(cache.load::<Vec<f64>>(&key("a")).is_none());
        cache.store(&key("a"), &"text").unwrap();
        assert!(cache.load::<Vec<f64>>(&key("a")).is_none());
    }

    #[test]
    fn names_cannot_leave_the_cache_directory() {
        let cache = FoldCache::new("/c");
        let k = FoldKey {
            experiment: "../x/./y",
            dataset: "a/b c",
            fold: 0,
            settings: String::new(),
        };
        assert_eq!(cache.path(&k), PathBuf::from("/c/x/y/a_b_c-fold0.json"));
    }
}
