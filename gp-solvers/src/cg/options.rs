//! Options of the conjugate-gradient solver.

use crate::error::Result;
use crate::krylov::StoppingRule;

/// Options of [`CgSolver`](crate::CgSolver) and [`cg`](crate::cg()).
///
/// A column stops ("converges") once `‖r_j‖₂ ≤ tolerance · ‖b‖₂` and at least
/// `min_iterations` steps were taken, or when its residual is exactly zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgOptions {
    /// Relative residual tolerance per column, `‖b − A x_j‖₂ / ‖b‖₂` (the recursively
    /// updated residual, unpreconditioned norm). Default `1e-6`. `0.0` runs every column to
    /// `max_iterations` (or to an exactly zero residual).
    pub tolerance: f64,
    /// Maximum number of iterations (products with the operator). Default 1000.
    pub max_iterations: usize,
    /// Minimum number of iterations before a column may stop on the tolerance. Default 0.
    pub min_iterations: usize,
    /// Fully re-orthogonalize each new residual against all previous ones in the
    /// `P⁻¹` inner product (twice, classical Gram–Schmidt). Costs `O(n j)` per step and
    /// `O(n j)` memory per column; makes CG behave as in exact arithmetic (the stable
    /// variant of the KMCG paper). Default `false`.
    pub reorthogonalize: bool,
    /// Keep every search direction `d_{j−1}` and its product `A d_{j−1}` (per column, in
    /// [`CgColumn::directions`](crate::CgColumn::directions)), for KMCG and the
    /// probabilistic linear solver. Default `false`.
    pub record_directions: bool,
}

impl Default for CgOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-6,
            max_iterations: 1000,
            min_iterations: 0,
            reorthogonalize: false,
            record_directions: false,
        }
    }
}

impl CgOptions {
    /// Checks the options: a finite, non-negative tolerance and
    /// `min_iterations ≤ max_iterations`.
    pub fn validate(&self) -> Result<()> {
        self.stopping_rule().validate()
    }

    /// The stopping rule of these options (`tolerance`, `min_iterations`,
    /// `max_iterations`).
    pub fn stopping_rule(&self) -> StoppingRule {
        StoppingRule {
            tolerance: self.tolerance,
            min_iterations: self.min_iterations,
            max_iterations: self.max_iterations,
        }
    }
}
