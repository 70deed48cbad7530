//! Low-rank predictive covariances by Lanczos (LOVE, Pleiss et al. 2018), as the GSGP
//! reference code uses them for SKI (`specs/gsgp.md` §3.10).
//!
//! `k` Lanczos steps on `K̂ = W K_G Wᵀ + σ²I` from a start vector `v` give
//! `K̂⁻¹ ≈ Q T⁻¹ Qᵀ` (`Q` `n × k` orthonormal, `T` tridiagonal). With the grid caches
//! `R = K_G Wᵀ Q` and `R' = R T⁻¹` (`m × k` each, one Cholesky of `T`), the subtracted term
//! of the posterior covariance of test points is `(W* R)(W* R')ᵀ`: `O(4^d k)` per test point
//! after the set-up. The prior term `W* K_G W*ᵀ` comes from the stencils (`O(16^d)` per
//! pair). The start vector of the reference code is the average column of `W K_G`,
//! `v = W K_G 1/m` ([`LoveStart::AverageColumn`], the default); the original LOVE paper starts
//! from the targets `y` ([`LoveStart::Targets`]). As `k` grows to `n` the cache becomes
//! exact (up to the components of `W K_G W*ᵀ` outside the Krylov space of `v`).

use faer::{Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{Cholesky, LinearOperator, TransposeOperator};
use gp_solvers::{lanczos, LanczosOptions, LanczosStatus};
use gp_structured::{InterpolationOptions, InterpolationWeights, RegularGrid};

use crate::error::{ModelError, Result};
use crate::ski::grid_kernel::GridKernel;
use crate::ski::model::Ski;
use crate::ski::stencil::{prior_covariance, prior_variance};

/// The start vector of the LOVE Lanczos run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoveStart {
    /// `W K_G 1/m`, the average column of `W K_G` (the GSGP reference code; default).
    #[default]
    AverageColumn,
    /// The training targets `y` (the LOVE paper's mean-cache Krylov space).
    Targets,
}

/// Options of [`Ski::love`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoveOptions {
    /// Lanczos rank `k` (clamped to `n`; default 50).
    pub rank: usize,
    /// The start vector (default [`LoveStart::AverageColumn`]).
    pub start: LoveStart,
    /// Breakdown tolerance of the Lanczos run (default `1e-12`, as
    /// [`LanczosOptions`]).
    pub breakdown_tolerance: f64,
}

impl Default for LoveOptions {
    fn default() -> Self {
        Self {
            rank: 50,
            start: LoveStart::AverageColumn,
            breakdown_tolerance: 1e-12,
        }
    }
}

/// The LOVE cache of a [`Ski`] model: `R = K_G Wᵀ Q`, `R' = R T⁻¹` and what is needed to
/// interpolate test points and form their prior covariance.
#[derive(Debug, Clone)]
pub struct LoveCache {
    r: Mat<f64>,
    r_prime: Mat<f64>,
    grid: RegularGrid,
    interp: InterpolationOptions,
    grid_kernel: GridKernel,
    status: LanczosStatus,
}

impl LoveCache {
    /// A cache from its parts (`R`, `R'` and the Lanczos status), for the GSGP model.
    pub(crate) fn from_parts(
        r: Mat<f64>,
        r_prime: Mat<f64>,
        grid: RegularGrid,
        interp: InterpolationOptions,
        grid_kernel: GridKernel,
        status: LanczosStatus,
    ) -> Self {
        Self {
            r,
            r_prime,
            grid,
            interp,
            grid_kernel,
            status,
        }
    }

    /// The rank `k` reached (smaller than requested after a Lanczos breakdown).
    pub fn rank(&self) -> usize {
        self.r.ncols()
    }

    /// Why the Lanczos run stopped.
    pub fn status(&self) -> LanczosStatus {
        self.status
    }

