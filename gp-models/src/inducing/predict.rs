//! Predictions of a [`SparseGp`]: mean, latent and predictive variances, latent covariance.
//!
//! With `k_U* = k(U, x*)`, `L_uu L_uuᵀ = K_UU`, `L Lᵀ = σ²K_UU + ΦᵀΦ`:
//! mean `k_U*ᵀ β`; latent variance `σ²‖L⁻¹k_U*‖²` (SoR) or
//! `k_** − ‖L_uu⁻¹k_U*‖² + σ²‖L⁻¹k_U*‖²` (DTC, VFE, FITC); predictive variance `+ σ²`.
//! Test points go in blocks of [`PREDICT_BLOCK`] rows, so
//! memory stays `O(m · PREDICT_BLOCK)`.

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::parallelism;

use crate::core::predict::with_noise;
use crate::error::Result;
use crate::exact::PREDICT_BLOCK;
use crate::inducing::model::SparseGp;
use crate::inducing::options::SparseMethod;
use crate::validate::check_test_points;

impl<K: Kernel> SparseGp<K> {
    /// The predictive mean `k_{*U} β` at the rows of `x_test` (`b × d`).
    ///
    /// Errors: [`ModelError::TestDim`](crate::ModelError::TestDim),
    /// [`ModelError::NonFinite`](crate::ModelError::NonFinite).
    pub fn predict_mean(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        Ok(self.predict_blocks(x_test, false)?.0)
    }

    /// The latent variance at the rows of `x_test` (SoR's `σ²‖L⁻¹k_U*‖²`, the others'
    /// `k_** − ‖L_uu⁻¹k_U*‖² + σ²‖L⁻¹k_U*‖²`), clamped at 0 against round-off.
    pub fn predict_latent_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        Ok(self.predict_blocks(x_test, true)?.1)
    }

    /// The predictive variance of noisy observations: the latent variance plus `σ²` (what
    /// the reference code compares).
    pub fn predict_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let latent = self.predict_latent_variance(x_test)?;
        Ok(with_noise(&latent, self.noise_variance))
    }

    /// The latent posterior covariance of the rows of `x_test` (`b × b`, exactly
    /// symmetric): `σ² W₂ᵀW₂` (SoR) or `K_** − W₁ᵀW₁ + σ² W₂ᵀW₂` with `W₁ = L_uu⁻¹K_U*`,
    /// `W₂ = L⁻¹K_U*`.
    pub fn predict_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_test_points(x_test, self.input_dim())?;
        let b = x_test.nrows();
        let ku = self.kernel.matrix(self.inducing.points(), x_test)?;
        let w2 = self.factors.system.solve_lower(ku.as_ref())?;
        let mut cov = Mat::<f64>::zeros(b, b);
        if self.method() != SparseMethod::Sor {
            cov = self.kernel.matrix(x_test, x_test)?;
            let w1 = self.factors.luu.solve_lower(ku.as_ref())?;
            matmul(
                cov.as_mut(),
                Accum::Add,
                w1.transpose(),
                w1.as_ref(),
                -1.0,
                parallelism(),
            );
        }
        matmul(
            cov.as_mut(),
            Accum::Add,
            w2.transpose(),
            w2.as_ref(),
            self.noise_variance,
            parallelism(),
        );
        for j in 0..b {
            for i in j + 1..b {
                let s = 0.5 * (cov[(i, j)] + cov[(j, i)]);
                cov[(i, j)] = s;
                cov[(j, i)] = s;
            }
        }
        Ok(cov)
    }

    /// Mean and (if `variance`) latent variance over blocks of test rows (the variance is
    /// empty when not asked for).
    pub(crate) fn predict_blocks(
        &self,
        x_test: MatRef<'_, f64>,
        variance: bool,
    ) -> Result<(Col<f64>, Col<f64>)> {
        check_test_points(x_test, self.input_dim())?;
        let total = x_test.nrows();
        let mut mean = Col::<f64>::zeros(total);
        let mut var = Col::<f64>::zeros(if variance { total } else { 0 });
        let beta = &self.factors.beta;
        let mut start = 0;
        while start < total {
            let len = PREDICT_BLOCK.min(total - start);
            let block = x_test.subrows(start, len);
            // m × len cross-covariance K(U, X*).
            let ku = self.kernel.matrix(self.inducing.points(), block)?;
            for j in 0..len {
                mean[start + j] = ku.col(j).iter().zip(beta.iter()).map(|(k, b)| k * b).sum();
            }
            if variance {
                let w2 = self.factors.system.solve_lower(ku.as_ref())?;
                let (prior, w1) = if self.method() == SparseMethod::Sor {
                    (None, None)
                } else {
                    (
                        Some(self.kernel.diag(block)?),
                        Some(self.factors.luu.solve_lower(ku.as_ref())?),
                    )
                };
                for j in 0..len {
                    let sq = |w: &Mat<f64>| w.col(j).iter().map(|t| t * t).sum::<f64>();
                    let mut v = self.noise_variance * sq(&w2);
                    if let (Some(prior), Some(w1)) = (&prior, &w1) {
                        v += prior[j] - sq(w1);
                    }
                    var[start + j] = v.max(0.0);
                }
            }
            start += len;
        }
        Ok((mean, var))
    }
}
