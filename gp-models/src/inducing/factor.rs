//! Which factorization of a sparse GP failed: the paper's "crash" of its baselines.

use crate::inducing::options::SparseMethod;

/// The factor of a [`SparseGp`](crate::SparseGp) that could not be computed, named in
/// [`ModelError::InducingCholesky`](crate::ModelError::InducingCholesky).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InducingFactor {
    /// The Cholesky factor of `K_UU` (duplicate or nearly coincident inducing points, a long
    /// length scale).
    Kuu,
    /// The Cholesky factor of the `m × m` system `σ² K_UU + ΦᵀΦ`.
    System,
    /// FITC's diagonal `λᵢ = (kᵢᵢ − Qᵢᵢ)/σ² + 1` is not positive (round-off in `Qᵢᵢ` beyond
    /// `σ²`), so `Φ = K_XU ./ √λ` does not exist.
    FitcDiagonal,
}

impl std::fmt::Display for InducingFactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Kuu => "the Cholesky factor of K_UU",
            Self::System => "the Cholesky factor of the system σ²K_UU + ΦᵀΦ",
            Self::FitcDiagonal => "FITC's diagonal λ = diag(K − Q)/σ² + 1 (a non-positive entry)",
        })
    }
}

/// The context of a failed sparse factorization, for the error message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FactorContext {
    pub method: SparseMethod,
    pub m: usize,
}
