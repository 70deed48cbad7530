//! Data sets: a CSV loader, seeded splits, standardization with training statistics, the
//! discovery of the data directory, the catalogue of known data sets, the embedded red
//! wine quality data, the gzip UCI sets with their 10 folds ([`uci`]), MNIST in IDX format
//! ([`mnist`]) and SHA-256 checks of the data files ([`checksum`]).

pub mod catalog;
pub mod checksum;
pub mod csv_loader;
pub mod discovery;
pub mod listing;
pub mod mnist;
pub mod uci;
pub mod wine;

// The splits and the standardisation live in gp-models so that users of the models can
// prepare data without gp-bench; they are re-exported under their old paths.
pub use gp_models::data::{split, standardize};

use std::path::PathBuf;

use faer::{Col, Mat};

pub use catalog::{KnownDataset, LoadedDataset, CATALOG};
pub use checksum::{ChecksumStatus, Checksums};
pub use csv_loader::{load_csv, CsvOptions, TargetColumn};
pub use discovery::{resolve_data_dir, DataDir, DataDirOrigin, DATA_DIR_ENV};
pub use gp_models::data::{
    k_fold, permutation, random_splits, train_test_split, Split, Standardizer,
};
pub use mnist::{load_mnist, load_mnist_files, Mnist, MnistSplit};
pub use uci::{load_uci, load_uci_files, uci_known, UciDataset, UciKnown, UCI_CATALOG, UCI_FOLDS};

/// Where a data set's values came from.
#[derive(Debug, Clone, PartialEq)]
pub enum DataOrigin {
    /// Read from a CSV file.
    File(PathBuf),
    /// Compiled into the binary (the crate that ships it is named).
    Embedded(&'static str),
    /// Generated: a synthetic stand-in for a real data set that was not found, or a
    /// synthetic data set in its own right. The text says which generator and seed.
    Synthetic(String),
}

impl DataOrigin {
    /// Whether the values are real measurements (not generated).
    pub fn is_real(&self) -> bool {
        !matches!(self, Self::Synthetic(_))
    }

    /// A short description for reports: the path, the crate, or the generator.
    pub fn describe(&self) -> String {
        match self {
            Self::File(p) => format!("real, {}", p.display()),
            Self::Embedded(c) => format!("real, embedded ({c})"),
            Self::Synthetic(s) => format!("SYNTHETIC STAND-IN: {s}"),
        }
    }
}

/// A regression data set: inputs one point per row, a real-valued target.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Short name (`wine`, `mpg`, ...).
    pub name: String,
    /// Inputs, `n × d`.
    pub x: Mat<f64>,
    /// Targets, length `n`.
    pub y: Col<f64>,
    /// Names of the input columns.
    pub feature_names: Vec<String>,
    /// Name of the target column.
    pub target_name: String,
    /// Where the values came from.
    pub origin: DataOrigin,
}

impl Dataset {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.x.nrows()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.x.nrows() == 0
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.x.ncols()
    }

    /// The rows `idx` (in that order) as a new data set with the same name and origin.
    pub fn select_rows(&self, idx: &[usize]) -> Result<Self, crate::BenchError> {
        let n = self.len();
        if let Some(&bad) = idx.iter().find(|&&i| i >= n) {
            return Err(crate::BenchError::BadData {
                name: self.name.clone(),
                reason: format!("row index {bad} out of range for {n} rows"),
            });
        }
        Ok(Self {
            name: self.name.clone(),
            x: Mat::from_fn(idx.len(), self.dim(), |i, j| self.x[(idx[i], j)]),
            y: Col::from_fn(idx.len(), |i| self.y[idx[i]]),
            feature_names: self.feature_names.clone(),
            target_name: self.target_name.clone(),
            origin: self.origin.clone(),
        })
    }
}
