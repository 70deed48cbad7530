//! The error type of `gp-solvers`.

use gp_linalg::LinalgError;
use thiserror::Error;

/// Everything that can go wrong in `gp-solvers`.
///
/// Numerical breakdown *inside* an iteration (a non-positive curvature, a NaN) is not an
/// error: it ends the affected column with a [`ColumnStatus::Breakdown`](crate::ColumnStatus)
/// and the solver returns what it computed up to that point. Errors are reserved for
/// inputs that cannot be used at all.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SolverError {
    /// An error from the linear-algebra layer (non-finite input, failed factorization, ...).
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// Two shapes that must agree do not.
    #[error("shape mismatch in {context}: expected {expected}, got {found}")]
    ShapeMismatch {
        /// The operation that was attempted.
        context: &'static str,
        /// The shape the operation needed, e.g. `"1000×1"`.
        expected: String,
        /// The shape it was given.
        found: String,
    },
    /// An option is outside its valid range or inconsistent with another option.
    #[error("invalid option `{name}`: {reason}")]
    InvalidOptions {
        /// The option's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A preconditioner is not symmetric positive definite (for example a noise variance
    /// that is not strictly positive, or `rᵀP⁻¹r ≤ 0` for the initial residual).
    #[error("the preconditioner is not symmetric positive definite: {reason}")]
    PreconditionerNotSpd {
        /// What was observed.
        reason: String,
    },
    /// A quadrature rule needs the logarithm of a Ritz value (an eigenvalue of a Lanczos
    /// tridiagonal) that is zero or negative: the operator is not positive definite.
    #[error(
        "Ritz value {index} of a {dim}×{dim} Lanczos tridiagonal is {value}, but a logarithm \
         needs positive values; the operator is not positive definite (add noise or jitter)"
    )]
    NonPositiveRitzValue {
        /// Order of the tridiagonal.
        dim: usize,
        /// Index of the offending Ritz value (ascending order).
        index: usize,
        /// Its value.
        value: f64,
    },
    /// The matrix given to the pivoted Cholesky is not positive semi-definite: a residual
    /// diagonal entry `K[i,i] − Σ_m L[i,m]²` went negative beyond rounding error.
    #[error(
        "the matrix is not positive semi-definite: after {step} pivoted Cholesky step(s) the \
         residual diagonal entry {index} is {value:e} (below the rounding tolerance \
         -{tolerance:e}); check that the kernel matrix is symmetric and valid, or add jitter"
    )]
    NotPositiveSemidefinite {
        /// Number of pivots taken when the negative entry appeared.
        step: usize,
        /// Row of the negative residual diagonal entry.
        index: usize,
        /// Its value (negative).
        value: f64,
        /// The rounding tolerance it fell below (positive).
        tolerance: f64,
    },
    /// A tridiagonal could not be formed from CG coefficients (a non-finite or
    /// non-positive step length, or a negative `β`).
    #[error("invalid CG coefficients for a Lanczos tridiagonal: {reason}")]
    InvalidCoefficients {
        /// What is wrong.
        reason: String,
    },
}

/// Result type of `gp-solvers`.
pub type Result<T, E = SolverError> = std::result::Result<T, E>;

/// Checks a shape, returning [`SolverError::ShapeMismatch`].
pub(crate) fn check_shape(
    found: (usize, usize),
    expected: (usize, usize),
    context: &'static str,
) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(SolverError::ShapeMismatch {
            context,
            expected: format!("{}×{}", expected.0, expected.1),
            found: format!("{}×{}", found.0, found.1),
        })
    }
}

/// Returns [`SolverError::InvalidOptions`].
pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> SolverError {
    SolverError::InvalidOptions {
        name,
        reason: reason.into(),
    }
}
