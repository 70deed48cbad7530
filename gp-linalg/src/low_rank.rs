//! Low-rank operators `U Uᵀ` and `U Uᵀ + D` with a Woodbury solve and a determinant-lemma
//! log-determinant.

use faer::linalg::matmul::matmul;
use faer::reborrow::ReborrowMut;
use faer::{Accum, Col, ColMut, ColRef, Mat, MatMut, MatRef};

use crate::cholesky::{Cholesky, JitterLadder};
use crate::diagonal::DiagonalOperator;
use crate::error::{LinalgError, Result};
use crate::operator::LinearOperator;
use crate::par::parallelism;
use crate::validate::{check_finite_mat, check_shape};

/// `out = U Uᵀ X` (with `Accum::Replace` or `Accum::Add`), through a `k×m` temporary.
fn u_ut_times(u: MatRef<'_, f64>, x: MatRef<'_, f64>, out: MatMut<'_, f64>, accum: Accum) {
    let par = parallelism();
    let mut t = Mat::<f64>::zeros(u.ncols(), x.ncols());
    matmul(t.as_mut(), Accum::Replace, u.transpose(), x, 1.0, par);
    matmul(out, accum, u, t.as_ref(), 1.0, par);
}

/// Squared Euclidean norms of the rows of `u`: the diagonal of `U Uᵀ`.
fn row_norms_sq(u: MatRef<'_, f64>) -> Col<f64> {
    let mut d = Col::<f64>::zeros(u.nrows());
    for j in 0..u.ncols() {
        let c = u.col(j);
        for i in 0..u.nrows() {
            d[i] += c[i] * c[i];
        }
    }
    d
}

/// The symmetric positive semi-definite operator `U Uᵀ` for an `n×k` factor `U`.
///
/// Products cost `O(nk)` per column and never form the `n×n` matrix.
///
/// ```
/// use faer::{col, mat};
/// use gp_linalg::{LinearOperator, LowRankOperator};
///
/// let op = LowRankOperator::new(mat![[1.0], [2.0]])?; // [[1, 2], [2, 4]]
/// let y = op.apply(col![1.0, 1.0].as_ref())?;
/// assert_eq!((y[0], y[1]), (3.0, 6.0));
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LowRankOperator {
    u: Mat<f64>,
}

impl LowRankOperator {
    /// Wraps the factor `U` (`n×k`). Errors with [`LinalgError::NonFinite`] if an entry is
    /// NaN or infinite.
    pub fn new(u: Mat<f64>) -> Result<Self> {
        check_finite_mat(u.as_ref(), "the low-rank factor U")?;
        Ok(Self { u })
    }

    /// The factor `U`.
    pub fn factor(&self) -> MatRef<'_, f64> {
        self.u.as_ref()
    }

    /// Order `n` of the operator.
    pub fn dim(&self) -> usize {
        self.u.nrows()
    }

    /// Number of columns `k` of `U` (an upper bound on the rank).
    pub fn rank(&self) -> usize {
        self.u.ncols()
    }
}

impl LinearOperator for LowRankOperator {
    fn nrows(&self) -> usize {
        self.dim()
    }
    fn ncols(&self) -> usize {
        self.dim()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        u_ut_times(
            self.u.as_ref(),
            x.as_mat(),
            out.as_mat_mut(),
            Accum::Replace,
        );
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        u_ut_times(self.u.as_ref(), x, out, Accum::Replace);
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        Some(row_norms_sq(self.u.as_ref()))
    }
    fn to_dense(&self) -> Mat<f64> {
        let n = self.dim();
        let mut out = Mat::zeros(n, n);
        matmul(
            out.as_mut(),
            Accum::Replace,
            self.u.as_ref(),
            self.u.transpose(),
            1.0,
            parallelism(),
        );
        out
    }
}

