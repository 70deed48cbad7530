//! The eigendecomposition of a Kronecker product of symmetric matrices from the factors'
//! eigendecompositions, and with it exact solves and log-determinants of
//! `K₁ ⊗ … ⊗ K_d + σ²I` (the exact GP on a complete grid).
//!
//! If `K_l = Q_l Λ_l Q_lᵀ` then `K = ⊗ K_l = Q Λ Qᵀ` with `Q = ⊗ Q_l` and `Λ = ⊗ Λ_l`: the
//! eigenvalues of the product are the products of factor eigenvalues, in the Kronecker order
//! of [`crate::kronecker`] (last factor fastest). `Q` is applied by mode products with the
//! factor eigenvector matrices, never formed.

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::validate::{check_finite_mat, check_finite_slice, check_shape, check_square};
use gp_linalg::{parallelism, LinalgError, LinearOperator};

use crate::error::{Result, StructuredError};
use crate::kronecker::{kron_matmat, kron_vectors, product_shape};
use crate::top_eigen::{top_eigenvalues, TopEigenOptions, TopEigenvalues};

/// Per-factor eigendecompositions `K_l = Q_l diag(λ_l) Q_lᵀ` of a Kronecker product
/// `K = K₁ ⊗ … ⊗ K_d` of symmetric matrices.
///
/// ```
/// use faer::{mat, Mat};
/// use gp_structured::kronecker_eigen::KroneckerEigen;
///
/// let k1 = mat![[2.0, 0.5], [0.5, 1.0]];
/// let k2 = mat![[1.0, 0.2, 0.0], [0.2, 1.0, 0.2], [0.0, 0.2, 1.0]];
/// let eig = KroneckerEigen::from_matrices(&[k1.as_ref(), k2.as_ref()])?;
/// let b = Mat::from_fn(6, 1, |i, _| i as f64);
/// let x = eig.solve_shifted(0.1, b.as_ref())?;
/// let log_det = eig.log_det_shifted(0.1)?;
/// assert_eq!(x.nrows(), 6);
/// assert!(log_det.is_finite());
/// # Ok::<(), gp_structured::StructuredError>(())
/// ```
#[derive(Debug, Clone)]
pub struct KroneckerEigen {
    values: Vec<Vec<f64>>,
    vectors: Vec<Mat<f64>>,
    dim: usize,
}

impl KroneckerEigen {
    /// Eigendecomposes each symmetric factor (only its lower triangle is read).
    ///
    /// Errors: no factors, an empty or non-square factor, a non-finite entry, a product whose
    /// order overflows, or an eigendecomposition that does not converge.
    pub fn from_matrices(factors: &[MatRef<'_, f64>]) -> Result<Self> {
        let mut values = Vec::with_capacity(factors.len());
        let mut vectors = Vec::with_capacity(factors.len());
        for f in factors {
            let n = check_square(*f, "KroneckerEigen factor")?;
            check_finite_mat(*f, "KroneckerEigen factor")?;
            let evd = gp_linalg::eigen::self_adjoint_eigen(*f)?;
            let s = evd.S().column_vector();
            values.push((0..n).map(|i| s[i]).collect());
            vectors.push(evd.U().to_owned());
        }
        Self::from_parts(values, vectors)
    }

    /// From given factor eigenpairs: `values[l][i]` is the eigenvalue of column `i` of
    /// `vectors[l]` (orthonormal columns are assumed, not checked).
    ///
    /// Errors: no factors, mismatched lengths, an empty factor, non-finite entries, or a
    /// product whose order overflows.
    pub fn from_parts(values: Vec<Vec<f64>>, vectors: Vec<Mat<f64>>) -> Result<Self> {
        if values.len() != vectors.len() {
            return Err(StructuredError::InvalidArgument {
                name: "values",
                reason: format!(
                    "{} eigenvalue lists for {} eigenvector matrices",
                    values.len(),
                    vectors.len()
                ),
            });
        }
        for (v, q) in values.iter().zip(&vectors) {
            let n = check_square(q.as_ref(), "KroneckerEigen eigenvectors")?;
            check_shape((v.len(), 1), (n, 1), "KroneckerEigen eigenvalues")?;
            check_finite_slice(v, "KroneckerEigen eigenvalues")?;
            check_finite_mat(q.as_ref(), "KroneckerEigen eigenvectors")?;
        }
        let shapes: Vec<_> = vectors.iter().map(|q| (q.nrows(), q.ncols())).collect();
        let (dim, _, _) = product_shape(&shapes)?;
        Ok(Self {
            values,
            vectors,
            dim,
        })
    }

    /// Number of factors `d`.
    pub fn num_factors(&self) -> usize {
        self.values.len()
    }

    /// The order `N = Π m_l` of the product.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The factor orders `m_l`.
    pub fn dims(&self) -> Vec<usize> {
        self.values.iter().map(Vec::len).collect()
    }

    /// The eigenvalues of factor `l` (ascending when computed by
    /// [`from_matrices`](Self::from_matrices)), or `None` if `l ≥ d`.
    pub fn factor_eigenvalues(&self, l: usize) -> Option<&[f64]> {
        self.values.get(l).map(Vec::as_slice)
    }

    /// The eigenvectors (columns) of factor `l`, or `None` if `l ≥ d`.
    pub fn factor_eigenvectors(&self, l: usize) -> Option<MatRef<'_, f64>> {
        self.vectors.get(l).map(Mat::as_ref)
    }

