//! SHA-256 checks of data files against a `SHA256SUMS` list in `sha256sum` format
//! (`<64 hex digits>  <path>` per line, the path relative to the list's folder).

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::BenchError;

/// The name of the checksum list in `uci/` and `mnist/`.
pub const SUMS_FILE: &str = "SHA256SUMS";

/// The outcome of checking one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChecksumStatus {
    /// The file's SHA-256 equals the listed one.
    Ok,
    /// The file's SHA-256 differs from the listed one.
    Mismatch {
        /// The listed digest (lower-case hex).
        expected: String,
        /// The file's digest (lower-case hex).
        found: String,
    },
    /// The file is not there (or cannot be read).
    FileMissing,
    /// The list has no line for the file.
    NotListed,
}

impl ChecksumStatus {
    /// Whether the file verified.
    pub fn is_ok(&self) -> bool {
        matches!(self, Self::Ok)
    }
}

impl fmt::Display for ChecksumStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ok => f.write_str("ok"),
            Self::Mismatch { expected, found } => {
                write!(f, "MISMATCH (listed {expected}, file {found})")
            }
            Self::FileMissing => f.write_str("file missing"),
            Self::NotListed => f.write_str("not in SHA256SUMS"),
        }
    }
}

/// A parsed `SHA256SUMS` list: file path (relative, without a leading `./`) to digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksums {
    /// The folder the paths are relative to.
    pub dir: PathBuf,
    /// Relative path to lower-case hex digest.
    pub digests: BTreeMap<String, String>,
}

impl Checksums {
    /// Reads `dir/SHA256SUMS`.
    ///
    /// Errors: [`BenchError::MissingFile`] when it cannot be read;
    /// [`BenchError::BadChecksumList`] for a line that is not `<64 hex digits>  <path>`.
    pub fn read(dir: &Path) -> Result<Self, BenchError> {
        let path = dir.join(SUMS_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| BenchError::MissingFile {
            path: path.clone(),
            reason: e.to_string(),
            layout: "lines `<sha256 hex>  <relative path>` as written by sha256sum".into(),
        })?;
        let mut digests = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            // sha256sum writes two separators, the second `*` in binary mode.
            let parsed = line.split_once(' ').and_then(|(hex, rest)| {
                let file = rest.strip_prefix([' ', '*'])?;
                let ok = hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit());
                ok.then(|| (hex.to_ascii_lowercase(), file))
            });
            let Some((hex, file)) = parsed else {
                return Err(BenchError::BadChecksumList {
                    path,
                    reason: format!("line {} is not `<64 hex digits>  <path>`: `{line}`", i + 1),
                });
            };
            digests.insert(normalize(file), hex);
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            digests,
        })
    }

    /// Checks the file `relative` (to [`Checksums::dir`]) against its listed digest. A file
    /// that is not there is reported as missing even when it is not listed either.
    pub fn verify(&self, relative: &str) -> ChecksumStatus {
        let path = self.dir.join(relative);
        if !path.is_file() {
            return ChecksumStatus::FileMissing;
        }
        let Some(expected) = self.digests.get(&normalize(relative)) else {
            return ChecksumStatus::NotListed;
        };
        match sha256_file(&path) {
            Err(_) => ChecksumStatus::FileMissing,
            Ok(found) if &found == expected => ChecksumStatus::Ok,
            Ok(found) => ChecksumStatus::Mismatch {
                expected: expected.clone(),
                found,
            },
        }
    }
}

fn normalize(path: &str) -> String {
    path.trim().trim_start_matches("./").to_string()
}

/// The SHA-256 of a file's bytes as lower-case hex, read in a stream.
///
/// Errors: the I/O error when the file cannot be opened or read.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    io::copy(&mut BufReader::new(File::open(path)?), &mut hasher)?;
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
