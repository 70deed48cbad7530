//! Low-rank predictive covariances by Lanczos (LOVE, Pleiss et al. 2018), as the GSGP
//! authors' code uses them for SKI (Yadav et al. 2021, §5).
//!
//! `k` Lanczos steps on `K̂ = W K_G Wᵀ + σ²I` from a start vector `v` give
//! `K̂⁻¹ ≈ Q T⁻¹ Qᵀ` (`Q` `n × k` orthonormal, `T` tridiagonal). With the grid caches
//! `R = K_G Wᵀ Q` and `R' = R T⁻¹` (`m × k` each, one Cholesky of `T`), the subtracted term
//! of the posterior covariance of test points is `(W* R)(W* R')ᵀ`: `O(4^d k)` per test point
//! after the set-up. The prior term `W* K_G W*ᵀ` comes from the stencils (`O(16^d)` per
//! pair, `O(16 d)` per variance). The start vector of the reference code is the average column of `W K_G`,
//! `v = W K_G 1/m` ([`LoveStart::AverageColumn`], the default); the original LOVE paper starts
//! from the targets `y` ([`LoveStart::Targets`]). As `k` grows to `n` the cache becomes
//! exact (up to the components of `W K_G W*ᵀ` outside the Krylov space of `v`).

use faer::Col;
use gp_kernels::Kernel;
use gp_linalg::{Cholesky, LinearOperator, TransposeOperator};
use gp_solvers::{lanczos, LanczosOptions};

use crate::error::{ModelError, Result};
use crate::ski::model::Ski;

// The cache and its options are shared with GSGP and live in `grid::love`; re-exported here
// so that `gp_models::ski::love::LoveCache` keeps working.
pub use crate::grid::love::{LoveCache, LoveOptions, LoveStart};

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
        Ok(LoveCache::from_parts(
            r,
            r_prime,
            self.grid.clone(),
            self.interpolation_options(),
            self.grid_kernel.clone(),
            lz.status,
        ))
    }
}
