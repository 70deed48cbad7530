//! The real data sets `gp-bench` knows by name: the CSV files of `../shared/datasets`
//! (see its README) and the embedded `wine`. When a file is missing an experiment uses a
//! synthetic stand-in of the same size and dimension and says so.

use std::path::Path;

use faer::{Col, Mat};

use super::csv_loader::{load_csv, CsvOptions};
use super::{wine, DataOrigin, Dataset};
use crate::error::BenchError;
use crate::synthetic::smooth_regression;

/// A real data set known by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownDataset {
    /// The name experiments use.
    pub name: &'static str,
    /// CSV files in the data directory, concatenated in this order (empty for the embedded
    /// data set).
    pub files: &'static [&'static str],
    /// Documented number of rows (all files together).
    pub n: usize,
    /// Documented input dimension.
    pub d: usize,
    /// Rows of the source's training part (they come first), when the source has one.
    pub train_rows: Option<usize>,
    /// What it is.
    pub description: &'static str,
}

/// Every real data set known by name.
pub const CATALOG: &[KnownDataset] = &[
    KnownDataset {
        name: "wine",
        files: &[],
        n: wine::WINE_ROWS,
        d: wine::WINE_FEATURES,
        train_rows: None,
        description: "UCI red wine quality (embedded via linfa-datasets); GRIEF Table 1 `wine`",
    },
    KnownDataset {
        name: "mpg",
        files: &["mpg.csv"],
        n: 392,
        d: 7,
        train_rows: None,
        description: "UCI Auto MPG, cleaned; GRIEF Table 1 `autompg`, KMCG MPG",
    },
    KnownDataset {
        name: "ailerons",
        files: &["ailerons.csv"],
        n: 13750,
        d: 40,
        train_rows: Some(7154),
        description: "Torgo's F16 ailerons control; KMCG AILERONS",
    },
    KnownDataset {
        name: "elevators",
        files: &["elevators.csv"],
        n: 16599,
        d: 18,
        train_rows: Some(8752),
        description: "Torgo's F16 elevators control; GRIEF Table 1, KMCG, RR-CG",
    },
    KnownDataset {
        name: "poletele",
        files: &["poletele.csv"],
        n: 15000,
        d: 48,
        train_rows: Some(5000),
        description: "Torgo's pole telecomm; KMCG POLETELECOMM, RR-CG PolTele",
    },
    KnownDataset {
        name: "sound",
        files: &["sound_train.csv", "sound_test.csv"],
        n: 60000,
        d: 1,
        train_rows: Some(59309),
        description: "Turner's natural sound (KISS-GP); GSGP and KMCG SOUND",
    },
];

/// Looks a data set up by name.
///
/// Errors: [`BenchError::UnknownDataset`] listing the known names.
pub fn known(name: &str) -> Result<&'static KnownDataset, BenchError> {
    CATALOG
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| BenchError::UnknownDataset {
            name: name.to_string(),
            known: CATALOG
                .iter()
                .map(|k| k.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// A data set loaded by name, with its catalogue entry.
#[derive(Debug, Clone)]
pub struct LoadedDataset {
    /// The values.
    pub data: Dataset,
    /// The catalogue entry.
    pub known: &'static KnownDataset,
    /// Rows of the source's training part (they come first), when the source has one.
    pub train_rows: Option<usize>,
}

/// Loads a known data set from `data_dir` (the embedded `wine` needs none).
///
/// Errors: [`BenchError::UnknownDataset`]; [`BenchError::MissingFile`] when there is no
/// data directory or the file is not in it; any CSV error of [`load_csv`]; and
/// [`BenchError::BadData`] when the files of a multi-file data set disagree in columns.
pub fn load_known(name: &str, data_dir: Option<&Path>) -> Result<LoadedDataset, BenchError> {
    let known = known(name)?;
    if known.files.is_empty() {
        return Ok(LoadedDataset {
            data: wine::wine()?,
            known,
            train_rows: known.train_rows,
        });
    }
    let Some(dir) = data_dir else {
        return Err(BenchError::MissingFile {
            path: known.files[0].into(),
            reason: "no data directory (give --data-dir or set GP_DATA_DIR)".into(),
            layout: super::csv_loader::EXPECTED_LAYOUT.into(),
        });
    };
    let mut parts = Vec::with_capacity(known.files.len());
    for f in known.files {
        parts.push(load_csv(&dir.join(f), &CsvOptions::default())?);
    }
    let mut data = concat(parts, name)?;
    data.name = name.to_string();
    if known.files.len() > 1 {
        data.origin = DataOrigin::File(dir.join(known.files.join("+")));
    }
    Ok(LoadedDataset {
        data,
        known,
        train_rows: known.train_rows,
    })
}

fn concat(parts: Vec<Dataset>, name: &str) -> Result<Dataset, BenchError> {
    let mut iter = parts.into_iter();
    let Some(mut first) = iter.next() else {
        return Err(BenchError::BadData {
            name: name.into(),
            reason: "no files".into(),
        });
    };
    for next in iter {
        if next.dim() != first.dim() {
            return Err(BenchError::BadData {
                name: name.into(),
                reason: format!("files with {} and {} inputs", first.dim(), next.dim()),
            });
        }
        let (n1, n2, d) = (first.len(), next.len(), first.dim());
        let x = Mat::from_fn(n1 + n2, d, |i, j| {
            if i < n1 {
                first.x[(i, j)]
            } else {
                next.x[(i - n1, j)]
            }
        });
        let y = Col::from_fn(
            n1 + n2,
            |i| if i < n1 { first.y[i] } else { next.y[i - n1] },
        );
        first.x = x;
        first.y = y;
    }
    Ok(first)
}

/// A clearly labelled synthetic stand-in of the same size and dimension as `known`: inputs
/// uniform in the unit cube, a smooth sine-sum target plus noise of variance 0.01
/// ([`smooth_regression`]).
pub fn stand_in(known: &'static KnownDataset, seed: u64) -> LoadedDataset {
    let (x, y) = smooth_regression(known.n, known.d, 0.01, seed);
    LoadedDataset {
        data: Dataset {
            name: known.name.to_string(),
            x,
            y,
            feature_names: (1..=known.d).map(|j| format!("x{j}")).collect(),
            target_name: "y".into(),
            origin: DataOrigin::Synthetic(format!(
                "{} × {} smooth sine-sum + N(0, 0.01) noise (seed {seed}) standing in for `{}`",
                known.n, known.d, known.name
            )),
        },
        known,
        train_rows: known.train_rows,
    }
}

/// [`load_known`], or the [`stand_in`] when the file (or the data directory) is missing.
/// Other errors (a malformed file) are returned: a broken file is not silently replaced.
pub fn load_or_stand_in(
    name: &str,
    data_dir: Option<&Path>,
    seed: u64,
) -> Result<LoadedDataset, BenchError> {
    match load_known(name, data_dir) {
        Ok(d) => Ok(d),
        Err(BenchError::MissingFile { .. }) => Ok(stand_in(known(name)?, seed)),
        Err(e) => Err(e),
    }
}
