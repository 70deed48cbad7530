//! The exact GP on a complete KMCG grid (spec `kmcg.md` §1.1 last paragraph, §3.5) from the
//! per-axis eigendecompositions, the kernel operator `K = K₁ ⊗ … ⊗ K_D` for the solvers, and
//! the cross-covariance with the test points through the Kronecker structure, never as an
//! `n* × N` matrix (except [`GridReference::cross_matrix`], for tests).
//!
//! With `K_l = Q_l Λ_l Q_lᵀ`, `Q = ⊗ Q_l`, `Λ = ⊗ Λ_l` and `k* = k(X, x*) = ⊗ k_l(X_l, x*_l)`:
//! * `α = Q (Λ + σ²)⁻¹ Qᵀ y`;
//! * `f̄(x*) = k*ᵀ α`, a contraction of the tensor `α` with one vector per axis;
//! * `v̄(x*) = k** − Σ_i (Qᵀk*)_i² / (λ_i + σ²) + σ²` with `Qᵀk* = ⊗ Q_lᵀ k_l(X_l, x*_l)`;
//! * `nlZ = ½ yᵀα + ½ Σ ln(λ_i + σ²) + (N/2) ln 2π`.
//!
//! The SE kernel is split as `sf^{2/D}` per axis factor (spec §5 item 13). Points are in the
//! Kronecker order of [`crate::synthetic::grid::grid_points`] (last axis fastest).

use std::sync::Arc;
use std::time::Instant;

use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{DenseOperator, LinearOperator};
use gp_structured::{Kronecker, KroneckerEigen};

use super::exact::ExactReference;
use super::hyper::StructuredHyper;
use crate::error::BenchError;
use crate::synthetic::grid::GridData;

/// The exact GP of a complete tensor grid and its structured operators.
#[derive(Debug, Clone)]
pub struct GridReference {
    dims: Vec<usize>,
    hyper: StructuredHyper,
    /// Per-axis kernel matrices `K_l` (`G_l × G_l`, each carrying `sf^{2/D}`).
    factors: Vec<Mat<f64>>,
    /// Per-axis test cross-covariances `k_l(x*_l, X_l)` (`n* × G_l`).
    cross: Vec<Mat<f64>>,
    eig: KroneckerEigen,
    /// `α = (K + σ²I)⁻¹ y`.
    alpha: Col<f64>,
    exact: ExactReference,
}

/// Contracts the last axis of a tensor (last axis fastest, `t.len() = rows · v.len()`) with
/// `v`: `out[r] = Σ_k t[r·G + k] v[k]`.
fn contract_last(t: &[f64], v: &[f64]) -> Vec<f64> {
    t.chunks_exact(v.len())
        .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
        .collect()
}

impl GridReference {
    /// The exact posterior at `grid.x_test` for the isotropic SE kernel of `hyper` on the
    /// complete grid `grid.axes` with targets `grid.y`.
    ///
    /// Errors: invalid hyperparameters, targets of the wrong length, or a failed
    /// eigendecomposition / non-positive `λ + σ²`.
    pub fn new(grid: &GridData, hyper: &StructuredHyper) -> Result<Self, BenchError> {
        let start = Instant::now();
        let dims: Vec<usize> = grid.axes.iter().map(Vec::len).collect();
        let n: usize = dims.iter().product();
        let d = dims.len();
        if d == 0 || grid.y.nrows() != n || grid.x_test.ncols() != d {
            return Err(BenchError::InvalidArgument {
                name: "grid",
                reason: format!(
                    "{d} axes of sizes {dims:?} (N = {n}), {} targets, test points of dimension {}",
                    grid.y.nrows(),
                    grid.x_test.ncols()
                ),
            });
        }
        let axis_variance = hyper.signal_variance.powf(1.0 / d as f64);
        let axis_kernel = SquaredExponential::new(vec![hyper.lengthscale], axis_variance)?;
        let n_test = grid.x_test.nrows();
        let mut factors = Vec::with_capacity(d);
        let mut cross = Vec::with_capacity(d);
        for (l, axis) in grid.axes.iter().enumerate() {
            let pts = Mat::from_fn(axis.len(), 1, |i, _| axis[i]);
            let test = Mat::from_fn(n_test, 1, |j, _| grid.x_test[(j, l)]);
            factors.push(axis_kernel.matrix(pts.as_ref(), pts.as_ref())?);
            cross.push(axis_kernel.matrix(test.as_ref(), pts.as_ref())?);
        }
        let refs: Vec<MatRef<'_, f64>> = factors.iter().map(Mat::as_ref).collect();
        let eig = KroneckerEigen::from_matrices(&refs)?;
        let sigma2 = hyper.noise_variance;
        let y = grid.y.as_mat();
        let alpha = eig.solve_shifted(sigma2, y)?.col(0).to_owned();
        let log_det = eig.log_det_shifted(sigma2)?;
        let quad: f64 = (0..n).map(|i| grid.y[i] * alpha[i]).sum();
        let nlz = 0.5 * quad + 0.5 * log_det + 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
        let mut this = Self {
            dims,
            hyper: *hyper,
            factors,
            cross,
            eig,
            alpha,
            exact: ExactReference {
                mean: Col::zeros(0),
                variance: Col::zeros(0),
                nlz,
                time_s: 0.0,
            },
        };
        let mean = this.cross_dot(this.alpha.as_ref())?;
        let variance = this.test_variance();
        this.exact.mean = mean;
        this.exact.variance = variance;
        this.exact.time_s = start.elapsed().as_secs_f64();
        Ok(this)
    }

