//! The error type of `gp-linalg`.

use thiserror::Error;

/// Everything that can go wrong in `gp-linalg`, each with a message that says
/// what was wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LinalgError {
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
    /// A square matrix or operator was required.
    #[error("{context} needs a square matrix, got {nrows}×{ncols}")]
    NotSquare {
        /// The operation that was attempted.
        context: &'static str,
        /// Rows of the matrix given.
        nrows: usize,
        /// Columns of the matrix given.
        ncols: usize,
    },
    /// An input held NaN or an infinite value.
    #[error("{context}: non-finite value ({value}) at row {row}, column {col}; remove or impute it before calling")]
    NonFinite {
        /// What the input was.
        context: &'static str,
        /// Row of the first offending entry.
        row: usize,
        /// Column of the first offending entry.
        col: usize,
        /// The offending value.
        value: f64,
    },
    /// A matrix stayed indefinite after the whole jitter ladder.
    #[error(
        "the {n}×{n} matrix is not positive definite even after adding a jitter of {largest_jitter:e} to its diagonal; \
         check the hyperparameters (a longer length scale or a larger noise variance usually helps) or allow a larger jitter"
    )]
    NotPositiveDefinite {
        /// Order of the matrix.
        n: usize,
        /// The largest diagonal jitter that was tried.
        largest_jitter: f64,
    },
    /// Bordering a Cholesky factor by one row failed: the new pivot is not positive (the
    /// bordered matrix is not numerically positive definite) or not finite.
    #[error(
        "extending a Cholesky factor to order {order}: the new pivot d² = {pivot:e} is not positive; \
         the new column is (numerically) linearly dependent on the previous ones, so stop at order {previous} \
         or re-orthogonalize the basis"
    )]
    BorderBreakdown {
        /// The order the factor would have had.
        order: usize,
        /// The order it keeps.
        previous: usize,
        /// The squared pivot `a_jj − ‖l‖²` that was not positive (or not finite).
        pivot: f64,
    },
    /// An argument is outside its valid range.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An eigendecomposition did not converge.
    #[error("the symmetric eigendecomposition of a {n}×{n} matrix did not converge; check the matrix for extreme or non-finite values")]
    EigenNoConvergence {
        /// Order of the matrix.
        n: usize,
    },
    /// A factorization needed a non-zero, finite pivot or diagonal and found none.
    #[error("{context}: the matrix is singular (entry {index} of its diagonal is {value}); it cannot be inverted")]
    Singular {
        /// The operation that was attempted.
        context: &'static str,
        /// Index of the offending diagonal entry.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// An entry that must be strictly positive (a diagonal of an SPD matrix, an eigenvalue
    /// whose logarithm is needed, a noise variance) is zero or negative.
    #[error(
        "{context} needs strictly positive values, but entry {index} is {value}; \
         the matrix is not positive definite (use a positive noise variance or diagonal, or add jitter)"
    )]
    NotPositive {
        /// The operation that was attempted.
        context: &'static str,
        /// Index of the first offending entry.
        index: usize,
        /// Its value.
        value: f64,
    },
}

/// Result type of `gp-linalg`.
pub type Result<T, E = LinalgError> = std::result::Result<T, E>;

/// Formats a shape as `rows×cols` for error messages.
pub fn shape_str(nrows: usize, ncols: usize) -> String {
    format!("{nrows}×{ncols}")
}
