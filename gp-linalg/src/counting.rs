//! An operator that counts the products it performs: how cost claims ("zero products with
//! `K`", "one product per iteration") are checked by counting instead of assumed.

use std::sync::atomic::{AtomicUsize, Ordering};

use faer::{Col, ColMut, ColRef, MatMut, MatRef};

use crate::operator::LinearOperator;

/// Wraps an operator and counts its products by columns: a `matvec` counts one, a `matmat`
/// with `k` columns counts `k`. `diagonal` is forwarded and not counted.
///
/// ```
/// use faer::{col, Mat};
/// use gp_linalg::{CountingOperator, DenseOperator, LinearOperator};
///
/// let op = CountingOperator::new(DenseOperator::new(Mat::identity(3, 3)));
/// op.apply(col![1.0, 2.0, 3.0].as_ref())?;
/// op.apply_block(Mat::zeros(3, 4).as_ref())?;
/// assert_eq!(op.products(), 5);
/// op.reset();
/// assert_eq!(op.products(), 0);
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
#[derive(Debug)]
pub struct CountingOperator<O> {
    inner: O,
    products: AtomicUsize,
}

impl<O: LinearOperator> CountingOperator<O> {
    /// Counts the products of `inner`, from zero.
    pub fn new(inner: O) -> Self {
        Self {
            inner,
            products: AtomicUsize::new(0),
        }
    }

    /// Columns multiplied so far.
    pub fn products(&self) -> usize {
        self.products.load(Ordering::SeqCst)
    }

    /// Sets the count back to zero.
    pub fn reset(&self) {
        self.products.store(0, Ordering::SeqCst);
    }

    /// The wrapped operator (its products through this reference are not counted).
    pub fn inner(&self) -> &O {
        &self.inner
    }
}

impl<O: LinearOperator> LinearOperator for CountingOperator<O> {
    fn nrows(&self) -> usize {
        self.inner.nrows()
    }

    fn ncols(&self) -> usize {
        self.inner.ncols()
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.products.fetch_add(1, Ordering::SeqCst);
        self.inner.matvec(x, out);
    }

    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.products.fetch_add(x.ncols(), Ordering::SeqCst);
        self.inner.matmat(x, out);
    }

    fn diagonal(&self) -> Option<Col<f64>> {
        self.inner.diagonal()
    }
}
