//! Standardization of inputs and targets with statistics of the training part only.

use faer::{Col, ColRef, Mat, MatRef};

use crate::error::BenchError;

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
    /// Errors: no rows, or `y` of a different length than `x`.
    pub fn fit(x: MatRef<'_, f64>, y: ColRef<'_, f64>) -> Result<Self, BenchError> {
        let n = x.nrows();
        if n == 0 || y.nrows() != n {
            return Err(BenchError::InvalidArgument {
                name: "training data",
                reason: format!(
                    "{n} input rows and {} targets (need the same, > 0)",
                    y.nrows()
                ),
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
    /// Errors: a different number of columns than the training inputs.
    pub fn transform_x(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>, BenchError> {
        if x.ncols() != self.x_mean.len() {
            return Err(BenchError::InvalidArgument {
                name: "x",
                reason: format!(
                    "{} columns, the standardizer was fitted on {}",
                    x.ncols(),
                    self.x_mean.len()
                ),
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

    /// Maps standardized target values back to original units: `z · std + mean`.
    pub fn inverse_y(&self, z: ColRef<'_, f64>) -> Col<f64> {
        Col::from_fn(z.nrows(), |i| z[i] * self.y_std + self.y_mean)
    }
}
