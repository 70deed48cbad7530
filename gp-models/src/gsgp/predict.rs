//! Predictions of a [`Gsgp`] model, from the sufficient statistics only.
//!
//! * Mean: `α = K̂⁻¹y` by EFCG (or FCG) from `x₀ = 0` with the start vector `z₀ = y`
//!   (`g = t = Wᵀy`, `ρ = q = yᵀy`), so the iterates are those of SKI's CG; the solver
//!   returns `Wᵀα` without `W`, and the grid cache is `a = K_G Wᵀα` (`= z̄`, the posterior
//!   mean of the grid values). `μ(x*) = w*ᵀ a`, `O(4^d)` per test point.
//! * Covariance: `W* K_G W*ᵀ − R̂ᵀ (Wᵀ K̂⁻¹ W) R̂` with `R̂ = K_G W*ᵀ`: the prior term from
//!   the stencils, the second by one range-`W` solve per test point (simplified EFCG, paper
//!   Alg. 4 with `r̂₀ = K_G w*`), run in parallel over the test points.

use faer::{Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::LinearOperator;
use gp_solvers::factorized::StartVector;
use rayon::prelude::*;

use crate::core::predict::{with_noise, VARIANCE_BLOCK};
use crate::core::SolveReport;
use crate::error::Result;
use crate::grid::stencil::transposed_block;
use crate::gsgp::model::{Gsgp, MeanCache};
use crate::gsgp::solve::factorized_report;

impl<K: Kernel> Gsgp<K> {
    /// `α` in factorized form and the grid cache, computed on first use.
    pub(crate) fn mean_cache(&self) -> Result<&MeanCache> {
        let cached = self.cache.get_or_init(|| {
            let t = self.stats.wty().to_owned();
            let q = self.stats.yty();
            let start = StartVector::new(t.clone(), q)?;
            let opts = self.factorized_options(self.options.krylov.prediction_tolerance, 0);
            let res = self.solve_start(&start, &opts, "the GSGP solve for α = K̂⁻¹y")?;
            let x_hat = &res.solution.hat;
            let c = res.solution.coeff;
            let data_fit = t.transpose() * x_hat + c * q;
            let alpha_sq_norm = x_hat.transpose() * &res.solution_wt + c * data_fit;
            let grid_mean = self
                .grid_kernel
                .operator()
                .apply(res.solution_wt.as_ref())?;
            Ok(MeanCache {
                wt_alpha: res.solution_wt.clone(),
                grid_mean,
                data_fit,
                alpha_sq_norm,
                report: factorized_report([&res]),
            })
        });
        cached.as_ref().map_err(Clone::clone)
    }

    /// The grid cache `a = K_G Wᵀ α` (length `m`, `α = K̂⁻¹y`): the posterior mean at `x*` is
    /// `w*ᵀ a`. Solved to [`GsgpOptions::krylov.prediction_tolerance`](crate::KrylovSettings::prediction_tolerance) on
    /// first use and cached.
    ///
    /// Errors: [`ModelError::CgBreakdown`](crate::ModelError::CgBreakdown) (the same error
    /// on every call).
    pub fn grid_mean_cache(&self) -> Result<&Col<f64>> {
        Ok(&self.mean_cache()?.grid_mean)
    }

    /// `Wᵀα` (length `m`), the grid-space image of `α = K̂⁻¹y`.
    ///
    /// Errors as [`grid_mean_cache`](Self::grid_mean_cache).
    pub fn wt_alpha(&self) -> Result<&Col<f64>> {
        Ok(&self.mean_cache()?.wt_alpha)
    }

    /// How the mean solve ended (iterations, convergence, final relative residual), running
    /// it on first use.
    ///
    /// Errors as [`grid_mean_cache`](Self::grid_mean_cache).
    pub fn mean_solve_report(&self) -> Result<SolveReport> {
        Ok(self.mean_cache()?.report.clone())
    }

    /// Posterior mean at the rows of `x_test` (`b × d`): `W* a`, `O(4^d)` per point once the
    /// grid cache exists.
    ///
    /// Errors: [`ModelError::TestDim`](crate::ModelError::TestDim),
    /// [`ModelError::NonFinite`](crate::ModelError::NonFinite),
    /// [`ModelError::OutsideGrid`](crate::ModelError::OutsideGrid) for a test point whose
    /// stencil does not fit in the grid, and those of
    /// [`grid_mean_cache`](Self::grid_mean_cache).
    pub fn predict_mean(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let ws = self.test_weights(x_test)?;
        if x_test.nrows() == 0 {
            return Ok(Col::zeros(0));
        }
        let a = self.grid_mean_cache()?;
        Ok(ws.apply(a.as_ref())?)
    }

    /// For test rows `start .. start + len` of `ws`: `R̂ = K_G W*ᵀ` (`m × len`) and
    /// `U = Wᵀ K̂⁻¹ W R̂`, one range-`W` solve per column.
    fn cross_solves(
        &self,
        ws: &gp_structured::InterpolationWeights,
        start: usize,
        len: usize,
    ) -> Result<(Mat<f64>, Mat<f64>, SolveReport)> {
        let wst = transposed_block(ws, start, len);
        let r_hat = self.grid_kernel.operator().apply_block(wst.as_ref())?;
        drop(wst);
        let opts = self.factorized_options(self.options.krylov.variance_tolerance, 0);
        let solved = (0..len)
            .into_par_iter()
            .map(|j| {
                self.solve_range_w(
                    r_hat.col(j),
                    &opts,
                    "the GSGP covariance solves Wᵀ K̂⁻¹ W K_G W*ᵀ",
                    start + j,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let report = factorized_report(solved.iter().map(|(_, r)| r));
        let u = Mat::from_fn(r_hat.nrows(), len, |i, j| solved[j].0[i]);
        Ok((r_hat, u, report))
    }

    /// Posterior variance of the latent function at the rows of `x_test`, clamped at 0:
    /// `w*ᵀ K_G w* − (K_G w*)ᵀ Wᵀ K̂⁻¹ W (K_G w*)`, one range-`W` solve per point (in blocks
    /// of test points, in parallel).
    ///
    /// Errors as [`predict_mean`](Self::predict_mean).
    pub fn predict_latent_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let ws = self.test_weights(x_test)?;
        let b = x_test.nrows();
        let mut out = self.grid_kernel.interpolated_diagonal(&ws)?;
        for b0 in (0..b).step_by(VARIANCE_BLOCK) {
            let len = VARIANCE_BLOCK.min(b - b0);
            let (r_hat, u, _) = self.cross_solves(&ws, b0, len)?;
            for j in 0..len {
                let explained = r_hat.col(j).transpose() * u.col(j);
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
    /// (`b × b`, symmetrized): `W* K_G W*ᵀ − R̂ᵀ Wᵀ K̂⁻¹ W R̂` with `R̂ = K_G W*ᵀ`, by `b`
    /// range-`W` solves (meant for small `b`).
    ///
    /// Errors as [`predict_mean`](Self::predict_mean).
    pub fn predict_latent_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        Ok(self.latent_covariance_with_report(x_test)?.0)
    }

    /// As [`predict_latent_covariance`](Self::predict_latent_covariance), with the record of
    /// the `b` solves (one column per test point).
    ///
    /// Errors as [`predict_mean`](Self::predict_mean).
    pub fn latent_covariance_with_report(
        &self,
        x_test: MatRef<'_, f64>,
    ) -> Result<(Mat<f64>, SolveReport)> {
        let ws = self.test_weights(x_test)?;
        let b = x_test.nrows();
        let mut cov = self.grid_kernel.interpolated_cross(&ws, &ws)?;
        if b == 0 {
            return Ok((cov, factorized_report([])));
        }
        let (r_hat, u, report) = self.cross_solves(&ws, 0, b)?;
        let sub = r_hat.transpose() * &u;
        for i in 0..b {
            for j in 0..b {
                cov[(i, j)] -= 0.5 * (sub[(i, j)] + sub[(j, i)]);
            }
        }
        Ok((cov, report))
    }
}
