//! `c · A`: an operator times a scalar.

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};

use crate::error::{LinalgError, Result};
use crate::operator::{LinearOperator, SharedOperator};
use crate::vector::scale_col;

/// The operator `c · A`.
///
/// ```
/// use std::sync::Arc;
/// use faer::{col, Mat};
/// use gp_linalg::{DenseOperator, LinearOperator, ScaledOperator};
///
/// let a = DenseOperator::new(Mat::identity(2, 2));
/// let op = ScaledOperator::new(Arc::new(a), 3.0)?;
/// assert_eq!(op.apply(col![1.0, 2.0].as_ref())?[1], 6.0);
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Clone)]
pub struct ScaledOperator {
    op: SharedOperator,
    c: f64,
}

impl std::fmt::Debug for ScaledOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScaledOperator")
            .field("shape", &self.op.shape())
            .field("c", &self.c)
            .finish()
    }
}

impl ScaledOperator {
    /// `c · op`. Errors with [`LinalgError::InvalidArgument`] if `c` is not finite.
    pub fn new(op: SharedOperator, c: f64) -> Result<Self> {
        if !c.is_finite() {
            return Err(LinalgError::InvalidArgument {
                name: "c",
                reason: format!("the scale factor must be finite, got {c}"),
            });
        }
        Ok(Self { op, c })
    }

    /// The scale factor `c`.
    pub fn factor(&self) -> f64 {
        self.c
    }

    /// The scaled operator `A`.
    pub fn inner(&self) -> &SharedOperator {
        &self.op
    }
}

impl LinearOperator for ScaledOperator {
    fn nrows(&self) -> usize {
        self.op.nrows()
    }
    fn ncols(&self) -> usize {
        self.op.ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        self.op.matvec(x, out.rb_mut());
        scale_col(self.c, out);
    }
    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        self.op.matmat(x, out.rb_mut());
        for j in 0..out.ncols() {
            scale_col(self.c, out.rb_mut().col_mut(j));
        }
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        self.op
            .diagonal()
            .map(|d| Col::from_fn(d.nrows(), |i| self.c * d[i]))
    }
    fn to_dense(&self) -> Mat<f64> {
        let a = self.op.to_dense();
        Mat::from_fn(a.nrows(), a.ncols(), |i, j| self.c * a[(i, j)])
    }
}
