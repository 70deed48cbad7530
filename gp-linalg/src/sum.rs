//! `A₁ + A₂ + …`: a sum of operators of equal shape.

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};

use crate::error::{shape_str, LinalgError, Result};
use crate::operator::{LinearOperator, SharedOperator};

/// The operator `A₁ + A₂ + … + A_m` (at least one term, all of the same shape).
///
/// ```
/// use std::sync::Arc;
/// use faer::{col, Mat};
/// use gp_linalg::{DenseOperator, DiagonalOperator, LinearOperator, SumOperator};
///
/// let a = DenseOperator::new(Mat::from_fn(2, 2, |_, _| 1.0));
/// let d = DiagonalOperator::from_vec(vec![1.0, 2.0])?;
/// let op = SumOperator::new(vec![Arc::new(a), Arc::new(d)])?;
/// let y = op.apply(col![1.0, 1.0].as_ref())?;
/// assert_eq!((y[0], y[1]), (3.0, 4.0));
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Clone)]
pub struct SumOperator {
    terms: Vec<SharedOperator>,
    nrows: usize,
    ncols: usize,
}

impl std::fmt::Debug for SumOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SumOperator")
            .field("shape", &(self.nrows, self.ncols))
            .field("terms", &self.terms.len())
            .finish()
    }
}

impl SumOperator {
    /// The sum of `terms`.
    ///
    /// Errors with [`LinalgError::InvalidArgument`] if `terms` is empty and
    /// [`LinalgError::ShapeMismatch`] if a term's shape differs from the first one's.
    pub fn new(terms: Vec<SharedOperator>) -> Result<Self> {
        let Some(first) = terms.first() else {
            return Err(LinalgError::InvalidArgument {
                name: "terms",
                reason: "a SumOperator needs at least one term (its shape comes from the terms)"
                    .to_string(),
            });
        };
        let (nrows, ncols) = first.shape();
        for t in &terms[1..] {
            if t.shape() != (nrows, ncols) {
                return Err(LinalgError::ShapeMismatch {
                    context: "SumOperator::new (all terms must have the same shape)",
                    expected: shape_str(nrows, ncols),
                    found: shape_str(t.nrows(), t.ncols()),
                });
            }
        }
        Ok(Self {
            terms,
            nrows,
            ncols,
        })
    }

    /// The terms of the sum.
    pub fn terms(&self) -> &[SharedOperator] {
        &self.terms
    }
}

impl LinearOperator for SumOperator {
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        self.terms[0].matvec(x, out.rb_mut());
        let mut tmp = Col::zeros(self.nrows);
        for t in &self.terms[1..] {
            t.matvec(x, tmp.as_mut());
            for i in 0..self.nrows {
                out[i] += tmp[i];
            }
        }
    }
    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        self.terms[0].matmat(x, out.rb_mut());
        if self.terms.len() == 1 {
            return;
        }
        let mut tmp = Mat::zeros(self.nrows, x.ncols());
        for t in &self.terms[1..] {
            t.matmat(x, tmp.as_mut());
            for j in 0..x.ncols() {
                for i in 0..self.nrows {
                    out[(i, j)] += tmp[(i, j)];
                }
            }
        }
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        let mut acc = self.terms[0].diagonal()?;
        for t in &self.terms[1..] {
            let d = t.diagonal()?;
            for i in 0..acc.nrows().min(d.nrows()) {
                acc[i] += d[i];
            }
        }
        Some(acc)
    }
    fn to_dense(&self) -> Mat<f64> {
        let mut acc = self.terms[0].to_dense();
        for t in &self.terms[1..] {
            acc += t.to_dense();
        }
        acc
    }
}
