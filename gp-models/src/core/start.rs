//! A starting point for training taken from the data (the median heuristic).
//!
//! Why: the "common" start `ℓ = 1` on standardized inputs is far too short in many
//! dimensions. With `d = 32` the squared scaled distance between two points is about
//! `2d = 64`, every off-diagonal kernel entry is `≈ e⁻³²`, the log marginal likelihood is
//! flat in every length scale, and an optimizer started there fits the noise only (measured
//! on pumadyn32nm: a test RMSE worse than predicting the mean).
//!
//! The rule ([`DataScales`]):
//!
//! * length scale of dimension `i`: `ℓᵢ = √d · mᵢ`, where `mᵢ` is the median of
//!   `|x_{a,i} − x_{b,i}|` over pairs of training points (a deterministic, evenly strided
//!   subsample of at most [`DataScales::MAX_ROWS`] rows). Then the typical squared scaled
//!   distance `Σᵢ (Δᵢ/ℓᵢ)²` is of order one, so kernel entries between typical pairs are
//!   neither ≈ 0 nor ≈ 1. A dimension whose median difference is 0 (constant, or mostly
//!   one value) gets its range instead, and `1` if that is 0 too. An isotropic length
//!   scale gets the geometric mean of the `ℓᵢ`.
//! * signal variance: the sample variance of `y` (1 if it is 0);
//! * noise variance: a tenth of it.
//!
//! Parameters are recognized by name (`log_lengthscale`, `log_lengthscale_<i>`,
//! `log_variance`, `log_noise_variance`); any other parameter keeps its current value.

use faer::{ColRef, MatRef};
use gp_linalg::validate::{check_finite_col, check_finite_mat};

use crate::error::{ModelError, Result};

/// Scales of a training set from which a starting point is derived (see the
/// [module documentation](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct DataScales {
    /// `ℓᵢ = √d · mᵢ` per input dimension.
    pub lengthscales: Vec<f64>,
    /// The sample variance of the targets (1 if they are constant).
    pub target_variance: f64,
}

impl DataScales {
    /// The largest number of rows used for the pairwise medians (`O(MAX_ROWS²)` work per
    /// dimension).
    pub const MAX_ROWS: usize = 400;

    /// Scales of the data `x` (`n × d`) and `y` (length `n`).
    ///
    /// Errors: [`ModelError::EmptyData`] for no rows or no columns,
    /// [`ModelError::LengthMismatch`] when `y` has a different length,
    /// [`ModelError::NonFinite`] for a non-finite entry.
    pub fn from_data(x: MatRef<'_, f64>, y: ColRef<'_, f64>) -> Result<Self> {
        let (n, d) = (x.nrows(), x.ncols());
        if n == 0 || d == 0 {
            return Err(ModelError::EmptyData {
                context: "deriving starting hyperparameters from the data (DataScales)",
                n,
                d,
            });
        }
        if y.nrows() != n {
            return Err(ModelError::LengthMismatch {
                context: "training targets (one per row of X)",
                expected: n,
                found: y.nrows(),
            });
        }
        check_finite_mat(x, "the training points X").map_err(ModelError::from_finite_check)?;
        check_finite_col(y, "the training targets y").map_err(ModelError::from_finite_check)?;
        let stride = n.div_ceil(Self::MAX_ROWS);
        let rows: Vec<usize> = (0..n).step_by(stride).collect();
        let root_d = (d as f64).sqrt();
        let mut diffs = Vec::with_capacity(rows.len() * rows.len() / 2);
        let lengthscales = (0..d)
            .map(|j| {
                diffs.clear();
                for (k, &a) in rows.iter().enumerate() {
                    for &b in &rows[k + 1..] {
                        diffs.push((x[(a, j)] - x[(b, j)]).abs());
                    }
                }
                let median = if diffs.is_empty() {
                    0.0
                } else {
                    let mid = diffs.len() / 2;
                    *diffs.select_nth_unstable_by(mid, f64::total_cmp).1
                };
                let spread = if median > 0.0 {
                    median
                } else {
                    let (lo, hi) = (0..n)
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), i| {
                            (lo.min(x[(i, j)]), hi.max(x[(i, j)]))
                        });
                    if hi > lo {
                        hi - lo
                    } else {
                        1.0
                    }
                };
                root_d * spread
            })
            .collect();
        let mean = y.iter().sum::<f64>() / n as f64;
        let var = y.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        let target_variance = if var > 0.0 && var.is_finite() {
            var
        } else {
            1.0
        };
        Ok(Self {
            lengthscales,
            target_variance,
        })
    }

    /// The starting log hyperparameters for a model whose parameters are `names` and
    /// currently `current` (same length): recognized names get the data-based value,
    /// the others keep theirs.
    pub fn log_params(&self, names: &[String], current: &[f64]) -> Vec<f64> {
        let mean_log_ls = self.lengthscales.iter().map(|l| l.ln()).sum::<f64>()
            / self.lengthscales.len().max(1) as f64;
        names
            .iter()
            .zip(current)
            .map(|(name, &value)| match name.as_str() {
                "log_lengthscale" => mean_log_ls,
                "log_variance" => self.target_variance.ln(),
                "log_noise_variance" => (0.1 * self.target_variance).ln(),
                other => other
                    .strip_prefix("log_lengthscale_")
                    .and_then(|i| i.parse::<usize>().ok())
                    .and_then(|i| self.lengthscales.get(i))
                    .map_or(value, |l| l.ln()),
            })
            .collect()
    }
}
