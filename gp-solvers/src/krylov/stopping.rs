//! The stopping rule every Krylov solver of this crate applies.

use crate::error::{invalid, Result};

use super::status::Status;

/// When a Krylov solve stops: once `‖r_j‖ ≤ tolerance · ref` after at least
/// `min_iterations` steps (`ref` is the solver's reference norm, `‖b‖` by default), when the
/// residual is zero to working precision, or after `max_iterations` steps.
///
/// [`CgOptions`](crate::CgOptions) and [`FactorizedCgOptions`](crate::FactorizedCgOptions)
/// keep their fields `tolerance`, `min_iterations` and `max_iterations` (so struct literals
/// with `..Default::default()` keep working) and hand them out as a `StoppingRule` with
/// `stopping_rule()`; the solvers decide with [`StoppingRule::decide`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoppingRule {
    /// Relative residual tolerance (`0.0` runs to `max_iterations`).
    pub tolerance: f64,
    /// Minimum number of iterations before the tolerance may stop the solve.
    pub min_iterations: usize,
    /// Maximum number of iterations.
    pub max_iterations: usize,
}

impl StoppingRule {
    /// Checks the rule: a finite, non-negative tolerance and
    /// `min_iterations ≤ max_iterations`.
    ///
    /// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions).
    pub fn validate(&self) -> Result<()> {
        let tolerance = self.tolerance;
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Err(invalid(
                "tolerance",
                format!("must be finite and non-negative, got {tolerance}"),
            ));
        }
        if self.min_iterations > self.max_iterations {
            return Err(invalid(
                "min_iterations",
                format!(
                    "{} exceeds max_iterations = {}",
                    self.min_iterations, self.max_iterations
                ),
            ));
        }
        Ok(())
    }

    /// The status after `iteration` completed steps with relative residual `relative`
    /// (`‖r‖ / ref`); `zero` says that the residual is zero to working precision. `None`
    /// means the solve goes on.
    ///
    /// ```
    /// use gp_solvers::krylov::{Status, StoppingRule};
    ///
    /// let rule = StoppingRule { tolerance: 1e-3, min_iterations: 2, max_iterations: 5 };
    /// assert_eq!(rule.decide(1, 1e-4, false), None); // below the floor
    /// assert_eq!(rule.decide(2, 1e-4, false), Some(Status::Converged));
    /// assert_eq!(rule.decide(1, 0.0, true), Some(Status::Converged));
    /// assert_eq!(rule.decide(5, 1e-1, false), Some(Status::MaxIterations));
    /// ```
    pub fn decide(&self, iteration: usize, relative: f64, zero: bool) -> Option<Status> {
        if zero || (iteration >= self.min_iterations && relative <= self.tolerance) {
            Some(Status::Converged)
        } else if iteration >= self.max_iterations {
            Some(Status::MaxIterations)
        } else {
            None
        }
    }
}