/// The symmetric positive definite operator `U Uᵀ + D` for an `n×k` factor `U` and a
/// positive diagonal `D` (or `σ²I`), with a cheap inverse and log-determinant.
///
/// Construction forms and Cholesky-factors the `k×k` capacitance matrix
/// `C = I + Uᵀ D⁻¹ U` once, in `O(nk²)`. Afterwards
///
/// * [`solve`](Self::solve) uses the Woodbury identity
///   `(D + U Uᵀ)⁻¹ b = D⁻¹ b − D⁻¹ U C⁻¹ Uᵀ D⁻¹ b`, in `O(nk)` per right-hand side;
/// * [`log_det`](Self::log_det) uses the matrix determinant lemma
///   `log det(D + U Uᵀ) = log det D + log det C`, in `O(n + k)`.
///
/// This is the form of a pivoted-Cholesky preconditioner `L_k L_kᵀ + σ²I`.
///
/// ```
/// use faer::{col, mat};
/// use gp_linalg::{LinearOperator, LowRankPlusDiagonal};
///
/// // [[1, 2], [2, 4]] + I = [[2, 2], [2, 5]], determinant 6.
/// let op = LowRankPlusDiagonal::with_noise(mat![[1.0], [2.0]], 1.0)?;
/// assert!((op.log_det() - 6f64.ln()).abs() < 1e-14);
/// let b = col![1.0, 2.0];
/// let x = op.solve(b.as_ref())?;
/// let back = op.apply(x.as_ref())?;
/// assert!((&back - &b).norm_max() < 1e-14);
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LowRankPlusDiagonal {
    u: Mat<f64>,
    /// `D⁻¹ U`, so that a solve makes one pass over its right-hand sides besides the two
    /// thin products.
    u_over_d: Mat<f64>,
    d: DiagonalOperator,
    capacitance: Cholesky,
    log_det: f64,
}

impl LowRankPlusDiagonal {
    /// `U Uᵀ + D` for `U` (`n×k`) and a diagonal `D` of order `n`.
    ///
    /// Errors with [`LinalgError::NonFinite`] if `U` has a NaN or infinite entry,
    /// [`LinalgError::ShapeMismatch`] if `D` is not of order `n`,
    /// [`LinalgError::NotPositive`] if an entry of `D` is zero or negative, and
    /// [`LinalgError::NotPositiveDefinite`] or [`LinalgError::NonFinite`] if the capacitance
    /// matrix cannot be factored (only when `Uᵀ D⁻¹ U` overflows).
    pub fn new(u: Mat<f64>, d: DiagonalOperator) -> Result<Self> {
        check_finite_mat(u.as_ref(), "the low-rank factor U")?;
        check_shape(
            (d.dim(), 1),
            (u.nrows(), 1),
            "LowRankPlusDiagonal::new (order of D must equal the rows of U)",
        )?;
        d.check_positive()?;
        let (n, k) = (u.nrows(), u.ncols());
        // W = D^{-1/2} U, so that Uᵀ D⁻¹ U = Wᵀ W is formed symmetric by construction.
        let dv = d.values();
        let w = Mat::from_fn(n, k, |i, j| u[(i, j)] / dv[i].sqrt());
        let mut c = Mat::<f64>::identity(k, k);
        matmul(
            c.as_mut(),
            Accum::Add,
            w.transpose(),
            w.as_ref(),
            1.0,
            parallelism(),
        );
        // C ⪰ I, so it is positive definite and needs no jitter; a failure means overflow.
        let capacitance = Cholesky::with_jitter(c.as_ref(), &JitterLadder::none())?;
        let log_det = d.log_det()? + capacitance.log_det();
        let u_over_d = Mat::from_fn(n, k, |i, j| u[(i, j)] / dv[i]);
        Ok(Self {
            u,
            u_over_d,
            d,
            capacitance,
            log_det,
        })
    }

    /// `U Uᵀ + σ² I`. Errors as [`new`](Self::new), and with [`LinalgError::NotPositive`] if
    /// `sigma2` is not strictly positive or [`LinalgError::NonFinite`] if it is not finite.
    pub fn with_noise(u: Mat<f64>, sigma2: f64) -> Result<Self> {
        if sigma2.is_nan() || sigma2 <= 0.0 {
            return Err(LinalgError::NotPositive {
                context: "LowRankPlusDiagonal::with_noise (the noise variance σ²)",
                index: 0,
                value: sigma2,
            });
        }
        let d = DiagonalOperator::constant(u.nrows(), sigma2)?;
        Self::new(u, d)
    }

