//! The UCI regression sets with the standard 10 train/test folds (`uci/<name>/` in the data
//! directory, see its README): `data.csv.gz` (no header, inputs then the target in the last
//! column) and `test_mask.csv.gz` (no header, one row per observation, 10 columns of 0/1;
//! column `k` marks the test rows of fold `k`). Both are gzip, read with a streaming decoder.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use faer::{Col, Mat};
use flate2::read::GzDecoder;

use super::csv_loader::{read_numeric_records, ReadErrors};
use super::{DataOrigin, Dataset, Split};
use crate::error::BenchError;

/// Number of train/test folds of every UCI set.
pub const UCI_FOLDS: usize = 10;

/// The folder of the UCI sets inside the data directory.
pub const UCI_DIR: &str = "uci";

/// The data file of a UCI set inside its folder.
pub const UCI_DATA_FILE: &str = "data.csv.gz";

/// The fold-mask file of a UCI set inside its folder.
pub const UCI_MASK_FILE: &str = "test_mask.csv.gz";

/// The layout the UCI files must have, quoted when one is missing.
pub const UCI_LAYOUT: &str = "uci/<name>/data.csv.gz (gzip CSV, no header, inputs then the \
target in the last column) and uci/<name>/test_mask.csv.gz (gzip CSV, no header, one row per \
observation, 10 columns of 0/1)";

/// A UCI set of the data directory's README table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UciKnown {
    /// The folder name under `uci/`.
    pub name: &'static str,
    /// Documented number of rows.
    pub n: usize,
    /// Documented input dimension (the target column not counted).
    pub d: usize,
    /// The papers whose experiments use it.
    pub used_by: &'static str,
}

const fn uci(name: &'static str, n: usize, d: usize, used_by: &'static str) -> UciKnown {
    UciKnown {
        name,
        n,
        d,
        used_by,
    }
}

const GRIEF: &str = "GRIEF T1";
const RRCG: &str = "RR-CG";
const BOTH: &str = "GRIEF T1, RR-CG";

/// The 25 UCI sets of the data directory (its README's table).
pub const UCI_CATALOG: &[UciKnown] = &[
    uci("challenger", 23, 4, GRIEF),
    uci("fertility", 100, 9, GRIEF),
    uci("concreteslump", 103, 7, GRIEF),
    uci("autos", 159, 25, GRIEF),
    uci("servo", 167, 4, GRIEF),
    uci("breastcancer", 194, 33, GRIEF),
    uci("machine", 209, 7, GRIEF),
    uci("yacht", 308, 6, GRIEF),
    uci("autompg", 392, 7, GRIEF),
    uci("housing", 506, 13, GRIEF),
    uci("forest", 517, 12, GRIEF),
    uci("stock", 536, 11, GRIEF),
    uci("energy", 768, 8, GRIEF),
    uci("concrete", 1030, 8, GRIEF),
    uci("solar", 1066, 10, GRIEF),
    uci("wine", 1599, 11, GRIEF),
    uci("skillcraft", 3338, 19, GRIEF),
    uci("pumadyn32nm", 8192, 32, GRIEF),
    uci("pol", 15000, 26, RRCG),
    uci("elevators", 16599, 18, BOTH),
    uci("bike", 17379, 17, RRCG),
    uci("kin40k", 40000, 8, BOTH),
    uci("protein", 45730, 9, RRCG),
    uci("keggdirected", 48827, 20, RRCG),
    uci("keggundirected", 63608, 27, BOTH),
];

/// The papers' names for UCI sets, spelled as each paper does (GP-GRIEF's lower-case ones,
/// then RR-CG's), and the folder each means. Names are matched without regard to case.
pub const UCI_ALIASES: &[(&str, &str)] = &[
    ("slump", "concreteslump"),
    ("automobile", "autos"),
    ("cancer", "breastcancer"),
    ("hardware", "machine"),
    ("pumadyn", "pumadyn32nm"),
    ("keggu", "keggundirected"),
    ("PolTele", "pol"),
    ("KEGG", "keggdirected"),
    ("KEGGU", "keggundirected"),
];

