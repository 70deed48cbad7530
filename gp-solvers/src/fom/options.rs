//! Options of the FOM solver.

use crate::error::{invalid, Result};

/// Options of [`FomSolver`](crate::FomSolver) and [`fom`](crate::fom()).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FomOptions {
    /// Maximum number of steps (directions), clamped to the order `n` of the operator.
    /// Default 100.
    pub max_steps: usize,
    /// Stop ("converge") once `‖b − A x_j‖₂ ≤ tolerance · ‖b‖₂`. Default `0.0`: run to
    /// `max_steps`, a breakdown or a residual at rounding level (an invariant Krylov space).
    pub tolerance: f64,
    /// Break down when a new direction has a Rayleigh quotient
    /// `s_{j+1}ᵀ A s_{j+1} / ‖s_{j+1}‖² ≤ τ · max_i s_iᵀ A s_i / ‖s_i‖²` (`τ` = this value;
    /// the spec's `sᵀAs ≤ τ max sᵢᵀAsᵢ` for directions scaled to unit length): the
    /// operator is numerically singular on the new direction (the Krylov space of a
    /// rank-deficient `A` is exhausted). Default `1e-12`.
    pub breakdown_tolerance: f64,
}

impl Default for FomOptions {
    fn default() -> Self {
        Self {
            max_steps: 100,
            tolerance: 0.0,
            breakdown_tolerance: 1e-12,
        }
    }
}

impl FomOptions {
    /// Checks the options: finite, non-negative `tolerance` and `breakdown_tolerance`.
    pub fn validate(&self) -> Result<()> {
        for (name, value) in [
            ("tolerance", self.tolerance),
            ("breakdown_tolerance", self.breakdown_tolerance),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(
                    name,
                    format!("must be finite and non-negative, got {value}"),
                ));
            }
        }
        Ok(())
    }
}
