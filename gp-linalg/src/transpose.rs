//! The transpose in the operator algebra: [`TransposeOperator`] (`Aᵀ x` under one name for every
//! operator that can take it without storing `Aᵀ`) and [`Transposed`], the borrowed `Aᵀ` as a
//! [`LinearOperator`] in its own right.
//!
//! ```
//! use faer::{col, Mat};
//! use gp_linalg::{DenseOperator, LinearOperator, TransposeOperator};
//!
//! let a = DenseOperator::new(Mat::from_fn(2, 3, |i, j| (i + 2 * j) as f64));
//! let x = col![1.0, 1.0];
//! let y = a.apply_transpose(x.as_ref())?;
//! assert_eq!((y[0], y[1], y[2]), (1.0, 5.0, 9.0));
//! // The same product through the wrapper, which any solver can take.
//! assert_eq!(a.transposed().shape(), (3, 2));
//! assert_eq!(a.transposed().apply(x.as_ref())?, y);
//! # Ok::<(), gp_linalg::LinalgError>(())
//! ```

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};

use crate::error::Result;
use crate::operator::LinearOperator;
use crate::validate::check_shape;

/// An operator whose transpose product `Aᵀ x` is available without storing `Aᵀ`.
///
/// Implementors provide [`matvec_transpose`](Self::matvec_transpose) (and, when they can do
/// better than a loop over columns, [`matmat_transpose`](Self::matmat_transpose)); callers use
/// the checked [`apply_transpose`](Self::apply_transpose),
/// [`apply_transpose_into`](Self::apply_transpose_into) and
/// [`apply_transpose_block`](Self::apply_transpose_block), or the wrapper
/// [`transposed`](Self::transposed) where a [`LinearOperator`] is wanted. A symmetric operator
/// implements the trait by forwarding to its own products.
pub trait TransposeOperator: LinearOperator {
    /// Writes `out = Aᵀ x`.
    ///
    /// Contract: `x.nrows() == self.nrows()` and `out.nrows() == self.ncols()`;
    /// implementations may panic otherwise. Use
    /// [`apply_transpose_into`](Self::apply_transpose_into) for a checked call.
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>);

    /// Writes `out = Aᵀ X` for a block of columns. The default loops over columns; contract as
    /// for [`matvec_transpose`](Self::matvec_transpose).
    fn matmat_transpose(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        for j in 0..x.ncols() {
            self.matvec_transpose(x.col(j), out.rb_mut().col_mut(j));
        }
    }

    /// Returns `Aᵀ x`, checking shapes.
    fn apply_transpose(&self, x: ColRef<'_, f64>) -> Result<Col<f64>> {
        let mut out = Col::zeros(self.ncols());
        self.apply_transpose_into(x, out.as_mut())?;
        Ok(out)
    }

    /// Writes `out = Aᵀ x`, checking shapes.
    fn apply_transpose_into(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()> {
        check_shape(
            (x.nrows(), 1),
            (self.nrows(), 1),
            "TransposeOperator::apply_transpose (x)",
        )?;
        check_shape(
            (out.nrows(), 1),
            (self.ncols(), 1),
            "TransposeOperator::apply_transpose (out)",
        )?;
        self.matvec_transpose(x, out);
        Ok(())
    }

    /// Returns `Aᵀ X` for a block of columns, checking shapes.
    fn apply_transpose_block(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_shape(
            (x.nrows(), x.ncols()),
            (self.nrows(), x.ncols()),
            "TransposeOperator::apply_transpose_block",
        )?;
        let mut out = Mat::zeros(self.ncols(), x.ncols());
        self.matmat_transpose(x, out.as_mut());
        Ok(out)
    }

    /// `Aᵀ` as a [`LinearOperator`], borrowing `self` (nothing is copied or transposed).
    fn transposed(&self) -> Transposed<'_, Self>
    where
        Self: Sized,
    {
        Transposed::new(self)
    }
}

impl<T: TransposeOperator + ?Sized> TransposeOperator for &T {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        (**self).matvec_transpose(x, out)
    }
    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        (**self).matmat_transpose(x, out)
    }
    // The checked entry points forward too, so an operator that reports its own errors
    // (for example a product whose width overflows) keeps doing so behind a reference.
    fn apply_transpose(&self, x: ColRef<'_, f64>) -> Result<Col<f64>> {
        (**self).apply_transpose(x)
    }
    fn apply_transpose_into(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()> {
        (**self).apply_transpose_into(x, out)
    }
    fn apply_transpose_block(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        (**self).apply_transpose_block(x)
    }
}

/// The transpose `Aᵀ` of a borrowed [`TransposeOperator`], itself a [`LinearOperator`] (and a
/// [`TransposeOperator`] whose transpose is `A` again). Made by
/// [`TransposeOperator::transposed`] or [`Transposed::new`].
#[derive(Debug)]
pub struct Transposed<'a, A: ?Sized> {
    inner: &'a A,
}

// Derived `Clone`/`Copy` would require `A: Clone`; the wrapper is only a reference.
impl<A: ?Sized> Clone for Transposed<'_, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: ?Sized> Copy for Transposed<'_, A> {}

impl<'a, A: TransposeOperator + ?Sized> Transposed<'a, A> {
    /// Wraps `a` as `aᵀ`.
    pub fn new(a: &'a A) -> Self {
        Self { inner: a }
    }

    /// The operator `A` whose transpose this is.
    pub fn inner(&self) -> &'a A {
        self.inner
    }
}

impl<A: TransposeOperator + ?Sized> LinearOperator for Transposed<'_, A> {
    fn nrows(&self) -> usize {
        self.inner.ncols()
    }
    fn ncols(&self) -> usize {
        self.inner.nrows()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.inner.matvec_transpose(x, out)
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.inner.matmat_transpose(x, out)
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        // The diagonal of a square matrix is that of its transpose.
        self.inner.diagonal()
    }
}

impl<A: TransposeOperator + ?Sized> TransposeOperator for Transposed<'_, A> {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.inner.matvec(x, out)
    }
    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.inner.matmat(x, out)
    }
}
