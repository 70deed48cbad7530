//! Predictions of a [`Ski`] model.
//!
//! Every solve with `K̂` uses the model's [`preconditioner`](Ski::preconditioner) when
//! [`SkiOptions::preconditioner_rank`](crate::SkiOptions::preconditioner_rank) is positive.
//!
//! * Mean `μ(x*) = w*ᵀ a` with the grid cache `a = K_G Wᵀ α`, `α = K̂⁻¹y` (one CG solve to
//!   [`SkiOptions::krylov.prediction_tolerance`](crate::KrylovSettings::prediction_tolerance), on first
//!   use, cached): `O(4^d)` per test point.
//! * Latent variance `w*ᵀ K_G w* − k̃*ᵀ K̂⁻¹ k̃*`, `k̃* = W K_G w*`: the prior term from the
//!   stencils (`O(16 d)` per point), the second by batched CG solves, [`VARIANCE_BLOCK`]
//!   test points at a time (`O(J (n + m log m))` per point for `J` iterations).
//! * Latent covariance of a (small) set of test points, by the same solves.
//!
//! For many test points, the rank-`k` LOVE cache ([`Ski::love`]) costs `O(4^d k)` per point
//! after one Lanczos run.

use faer::{Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{LinearOperator, TransposeOperator};
use gp_solvers::{cg, CgOptions, Preconditioner};

use crate::cg_report::{check_breakdown, solve_report};
use crate::core::predict::{with_noise, VARIANCE_BLOCK};
use crate::core::SolveReport;
use crate::error::Result;
use crate::grid::stencil::transposed_block;
use crate::ski::model::{MeanCache, Ski};

impl<K: Kernel> Ski<K> {
    /// The CG options of prediction solves to `tolerance`.
    pub(crate) fn prediction_cg_options(&self, tolerance: f64) -> CgOptions {
        CgOptions {
            tolerance,
            max_iterations: self.options.krylov.max_iterations,
            ..CgOptions::default()
        }
    }

    /// `α` and the grid cache, computed on first use.
    fn mean_cache(&self) -> Result<&MeanCache> {
        let cached = self.cache.get_or_init(|| {
            let op = self.operator();
            let options = self.prediction_cg_options(self.options.krylov.prediction_tolerance);
            let precond = self.preconditioner()?.map(|p| p as &dyn Preconditioner);
            let res = cg(&op, self.y.as_mat(), precond, &options)?;
            check_breakdown(&res, "the SKI solve for α = K̂⁻¹y")?;
            let report = solve_report(&res);
            let alpha = res.solution.col(0).to_owned();
            let wt_alpha = self.w.apply_transpose(alpha.as_ref())?;
            let grid_mean = self.grid_kernel.operator().apply(wt_alpha.as_ref())?;
            Ok(MeanCache {
                alpha,
                grid_mean,
                report,
            })
        });
        cached.as_ref().map_err(Clone::clone)
    }

    /// `α = K̂⁻¹ y`, solved to the prediction tolerance on first use and cached.
    ///
    /// Errors: [`ModelError::CgBreakdown`](crate::ModelError::CgBreakdown) (the same error
    /// on every call).
    pub fn alpha(&self) -> Result<&Col<f64>> {
        Ok(&self.mean_cache()?.alpha)
    }

    /// The grid cache `a = K_G Wᵀ α` (length `m`): the posterior mean at `x*` is `w*ᵀ a`.
    ///
    /// Errors as [`alpha`](Self::alpha).
    pub fn grid_mean_cache(&self) -> Result<&Col<f64>> {
        Ok(&self.mean_cache()?.grid_mean)
    }

    /// How the solve for [`alpha`](Self::alpha) ended.
    ///
    /// Errors as [`alpha`](Self::alpha).
    pub fn alpha_report(&self) -> Result<&SolveReport> {
        Ok(&self.mean_cache()?.report)
    }

    /// Posterior mean at the rows of `x_test` (`b × d`): `W* a`, `O(4^d)` per point once the
    /// grid cache exists.
    ///
    /// Errors: [`ModelError::TestDim`](crate::ModelError::TestDim),
    /// [`ModelError::NonFinite`](crate::ModelError::NonFinite),
    /// [`ModelError::OutsideGrid`](crate::ModelError::OutsideGrid) for a test point whose
    /// stencil does not fit in the grid, and those of [`alpha`](Self::alpha).
    pub fn predict_mean(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let ws = self.test_weights(x_test)?;
        if x_test.nrows() == 0 {
            return Ok(Col::zeros(0));
        }
        let a = self.grid_mean_cache()?;
        Ok(ws.apply(a.as_ref())?)
    }

    /// For test rows `start .. start + len` of `ws`: the right-hand sides `W K_G W*ᵀ`
    /// (`n × len`) and their solves `K̂⁻¹ W K_G W*ᵀ`.
    fn cross_solves(
        &self,
        ws: &gp_structured::InterpolationWeights,
        start: usize,
        len: usize,
    ) -> Result<(Mat<f64>, Mat<f64>)> {
        let wst = transposed_block(ws, start, len);
        let kg_wst = self.grid_kernel.operator().apply_block(wst.as_ref())?;
        let rhs = self.w.apply_block(kg_wst.as_ref())?;
        let precond = self.preconditioner()?.map(|p| p as &dyn Preconditioner);
        let res = cg(
            &self.operator(),
            rhs.as_ref(),
            precond,
            &self.prediction_cg_options(self.options.krylov.variance_tolerance),
        )?;
        check_breakdown(&res, "the SKI variance solves K̂⁻¹ W K_G W*ᵀ")?;
        Ok((rhs, res.solution))
    }

    /// Posterior variance of the latent function at the rows of `x_test`, clamped at 0 (see
    /// the [module documentation](self) for the cost).
    ///
    /// Errors as [`predict_mean`](Self::predict_mean).
    pub fn predict_latent_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let ws = self.test_weights(x_test)?;
        let b = x_test.nrows();
        let mut out = self.grid_kernel.interpolated_diagonal(&ws)?;
        for b0 in (0..b).step_by(VARIANCE_BLOCK) {
            let len = VARIANCE_BLOCK.min(b - b0);
            let (rhs, sol) = self.cross_solves(&ws, b0, len)?;
            for j in 0..len {
                let explained = rhs.col(j).transpose() * sol.col(j);
                out[b0 + j] = (out[b0 + j] - explained).max(0.0);
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

    /// The full posterior covariance of the latent function at the rows of `x_test`
    /// (`b × b`, symmetrized): `W* K_G W*ᵀ − (W K_G W*ᵀ)ᵀ K̂⁻¹ (W K_G W*ᵀ)`, by one batched
    /// CG solve with `b` right-hand sides (meant for small `b`).
    ///
    /// Errors as [`predict_mean`](Self::predict_mean).
    pub fn predict_latent_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let ws = self.test_weights(x_test)?;
        let b = x_test.nrows();
        let mut cov = self.grid_kernel.interpolated_cross(&ws, &ws)?;
        if b == 0 {
            return Ok(cov);
        }
        let (rhs, sol) = self.cross_solves(&ws, 0, b)?;
        let sub = rhs.transpose() * &sol;
        for i in 0..b {
            for j in 0..b {
                cov[(i, j)] -= 0.5 * (sub[(i, j)] + sub[(j, i)]);
            }
        }
        Ok(cov)
    }
}