    /// `R = K_G Wᵀ Q` (`m × k`).
    pub fn r(&self) -> MatRef<'_, f64> {
        self.r.as_ref()
    }

    /// `R' = R T⁻¹` (`m × k`).
    pub fn r_prime(&self) -> MatRef<'_, f64> {
        self.r_prime.as_ref()
    }

    fn weights(&self, x_test: MatRef<'_, f64>) -> Result<InterpolationWeights> {
        crate::validate::check_test_points(x_test, self.grid.dims())?;
        InterpolationWeights::new(&self.grid, x_test, self.interp)
            .map_err(|e| ModelError::from_structured(e, "the test points"))
    }

    /// The low-rank posterior covariance of the latent function at the rows of `x_test`
    /// (`b × b`, symmetrized): `W* K_G W*ᵀ − (W* R)(W* R')ᵀ`.
    ///
    /// Errors: [`ModelError::TestDim`], [`ModelError::NonFinite`],
    /// [`ModelError::OutsideGrid`].
    pub fn latent_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let ws = self.weights(x_test)?;
        let mut cov = prior_covariance(&self.grid_kernel, &ws, &ws);
        let a = ws.apply_block(self.r.as_ref())?;
        let b = ws.apply_block(self.r_prime.as_ref())?;
        let sub = &a * b.transpose();
        for i in 0..cov.nrows() {
            for j in 0..cov.ncols() {
                cov[(i, j)] -= 0.5 * (sub[(i, j)] + sub[(j, i)]);
            }
        }
        Ok(cov)
    }

    /// The low-rank posterior variances of the latent function at the rows of `x_test`,
    /// clamped at 0: `O(16^d + 4^d k)` per point.
    ///
    /// Errors as [`latent_covariance`](Self::latent_covariance).
    pub fn latent_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let ws = self.weights(x_test)?;
        let prior = prior_variance(&self.grid_kernel, &ws);
        let a = ws.apply_block(self.r.as_ref())?;
        let b = ws.apply_block(self.r_prime.as_ref())?;
        Ok(Col::from_fn(prior.nrows(), |i| {
            let sub: f64 = (0..a.ncols()).map(|c| a[(i, c)] * b[(i, c)]).sum();
            (prior[i] - sub).max(0.0)
        }))
    }
}

impl<K: Kernel> Ski<K> {
    /// Runs `k` Lanczos steps (full re-orthogonalization) on `K̂` from the start vector of
    /// `options` and builds the LOVE cache (see the [module documentation](self)): `k`
    /// products with `K̂`, `O(n k²)` re-orthogonalization, `O(m k)` memory for the caches.
    ///
    /// Errors: [`ModelError::InvalidOption`] for rank 0 or a zero start vector,
    /// [`ModelError::Solver`] from the Lanczos run, [`ModelError::Linalg`] if `T` is not
    /// numerically positive definite.
    pub fn love(&self, options: &LoveOptions) -> Result<LoveCache> {
        if options.rank == 0 {
            return Err(ModelError::InvalidOption {
                name: "LoveOptions::rank",
                reason: "must be at least 1".into(),
            });
        }
        let kg = self.grid_kernel.operator();
        let m = self.grid.num_points();
        let start: Col<f64> = match options.start {
            LoveStart::AverageColumn => {
                let ones = Col::from_fn(m, |_| 1.0 / m as f64);
                let kg1 = kg.apply(ones.as_ref())?;
                self.w.apply(kg1.as_ref())?
            }
            LoveStart::Targets => self.y.clone(),
        };
        if start.norm_l2() == 0.0 {
            return Err(ModelError::InvalidOption {
                name: "LoveOptions::start",
                reason: "the start vector is zero".into(),
            });
        }
        let lz_opts = LanczosOptions {
            max_iterations: options.rank.min(self.n_train()),
            breakdown_tolerance: options.breakdown_tolerance,
        };
        let lz = lanczos(&self.operator(), start.as_ref(), &lz_opts)?;
        let wt_q = self.w.transposed().apply_block(lz.q.as_ref())?;
        let r = kg.apply_block(wt_q.as_ref())?;
        drop(wt_q);
        let t = lz.tridiagonal.to_dense();
        let chol = Cholesky::new(t.as_ref())?;
        // R' = R T⁻¹ = (T⁻¹ Rᵀ)ᵀ (T symmetric).
        let r_prime = chol.solve(r.transpose())?.transpose().to_owned();
        Ok(LoveCache {
            r,
            r_prime,
            grid: self.grid.clone(),
            interp: self.interpolation_options(),
            grid_kernel: self.grid_kernel.clone(),
            status: lz.status,
        })
    }
}