/// Looks a UCI set up by its folder name or a paper's name for it (any case).
///
/// Errors: [`BenchError::UnknownDataset`] listing the known names and aliases.
pub fn uci_known(name: &str) -> Result<&'static UciKnown, BenchError> {
    let lower = name.to_ascii_lowercase();
    let canonical = UCI_ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map_or(lower.as_str(), |(_, target)| target);
    UCI_CATALOG
        .iter()
        .find(|k| k.name == canonical)
        .ok_or_else(|| BenchError::UnknownDataset {
            name: name.to_string(),
            known: UCI_CATALOG
                .iter()
                .map(|k| k.name.to_string())
                .chain(UCI_ALIASES.iter().map(|(a, t)| format!("{a} (= {t})")))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// A UCI set with its fold masks.
#[derive(Debug, Clone)]
pub struct UciDataset {
    /// All rows, in file order.
    pub data: Dataset,
    /// One entry per row: `test_mask[i][k]` is whether row `i` is a test row of fold `k`.
    pub test_mask: Vec<[bool; UCI_FOLDS]>,
}

impl UciDataset {
    /// Row indices of fold `k`: its test rows and the other (training) rows, each ascending.
    ///
    /// Errors: [`BenchError::InvalidArgument`] for `k ≥ 10`.
    pub fn fold_indices(&self, k: usize) -> Result<Split, BenchError> {
        if k >= UCI_FOLDS {
            return Err(BenchError::InvalidArgument {
                name: "fold",
                reason: format!("the UCI sets have folds 0..={}, got {k}", UCI_FOLDS - 1),
            });
        }
        let (test, train): (Vec<usize>, Vec<usize>) =
            (0..self.test_mask.len()).partition(|&i| self.test_mask[i][k]);
        Ok(Split { train, test })
    }

    /// The training and test parts of fold `k` (`k` in `0..10`), rows in file order.
    ///
    /// Errors: [`BenchError::InvalidArgument`] for `k ≥ 10`.
    pub fn fold(&self, k: usize) -> Result<(Dataset, Dataset), BenchError> {
        let split = self.fold_indices(k)?;
        Ok((
            self.data.select_rows(&split.train)?,
            self.data.select_rows(&split.test)?,
        ))
    }
}

/// The two files of the UCI set `name` (a folder name; aliases are not resolved here).
pub fn uci_paths(name: &str, data_dir: &Path) -> (PathBuf, PathBuf) {
    let dir = data_dir.join(UCI_DIR).join(name);
    (dir.join(UCI_DATA_FILE), dir.join(UCI_MASK_FILE))
}

/// Loads the UCI set `name` (folder name or alias, any case) from `data_dir` and checks its
/// shape against [`UCI_CATALOG`]. Checksums are not verified here, so loading stays fast;
/// `gp-bench datasets` verifies them.
///
/// Errors: [`BenchError::UnknownDataset`]; those of [`load_uci_files`]; and
/// [`BenchError::BadData`] when the shape differs from the documented one.
pub fn load_uci(name: &str, data_dir: &Path) -> Result<UciDataset, BenchError> {
    let known = uci_known(name)?;
    let (data_path, mask_path) = uci_paths(known.name, data_dir);
    let set = load_uci_files(known.name, &data_path, &mask_path)?;
    if set.data.len() != known.n || set.data.dim() != known.d {
        return Err(BenchError::BadData {
            name: known.name.to_string(),
            reason: format!(
                "{} has {} rows × {} inputs, documented {} × {}",
                data_path.display(),
                set.data.len(),
                set.data.dim(),
                known.n,
                known.d
            ),
        });
    }
    Ok(set)
}

/// Opens a gzip file for streaming decompression.
///
/// Errors: [`BenchError::MissingFile`] when it cannot be opened.
pub(crate) fn open_gzip(
    path: &Path,
    layout: &str,
) -> Result<GzDecoder<BufReader<File>>, BenchError> {
    let file = File::open(path).map_err(|e| BenchError::MissingFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
        layout: layout.to_string(),
    })?;
    Ok(GzDecoder::new(BufReader::new(file)))
}

/// Reads a headerless gzip CSV of finite numbers: the values row-major and the column count.
fn read_gzip_csv(path: &Path) -> Result<(Vec<f64>, usize), BenchError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(open_gzip(path, UCI_LAYOUT)?);
    let (values, ncols) = read_numeric_records(&mut reader, path, None, ReadErrors::Gzip, &|j| {
        (j + 1).to_string()
    })?;
    if values.is_empty() {
        return Err(BenchError::BadCsv {
            path: path.to_path_buf(),
            reason: "no data rows".into(),
        });
    }
    Ok((values, ncols))
}

/// Loads a UCI set from explicit paths, without the catalogue's shape check (for files
/// outside the data directory, e.g. in tests). The data set is named `name`.
///
/// Errors: [`BenchError::MissingFile`]; [`BenchError::BadGzip`] for a file that is not
/// gzip, is corrupt or is cut short; [`BenchError::RaggedRow`], [`BenchError::NonNumeric`],
/// [`BenchError::NonFinite`]; and [`BenchError::BadCsv`] for an empty file, a data file
/// with fewer than two columns, a mask without 10 columns, a mask value other than 0 or 1,
/// or a mask with a different number of rows than the data.
pub fn load_uci_files(
    name: &str,
    data_path: &Path,
    mask_path: &Path,
) -> Result<UciDataset, BenchError> {
    let (values, ncols) = read_gzip_csv(data_path)?;
    if ncols < 2 {
        return Err(BenchError::BadCsv {
            path: data_path.to_path_buf(),
            reason: format!("{ncols} column per row; expected at least one input and the target"),
        });
    }
    let n = values.len() / ncols;
    let d = ncols - 1;
    let (mask_values, mask_cols) = read_gzip_csv(mask_path)?;
    let bad_mask = |reason: String| BenchError::BadCsv {
        path: mask_path.to_path_buf(),
        reason,
    };
    if mask_cols != UCI_FOLDS {
        return Err(bad_mask(format!(
            "{mask_cols} columns per row; expected {UCI_FOLDS} (one 0/1 column per fold)"
        )));
    }
    let mask_rows = mask_values.len() / UCI_FOLDS;
    if mask_rows != n {
        return Err(bad_mask(format!(
            "{mask_rows} rows but the data file {} has {n}; expected one mask row per observation",
            data_path.display()
        )));
    }
    let mut test_mask = Vec::with_capacity(n);
    for (i, row) in mask_values.chunks_exact(UCI_FOLDS).enumerate() {
        let mut flags = [false; UCI_FOLDS];
        for (k, &v) in row.iter().enumerate() {
            flags[k] = if v == 1.0 {
                true
            } else if v == 0.0 {
                false
            } else {
                return Err(bad_mask(format!(
                    "line {}, column {}: value {v}; expected 0 or 1",
                    i + 1,
                    k + 1
                )));
            };
        }
        test_mask.push(flags);
    }
    let data = Dataset {
        name: name.to_string(),
        x: Mat::from_fn(n, d, |i, j| values[i * ncols + j]),
        y: Col::from_fn(n, |i| values[i * ncols + d]),
        feature_names: (1..=d).map(|j| format!("x{j}")).collect(),
        target_name: "y".into(),
        origin: DataOrigin::File(data_path.to_path_buf()),
    };
    Ok(UciDataset { data, test_mask })
}
