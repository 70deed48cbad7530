//! Why a FOM or textbook-CG run stopped.

/// The status of a [`FomSolver`](crate::FomSolver) or
/// [`TextbookCg`](crate::TextbookCg) run.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FomStatus {
    /// The run can take another step.
    Running,
    /// `‖r‖ ≤ tolerance · ‖b‖`, or (FOM only) the residual is zero to working precision:
    /// the Krylov space is invariant and the Galerkin solution exact (e.g. `A = I`, or `b`
    /// an eigenvector of `A`, converge at step 1).
    Converged,
    /// `max_steps` (clamped to `n`) steps were taken.
    MaxSteps,
    /// Step `step` (1-based) could not be taken; the state is that of step `step − 1`.
    Breakdown {
        /// The step that failed.
        step: usize,
        /// Why.
        reason: FomBreakdown,
    },
}

/// Why a step of FOM or textbook CG broke down.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FomBreakdown {
    /// The new direction's Rayleigh quotient `sᵀ A s / sᵀ s` is at most
    /// `τ · max_i s_iᵀ A s_i / s_iᵀ s_i` (FOM) or not positive (textbook CG): `A` is
    /// numerically singular on it.
    NonPositiveCurvature {
        /// `sᵀ A s / sᵀ s` of the rejected direction.
        rayleigh: f64,
        /// The largest Rayleigh quotient of the accepted directions (0 before the first).
        max_rayleigh: f64,
    },
    /// The bordered Gram matrix `SᵀAS` has a non-positive (or non-finite) new Cholesky
    /// pivot.
    GramNotPositiveDefinite {
        /// The squared pivot `g_jj − ‖l‖²`.
        pivot: f64,
    },
    /// A product or coefficient was NaN or infinite.
    NonFinite,
}
