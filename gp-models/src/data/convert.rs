//! Points and targets from plain Rust containers, for callers who do not build faer matrices
//! themselves: every model's `fit` takes the results (`.as_ref()`).
//!
//! ```
//! use gp_kernels::SquaredExponential;
//! use gp_models::data::{points_from_rows, targets};
//! use gp_models::prelude::*;
//!
//! let rows = vec![vec![0.0, 1.0], vec![0.5, 0.2], vec![1.0, 0.7]];
//! let x = points_from_rows(&rows)?;
//! let y = targets(&[0.3, -0.1, 0.8]);
//! let kernel = SquaredExponential::new(vec![1.0, 1.0], 1.0)?;
//! let gp = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.01)?;
//! assert_eq!(gp.n_train(), 3);
//! # Ok::<(), gp_models::ModelError>(())
//! ```

use faer::{Col, Mat};

use crate::error::{ModelError, Result};

/// An `n × d` matrix of points from `n` rows of length `d`.
///
/// Errors: [`ModelError::EmptyData`] for no rows or rows of length 0,
/// [`ModelError::LengthMismatch`] naming the first row whose length differs from the first
/// row's.
pub fn points_from_rows<R: AsRef<[f64]>>(rows: &[R]) -> Result<Mat<f64>> {
    let n = rows.len();
    let d = rows.first().map_or(0, |r| r.as_ref().len());
    if n == 0 || d == 0 {
        return Err(ModelError::EmptyData {
            context: "points_from_rows",
            n,
            d,
        });
    }
    if let Some(bad) = rows.iter().find(|r| r.as_ref().len() != d) {
        return Err(ModelError::LengthMismatch {
            context: "points_from_rows: a row's length vs the first row's",
            expected: d,
            found: bad.as_ref().len(),
        });
    }
    Ok(Mat::from_fn(n, d, |i, j| rows[i].as_ref()[j]))
}

/// An `n × d` matrix of points from `n·d` values in row-major order (point `i` is
/// `values[i·d .. (i+1)·d]`).
///
/// Errors: [`ModelError::EmptyData`] for `d = 0` or no values,
/// [`ModelError::LengthMismatch`] when the length is not a multiple of `d`.
pub fn points_from_row_major(values: &[f64], d: usize) -> Result<Mat<f64>> {
    if d == 0 || values.is_empty() {
        return Err(ModelError::EmptyData {
            context: "points_from_row_major",
            n: values.len().checked_div(d).unwrap_or(0),
            d,
        });
    }
    if !values.len().is_multiple_of(d) {
        return Err(ModelError::LengthMismatch {
            context: "points_from_row_major: values vs a multiple of d",
            expected: values.len().div_ceil(d) * d,
            found: values.len(),
        });
    }
    let n = values.len() / d;
    Ok(Mat::from_fn(n, d, |i, j| values[i * d + j]))
}

/// A column of targets from a slice (or a `Vec`, through `&v`).
pub fn targets(values: &[f64]) -> Col<f64> {
    Col::from_fn(values.len(), |i| values[i])
}
