//! The step interface of Lanczos with full re-orthogonalization: one Lanczos vector per
//! step, with `α_j`, `β_j` and the basis exposed after each step. [`lanczos`](crate::lanczos())
//! runs it to the end.
//!
//! KMCG on a large grid uses it as its Krylov basis with `N × P` storage only (`Q`, no
//! `Z = A Q`): `QᵀAQ = T` and `(AQ)ᵀ(AQ) = T² + β_j² e_j e_jᵀ` follow from the coefficients.

use faer::{ColMut, ColRef, MatRef};
use gp_linalg::projection::project_out;
use gp_linalg::LinearOperator;

use crate::cg::kernels::{axpy, dot, norm2};
use crate::error::{check_shape, invalid, Result};
use crate::lanczos::{Lanczos, LanczosOptions, LanczosStatus};
use crate::tridiagonal::SymTridiagonal;

/// What one call of [`LanczosSolver::step`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LanczosIteration {
    /// The 0-based index `j` of the vector just added (`T` now has `j + 1` rows).
    pub index: usize,
    /// The diagonal entry `α_j = q_jᵀ A q_j`.
    pub alpha: f64,
    /// `β_j = ‖(I − Q Qᵀ) A q_j‖₂`, the entry `T[j + 1, j]` of the next (possibly never
    /// built) row: computed at every step, also the last.
    pub beta: f64,
    /// The status after the step ([`LanczosStatus::Running`] if the process goes on).
    pub status: LanczosStatus,
}

/// Lanczos with full re-orthogonalization (the three-term recurrence, then classical
/// Gram–Schmidt once, twice when the first pass removed much: DGKS) on a symmetric
/// operator, one vector at a time: `A Q_j = Q_j T_j + β_j q_{j+1} e_jᵀ` with orthonormal
/// `Q_j` (`q₁ = b/‖b‖`) and `T_j = Q_jᵀ A Q_j` tridiagonal.
///
/// After each [`step`](Self::step): the basis `Q_j` ([`basis`](Self::basis)), the latest
/// `α_j` and `β_j` ([`alpha`](Self::alpha), [`beta`](Self::beta)), all of them
/// ([`alphas`](Self::alphas), [`betas`](Self::betas)), `T_j`
/// ([`tridiagonal`](Self::tridiagonal)) and the status.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::{LanczosOptions, LanczosSolver};
///
/// let a = Mat::from_fn(6, 6, |i, j| if i == j { 2.0 + i as f64 } else { 0.1 });
/// let op = DenseOperator::new(a.clone());
/// let b = Col::from_fn(6, |i| 1.0 + i as f64);
/// let mut lz = LanczosSolver::new(&op, b.as_ref(), &LanczosOptions::default())?;
/// lz.step()?;
/// lz.step()?;
/// let q = lz.basis();
/// let t = q.transpose() * &a * q;
/// assert!((&t - lz.tridiagonal()?.to_dense()).norm_max() < 1e-12);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct LanczosSolver<'a> {
    op: &'a dyn LinearOperator,
    n: usize,
    max_steps: usize,
    tolerance: f64,
    start_norm: f64,
    /// `Q` column-major; while running it also holds the next vector `q_{j+1}`.
    q: Vec<f64>,
    alphas: Vec<f64>,
    betas: Vec<f64>,
    w: Vec<f64>,
    coeffs: Vec<f64>,
    status: LanczosStatus,
}

impl std::fmt::Debug for LanczosSolver<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanczosSolver")
            .field("n", &self.n)
            .field("steps", &self.steps())
            .field("status", &self.status)
            .finish()
    }
}

