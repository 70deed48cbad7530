//! `A + σ²I` and `A + D`: an operator with an added diagonal.

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};

use crate::diagonal::DiagonalOperator;
use crate::error::{LinalgError, Result};
use crate::operator::{LinearOperator, SharedOperator};
use crate::validate::check_shape;

/// What is added to the diagonal.
#[derive(Debug, Clone)]
enum Shift {
    Scalar(f64),
    Diagonal(DiagonalOperator),
}

/// The square operator `A + σ²I` (for example a kernel matrix plus noise) or `A + D` for a
/// diagonal `D` (heteroscedastic noise).
///
/// ```
/// use std::sync::Arc;
/// use faer::{col, Mat};
/// use gp_linalg::{DenseOperator, LinearOperator, ShiftedOperator};
///
/// let k = DenseOperator::new(Mat::from_fn(2, 2, |_, _| 1.0));
/// let op = ShiftedOperator::new(Arc::new(k), 0.5)?;
/// let y = op.apply(col![1.0, 0.0].as_ref())?;
/// assert_eq!((y[0], y[1]), (1.5, 1.0));
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Clone)]
pub struct ShiftedOperator {
    op: SharedOperator,
    shift: Shift,
}

impl std::fmt::Debug for ShiftedOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShiftedOperator")
            .field("shape", &self.op.shape())
            .field("shift", &self.shift)
            .finish()
    }
}

fn check_square_op(op: &SharedOperator) -> Result<usize> {
    if op.nrows() == op.ncols() {
        Ok(op.nrows())
    } else {
        Err(LinalgError::NotSquare {
            context: "ShiftedOperator (a diagonal shift)",
            nrows: op.nrows(),
            ncols: op.ncols(),
        })
    }
}

impl ShiftedOperator {
    /// `op + shift · I`.
    ///
    /// Errors with [`LinalgError::NotSquare`] if `op` is not square and
    /// [`LinalgError::InvalidArgument`] if `shift` is not finite. Any finite shift is
    /// accepted (a noise variance is positive, a spectral shift may be negative).
    pub fn new(op: SharedOperator, shift: f64) -> Result<Self> {
        check_square_op(&op)?;
        if !shift.is_finite() {
            return Err(LinalgError::InvalidArgument {
                name: "shift",
                reason: format!("the diagonal shift must be finite, got {shift}"),
            });
        }
        Ok(Self {
            op,
            shift: Shift::Scalar(shift),
        })
    }

    /// `op + D`.
    ///
    /// Errors with [`LinalgError::NotSquare`] if `op` is not square and
    /// [`LinalgError::ShapeMismatch`] if `d` does not have the order of `op`.
    pub fn with_diagonal(op: SharedOperator, d: DiagonalOperator) -> Result<Self> {
        let n = check_square_op(&op)?;
        check_shape((d.dim(), d.dim()), (n, n), "ShiftedOperator::with_diagonal")?;
        Ok(Self {
            op,
            shift: Shift::Diagonal(d),
        })
    }

    /// The operator `A` that is shifted.
    pub fn inner(&self) -> &SharedOperator {
        &self.op
    }

    /// The added diagonal as a column of length `n`.
    pub fn shift_diagonal(&self) -> Col<f64> {
        match &self.shift {
            Shift::Scalar(s) => Col::full(self.op.nrows(), *s),
            Shift::Diagonal(d) => d.values().to_owned(),
        }
    }

    /// `out += shift · x` for a block.
    fn add_shift(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        match &self.shift {
            Shift::Scalar(s) => {
                for j in 0..x.ncols() {
                    for i in 0..x.nrows() {
                        out[(i, j)] += s * x[(i, j)];
                    }
                }
            }
            Shift::Diagonal(d) => d.mul_add_into(x, out.rb_mut()),
        }
    }
}

impl LinearOperator for ShiftedOperator {
    fn nrows(&self) -> usize {
        self.op.nrows()
    }
    fn ncols(&self) -> usize {
        self.op.ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        self.op.matvec(x, out.rb_mut());
        self.add_shift(x.as_mat(), out.as_mat_mut());
    }
    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        self.op.matmat(x, out.rb_mut());
        self.add_shift(x, out);
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        let d = self.op.diagonal()?;
        let s = self.shift_diagonal();
        if d.nrows() != s.nrows() {
            return None;
        }
        Some(Col::from_fn(d.nrows(), |i| d[i] + s[i]))
    }
    fn to_dense(&self) -> Mat<f64> {
        let mut a = self.op.to_dense();
        let s = self.shift_diagonal();
        for i in 0..s.nrows() {
            a[(i, i)] += s[i];
        }
        a
    }
}
