//! Low-rank predictive covariances (LOVE) for a [`Gsgp`] model, by factorized Lanczos from
//! the sufficient statistics (Yadav et al. 2021, App. B.3; Pleiss et al. 2018).
//!
//! `k` Lanczos steps on `K̂` from a start vector `v` give `K̂⁻¹ ≈ Q T⁻¹ Qᵀ`; the factorized
//! runs return `WᵀQ` without `W`, so the caches `R = K_G WᵀQ` and `R' = R T⁻¹` of
//! [`LoveCache`] are formed in grid space, exactly as [`Ski::love`](crate::Ski::love) forms
//! them. The start vectors of [`LoveStart`]:
//!
//! * [`LoveStart::AverageColumn`]: `v = W v̂` with `v̂ = K_G 1/m`, in `range(W)`: Lanczos on
//!   `Â` in the `S`-inner product (the authors' code, `bfsla1`), `WᵀQ = S Q̂`;
//! * [`LoveStart::Targets`]: `v = y`, known through `g = t`, `ρ = q`: EFLA (paper Alg. 7).
//!
//! Both cost one `K_G` and one `S` product per step plus `O(m k)` re-orthogonalization.

use faer::Col;
use gp_kernels::Kernel;
use gp_linalg::{Cholesky, LinearOperator};
use gp_solvers::factorized::{efla, StartVector};
use gp_solvers::LanczosOptions;

use crate::error::{ModelError, Result};
use crate::grid::love::{LoveCache, LoveOptions, LoveStart};
use crate::gsgp::model::Gsgp;
use crate::gsgp::range_lanczos::range_lanczos;

impl<K: Kernel> Gsgp<K> {
    /// Runs `k` factorized Lanczos steps (full re-orthogonalization) on `K̂` from the start
    /// vector of `options` and builds the LOVE cache (see the [module documentation](self)):
    /// one `K_G` and one `S` product per step, `O(m k)` memory. The rank is clamped to `n` as
    /// [`Ski::love`](crate::Ski::love) does, and to the dimension of the Krylov space (`m`
    /// for [`LoveStart::AverageColumn`], whose start lies in `range(W)`; `m + 1` for
    /// [`LoveStart::Targets`]); a smaller rank is reached when the Krylov space is exhausted.
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
        let m = self.grid().num_points();
        let system = self.system()?;
        let (wt_q, tridiagonal, status) = match options.start {
            LoveStart::AverageColumn => {
                // W v̂ with v̂ = K_G 1/m: Lanczos in range(W) (the authors' `bfsla1`).
                let ones = Col::from_fn(m, |_| 1.0 / m as f64);
                let v_hat = kg.apply(ones.as_ref())?;
                let v: Vec<f64> = v_hat.iter().copied().collect();
                let s_v = self.stats.gram().apply(v_hat.as_ref())?;
                let rho: f64 = v_hat.transpose() * &s_v;
                if rho.is_nan() || rho <= 0.0 {
                    return Err(zero_start());
                }
                let k = options.rank.min(self.n_train()).min(m);
                let lz = range_lanczos(&system, &v, k, options.breakdown_tolerance)?;
                (lz.p_hat, lz.tridiagonal, lz.status)
            }
            LoveStart::Targets => {
                let start = StartVector::new(self.stats.wty().to_owned(), self.stats.yty())?;
                if start.rho() == 0.0 {
                    return Err(zero_start());
                }
                let lz_opts = LanczosOptions {
                    max_iterations: options.rank.min(self.n_train()),
                    breakdown_tolerance: options.breakdown_tolerance,
                };
                let lz = efla(&system, &start, &lz_opts)?;
                (lz.wt_basis, lz.tridiagonal, lz.status)
            }
        };
        let r = kg.apply_block(wt_q.as_ref())?;
        let t = tridiagonal.to_dense();
        let chol = Cholesky::new(t.as_ref())?;
        // R' = R T⁻¹ = (T⁻¹ Rᵀ)ᵀ (T symmetric).
        let r_prime = chol.solve(r.transpose())?.transpose().to_owned();
        Ok(LoveCache::from_parts(
            r,
            r_prime,
            self.grid().clone(),
            self.interp,
            self.grid_kernel.clone(),
            status,
        ))
    }
}

fn zero_start() -> ModelError {
    ModelError::InvalidOption {
        name: "LoveOptions::start",
        reason: "the start vector is zero".into(),
    }
}