    /// The factor `U`.
    pub fn factor(&self) -> MatRef<'_, f64> {
        self.u.as_ref()
    }

    /// The diagonal `D`.
    pub fn diagonal_part(&self) -> &DiagonalOperator {
        &self.d
    }

    /// `D⁻¹ U` (`n×k`), the factor the Woodbury form
    /// `(U Uᵀ + D)⁻¹ = D⁻¹ − (D⁻¹U) C⁻¹ (D⁻¹U)ᵀ` applies on both sides.
    pub fn factor_over_diagonal(&self) -> MatRef<'_, f64> {
        self.u_over_d.as_ref()
    }

    /// The Cholesky factor of the capacitance matrix `C = I + Uᵀ D⁻¹ U`.
    pub fn capacitance(&self) -> &Cholesky {
        &self.capacitance
    }

    /// Order `n` of the operator.
    pub fn dim(&self) -> usize {
        self.u.nrows()
    }

    /// Number of columns `k` of `U`.
    pub fn rank(&self) -> usize {
        self.u.ncols()
    }

    /// `log det(U Uᵀ + D)`, by the matrix determinant lemma (computed at construction).
    pub fn log_det(&self) -> f64 {
        self.log_det
    }

    /// Overwrites `B` with `(U Uᵀ + D)⁻¹ B` (Woodbury, `O(nk)` per column).
    ///
    /// Errors with [`LinalgError::ShapeMismatch`] if `B` does not have `n` rows.
    pub fn solve_in_place(&self, mut b: MatMut<'_, f64>) -> Result<()> {
        check_shape(
            (b.nrows(), b.ncols()),
            (self.dim(), b.ncols()),
            "LowRankPlusDiagonal::solve",
        )?;
        let dv = self.d.values();
        for j in 0..b.ncols() {
            for (x, d) in b.rb_mut().col_mut(j).iter_mut().zip(dv.iter()) {
                *x /= d;
            }
        }
        self.finish_solve(b)
    }

    /// Writes `(U Uᵀ + D)⁻¹ B` into `out` (`B` is read once, no temporary of its size).
    ///
    /// Errors with [`LinalgError::ShapeMismatch`] if `B` does not have `n` rows or `out` has
    /// another shape than `B`.
    pub fn solve_into(&self, b: MatRef<'_, f64>, mut out: MatMut<'_, f64>) -> Result<()> {
        check_shape(
            (b.nrows(), b.ncols()),
            (self.dim(), b.ncols()),
            "LowRankPlusDiagonal::solve",
        )?;
        check_shape(out.shape(), b.shape(), "LowRankPlusDiagonal::solve (out)")?;
        let dv = self.d.values();
        for j in 0..b.ncols() {
            let (src, dst) = (b.col(j), out.rb_mut().col_mut(j));
            for ((x, r), d) in dst.iter_mut().zip(src.iter()).zip(dv.iter()) {
                *x = r / d;
            }
        }
        self.finish_solve(out)
    }

    /// `Y ← Y − (D⁻¹U) C⁻¹ Uᵀ Y` for `Y = D⁻¹B`: the Woodbury form
    /// `(U Uᵀ + D)⁻¹ = D⁻¹ − D⁻¹ U C⁻¹ Uᵀ D⁻¹`, `C = I + Uᵀ D⁻¹ U`.
    fn finish_solve(&self, mut y: MatMut<'_, f64>) -> Result<()> {
        let par = parallelism();
        let mut t = Mat::<f64>::zeros(self.rank(), y.ncols());
        matmul(
            t.as_mut(),
            Accum::Replace,
            self.u.transpose(),
            y.as_ref(),
            1.0,
            par,
        );
        self.capacitance.solve_in_place(t.as_mut())?;
        matmul(
            y.rb_mut(),
            Accum::Add,
            self.u_over_d.as_ref(),
            t.as_ref(),
            -1.0,
            par,
        );
        Ok(())
    }

    /// Returns `(U Uᵀ + D)⁻¹ B` for a block of right-hand sides. Errors as
    /// [`solve_in_place`](Self::solve_in_place).
    pub fn solve_block(&self, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut x = b.to_owned();
        self.solve_in_place(x.as_mut())?;
        Ok(x)
    }

    /// Returns `(U Uᵀ + D)⁻¹ b`. Errors as [`solve_in_place`](Self::solve_in_place).
    pub fn solve(&self, b: ColRef<'_, f64>) -> Result<Col<f64>> {
        let mut x = b.to_owned();
        self.solve_in_place(x.as_mat_mut())?;
        Ok(x)
    }
}

impl LinearOperator for LowRankPlusDiagonal {
    fn nrows(&self) -> usize {
        self.dim()
    }
    fn ncols(&self) -> usize {
        self.dim()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }
    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        let dv = self.d.values();
        for j in 0..x.ncols() {
            let xj = x.col(j);
            let mut oj = out.rb_mut().col_mut(j);
            for i in 0..self.dim() {
                oj[i] = dv[i] * xj[i];
            }
        }
        u_ut_times(self.u.as_ref(), x, out, Accum::Add);
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        let mut d = row_norms_sq(self.u.as_ref());
        let dv = self.d.values();
        for i in 0..self.dim() {
            d[i] += dv[i];
        }
        Some(d)
    }
    fn to_dense(&self) -> Mat<f64> {
        let mut out = self.d.to_dense();
        matmul(
            out.as_mut(),
            Accum::Add,
            self.u.as_ref(),
            self.u.transpose(),
            1.0,
            parallelism(),
        );
        out
    }
}
