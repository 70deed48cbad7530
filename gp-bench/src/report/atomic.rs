//! Atomic file writes, folders replaced whole, and the output directory's write check.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::BenchError;

/// Writes `contents` to `path` atomically: into a hidden temporary file in the same
/// directory (created if missing), flushed to disk, then renamed over `path`. Readers see
/// the old file or the new one, never a partial one.
///
/// Errors: [`BenchError::Write`] naming the path.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), BenchError> {
    let err = |reason: String| BenchError::Write {
        path: path.to_path_buf(),
        reason,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| err(format!("cannot create the directory: {e}")))?;
    let name = path
        .file_name()
        .ok_or_else(|| err("not a file path".into()))?
        .to_string_lossy();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        err(e.to_string())
    })
}

/// The hidden staging folder of `dest` (`.<name>.tmp-<pid>` beside it), emptied and created:
/// a paper's files are written there and moved into place by [`replace_dir`], so an
/// interrupted run never leaves an old report next to a new plot.
///
/// Errors: [`BenchError::Write`] naming the folder.
pub fn staging_dir(dest: &Path) -> Result<PathBuf, BenchError> {
    let staged = sibling(dest, "tmp")?;
    let err = |reason: String| BenchError::Write {
        path: staged.clone(),
        reason,
    };
    if staged.exists() {
        fs::remove_dir_all(&staged)
            .map_err(|e| err(format!("cannot remove a stale staging folder: {e}")))?;
    }
    fs::create_dir_all(&staged).map_err(|e| err(format!("cannot create the folder: {e}")))?;
    Ok(staged)
}

/// Moves the folder `staged` to `dest`, replacing whatever was there: the old folder is
/// renamed aside first, then `staged` renamed into place, then the old one removed. Readers
/// see the old folder or the new one, never a mix.
///
/// Errors: [`BenchError::Write`] naming the folder that could not be moved.
pub fn replace_dir(staged: &Path, dest: &Path) -> Result<(), BenchError> {
    let err = |path: &Path, reason: String| BenchError::Write {
        path: path.to_path_buf(),
        reason,
    };
    let old = sibling(dest, "old")?;
    if old.exists() {
        fs::remove_dir_all(&old).map_err(|e| err(&old, e.to_string()))?;
    }
    let had_old = dest.exists();
    if had_old {
        fs::rename(dest, &old)
            .map_err(|e| err(dest, format!("cannot move the old folder aside: {e}")))?;
    }
    if let Err(e) = fs::rename(staged, dest) {
        if had_old {
            let _ = fs::rename(&old, dest);
        }
        return Err(err(
            dest,
            format!("cannot move the new folder into place: {e}"),
        ));
    }
    if had_old {
        fs::remove_dir_all(&old).map_err(|e| err(&old, e.to_string()))?;
    }
    Ok(())
}

/// Checks, before any computation, that reports can be written under `dir`: creates it (and
/// its parents) and a probe file in it, then removes the probe.
///
/// Errors: [`BenchError::Write`] naming `dir` and the operating system's reason.
pub fn check_writable_dir(dir: &Path) -> Result<(), BenchError> {
    let err = |reason: String| BenchError::Write {
        path: dir.to_path_buf(),
        reason: format!("the output directory is not writable: {reason}"),
    };
    if dir.exists() && !dir.is_dir() {
        return Err(err("it exists and is not a directory".into()));
    }
    fs::create_dir_all(dir).map_err(|e| err(format!("cannot create it: {e}")))?;
    let probe = dir.join(format!(".gp-bench-probe-{}", std::process::id()));
    fs::File::create(&probe)
        .and_then(|mut f| f.write_all(b"probe"))
        .map_err(|e| err(format!("cannot create a file in it: {e}")))?;
    fs::remove_file(&probe).map_err(|e| err(format!("cannot remove the probe file: {e}")))
}

/// `.<name>.<tag>-<pid>` beside `dest`.
fn sibling(dest: &Path, tag: &str) -> Result<PathBuf, BenchError> {
    let name = dest.file_name().ok_or_else(|| BenchError::Write {
        path: dest.to_path_buf(),
        reason: "not a folder path".into(),
    })?;
    let parent = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(parent.join(format!(
        ".{}.{tag}-{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_dir_swaps_the_whole_folder() {
        let root = tempfile::tempdir().expect("tempdir");
        let dest = root.path().join("paper");
        fs::create_dir_all(&dest).expect("mkdir");
        fs::write(dest.join("old-plot.svg"), b"old").expect("write");
        fs::write(dest.join("report.md"), b"old report").expect("write");
        let staged = staging_dir(&dest).expect("staging");
        assert!(staged.starts_with(root.path()));
        fs::write(staged.join("report.md"), b"new report").expect("write");
        replace_dir(&staged, &dest).expect("replace");
        assert!(!dest.join("old-plot.svg").exists());
        assert_eq!(
            fs::read(dest.join("report.md")).expect("read"),
            b"new report"
        );
        let left: Vec<_> = fs::read_dir(root.path())
            .expect("list")
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("paper")]);
    }

    #[test]
    fn unwritable_output_is_refused_before_running() {
        let root = tempfile::tempdir().expect("tempdir");
        let file = root.path().join("a-file");
        fs::write(&file, b"x").expect("write");
        let e = check_writable_dir(&file.join("out")).expect_err("under a file");
        assert!(e.to_string().contains("not writable"), "{e}");
        let e = check_writable_dir(&file).expect_err("a file");
        assert!(e.to_string().contains("not a directory"), "{e}");
        let ok = root.path().join("new").join("out");
        check_writable_dir(&ok).expect("writable");
        assert_eq!(fs::read_dir(&ok).expect("list").count(), 0);
    }
}
