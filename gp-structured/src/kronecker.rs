//! Kronecker products `A₁ ⊗ A₂ ⊗ … ⊗ A_d` of operators, applied by mode products without
//! forming the product.
//!
//! **Index order.** The flat index of a multi-index `(i₁, …, i_d)` is row-major (C order):
//! the *last* factor varies fastest, `i = ((i₁ · m₂ + i₂) · m₃ + i₃) …`. This is the standard
//! Kronecker definition, `(A ⊗ B)[i · m_B + k, j · n_B + l] = A[i, j] · B[k, l]`, and the
//! order of a regular grid whose first dimension is the outermost.
//!
//! **Cost.** A product is `d` mode products: factor `l` is applied to all `N / n_l` fibres
//! of its mode in one block product ([`LinearOperator::matmat`]), so dense factors cost
//! `O(N Σ_l m_l)` and Toeplitz factors `O(N log N)` (square factors of orders `m_l`,
//! `N = Π m_l`). Memory: two buffers of `N` entries per column.
//!
//! **Transpose.** `(A₁ ⊗ … ⊗ A_d)ᵀ = A₁ᵀ ⊗ … ⊗ A_dᵀ`, applied by the same mode products with
//! each factor's own transpose product. A product whose factors can all be transposed is
//! built by [`Kronecker::transposable`] (a [`TransposableKronecker`]) and implements
//! [`TransposeOperator`]: `apply_transpose`, `apply_transpose_block` and `.transposed()`, the
//! `Aᵀ` view any solver can take. [`Kronecker::new`] takes factors that are only
//! [`LinearOperator`]s, so its product has no transpose, which the compiler enforces.
//! [`kronecker_matmat`] multiplies by a Kronecker product of borrowed factors, for example
//! [`Transposed`] views.

use std::sync::Arc;

use faer::{Col, ColMut, ColRef, MatMut, MatRef};
use gp_linalg::validate::check_shape;
use gp_linalg::{LinearOperator, TransposeOperator, Transposed};

use crate::error::{Result, StructuredError};

/// The Kronecker product of any number of (possibly rectangular) operators.
///
/// The factor type `F` is the trait object the factors are shared as: the default,
/// `Kronecker` = `Kronecker<dyn LinearOperator>` built by [`Kronecker::new`], takes any
/// operators and is a [`LinearOperator`]; [`TransposableKronecker`] =
/// `Kronecker<dyn TransposeOperator>`, built by [`Kronecker::transposable`], takes operators
/// with a transpose product and is also a [`TransposeOperator`], with
/// `(A₁ ⊗ … ⊗ A_d)ᵀ = A₁ᵀ ⊗ … ⊗ A_dᵀ`. Being a type parameter rather than a run-time flag,
/// the transpose of a product whose factors have none is a compile error, not a panic
/// (`From` turns a transposable product into a plain one).
///
/// ```
/// use std::sync::Arc;
/// use faer::{mat, col};
/// use gp_linalg::DenseOperator;
/// use gp_structured::kronecker::Kronecker;
/// use gp_structured::LinearOperator;
///
/// let a = DenseOperator::new(mat![[1.0, 2.0], [3.0, 4.0]]);
/// let b = DenseOperator::new(mat![[0.0, 1.0], [1.0, 0.0]]);
/// let k = Kronecker::new(vec![Arc::new(a), Arc::new(b)])?;
/// // (A ⊗ B)[i·2 + k, j·2 + l] = A[i, j] · B[k, l]
/// let dense = k.to_dense();
/// assert_eq!(dense[(1, 2)], 2.0); // A[0, 1] · B[1, 0]
/// let y = k.apply(col![1.0, 0.0, 0.0, 0.0].as_ref())?;
/// assert_eq!(y[1], 1.0); // A[0, 0] · B[1, 0]
/// # Ok::<(), gp_structured::StructuredError>(())
/// ```
///
/// A product of plain operators has no transpose:
///
/// ```compile_fail
/// use std::sync::Arc;
/// use faer::{col, mat};
/// use gp_linalg::DenseOperator;
/// use gp_structured::{Kronecker, TransposeOperator};
///
/// let a = DenseOperator::new(mat![[1.0, 2.0], [3.0, 4.0]]);
/// let k = Kronecker::new(vec![Arc::new(a)]).unwrap();
/// let _ = k.apply_transpose(col![1.0, 0.0].as_ref());
/// ```
pub struct Kronecker<F: ?Sized = dyn LinearOperator> {
    factors: Vec<Arc<F>>,
    nrows: usize,
    ncols: usize,
    /// Largest intermediate length of one column during a product.
    max_len: usize,
    /// Largest intermediate length of one column during a transpose product. Checked and set
    /// by [`Kronecker::transposable`]; `0` (never read) for a product built by
    /// [`Kronecker::new`], whose factor type has no transpose.
    max_len_transpose: usize,
}

