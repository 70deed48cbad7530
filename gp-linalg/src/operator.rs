//! The [`LinearOperator`] trait: what every solver in the workspace multiplies with.

use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};

use std::sync::Arc;

use crate::error::Result;
use crate::validate::check_shape;

/// A linear map `A: ℝⁿ → ℝᵐ` known only through its products.
///
/// Implementors provide [`matvec`](Self::matvec) (and, when they can do better than a loop
/// over columns, [`matmat`](Self::matmat)); callers use the checked entry points
/// [`apply`](Self::apply), [`apply_into`](Self::apply_into) and
/// [`apply_block`](Self::apply_block), which validate shapes and return
/// [`LinalgError::ShapeMismatch`](crate::LinalgError::ShapeMismatch) instead of panicking.
///
/// The trait is object safe (`Box<dyn LinearOperator>`, `&dyn LinearOperator`) and operators
/// are `Send + Sync` so they can be shared across rayon tasks.
///
/// ```
/// use faer::{col, Mat};
/// use gp_linalg::{DenseOperator, LinearOperator};
///
/// let a = DenseOperator::new(Mat::from_fn(2, 2, |i, j| (i + 2 * j) as f64));
/// let y = a.apply(col![1.0, 1.0].as_ref())?;
/// assert_eq!(y[0], 2.0);
/// assert_eq!(y[1], 4.0);
/// # Ok::<(), gp_linalg::LinalgError>(())
/// ```
pub trait LinearOperator: Send + Sync {
    /// Number of rows `m` (the length of `A x`).
    fn nrows(&self) -> usize;

    /// Number of columns `n` (the length of `x`).
    fn ncols(&self) -> usize;

    /// Writes `out = A x`.
    ///
    /// Contract: `x.nrows() == self.ncols()` and `out.nrows() == self.nrows()`; implementations
    /// may panic otherwise. Use [`apply_into`](Self::apply_into) for a checked call.
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>);

    /// Writes `out = A X` for a block of columns.
    ///
    /// The default loops over columns; dense and structured operators override it to share
    /// work across the block. Contract as for [`matvec`](Self::matvec).
    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        for j in 0..x.ncols() {
            self.matvec(x.col(j), out.rb_mut().col_mut(j));
        }
    }

    /// Writes `out = A X` and returns `x_jᵀ (A x_j)` for every column `j`, summed as
    /// [`vector::dot`](crate::vector::dot) sums it (the same bits): the curvatures CG needs
    /// after each product. Square operators only (`NaN` for a column otherwise).
    ///
    /// The default runs [`matmat`](Self::matmat) and then the dot products; an operator
    /// that streams `out` (the SKI operator) overrides it to take each dot while its part of
    /// `out` is still in cache. Contract as for [`matvec`](Self::matvec).
    fn matmat_with_dots(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) -> Vec<f64> {
        self.matmat(x, out.rb_mut());
        match crate::vector::col_dots(x, out.as_ref()) {
            Ok(dots) => dots.iter().copied().collect(),
            Err(_) => vec![f64::NAN; x.ncols()],
        }
    }

    /// The diagonal of `A`, when the operator can produce it cheaply (square operators only).
    fn diagonal(&self) -> Option<Col<f64>> {
        None
    }

    /// `(nrows, ncols)`.
    fn shape(&self) -> (usize, usize) {
        (self.nrows(), self.ncols())
    }

    /// Returns `A x`, checking shapes.
    fn apply(&self, x: ColRef<'_, f64>) -> Result<Col<f64>> {
        let mut out = Col::zeros(self.nrows());
        self.apply_into(x, out.as_mut())?;
        Ok(out)
    }

    /// Writes `out = A x`, checking shapes.
    fn apply_into(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) -> Result<()> {
        check_shape(
            (x.nrows(), 1),
            (self.ncols(), 1),
            "LinearOperator::apply (x)",
        )?;
        check_shape(
            (out.nrows(), 1),
            (self.nrows(), 1),
            "LinearOperator::apply (out)",
        )?;
        self.matvec(x, out);
        Ok(())
    }

    /// Returns `A X` for a block of columns, checking shapes.
    fn apply_block(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_shape(
            (x.nrows(), x.ncols()),
            (self.ncols(), x.ncols()),
            "LinearOperator::apply_block",
        )?;
        let mut out = Mat::zeros(self.nrows(), x.ncols());
        self.matmat(x, out.as_mut());
        Ok(out)
    }

    /// Materializes the operator as a dense matrix (`n` products with unit vectors, or a
    /// direct copy where the operator overrides it). Meant for tests and small problems.
    fn to_dense(&self) -> Mat<f64> {
        let eye = Mat::<f64>::identity(self.ncols(), self.ncols());
        let mut out = Mat::zeros(self.nrows(), self.ncols());
        self.matmat(eye.as_ref(), out.as_mut());
        out
    }
}

impl<T: LinearOperator + ?Sized> LinearOperator for &T {
    fn nrows(&self) -> usize {
        (**self).nrows()
    }
    fn ncols(&self) -> usize {
        (**self).ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        (**self).matvec(x, out)
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        (**self).matmat(x, out)
    }
    fn matmat_with_dots(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) -> Vec<f64> {
        (**self).matmat_with_dots(x, out)
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        (**self).diagonal()
    }
    fn to_dense(&self) -> Mat<f64> {
        (**self).to_dense()
    }
}

impl<T: LinearOperator + ?Sized> LinearOperator for Box<T> {
    fn nrows(&self) -> usize {
        (**self).nrows()
    }
    fn ncols(&self) -> usize {
        (**self).ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        (**self).matvec(x, out)
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        (**self).matmat(x, out)
    }
    fn matmat_with_dots(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) -> Vec<f64> {
        (**self).matmat_with_dots(x, out)
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        (**self).diagonal()
    }
    fn to_dense(&self) -> Mat<f64> {
        (**self).to_dense()
    }
}

impl<T: LinearOperator + ?Sized> LinearOperator for std::sync::Arc<T> {
    fn nrows(&self) -> usize {
        (**self).nrows()
    }
    fn ncols(&self) -> usize {
        (**self).ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        (**self).matvec(x, out)
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        (**self).matmat(x, out)
    }
    fn matmat_with_dots(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) -> Vec<f64> {
        (**self).matmat_with_dots(x, out)
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        (**self).diagonal()
    }
    fn to_dense(&self) -> Mat<f64> {
        (**self).to_dense()
    }
}

/// A shared, type-erased operator: what the composite operators ([`ScaledOperator`](crate::ScaledOperator),
/// [`SumOperator`](crate::SumOperator), [`ShiftedOperator`](crate::ShiftedOperator)) hold.
///
/// `Arc::new(op)` coerces to it at a call site.
pub type SharedOperator = Arc<dyn LinearOperator>;
