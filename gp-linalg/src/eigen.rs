//! Symmetric eigendecomposition (faer's self-adjoint EVD) with typed errors.

use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::linalg::matmul::matmul;
use faer::linalg::solvers::SelfAdjointEigen;
use faer::{Accum, Col, Mat, MatRef, Side};

use crate::error::{LinalgError, Result};
use crate::par::{parallelism, parallelism_for};
use crate::simd::clear_upper_vector_state;
use crate::validate::{check_finite_mat, check_square};

/// faer's `self_adjoint_eigen` of the lower triangle of `a` (eigenvalues in nondecreasing
/// order; faer's own parallelism, so the same bits as calling faer directly), with a typed
/// error, followed by [`clear_upper_vector_state`]: faer 0.24's eigensolver returns with the
/// upper vector state dirty, which makes every later glibc `exp` stall on Intel CPUs. Call
/// faer's eigensolvers only through this function or [`SymmetricEigen::new`].
///
/// Errors with [`LinalgError::EigenNoConvergence`] (naming the number of rows of `a`).
pub fn self_adjoint_eigen(a: MatRef<'_, f64>) -> Result<SelfAdjointEigen<f64>> {
    let evd = a
        .self_adjoint_eigen(Side::Lower)
        .map_err(|_| LinalgError::EigenNoConvergence { n: a.nrows() });
    clear_upper_vector_state();
    evd
}

/// The eigendecomposition `A = V diag(λ) Vᵀ` of a symmetric matrix, eigenvalues in
/// ascending order and orthonormal eigenvectors in the columns of `V`.
///
/// ```
/// use faer::mat;
/// use gp_linalg::SymmetricEigen;
///
/// let a = mat![[2.0, 1.0], [1.0, 2.0]];
/// let eig = SymmetricEigen::new(a.as_ref())?;
/// assert!((eig.values[0] - 1.0).abs() < 1e-14 && (eig.values[1] - 3.0).abs() < 1e-14);
/// assert!((&eig.reconstruct() - &a).norm_max() < 1e-14);
/// assert!((eig.log_det()? - 3f64.ln()).abs() < 1e-14);
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SymmetricEigen {
    /// Eigenvalues in ascending order.
    pub values: Col<f64>,
    /// Orthonormal eigenvectors, column `j` belonging to `values[j]`.
    pub vectors: Mat<f64>,
}

impl SymmetricEigen {
    /// Decomposes a symmetric matrix; only its lower triangle is read.
    ///
    /// Errors with [`LinalgError::NotSquare`], [`LinalgError::NonFinite`] and
    /// [`LinalgError::EigenNoConvergence`].
    pub fn new(a: MatRef<'_, f64>) -> Result<Self> {
        let n = check_square(a, "symmetric eigendecomposition")?;
        check_finite_mat(a, "the matrix to decompose")?;
        if n == 0 {
            // faer's workspace computation does not support the empty matrix.
            return Ok(Self {
                values: Col::zeros(0),
                vectors: Mat::zeros(0, 0),
            });
        }
        let par = parallelism_for(9.0 * (n as f64).powi(3));
        let mut mem = MemBuffer::new(self_adjoint_evd_scratch::<f64>(
            n,
            ComputeEigenvectors::Yes,
            par,
            Default::default(),
        ));
        let mut s = Diag::<f64>::zeros(n);
        let mut vectors = Mat::<f64>::zeros(n, n);
        let result = self_adjoint_evd(
            a,
            s.as_mut(),
            Some(vectors.as_mut()),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|_| LinalgError::EigenNoConvergence { n });
        clear_upper_vector_state();
        result?;
        let raw = s.column_vector();
        // Entries near f64::MAX can overflow inside the algorithm.
        if (0..n).any(|i| !raw[i].is_finite()) || !vectors.is_all_finite() {
            return Err(LinalgError::EigenNoConvergence { n });
        }
        // faer returns ascending eigenvalues; sort anyway so the documented order holds.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| raw[i].total_cmp(&raw[j]));
        if order.iter().enumerate().all(|(k, &i)| k == i) {
            return Ok(Self {
                values: raw.to_owned(),
                vectors,
            });
        }
        Ok(Self {
            values: Col::from_fn(n, |k| raw[order[k]]),
            vectors: Mat::from_fn(n, n, |i, k| vectors[(i, order[k])]),
        })
    }

    /// Order of the matrix.
    pub fn dim(&self) -> usize {
        self.values.nrows()
    }

    /// `V diag(λ) Vᵀ`: the matrix that was decomposed (up to rounding).
    pub fn reconstruct(&self) -> Mat<f64> {
        let n = self.dim();
        let scaled = Mat::from_fn(n, n, |i, j| self.vectors[(i, j)] * self.values[j]);
        let mut out = Mat::zeros(n, n);
        matmul(
            out.as_mut(),
            Accum::Replace,
            scaled.as_ref(),
            self.vectors.transpose(),
            1.0,
            parallelism(),
        );
        out
    }

    /// `log det A = Σ log λᵢ`.
    ///
    /// Errors with [`LinalgError::NotPositive`] (naming the smallest eigenvalue) if an
    /// eigenvalue is zero or negative.
    pub fn log_det(&self) -> Result<f64> {
        if let Some(index) = (0..self.dim()).find(|&i| self.values[i] <= 0.0) {
            return Err(LinalgError::NotPositive {
                context: "SymmetricEigen::log_det (eigenvalues)",
                index,
                value: self.values[index],
            });
        }
        Ok((0..self.dim()).map(|i| self.values[i].ln()).sum())
    }
}