/// A Kronecker product of operators with transposes, itself a [`TransposeOperator`]: what
/// [`Kronecker::transposable`] builds.
///
/// ```
/// use std::sync::Arc;
/// use faer::{col, mat};
/// use gp_linalg::DenseOperator;
/// use gp_structured::{Circulant, Kronecker, LinearOperator, TransposeOperator};
///
/// let a = DenseOperator::new(mat![[1.0, 2.0, 0.0], [3.0, 4.0, 1.0]]); // 2 × 3
/// let c = Circulant::new(&[1.0, 2.0])?; // [[1, 2], [2, 1]]
/// let k = Kronecker::transposable(vec![Arc::new(a), Arc::new(c)])?; // 4 × 6
/// let x = col![1.0, 0.0, 0.0, 0.0];
/// // (A ⊗ C)ᵀ e₀ is row 0 of A ⊗ C: A[0, j] · C[0, l].
/// let y = k.apply_transpose(x.as_ref())?;
/// assert_eq!(y, col![1.0, 2.0, 2.0, 4.0, 0.0, 0.0]);
/// // The same through the `Aᵀ` view, a `LinearOperator` of shape 6 × 4.
/// assert_eq!(k.transposed().shape(), (6, 4));
/// assert_eq!(k.transposed().apply(x.as_ref())?, y);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type TransposableKronecker = Kronecker<dyn TransposeOperator>;

// Derived `Clone` would require `F: Clone`; only the `Arc`s are cloned.
impl<F: ?Sized> Clone for Kronecker<F> {
    fn clone(&self) -> Self {
        Self {
            factors: self.factors.clone(),
            nrows: self.nrows,
            ncols: self.ncols,
            max_len: self.max_len,
            max_len_transpose: self.max_len_transpose,
        }
    }
}

impl<F: LinearOperator + ?Sized> std::fmt::Debug for Kronecker<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shapes: Vec<_> = self.factors.iter().map(|a| a.shape()).collect();
        f.debug_struct("Kronecker")
            .field("factor_shapes", &shapes)
            .finish()
    }
}

impl Kronecker {
    /// `factors[0] ⊗ factors[1] ⊗ …` (the first factor outermost), for any operators. The
    /// product is a [`LinearOperator`] without a transpose; use [`Kronecker::transposable`]
    /// when every factor is a [`TransposeOperator`] and `Aᵀ` is needed.
    ///
    /// Errors: no factors, a factor with zero rows or columns, or a product whose size
    /// overflows `usize`.
    pub fn new(factors: Vec<Arc<dyn LinearOperator>>) -> Result<Self> {
        let (nrows, ncols, max_len) = product_shape(&shapes_of(&factors))?;
        Ok(Self {
            factors,
            nrows,
            ncols,
            max_len,
            max_len_transpose: 0,
        })
    }
}

impl TransposableKronecker {
    /// `factors[0] ⊗ factors[1] ⊗ …` (the first factor outermost) for factors with a
    /// transpose product: the result is also a [`TransposeOperator`], applying
    /// `(A₁ ⊗ … ⊗ A_d)ᵀ = A₁ᵀ ⊗ … ⊗ A_dᵀ` by mode products with the factors'
    /// [`matmat_transpose`](TransposeOperator::matmat_transpose). Forward products give the
    /// same numbers as [`Kronecker::new`] with the same factors.
    ///
    /// Errors: as [`Kronecker::new`], and also a transpose product whose intermediate size
    /// overflows `usize` (possible for rectangular factors even when the forward product's
    /// does not).
    pub fn transposable(factors: Vec<Arc<dyn TransposeOperator>>) -> Result<Self> {
        let shapes = shapes_of(&factors);
        let (nrows, ncols, max_len) = product_shape(&shapes)?;
        let transposed: Vec<(usize, usize)> = shapes.iter().map(|&(r, c)| (c, r)).collect();
        let (_, _, max_len_transpose) = product_shape(&transposed)?;
        Ok(Self {
            factors,
            nrows,
            ncols,
            max_len,
            max_len_transpose,
        })
    }
}

impl From<TransposableKronecker> for Kronecker {
    /// The same product with its factors shared as plain [`LinearOperator`]s.
    fn from(k: TransposableKronecker) -> Self {
        Self {
            factors: k
                .factors
                .into_iter()
                .map(|a| a as Arc<dyn LinearOperator>)
                .collect(),
            nrows: k.nrows,
            ncols: k.ncols,
            max_len: k.max_len,
            max_len_transpose: 0,
        }
    }
}

