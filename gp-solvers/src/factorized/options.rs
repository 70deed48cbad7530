//! Options of the factorized CG solvers.

use crate::error::{invalid, Result};
use crate::krylov::StoppingRule;

/// Options of [`fcg`](super::fcg()), [`efcg`](super::efcg()) and
/// [`efcg_simplified`](super::efcg_simplified()).
///
/// The solve stops ("converges") once `‖r_j‖₂ ≤ tolerance · ref` after at least
/// `min_iterations` steps, with `ref` the [`reference_norm`](Self::reference_norm) (by
/// default the norm of the initial residual, as for [`cg`](crate::cg()) from `x₀ = 0`), or
/// when `‖r_j‖² ` is exactly zero. This is the reference code's relative rule
/// `‖r‖ < tol·‖b‖` (in the authors' code, github.com/ymohit/fkigp), not the paper's absolute `rᵀr ≤ ε`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FactorizedCgOptions {
    /// Relative residual tolerance. Default `1e-5` (the reference code's `DEFAULT_TOL`; its
    /// experiments use `1e-2` for the mean and `1e-2`/`1e-1` for log-determinants).
    /// `0.0` runs to `max_iterations`.
    pub tolerance: f64,
    /// Maximum number of iterations. Default 1000 (the reference code's `MAX_ITER`).
    pub max_iterations: usize,
    /// Minimum number of iterations before the tolerance may stop the solve. Default 0.
    pub min_iterations: usize,
    /// The norm the residual is measured against: `None` (default) uses the initial
    /// residual's norm `‖z₀‖`; pass `‖b‖` of the original right-hand side when starting from
    /// `x₀ ≠ 0` (as the reference code does for the posterior mean with `x₀ = y/σ²`).
    pub reference_norm: Option<f64>,
    /// Keep every iterate `x_j − x₀` in factorized form (`m + 1` numbers per iteration), for
    /// per-iteration error curves and tests. Default `false`.
    pub record_iterates: bool,
}

impl Default for FactorizedCgOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-5,
            max_iterations: 1000,
            min_iterations: 0,
            reference_norm: None,
            record_iterates: false,
        }
    }
}

impl FactorizedCgOptions {
    /// The stopping rule of these options (`tolerance`, `min_iterations`,
    /// `max_iterations`; the reference norm is the solver's).
    pub fn stopping_rule(&self) -> StoppingRule {
        StoppingRule {
            tolerance: self.tolerance,
            min_iterations: self.min_iterations,
            max_iterations: self.max_iterations,
        }
    }

    /// Checks the options: a finite, non-negative tolerance, `min_iterations ≤
    /// max_iterations` and a finite, positive reference norm if one is given.
    pub fn validate(&self) -> Result<()> {
        self.stopping_rule().validate()?;
        if let Some(r) = self.reference_norm {
            if !(r.is_finite() && r > 0.0) {
                return Err(invalid(
                    "reference_norm",
                    format!("must be finite and positive, got {r}"),
                ));
            }
        }
        Ok(())
    }
}
