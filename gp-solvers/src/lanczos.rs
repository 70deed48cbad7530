//! The Lanczos process with full re-orthogonalization: `A Q_k ≈ Q_k T_k` with orthonormal
//! `Q_k` and symmetric tridiagonal `T_k = Q_kᵀ A Q_k`.

use faer::linalg::matmul::matmul;
use faer::{Accum, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::LinearOperator;

use crate::cg::kernels::{dot, norm2};
use crate::error::{check_shape, invalid, Result};
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
    /// ([`FlaSolver`](crate::factorized::FlaSolver),
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
/// re-orthogonalization (classical Gram–Schmidt, twice) of every new vector against all
/// previous ones.
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
    let n = op.nrows();
    check_shape(op.shape(), (n, n), "lanczos (the operator must be square)")?;
    check_shape((start.nrows(), 1), (n, 1), "lanczos (start vector)")?;
    gp_linalg::validate::check_finite_col(start, "the Lanczos start vector")?;
    let tol = options.breakdown_tolerance;
    if !(tol.is_finite() && tol >= 0.0) {
        return Err(invalid(
            "breakdown_tolerance",
            format!("must be finite and non-negative, got {tol}"),
        ));
    }
    let start: Vec<f64> = (0..n).map(|i| start[i]).collect();
    let start_norm = norm2(&start);
    if start_norm == 0.0 {
        return Err(invalid("start", "the Lanczos start vector is zero"));
    }
    let k_max = options.max_iterations.min(n);
    // Q is stored column-major, grown one column at a time.
    let mut q: Vec<f64> = Vec::with_capacity(n * k_max);
    q.extend(start.iter().map(|v| v / start_norm));
    let mut diagonal = Vec::new();
    let mut off_diagonal = Vec::new();
    let mut w = vec![0.0; n];
    let mut coeffs = vec![0.0; k_max];
    let par = gp_linalg::parallelism();
    let mut status = LanczosStatus::MaxIterations;
    for j in 0..k_max {
        let qj = &q[j * n..(j + 1) * n];
        op.matvec(ColRef::from_slice(qj), ColMut::from_slice_mut(&mut w));
        let wnorm = norm2(&w);
        if !wnorm.is_finite() {
            status = LanczosStatus::NonFinite;
            // Drop q_j: T has no entry for it.
            break;
        }
        diagonal.push(dot(qj, &w));
        if j + 1 == k_max {
            break;
        }
        // w −= Q Qᵀ w, twice (this also removes α q_j and β q_{j−1}).
        let qm = MatRef::from_column_major_slice(&q, n, j + 1);
        let c = &mut coeffs[..j + 1];
        for _ in 0..2 {
            matmul(
                MatMut::from_column_major_slice_mut(c, j + 1, 1),
                Accum::Replace,
                qm.transpose(),
                MatRef::from_column_major_slice(&w, n, 1),
                1.0,
                par,
            );
            matmul(
                MatMut::from_column_major_slice_mut(&mut w, n, 1),
                Accum::Add,
                qm,
                MatRef::from_column_major_slice(c, j + 1, 1),
                -1.0,
                par,
            );
        }
        let beta = norm2(&w);
        if beta <= tol * wnorm.max(f64::MIN_POSITIVE) {
            status = LanczosStatus::InvariantSubspace;
            break;
        }
        off_diagonal.push(beta);
        q.extend(w.iter().map(|v| v / beta));
    }
    let k = diagonal.len();
    // A breakdown at step k (non-finite product) leaves the β that led to the dropped q_k.
    off_diagonal.truncate(k.saturating_sub(1));
    q.truncate(n * k);
    let qmat = MatRef::from_column_major_slice(&q, n, k).to_owned();
    Ok(Lanczos {
        q: qmat,
        tridiagonal: SymTridiagonal::new(diagonal, off_diagonal)?,
        status,
        start_norm,
    })
}
