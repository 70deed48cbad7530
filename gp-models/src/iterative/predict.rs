//! Predictions of an [`IterativeGp`] by CG solves with the matrix-free kernel operator.
//!
//! * Mean `m + K(x*, X) α`: `α = K̂⁻¹(y − m)` is solved once (preconditioned CG to
//!   [`IterativeOptions::krylov.prediction_tolerance`](crate::KrylovSettings::prediction_tolerance))
//!   on first use and cached; each call then costs one matrix-free cross product,
//!   `O(m n d)` for `m` test points, with no `m × n` matrix stored.
//! * Latent variance `k(x*, x*) − k*ᵀ K̂⁻¹ k*`, `k* = K(X, x*)`: one CG solve per test
//!   point, batched by [`VARIANCE_BLOCK`] test points (`n × VARIANCE_BLOCK` memory). Each CG
//!   iteration costs one product of `K̂` with the block, `O(n² · VARIANCE_BLOCK)`, so the
//!   variances cost `O(J n² m)` for `J` iterations — fine for small test sets, expensive for
//!   large ones (there is no low-rank cache such as LOVE here).
//!
//! A solve that reaches [`IterativeOptions::krylov.max_iterations`](crate::KrylovSettings::max_iterations)
//! before the tolerance is not an error: its last iterate is used
//! ([`IterativeGp::alpha_report`] says how the mean solve ended).

use faer::{Col, Mat, MatRef};
use gp_kernels::{Kernel, KernelOperator};
use gp_linalg::LinearOperator;
use gp_solvers::{cg, CgOptions, Preconditioner};

use crate::cg_report::{check_breakdown, solve_report};
use crate::core::predict::with_noise;
use crate::core::SolveReport;
use crate::error::Result;
use crate::iterative::lml::build_preconditioner;
use crate::iterative::model::{IterativeGp, PredictionCache};
use crate::validate::check_test_points;

/// Test points per batched CG solve of the variances, shared with the grid models.
pub use crate::core::predict::VARIANCE_BLOCK;

impl<K: Kernel> IterativeGp<K> {
    /// The CG options of prediction solves to `tolerance`.
    fn prediction_cg_options(&self, tolerance: f64) -> CgOptions {
        CgOptions {
            tolerance,
            max_iterations: self.options.krylov.max_iterations,
            ..CgOptions::default()
        }
    }

    /// The cached preconditioner and `α`, computed on first use.
    fn prediction_cache(&self) -> Result<&PredictionCache> {
        let cached = self.cache.get_or_init(|| {
            let precond = build_preconditioner(
                &self.kernel,
                self.x.as_ref(),
                self.noise_variance,
                self.options.preconditioner_rank,
            )?;
            let op = KernelOperator::new(&self.kernel, self.x.as_ref(), self.noise_variance)?;
            let res = cg(
                &op,
                self.yc.as_mat(),
                precond.as_ref().map(|p| p as &dyn Preconditioner),
                &self.prediction_cg_options(self.options.krylov.prediction_tolerance),
            )?;
            check_breakdown(&res, "the solve for α = K̂⁻¹(y − m)")?;
            let report = solve_report(&res);
            let alpha = res.solution.col(0).to_owned();
            Ok(PredictionCache {
                precond,
                alpha,
                report,
            })
        });
        cached.as_ref().map_err(Clone::clone)
    }

    /// `α = K̂⁻¹ (y − m)`, solved to the prediction tolerance on first use and cached.
    ///
    /// Errors: [`ModelError::CgBreakdown`](crate::ModelError::CgBreakdown) and the errors of
    /// building the preconditioner (the same error is returned on every call).
    pub fn alpha(&self) -> Result<&Col<f64>> {
        Ok(&self.prediction_cache()?.alpha)
    }

    /// How the solve for [`alpha`](Self::alpha) ended (iterations, residual, whether the
    /// tolerance was met).
    pub fn alpha_report(&self) -> Result<&SolveReport> {
        Ok(&self.prediction_cache()?.report)
    }

    /// Posterior mean at the rows of `x_test` (`m × d`): `m + K(x*, X) α`.
    ///
    /// Errors: [`ModelError::TestDim`](crate::ModelError::TestDim),
    /// [`ModelError::NonFinite`](crate::ModelError::NonFinite), and those of
    /// [`alpha`](Self::alpha).
    pub fn predict_mean(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        check_test_points(x_test, self.input_dim())?;
        let mut mean = Col::from_fn(x_test.nrows(), |_| self.mean);
        if x_test.nrows() == 0 {
            return Ok(mean);
        }
        let alpha = self.alpha()?;
        let cross = KernelOperator::cross(&self.kernel, x_test, self.x.as_ref())?;
        let k_alpha = cross.apply(alpha.as_ref())?;
        mean += k_alpha;
        Ok(mean)
    }

    /// Posterior variance of the latent function at the rows of `x_test`, by batched CG
    /// solves of `K̂ v = K(X, x*)` (see the module documentation for the cost), clamped at 0.
    ///
    /// Errors as [`predict_mean`](Self::predict_mean).
    pub fn predict_latent_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        check_test_points(x_test, self.input_dim())?;
        let m = x_test.nrows();
        let mut out = Col::<f64>::zeros(m);
        if m == 0 {
            return Ok(out);
        }
        let cache = self.prediction_cache()?;
        let precond = cache.precond.as_ref().map(|p| p as &dyn Preconditioner);
        let op = KernelOperator::new(&self.kernel, self.x.as_ref(), self.noise_variance)?;
        let prior = self.kernel.diag(x_test)?;
        let options = self.prediction_cg_options(self.options.krylov.variance_tolerance);
        for b0 in (0..m).step_by(VARIANCE_BLOCK) {
            let len = VARIANCE_BLOCK.min(m - b0);
            let block = x_test.subrows(b0, len);
            let kxs: Mat<f64> = self.kernel.matrix(self.x.as_ref(), block)?;
            let res = cg(&op, kxs.as_ref(), precond, &options)?;
            check_breakdown(&res, "the variance solves K̂⁻¹ K(X, x*)")?;
            for j in 0..len {
                let explained = kxs.col(j).transpose() * res.solution.col(j);
                out[b0 + j] = (prior[b0 + j] - explained).max(0.0);
            }
        }
        Ok(out)
    }

    /// Posterior predictive variance of noisy observations: the latent variance plus `σ²`.
    ///
    /// Errors as [`predict_mean`](Self::predict_mean).
    pub fn predict_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let latent = self.predict_latent_variance(x_test)?;
        Ok(with_noise(&latent, self.noise_variance))
    }
}