impl<'a> LanczosSolver<'a> {
    /// Sets up Lanczos from the start vector `b` (`q₁ = b/‖b‖`).
    ///
    /// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `A`
    /// is not square or `b` has the wrong length, a non-finite error if `b` holds NaN or
    /// infinity, and [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions)
    /// for a zero start vector or a bad tolerance.
    pub fn new(
        op: &'a dyn LinearOperator,
        start: ColRef<'_, f64>,
        options: &LanczosOptions,
    ) -> Result<Self> {
        let n = op.nrows();
        check_shape(op.shape(), (n, n), "lanczos (the operator must be square)")?;
        check_shape((start.nrows(), 1), (n, 1), "lanczos (start vector)")?;
        gp_linalg::validate::check_finite_col(start, "the Lanczos start vector")?;
        let tolerance = options.breakdown_tolerance;
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Err(invalid(
                "breakdown_tolerance",
                format!("must be finite and non-negative, got {tolerance}"),
            ));
        }
        let start: Vec<f64> = (0..n).map(|i| start[i]).collect();
        let start_norm = norm2(&start);
        if start_norm == 0.0 {
            return Err(invalid("start", "the Lanczos start vector is zero"));
        }
        let max_steps = options.max_iterations.min(n);
        let mut q = Vec::with_capacity(n * (max_steps + 1));
        let status = if max_steps == 0 {
            LanczosStatus::MaxIterations
        } else {
            q.extend(start.iter().map(|v| v / start_norm));
            LanczosStatus::Running
        };
        Ok(Self {
            op,
            n,
            max_steps,
            tolerance,
            start_norm,
            q,
            alphas: Vec::new(),
            betas: Vec::new(),
            w: vec![0.0; n],
            coeffs: Vec::with_capacity(max_steps),
            status,
        })
    }

    /// Adds the Lanczos vector `q_j` to the basis: `w = A q_j`, `α_j = q_jᵀw`, `w` made
    /// orthogonal to all of `Q` (recurrence, then Gram–Schmidt once or twice),
    /// `β_j = ‖w‖`, `q_{j+1} = w/β_j`. Returns `Ok(None)` (nothing changes) once the
    /// process has stopped.
    ///
    /// A non-finite `A q_j` drops `q_j` and stops with [`LanczosStatus::NonFinite`]; a
    /// `β_j ≤ breakdown_tolerance · ‖A q_j‖` stops with
    /// [`LanczosStatus::InvariantSubspace`] (after `max_iterations` vectors the status is
    /// [`LanczosStatus::MaxIterations`] whatever `β_j`).
    pub fn step(&mut self) -> Result<Option<LanczosIteration>> {
        if self.status != LanczosStatus::Running {
            return Ok(None);
        }
        let n = self.n;
        let j = self.steps();
        let qj = &self.q[j * n..(j + 1) * n];
        self.op
            .matvec(ColRef::from_slice(qj), ColMut::from_slice_mut(&mut self.w));
        let wnorm = norm2(&self.w);
        if !wnorm.is_finite() {
            // Drop q_j: T has no entry for it.
            self.q.truncate(j * n);
            self.status = LanczosStatus::NonFinite;
            return Ok(None);
        }
        let alpha = dot(qj, &self.w);
        // The three-term recurrence first (O(N)): what is left of w along Q is then at
        // rounding level, so one classical Gram–Schmidt pass over Q removes it, and a
        // second pass runs only if the first removed a large part of w (the DGKS criterion
        // ‖w'‖ < ‖w‖/√2, "twice is enough"). At large N and j the passes over Q, not the
        // flops, cost: this halves them against always re-orthogonalising twice.
        axpy(-alpha, qj, &mut self.w);
        if j > 0 {
            let beta_prev = self.betas[j - 1];
            let q_prev = &self.q[(j - 1) * n..j * n];
            axpy(-beta_prev, q_prev, &mut self.w);
        }
        let qm = MatRef::from_column_major_slice(&self.q, n, j + 1);
        let mut before = norm2(&self.w);
        for _ in 0..2 {
            project_out(qm, qm, &mut self.w, &mut self.coeffs)?;
            let after = norm2(&self.w);
            if after >= before * std::f64::consts::FRAC_1_SQRT_2 {
                break;
            }
            before = after;
        }
        let beta = norm2(&self.w);
        self.alphas.push(alpha);
        self.betas.push(beta);
        if j + 1 == self.max_steps {
            self.status = LanczosStatus::MaxIterations;
        } else if beta <= self.tolerance * wnorm.max(f64::MIN_POSITIVE) {
            self.status = LanczosStatus::InvariantSubspace;
        } else if !(alpha.is_finite() && beta.is_finite()) {
            self.status = LanczosStatus::NonFinite;
        } else {
            let inv = 1.0 / beta;
            self.q.extend(self.w.iter().map(|v| v * inv));
        }
        Ok(Some(LanczosIteration {
            index: j,
            alpha,
            beta,
            status: self.status,
        }))
    }

    /// Order `n` of the operator.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Number of Lanczos vectors in the basis.
    pub fn steps(&self) -> usize {
        self.alphas.len()
    }

    /// The basis `Q_j` (`n × j`, orthonormal columns).
    pub fn basis(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.q[..self.n * self.steps()], self.n, self.steps())
    }

    /// The next vector `q_{j+1} = w/β_j` while the process runs (`None` once stopped).
    pub fn next_vector(&self) -> Option<ColRef<'_, f64>> {
        let (n, j) = (self.n, self.steps());
        (self.status == LanczosStatus::Running && self.q.len() >= (j + 1) * n)
            .then(|| ColRef::from_slice(&self.q[j * n..(j + 1) * n]))
    }

    /// The latest diagonal entry `α_j` (`None` before the first step).
    pub fn alpha(&self) -> Option<f64> {
        self.alphas.last().copied()
    }

    /// The latest `β_j`, the entry `T[j + 1, j]` towards the next vector (`None` before the
    /// first step).
    pub fn beta(&self) -> Option<f64> {
        self.betas.last().copied()
    }

    /// All diagonal entries `α_1 … α_j`.
    pub fn alphas(&self) -> &[f64] {
        &self.alphas
    }

    /// All `β_1 … β_j` (one per step: the last one is not part of `T_j`).
    pub fn betas(&self) -> &[f64] {
        &self.betas
    }

    /// `T_j = Q_jᵀ A Q_j` (`j × j`). Errors only if an entry is non-finite.
    pub fn tridiagonal(&self) -> Result<SymTridiagonal> {
        let j = self.steps();
        SymTridiagonal::new(
            self.alphas.clone(),
            self.betas[..j.saturating_sub(1)].to_vec(),
        )
    }

    /// `‖b‖₂` of the start vector.
    pub fn start_norm(&self) -> f64 {
        self.start_norm
    }

    /// The status ([`LanczosStatus::Running`] while steps can be taken).
    pub fn status(&self) -> LanczosStatus {
        self.status
    }

    /// The basis, tridiagonal and status as a [`Lanczos`] (the next vector, if any, is
    /// dropped).
    pub fn into_lanczos(mut self) -> Result<Lanczos> {
        let tridiagonal = self.tridiagonal()?;
        let k = self.steps();
        self.q.truncate(self.n * k);
        let q = MatRef::from_column_major_slice(&self.q, self.n, k).to_owned();
        Ok(Lanczos {
            q,
            tridiagonal,
            status: self.status,
            start_norm: self.start_norm,
        })
    }
}