    /// The eigenvalue `Π_l λ_l[i_l]` of the multi-index `(i₁, …, i_d)`.
    ///
    /// Errors: a multi-index of the wrong length or out of range.
    pub fn eigenvalue(&self, multi_index: &[usize]) -> Result<f64> {
        if multi_index.len() != self.num_factors()
            || multi_index
                .iter()
                .zip(&self.values)
                .any(|(&i, v)| i >= v.len())
        {
            return Err(StructuredError::InvalidArgument {
                name: "multi_index",
                reason: format!(
                    "{multi_index:?} is not a multi-index of a grid of shape {:?}",
                    self.dims()
                ),
            });
        }
        Ok(multi_index
            .iter()
            .zip(&self.values)
            .map(|(&i, v)| v[i])
            .product())
    }

    /// All `N` eigenvalues, in the Kronecker order (last factor fastest; not sorted). Forms
    /// an `N`-vector.
    pub fn eigenvalues(&self) -> Col<f64> {
        let refs: Vec<&[f64]> = self.values.iter().map(Vec::as_slice).collect();
        Col::from_iter(kron_vectors(&refs))
    }

    /// The `p` largest eigenvalues of the product and their multi-indices, without forming
    /// the `N` eigenvalues (GRIEF Algorithm 1; see [`top_eigenvalues`]).
    pub fn top_eigenvalues(&self, p: usize, options: &TopEigenOptions) -> Result<TopEigenvalues> {
        let refs: Vec<&[f64]> = self.values.iter().map(Vec::as_slice).collect();
        top_eigenvalues(&refs, p, options)
    }

    /// Returns `Q X` with `Q = Q₁ ⊗ … ⊗ Q_d`.
    pub fn apply_eigenvectors(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.apply_q(x, false, "KroneckerEigen::apply_eigenvectors")
    }

    /// Returns `Qᵀ X` with `Q = Q₁ ⊗ … ⊗ Q_d`.
    pub fn apply_eigenvectors_transpose(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.apply_q(x, true, "KroneckerEigen::apply_eigenvectors_transpose")
    }

    /// Returns `(K₁ ⊗ … ⊗ K_d + σ²I)⁻¹ B = Q (Λ + σ²I)⁻¹ Qᵀ B`.
    ///
    /// Errors: a non-finite `sigma2`, `B` with the wrong number of rows, or a shifted
    /// eigenvalue `λ + σ² ≤ 0` (the matrix is not positive definite;
    /// [`LinalgError::NotPositive`] with its flat index).
    pub fn solve_shifted(&self, sigma2: f64, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_shape(
            (b.nrows(), b.ncols()),
            (self.dim, b.ncols()),
            "KroneckerEigen::solve_shifted",
        )?;
        let shifted = self.shifted_eigenvalues(sigma2, "KroneckerEigen::solve_shifted")?;
        let mut y = self.apply_q(b, true, "KroneckerEigen::solve_shifted")?;
        for j in 0..y.ncols() {
            for (i, &s) in shifted.iter().enumerate() {
                y[(i, j)] /= s;
            }
        }
        self.apply_q(y.as_ref(), false, "KroneckerEigen::solve_shifted")
    }

    /// `log det(K₁ ⊗ … ⊗ K_d + σ²I) = Σ log(λ + σ²)` over all `N` eigenvalues.
    ///
    /// Errors as for [`solve_shifted`](Self::solve_shifted).
    pub fn log_det_shifted(&self, sigma2: f64) -> Result<f64> {
        let shifted = self.shifted_eigenvalues(sigma2, "KroneckerEigen::log_det_shifted")?;
        Ok(shifted.iter().map(|s| s.ln()).sum())
    }

    fn shifted_eigenvalues(&self, sigma2: f64, context: &'static str) -> Result<Vec<f64>> {
        if !sigma2.is_finite() {
            return Err(StructuredError::InvalidArgument {
                name: "sigma2",
                reason: format!("the noise variance must be finite, got {sigma2}"),
            });
        }
        let refs: Vec<&[f64]> = self.values.iter().map(Vec::as_slice).collect();
        let mut shifted = kron_vectors(&refs);
        for (index, s) in shifted.iter_mut().enumerate() {
            *s += sigma2;
            if *s <= 0.0 || s.is_nan() {
                return Err(LinalgError::NotPositive {
                    context,
                    index,
                    value: *s,
                }
                .into());
            }
        }
        Ok(shifted)
    }

    fn apply_q(
        &self,
        x: MatRef<'_, f64>,
        transpose: bool,
        context: &'static str,
    ) -> Result<Mat<f64>> {
        check_shape((x.nrows(), x.ncols()), (self.dim, x.ncols()), context)?;
        let ops: Vec<MatOp<'_>> = self
            .vectors
            .iter()
            .map(|q| MatOp(if transpose { q.transpose() } else { q.as_ref() }))
            .collect();
        let refs: Vec<&dyn LinearOperator> = ops.iter().map(|o| o as &dyn LinearOperator).collect();
        let mut out = Mat::zeros(self.dim, x.ncols());
        kron_matmat(&refs, self.dim, x, out.as_mut());
        Ok(out)
    }
}

/// A borrowed dense matrix (possibly a transposed view) as an operator.
struct MatOp<'a>(MatRef<'a, f64>);

impl LinearOperator for MatOp<'_> {
    fn nrows(&self) -> usize {
        self.0.nrows()
    }
    fn ncols(&self) -> usize {
        self.0.ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matmat(x.as_mat(), out.as_mat_mut());
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        matmul(out, Accum::Replace, self.0, x, 1.0, parallelism());
    }
}