impl<F: ?Sized> Kronecker<F> {
    /// The factors, outermost first.
    pub fn factors(&self) -> &[Arc<F>] {
        &self.factors
    }

    /// Number of factors `d`.
    pub fn num_factors(&self) -> usize {
        self.factors.len()
    }
}

/// The `(rows, cols)` of each factor.
fn shapes_of<F: LinearOperator + ?Sized>(factors: &[Arc<F>]) -> Vec<(usize, usize)> {
    factors.iter().map(|a| a.shape()).collect()
}

impl<F: LinearOperator + ?Sized> LinearOperator for Kronecker<F> {
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        kron_matmat(&self.factors, self.max_len, x, out);
    }
    fn diagonal(&self) -> Option<Col<f64>> {
        if self.nrows != self.ncols || self.factors.iter().any(|a| a.nrows() != a.ncols()) {
            return None;
        }
        let diags = self
            .factors
            .iter()
            .map(|a| a.diagonal())
            .collect::<Option<Vec<_>>>()?;
        let slices: Vec<Vec<f64>> = diags
            .iter()
            .map(|d| (0..d.nrows()).map(|i| d[i]).collect())
            .collect();
        let refs: Vec<&[f64]> = slices.iter().map(Vec::as_slice).collect();
        Some(Col::from_iter(kron_vectors(&refs)))
    }
}

/// `(A₁ ⊗ … ⊗ A_d)ᵀ = A₁ᵀ ⊗ … ⊗ A_dᵀ`: the mode products of [`LinearOperator::matmat`] with
/// each factor's [`Transposed`] view. Only products built by [`Kronecker::transposable`]
/// have a factor type with a transpose, and that constructor checked the transpose product's
/// sizes.
impl<F: TransposeOperator + ?Sized> TransposeOperator for Kronecker<F> {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat_transpose(x.as_mat(), out.as_mat_mut());
    }
    fn matmat_transpose(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        let views: Vec<Transposed<'_, F>> =
            self.factors.iter().map(|a| Transposed::new(&**a)).collect();
        kron_matmat(&views, self.max_len_transpose, x, out);
    }
}

/// `out = (A₁ ⊗ … ⊗ A_d) X` for borrowed factors, by mode products: what a [`Kronecker`]
/// does with its own factors, for callers whose factors are not `'static` (for example
/// [`Transposed`] views of borrowed factors). For the transpose of an owned product, build
/// it with [`Kronecker::transposable`] and use its [`TransposeOperator`] methods.
///
/// Errors: no factors, an empty factor, a size that overflows `usize`, or `x`/`out` whose
/// shapes do not match the product's.
///
/// ```
/// use faer::{col, mat};
/// use gp_linalg::{DenseOperator, LinearOperator, TransposeOperator};
/// use gp_structured::kronecker::kronecker_matmat;
///
/// let a = DenseOperator::new(mat![[1.0, 2.0], [3.0, 4.0]]);
/// let b = DenseOperator::new(mat![[0.0, 1.0], [1.0, 0.0]]);
/// let (at, bt) = (a.transposed(), b.transposed());
/// let x = col![1.0, 0.0, 0.0, 0.0];
/// let mut out = col![0.0, 0.0, 0.0, 0.0];
/// kronecker_matmat(&[&at as &dyn LinearOperator, &bt], x.as_mat(), out.as_mat_mut())?;
/// // (A ⊗ B)ᵀ e₀ is row 0 of A ⊗ B: A[0, j] · B[0, l].
/// assert_eq!(out, col![0.0, 1.0, 0.0, 2.0]);
/// # Ok::<(), gp_structured::StructuredError>(())
/// ```
pub fn kronecker_matmat(
    factors: &[&dyn LinearOperator],
    x: MatRef<'_, f64>,
    out: MatMut<'_, f64>,
) -> Result<()> {
    let shapes: Vec<(usize, usize)> = factors.iter().map(|a| a.shape()).collect();
    let (nrows, ncols, max_len) = product_shape(&shapes)?;
    check_shape(
        (x.nrows(), x.ncols()),
        (ncols, x.ncols()),
        "kronecker_matmat (x)",
    )?;
    check_shape(
        (out.nrows(), out.ncols()),
        (nrows, x.ncols()),
        "kronecker_matmat (out)",
    )?;
    kron_matmat(factors, max_len, x, out);
    Ok(())
}

