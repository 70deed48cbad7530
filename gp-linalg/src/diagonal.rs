//! A diagonal matrix as a [`LinearOperator`], with its inverse and log-determinant.

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};

use crate::error::{LinalgError, Result};
use crate::operator::LinearOperator;
use crate::validate::{check_finite_col, check_positive_col, check_shape};

/// The square matrix `diag(d)`.
///
/// ```
/// use faer::col;
/// use gp_linalg::{DiagonalOperator, LinearOperator};
///
/// let d = DiagonalOperator::from_vec(vec![2.0, 4.0])?;
/// assert_eq!(d.apply(col![1.0, 1.0].as_ref())?[1], 4.0);
/// assert_eq!(d.solve(col![1.0, 1.0].as_ref())?[1], 0.25);
/// assert!((d.log_det()? - 8f64.ln()).abs() < 1e-15);
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DiagonalOperator {
    d: Col<f64>,
}

impl DiagonalOperator {
    /// Wraps the diagonal `d`. Errors with [`LinalgError::NonFinite`] if an entry is NaN or
    /// infinite.
    pub fn new(d: Col<f64>) -> Result<Self> {
        check_finite_col(d.as_ref(), "the diagonal of a DiagonalOperator")?;
        Ok(Self { d })
    }

    /// Wraps the diagonal given as a `Vec`. Errors as [`new`](Self::new).
    pub fn from_vec(d: Vec<f64>) -> Result<Self> {
        Self::new(Col::from_fn(d.len(), |i| d[i]))
    }

    /// `value · I` of order `n`. Errors if `value` is not finite.
    pub fn constant(n: usize, value: f64) -> Result<Self> {
        Self::new(Col::full(n, value))
    }

    /// Order of the matrix.
    pub fn dim(&self) -> usize {
        self.d.nrows()
    }

    /// The diagonal entries.
    pub fn values(&self) -> ColRef<'_, f64> {
        self.d.as_ref()
    }

    /// Returns the diagonal entries.
    pub fn into_inner(self) -> Col<f64> {
        self.d
    }

    /// Checks that no entry is zero, so the matrix can be inverted.
    fn check_invertible(&self, context: &'static str) -> Result<()> {
        match (0..self.dim()).find(|&i| self.d[i] == 0.0) {
            Some(index) => Err(LinalgError::Singular {
                context,
                index,
                value: self.d[index],
            }),
            None => Ok(()),
        }
    }

    /// Checks that every entry is strictly positive (the matrix is SPD).
    pub fn check_positive(&self) -> Result<()> {
        check_positive_col(self.d.as_ref(), "DiagonalOperator (SPD required)")
    }

    /// `diag(d)⁻¹ b`. Errors with [`LinalgError::ShapeMismatch`] or, if an entry is zero,
    /// [`LinalgError::Singular`].
    pub fn solve(&self, b: ColRef<'_, f64>) -> Result<Col<f64>> {
        let mut x = b.to_owned();
        self.solve_in_place(x.as_mat_mut())?;
        Ok(x)
    }

    /// `diag(d)⁻¹ B` for a block of columns. Errors as [`solve`](Self::solve).
    pub fn solve_block(&self, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut x = b.to_owned();
        self.solve_in_place(x.as_mut())?;
        Ok(x)
    }

    /// Overwrites `b` with `diag(d)⁻¹ b`. Errors as [`solve`](Self::solve).
    pub fn solve_in_place(&self, mut b: MatMut<'_, f64>) -> Result<()> {
        check_shape(
            (b.nrows(), b.ncols()),
            (self.dim(), b.ncols()),
            "DiagonalOperator::solve",
        )?;
        self.check_invertible("DiagonalOperator::solve")?;
        for j in 0..b.ncols() {
            let mut col = b.rb_mut().col_mut(j);
            for i in 0..self.dim() {
                col[i] /= self.d[i];
            }
        }
        Ok(())
    }

    /// The inverse `diag(1/d)`. Errors with [`LinalgError::Singular`] if an entry is zero,
    /// or [`LinalgError::NonFinite`] if an inverse overflows.
    pub fn inverse(&self) -> Result<Self> {
        self.check_invertible("DiagonalOperator::inverse")?;
        Self::new(Col::from_fn(self.dim(), |i| 1.0 / self.d[i]))
    }

    /// `log det diag(d) = Σ log dᵢ` for a positive definite diagonal.
    ///
    /// Errors with [`LinalgError::NotPositive`] if an entry is zero or negative.
    pub fn log_det(&self) -> Result<f64> {
        self.check_positive()?;
        Ok((0..self.dim()).map(|i| self.d[i].ln()).sum())
    }

    /// Writes `out = diag(d) x` without shape checks (callers checked them).
    pub(crate) fn mul_add_into(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        for j in 0..x.ncols() {
            let xj = x.col(j);
            let mut oj = out.rb_mut().col_mut(j);
            for i in 0..self.dim() {
                oj[i] += self.d[i] * xj[i];
            }
        }
    }
}

impl LinearOperator for DiagonalOperator {
    fn nrows(&self) -> usize {
        self.dim()
    }
    fn ncols(&self) -> usize {
        self.dim()
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        for i in 0..self.dim() {
            out[i] = self.d[i] * x[i];
        }
    }
    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        for j in 0..x.ncols() {
            self.matvec(x.col(j), out.rb_mut().col_mut(j));
        }
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        Some(self.d.clone())
    }
    fn to_dense(&self) -> Mat<f64> {
        let n = self.dim();
        Mat::from_fn(n, n, |i, j| if i == j { self.d[i] } else { 0.0 })
    }
}
