//! Posterior predictions of an [`ExactGp`]: mean, latent and predictive variances, full
//! latent covariance.
//!
//! With `k* = K(X, x*)`, `L Lᵀ = K + σ²I` and `v = L⁻¹ k*`:
//! mean `m + k*ᵀα`, latent variance `k(x*, x*) − vᵀv`, predictive variance latent `+ σ²`.
//! Test points are processed in blocks of [`PREDICT_BLOCK`] rows so that memory stays
//! `O(n · PREDICT_BLOCK)` however many test points there are.

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{parallelism, parallelism_for};

use crate::error::Result;
use crate::exact::model::ExactGp;
use crate::validate::check_test_points;

/// Test points per block in the mean and variance predictions.
pub const PREDICT_BLOCK: usize = 1024;

pub(crate) use crate::core::predict::with_noise;
pub use crate::core::predict::Prediction;

/// What a block computation should produce.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Want {
    Mean,
    Variance,
    Both,
}

impl<K: Kernel> ExactGp<K> {
    /// Posterior mean at the rows of `x_test` (`m × d`).
    ///
    /// Errors: [`ModelError::TestDim`](crate::ModelError::TestDim) for a wrong column count,
    /// [`ModelError::NonFinite`](crate::ModelError::NonFinite) for NaN or infinite entries.
    pub fn predict_mean(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        Ok(self.predict_blocks(x_test, Want::Mean)?.0)
    }

    /// Posterior variance of the latent function at the rows of `x_test` (no noise),
    /// clamped at 0 against round-off.
    pub fn predict_latent_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        Ok(self.predict_blocks(x_test, Want::Variance)?.1)
    }

    /// Posterior predictive variance of noisy observations at the rows of `x_test`: the
    /// latent variance plus the noise variance `σ²`.
    pub fn predict_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let latent = self.predict_latent_variance(x_test)?;
        Ok(with_noise(&latent, self.noise_variance))
    }

    /// The full `m × m` posterior covariance of the latent function at the rows of
    /// `x_test`: `K(X*, X*) − K(X*, X) (K + σ²I)⁻¹ K(X, X*)` (exactly symmetric).
    pub fn predict_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_test_points(x_test, self.d)?;
        let m = x_test.nrows();
        let mut cov = self.kernel.matrix(x_test, x_test)?;
        let mut v = self.kernel.matrix(self.train_x(), x_test)?;
        self.factor.chol.solve_lower_in_place(v.as_mut())?;
        matmul(
            cov.as_mut(),
            Accum::Add,
            v.transpose(),
            v.as_ref(),
            -1.0,
            parallelism_for(2.0 * (v.nrows() * m) as f64 * m as f64),
        );
        for j in 0..m {
            for i in j + 1..m {
                let s = 0.5 * (cov[(i, j)] + cov[(j, i)]);
                cov[(i, j)] = s;
                cov[(j, i)] = s;
            }
        }
        Ok(cov)
    }

    /// Mean and/or latent variance over blocks of test rows (an unrequested output is empty).
    pub(crate) fn predict_blocks(
        &self,
        x_test: MatRef<'_, f64>,
        want: Want,
    ) -> Result<(Col<f64>, Col<f64>)> {
        check_test_points(x_test, self.d)?;
        let m = x_test.nrows();
        let mut mean = Col::<f64>::zeros(if want == Want::Variance { 0 } else { m });
        let mut var = Col::<f64>::zeros(if want == Want::Mean { 0 } else { m });
        let par = parallelism();
        let mut start = 0;
        while start < m {
            let len = PREDICT_BLOCK.min(m - start);
            let block = x_test.subrows(start, len);
            // n × len cross-covariance K(X, X*).
            let mut kxs = self.kernel.matrix(self.train_x(), block)?;
            if want != Want::Variance {
                let mut out = Mat::<f64>::zeros(len, 1);
                matmul(
                    out.as_mut(),
                    Accum::Replace,
                    kxs.transpose(),
                    self.factor.alpha.as_mat(),
                    1.0,
                    par,
                );
                for i in 0..len {
                    mean[start + i] = self.mean + out[(i, 0)];
                }
            }
            if want != Want::Mean {
                let prior = self.kernel.diag(block)?;
                self.factor.chol.solve_lower_in_place(kxs.as_mut())?;
                for j in 0..len {
                    let explained: f64 = kxs.col(j).iter().map(|v| v * v).sum();
                    var[start + j] = (prior[j] - explained).max(0.0);
                }
            }
            start += len;
        }
        Ok((mean, var))
    }
}