/// `(rows, cols, largest intermediate length)` of a Kronecker product of the given factor
/// shapes, checking for emptiness and overflow.
pub(crate) fn product_shape(shapes: &[(usize, usize)]) -> Result<(usize, usize, usize)> {
    if shapes.is_empty() {
        return Err(StructuredError::InvalidArgument {
            name: "factors",
            reason: "a Kronecker product needs at least one factor".to_string(),
        });
    }
    if let Some(l) = shapes.iter().position(|&(r, c)| r == 0 || c == 0) {
        return Err(StructuredError::InvalidArgument {
            name: "factors",
            reason: format!(
                "factor {l} is {}×{}; every factor needs at least one row and column",
                shapes[l].0, shapes[l].1
            ),
        });
    }
    let overflow = || StructuredError::InvalidArgument {
        name: "factors",
        reason: "the Kronecker product is too large: its size overflows usize".to_string(),
    };
    // During a product, after applying factors l..d the column has
    // Π_{j<l} n_j · Π_{j≥l} m_j entries.
    let d = shapes.len();
    let mut max_len = 0usize;
    for l in 0..=d {
        let mut len = 1usize;
        for (j, &(r, c)) in shapes.iter().enumerate() {
            len = len
                .checked_mul(if j < l { c } else { r })
                .ok_or_else(overflow)?;
        }
        max_len = max_len.max(len);
    }
    let nrows = shapes
        .iter()
        .try_fold(1usize, |acc, &(r, _)| acc.checked_mul(r))
        .ok_or_else(overflow)?;
    let ncols = shapes
        .iter()
        .try_fold(1usize, |acc, &(_, c)| acc.checked_mul(c))
        .ok_or_else(overflow)?;
    Ok((nrows, ncols, max_len))
}

/// The Kronecker product of vectors, last factor fastest.
pub(crate) fn kron_vectors(factors: &[&[f64]]) -> Vec<f64> {
    let mut out = vec![1.0];
    for f in factors {
        let mut next = Vec::with_capacity(out.len() * f.len());
        for &a in &out {
            next.extend(f.iter().map(|&b| a * b));
        }
        out = next;
    }
    out
}

/// `out = (A₁ ⊗ … ⊗ A_d) X` by mode products.
///
/// Layout trick: a column-major `N × k` block is a tensor with modes `(k, i₁, …, i_d)`, the
/// last fastest. Each step applies the factor of the *fastest* mode to all its fibres at once,
/// reading them as the columns of a column-major `n_l × rest` matrix, and writes the result
/// transposed (`rest × m_l`, column-major), which moves that mode to the slowest position.
/// After `d` steps (last factor first) the modes are `(i₁, …, i_d, k)`, i.e. the result
/// block stored row-major, which the final copy transposes into `out`.
///
/// `max_len` bounds the intermediate column length (see [`product_shape`]).
pub(crate) fn kron_matmat<A: LinearOperator>(
    factors: &[A],
    max_len: usize,
    x: MatRef<'_, f64>,
    mut out: MatMut<'_, f64>,
) {
    let k = x.ncols();
    if k == 0 {
        return;
    }
    if let [single] = factors {
        single.matmat(x, out);
        return;
    }
    let n = x.nrows();
    let mut a = vec![0.0; max_len * k];
    let mut b = vec![0.0; max_len * k];
    for j in 0..k {
        for i in 0..n {
            a[j * n + i] = x[(i, j)];
        }
    }
    let mut total = n * k;
    for f in factors.iter().rev() {
        let (r, c) = f.shape();
        let rest = total / c;
        let input = MatRef::from_column_major_slice(&a[..total], c, rest);
        let output = MatMut::from_row_major_slice_mut(&mut b[..rest * r], r, rest);
        f.matmat(input, output);
        std::mem::swap(&mut a, &mut b);
        total = rest * r;
    }
    let m = out.nrows();
    for i in 0..m {
        for j in 0..k {
            out[(i, j)] = a[i * k + j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kron_vectors_order() {
        let v = kron_vectors(&[&[1.0, 2.0], &[1.0, 10.0, 100.0]]);
        assert_eq!(v, vec![1.0, 10.0, 100.0, 2.0, 20.0, 200.0]);
    }

    #[test]
    fn shape_errors() {
        assert!(product_shape(&[]).is_err());
        assert!(product_shape(&[(2, 2), (0, 3)]).is_err());
        assert!(product_shape(&[(usize::MAX, 1), (2, 1)]).is_err());
        assert_eq!(product_shape(&[(2, 3), (4, 1)]).ok(), Some((8, 3, 12)));
    }
}
