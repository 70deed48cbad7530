//! What happened to one right-hand side of a Krylov solve: the status and breakdown types
//! shared by CG ([`CgSolver`](crate::CgSolver)) and the factorized solvers.

use std::fmt;

/// Why a Krylov solve (one column of a batched CG run, or a factorized CG solve) stopped,
/// or that it is still running.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Status {
    /// Still iterating (only seen through a step interface).
    Running,
    /// The tolerance was met, or the residual became zero to working precision (exactly
    /// zero, or a squared norm within its rounding-error bound, see [`crate::krylov`]).
    Converged,
    /// `max_iterations` was reached without meeting the tolerance.
    MaxIterations,
    /// The iteration broke down; the solution holds the last valid iterate.
    Breakdown(Breakdown),
}

impl Status {
    /// Whether the solve still iterates.
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }

    /// Whether the solve met the tolerance.
    pub fn is_converged(&self) -> bool {
        matches!(self, Self::Converged)
    }

    /// Whether the solve broke down.
    pub fn is_breakdown(&self) -> bool {
        matches!(self, Self::Breakdown(_))
    }
}

/// A numerical breakdown of a Krylov solve: the operator or the preconditioner is not
/// symmetric positive definite (on the Krylov space reached), or a value became NaN or
/// infinite. Values are judged against their rounding-error bounds first (see
/// [`crate::krylov`]): a rounding-level negative value is convergence, not a breakdown.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Breakdown {
    /// The curvature `dᵀ A d` of a search direction was zero or negative: `A` is not
    /// positive definite (for the factorized solvers: `K_G` or `S` is not positive
    /// semi-definite, or `σ² = 0` and `K̃` is singular on the Krylov space).
    NonPositiveCurvature {
        /// The curvature found.
        curvature: f64,
    },
    /// `rᵀ P⁻¹ r` was negative beyond its rounding-error bound: the preconditioner is not
    /// positive definite.
    IndefinitePreconditioner {
        /// The value found.
        value: f64,
    },
    /// The factorized squared residual norm `r̂ᵀS r̂ + 2 c η + c² ρ` came out negative beyond
    /// its rounding-error bound (factorized solvers only): `S` is not positive
    /// semi-definite, or `(g, ρ)` do not come from one `z₀`.
    NegativeSquaredNorm {
        /// The value found.
        value: f64,
    },
    /// A NaN or infinite value appeared (in a product, a step length or `P⁻¹ r`).
    NonFinite,
}

impl fmt::Display for Breakdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NonPositiveCurvature { curvature } => {
                write!(f, "non-positive curvature dᵀAd = {curvature:e}")
            }
            Self::IndefinitePreconditioner { value } => {
                write!(f, "indefinite preconditioner, rᵀP⁻¹r = {value:e}")
            }
            Self::NegativeSquaredNorm { value } => {
                write!(f, "negative factorized squared residual norm {value:e}")
            }
            Self::NonFinite => write!(f, "a NaN or infinite value"),
        }
    }
}
