//! Standardisation of inputs and targets with statistics of the training part only, and
//! the inverse transform of predictions back to the original units.

use faer::{Col, ColRef, Mat, MatRef};

use crate::error::ModelError;

/// Per-column means and standard deviations (ddof = 0) of the training inputs, and the
/// mean and standard deviation of the training targets. A column whose standard deviation
/// is zero (or not finite) is only centred (its scale is taken as 1), so it stays constant
/// instead of becoming NaN.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardizer {
    /// Means of the input columns.
    pub x_mean: Vec<f64>,
    /// Standard deviations of the input columns (1 where a column is constant).
    pub x_std: Vec<f64>,
    /// Mean of the targets.
    pub y_mean: f64,
    /// Standard deviation of the targets (1 if they are constant).
    pub y_std: f64,
}

fn mean_std(values: impl Iterator<Item = f64> + Clone, n: usize) -> (f64, f64) {
    let nf = n as f64;
    let mean = values.clone().sum::<f64>() / nf;
    let var = values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / nf;
    let sd = var.sqrt();
    (mean, if sd > 0.0 && sd.is_finite() { sd } else { 1.0 })
}

impl Standardizer {
    /// Computes the statistics from training inputs `x` (`n × d`) and targets `y`.
    ///
    /// Errors: [`ModelError::EmptyData`] for no rows, [`ModelError::LengthMismatch`] for `y`
    /// of a different length than `x` has rows.
    pub fn fit(x: MatRef<'_, f64>, y: ColRef<'_, f64>) -> Result<Self, ModelError> {
        let n = x.nrows();
        if n == 0 {
            return Err(ModelError::EmptyData {
                context: "Standardizer::fit",
                n,
                d: x.ncols(),
            });
        }
        if y.nrows() != n {
            return Err(ModelError::LengthMismatch {
                context: "Standardizer::fit: targets vs input rows",
                expected: n,
                found: y.nrows(),
            });
        }
        let (x_mean, x_std) = (0..x.ncols())
            .map(|j| mean_std((0..n).map(move |i| x[(i, j)]), n))
            .unzip();
        let (y_mean, y_std) = mean_std((0..n).map(|i| y[i]), n);
        Ok(Self {
            x_mean,
            x_std,
            y_mean,
            y_std,
        })
    }

    /// `(x − mean) / std` per column.
    ///
    /// Errors: [`ModelError::LengthMismatch`] for a different number of columns than the
    /// training inputs.
    pub fn transform_x(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>, ModelError> {
        if x.ncols() != self.x_mean.len() {
            return Err(ModelError::LengthMismatch {
                context: "Standardizer::transform_x: columns vs the fitted inputs",
                expected: self.x_mean.len(),
                found: x.ncols(),
            });
        }
        Ok(Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
            (x[(i, j)] - self.x_mean[j]) / self.x_std[j]
        }))
    }

    /// `(y − mean) / std`.
    pub fn transform_y(&self, y: ColRef<'_, f64>) -> Col<f64> {
        Col::from_fn(y.nrows(), |i| (y[i] - self.y_mean) / self.y_std)
    }

    /// Maps standardised target values (e.g. predicted means) back to original units:
    /// `z · std + mean`.
    pub fn inverse_y(&self, z: ColRef<'_, f64>) -> Col<f64> {
        Col::from_fn(z.nrows(), |i| z[i] * self.y_std + self.y_mean)
    }

    /// Maps variances in standardised units (predictive or latent) back to original units:
    /// `v · std²`. The mean shift does not enter a variance.
    pub fn inverse_variance(&self, v: ColRef<'_, f64>) -> Col<f64> {
        let s2 = self.y_std * self.y_std;
        Col::from_fn(v.nrows(), |i| v[i] * s2)
    }

    /// Maps standard deviations in standardised units back to original units: `s · std`.
    pub fn inverse_std(&self, s: ColRef<'_, f64>) -> Col<f64> {
        Col::from_fn(s.nrows(), |i| s[i] * self.y_std)
    }
}
