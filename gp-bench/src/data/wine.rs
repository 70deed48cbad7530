//! The red wine quality data (Cortez et al. 2009, UCI), 1599 wines × 11 physico-chemical
//! inputs with the quality score (0–10) as target, compiled into the binary by the
//! `linfa-datasets` crate (feature `winequality`). This is the `wine` row of GP-GRIEF's
//! Table 1.
//!
//! The crate reads its gzip'd CSV with the header row skipped (the file has 1600 lines:
//! one header and 1599 data rows), so there is no off-by-one; [`wine`] checks the shape.

use faer::{Col, Mat};

use super::{DataOrigin, Dataset};
use crate::error::BenchError;

/// Rows of the red wine quality data.
pub const WINE_ROWS: usize = 1599;
/// Input columns of the red wine quality data.
pub const WINE_FEATURES: usize = 11;

/// Loads the embedded red wine quality data: `x` is `1599 × 11`, `y` the quality score.
///
/// Errors: [`BenchError::BadData`] if the embedded table does not have the documented shape
/// (a changed upstream file).
pub fn wine() -> Result<Dataset, BenchError> {
    let ds = linfa_datasets::winequality();
    let records = ds.records();
    let targets = ds.targets();
    let (n, d) = records.dim();
    if n != WINE_ROWS || d != WINE_FEATURES || targets.len() != n {
        return Err(BenchError::BadData {
            name: "wine".into(),
            reason: format!(
                "the embedded table is {n} × {d} with {} targets; expected {WINE_ROWS} × {WINE_FEATURES}",
                targets.len()
            ),
        });
    }
    Ok(Dataset {
        name: "wine".into(),
        x: Mat::from_fn(n, d, |i, j| records[[i, j]]),
        y: Col::from_fn(n, |i| targets[i] as f64),
        feature_names: ds.feature_names().to_vec(),
        target_name: "quality".into(),
        origin: DataOrigin::Embedded("linfa-datasets 0.8 winequality, UCI red wine quality"),
    })
}
