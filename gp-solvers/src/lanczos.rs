//! The Lanczos process with full re-orthogonalization: `A Q_k ≈ Q_k T_k` with orthonormal
//! `Q_k` and symmetric tridiagonal `T_k = Q_kᵀ A Q_k`.

use faer::{ColRef, Mat, MatRef};
use gp_linalg::LinearOperator;

use crate::error::Result;
use crate::lanczos_steps::LanczosSolver;
use crate::tridiagonal::SymTridiagonal;

/// Options of [`lanczos`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LanczosOptions {
    /// Maximum number of Lanczos vectors `k` (clamped to `n`). Default 100.
    pub max_iterations: usize,
    /// Stop when the next off-diagonal `β_j` is at most `breakdown_tolerance · ‖A q‖`
    /// (the Krylov space is invariant to rounding). Default `1e-12`.
    pub breakdown_tolerance: f64,
}

impl Default for LanczosOptions {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            breakdown_tolerance: 1e-12,
        }
    }
}

/// Why [`lanczos`] (or a factorized Lanczos process) stopped, or
/// [`Running`](Self::Running) if it has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LanczosStatus {
    /// `max_iterations` (or `n`) vectors were built.
    MaxIterations,
    /// The Krylov space became invariant (a vanishing off-diagonal): `T` holds the exact
    /// restriction of `A` to it.
    InvariantSubspace,
    /// `A q` was NaN or infinite; `Q` and `T` hold the steps before.
    NonFinite,
    /// The process has not stopped: the status of a step interface
    /// ([`LanczosSolver`], [`FlaSolver`](crate::factorized::FlaSolver),
    /// [`EflaSolver`](crate::factorized::EflaSolver)) while it runs, and of a result
    /// finished early through one. [`lanczos`], [`fla`](crate::fla()) and
    /// [`efla`](crate::efla()) never return it.
    Running,
}

/// The outcome of [`lanczos`]: `Q` (`n×k`, orthonormal columns, `q₁ = b/‖b‖`), `T`
/// (`k×k`) and the status.
#[derive(Debug, Clone)]
pub struct Lanczos {
    /// The Lanczos vectors.
    pub q: Mat<f64>,
    /// The tridiagonal `T = Qᵀ A Q`.
    pub tridiagonal: SymTridiagonal,
    /// Why the process stopped.
    pub status: LanczosStatus,
    /// `‖b‖₂` of the start vector.
    pub start_norm: f64,
}

impl Lanczos {
    /// Number of Lanczos vectors `k`.
    pub fn steps(&self) -> usize {
        self.q.ncols()
    }

    /// The Lanczos vectors as a view.
    pub fn basis(&self) -> MatRef<'_, f64> {
        self.q.as_ref()
    }
}

/// Runs `k` steps of Lanczos on a symmetric operator from the start vector `b`, with full
/// re-orthogonalization (classical Gram–Schmidt after the recurrence, repeated when the
/// DGKS test asks) of every new vector against all previous ones: [`LanczosSolver`] run to the end.
///
/// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `A` is
/// not square or `b` has the wrong length, a non-finite error if `b` holds NaN or infinity,
/// and [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for a zero
/// start vector or a bad tolerance.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::{lanczos, LanczosOptions};
///
/// let a = Mat::from_fn(6, 6, |i, j| if i == j { 2.0 + i as f64 } else { 0.1 });
/// let b = Col::from_fn(6, |i| 1.0 + i as f64);
/// let opts = LanczosOptions { max_iterations: 6, ..Default::default() };
/// let lz = lanczos(&DenseOperator::new(a.clone()), b.as_ref(), &opts)?;
/// let t = lz.q.transpose() * &a * &lz.q;
/// assert!((&t - lz.tridiagonal.to_dense()).norm_max() < 1e-12);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub fn lanczos(
    op: &dyn LinearOperator,
    start: ColRef<'_, f64>,
    options: &LanczosOptions,
) -> Result<Lanczos> {
    let mut solver = LanczosSolver::new(op, start, options)?;
    while solver.step()?.is_some() {}
    solver.into_lanczos()
}
