//! A dense matrix as a [`LinearOperator`].

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColMut, ColRef, Mat, MatMut, MatRef};

use crate::operator::LinearOperator;
use crate::par::{parallelism, parallelism_for};
use crate::transpose::TransposeOperator;

/// A dense faer matrix seen as an operator; products go through faer's gemm with the
/// workspace [`parallelism`] setting.
#[derive(Debug, Clone)]
pub struct DenseOperator {
    a: Mat<f64>,
}

impl DenseOperator {
    /// Wraps a dense matrix.
    pub fn new(a: Mat<f64>) -> Self {
        Self { a }
    }

    /// The wrapped matrix.
    pub fn matrix(&self) -> MatRef<'_, f64> {
        self.a.as_ref()
    }

    /// Returns the wrapped matrix.
    pub fn into_inner(self) -> Mat<f64> {
        self.a
    }
}

impl From<Mat<f64>> for DenseOperator {
    fn from(a: Mat<f64>) -> Self {
        Self::new(a)
    }
}

impl LinearOperator for DenseOperator {
    fn nrows(&self) -> usize {
        self.a.nrows()
    }
    fn ncols(&self) -> usize {
        self.a.ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        matmul(
            out.as_mat_mut(),
            Accum::Replace,
            self.a.as_ref(),
            x.as_mat(),
            1.0,
            parallelism(),
        );
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        let flops = 2.0 * (self.a.nrows() * self.a.ncols()) as f64 * x.ncols() as f64;
        matmul(
            out,
            Accum::Replace,
            self.a.as_ref(),
            x,
            1.0,
            parallelism_for(flops),
        );
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        let n = self.a.nrows().min(self.a.ncols());
        Some(Col::from_fn(n, |i| self.a[(i, i)]))
    }
    fn to_dense(&self) -> Mat<f64> {
        self.a.clone()
    }
}

impl TransposeOperator for DenseOperator {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        matmul(
            out.as_mat_mut(),
            Accum::Replace,
            self.a.transpose(),
            x.as_mat(),
            1.0,
            parallelism(),
        );
    }
    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        let flops = 2.0 * (self.a.nrows() * self.a.ncols()) as f64 * x.ncols() as f64;
        matmul(
            out,
            Accum::Replace,
            self.a.transpose(),
            x,
            1.0,
            parallelism_for(flops),
        );
    }
}
