//! Atomic file writes.

use std::fs;
use std::io::Write;
use std::path::Path;

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
