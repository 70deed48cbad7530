//! Streaming moments of an equally weighted mixture of Gaussian predictions, one per kept
//! MCMC sample.
//!
//! With `N` per-sample predictive means `m_s(x)` and variances `v_s(x)`, the posterior
//! predictive is the mixture `(1/N) Σ_s N(m_s(x), v_s(x))`; its mean is the average of the
//! means and, by the law of total variance, its variance is
//!
//! ```text
//! Var = (1/N) Σ_s v_s + (1/N) Σ_s (m_s − m̄)²,
//! ```
//!
//! the mean variance plus the (population) variance of the means. The means are accumulated by
//! Welford's update, so `N` large or `m_s` large relative to their spread lose no accuracy.

use crate::error::{ModelError, Result};

/// Running mean and variance of an equally weighted Gaussian mixture over `n` points (e.g.
/// test inputs), fed one sample's predictive means and variances at a time (for
/// [`mala_with`](super::mala_with) callbacks).
#[derive(Debug, Clone, PartialEq)]
pub struct MixtureMoments {
    count: usize,
    mean: Vec<f64>,
    /// Σ_s (m_s − m̄)², by Welford's update.
    m2: Vec<f64>,
    /// Running mean of the per-sample variances.
    mean_variance: Vec<f64>,
}

impl MixtureMoments {
    /// An empty accumulator for `n` points.
    pub fn new(n: usize) -> Self {
        Self {
            count: 0,
            mean: vec![0.0; n],
            m2: vec![0.0; n],
            mean_variance: vec![0.0; n],
        }
    }

    /// Adds one component: its means and variances at the `n` points.
    ///
    /// # Errors
    /// [`ModelError::LengthMismatch`] if either slice's length is not `n`;
    /// [`ModelError::NonFinite`] if a mean or a variance is not finite (nothing is added then).
    pub fn push(&mut self, means: &[f64], variances: &[f64]) -> Result<()> {
        let n = self.mean.len();
        for (found, context) in [
            (means.len(), "mixture component means (one per point)"),
            (
                variances.len(),
                "mixture component variances (one per point)",
            ),
        ] {
            if found != n {
                return Err(ModelError::LengthMismatch {
                    context,
                    expected: n,
                    found,
                });
            }
        }
        for (values, context) in [
            (means, "a mixture component's means"),
            (variances, "a mixture component's variances"),
        ] {
            if let Some((row, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(ModelError::NonFinite {
                    context,
                    row,
                    col: 0,
                    value,
                });
            }
        }
        self.count += 1;
        let c = self.count as f64;
        for i in 0..n {
            let delta = means[i] - self.mean[i];
            self.mean[i] += delta / c;
            self.m2[i] += delta * (means[i] - self.mean[i]);
            self.mean_variance[i] += (variances[i] - self.mean_variance[i]) / c;
        }
        Ok(())
    }

    /// How many components were added.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The mixture's mean at each point (zeros before the first component).
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// The mixture's variance at each point: mean variance plus the population variance of
    /// the means (zeros before the first component).
    pub fn variance(&self) -> Vec<f64> {
        if self.count == 0 {
            return vec![0.0; self.mean.len()];
        }
        let c = self.count as f64;
        self.mean_variance
            .iter()
            .zip(&self.m2)
            .map(|(v, m2)| v + m2 / c)
            .collect()
    }
}