    /// The exact posterior at the test points and the exact `nlZ`.
    pub fn exact(&self) -> &ExactReference {
        &self.exact
    }

    /// `α = (K + σ²I)⁻¹ y`.
    pub fn alpha(&self) -> ColRef<'_, f64> {
        self.alpha.as_ref()
    }

    /// The hyperparameters.
    pub fn hyper(&self) -> &StructuredHyper {
        &self.hyper
    }

    /// Training points `N = Π G_l`.
    pub fn n_train(&self) -> usize {
        self.dims.iter().product()
    }

    /// Test points `n*`.
    pub fn n_test(&self) -> usize {
        self.cross[0].nrows()
    }

    /// The kernel matrix `K = K₁ ⊗ … ⊗ K_D` (without noise) as a structured operator,
    /// `O(N Σ G_l)` per product.
    ///
    /// Errors: never for a constructed reference (the factors are square).
    pub fn operator(&self) -> Result<Kronecker, BenchError> {
        let ops: Vec<Arc<dyn LinearOperator>> = self
            .factors
            .iter()
            .map(|f| Arc::new(DenseOperator::new(f.clone())) as Arc<dyn LinearOperator>)
            .collect();
        Ok(Kronecker::new(ops)?)
    }

    /// `k(x*_j, X) · s` for every test point `j` (length `n*`), through the Kronecker
    /// structure: one `(N/G_D) × G_D` by `G_D × n*` product, then per point the remaining
    /// axes on `N/G_D` numbers. The KMCG runner gets `Sᵀ k(X, x*)` one direction at a time.
    ///
    /// Errors: `s` of a length other than `N`.
    pub fn cross_dot(&self, s: ColRef<'_, f64>) -> Result<Col<f64>, BenchError> {
        let n = self.n_train();
        if s.nrows() != n {
            return Err(BenchError::InvalidArgument {
                name: "s",
                reason: format!("length {} for a grid of N = {n}", s.nrows()),
            });
        }
        let d = self.dims.len();
        let g_last = self.dims[d - 1];
        let s_vec: Vec<f64> = s.iter().copied().collect();
        let s_mat = MatRef::from_row_major_slice(&s_vec, n / g_last, g_last);
        let first = s_mat * self.cross[d - 1].transpose();
        Ok(Col::from_fn(self.n_test(), |j| {
            let mut t: Vec<f64> = first.col(j).iter().copied().collect();
            for l in (0..d - 1).rev() {
                let v: Vec<f64> = self.cross[l].row(j).iter().copied().collect();
                t = contract_last(&t, &v);
            }
            t[0]
        }))
    }

    /// The dense `n* × N` cross-covariance `k(X*, X)` (for tests on small grids only).
    pub fn cross_matrix(&self) -> Mat<f64> {
        let n = self.n_train();
        let d = self.dims.len();
        Mat::from_fn(self.n_test(), n, |j, i| {
            let mut rest = i;
            let mut value = 1.0;
            for l in (0..d).rev() {
                value *= self.cross[l][(j, rest % self.dims[l])];
                rest /= self.dims[l];
            }
            value
        })
    }

    /// `v̄(x*) = k** − Σ (Qᵀk*)² / (λ + σ²) + σ²` at every test point.
    fn test_variance(&self) -> Col<f64> {
        let sigma2 = self.hyper.noise_variance;
        let shifted: Vec<f64> = self.eig.eigenvalues().iter().map(|l| l + sigma2).collect();
        // u_l = Q_lᵀ k_l(X_l, x*_l) for every test point at once: G_l × n*.
        let u: Vec<Mat<f64>> = self
            .cross
            .iter()
            .enumerate()
            .map(|(l, c)| {
                let q = self
                    .eig
                    .factor_eigenvectors(l)
                    .expect("one factor per axis");
                q.transpose() * c.transpose()
            })
            .collect();
        Col::from_fn(self.n_test(), |j| {
            let mut w = vec![1.0];
            for ul in &u {
                let g = ul.nrows();
                let mut next = Vec::with_capacity(w.len() * g);
                for &a in &w {
                    next.extend((0..g).map(|k| a * ul[(k, j)] * ul[(k, j)]));
                }
                w = next;
            }
            let reduction: f64 = w.iter().zip(&shifted).map(|(a, s)| a / s).sum();
            (self.hyper.signal_variance - reduction).max(0.0) + sigma2
        })
    }
}
