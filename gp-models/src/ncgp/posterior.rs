//! The computation-aware latent posterior `GP(m_{i,j}, K_{i,j})` of IterNCGP.

use faer::{Col, ColRef, Mat, MatRef};
use gp_linalg::LinearOperator;

use super::shared_outputs::cn_to_blocks;
use crate::error::{ModelError, Result};

/// The latent posterior after `j` solver iterations of Newton step `i` (eqs. 8–9):
///
/// ```text
/// m_{i,j}(x) = m(x) + K(x, X) v,     K_{i,j}(x, x') = K(x, x') − K(x, X) Q Qᵀ K(X, x'),
/// ```
///
/// with `C_j = QQᵀ` the solver's precision estimate. Its variance is the *combined*
/// uncertainty: the exact Laplace variance plus the computational part
/// `K(x,X)(K̂⁻¹ − C_j)K(X,x) ≥ 0`, which shrinks as the solver runs (Prop. A.3).
/// Vectors are in CN order with `outputs = C` entries per point; the classes share one
/// kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct IterNcgpPosterior {
    weights: Col<f64>,
    root: Mat<f64>,
    outputs: usize,
}

/// Latent marginals at test points: rows points, columns latent functions.
#[derive(Debug, Clone, PartialEq)]
pub struct LatentMarginals {
    /// Means, `N⋄ × C`.
    pub mean: Mat<f64>,
    /// Variances (combined uncertainty), `N⋄ × C`.
    pub variance: Mat<f64>,
}

impl IterNcgpPosterior {
    /// The posterior with representer weights `v` (`N·C`) and root `Q` (`N·C × B`).
    ///
    /// Errors: [`ModelError::LengthMismatch`] if the lengths disagree or are not multiples
    /// of `outputs`; [`ModelError::InvalidOption`] for `outputs = 0`.
    pub fn new(weights: Col<f64>, root: Mat<f64>, outputs: usize) -> Result<Self> {
        if outputs == 0 {
            return Err(ModelError::InvalidOption {
                name: "IterNcgpPosterior::outputs",
                reason: "need at least one latent function".to_string(),
            });
        }
        if root.nrows() != weights.nrows() || !weights.nrows().is_multiple_of(outputs) {
            return Err(ModelError::LengthMismatch {
                context: "IterNcgpPosterior: rows of Q against the N·C weights",
                expected: weights.nrows(),
                found: root.nrows(),
            });
        }
        Ok(Self {
            weights,
            root,
            outputs,
        })
    }

    /// The representer weights `v`.
    pub fn weights(&self) -> ColRef<'_, f64> {
        self.weights.as_ref()
    }

    /// The root `Q` of the precision estimate.
    pub fn root(&self) -> MatRef<'_, f64> {
        self.root.as_ref()
    }

    /// `C`.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Latent means and variances at `N⋄` test points from the cross-covariance
    /// `K_x(X⋄, X)` (`N⋄ × N`, any operator: dense,
    /// [`KernelOperator::cross`](gp_kernels::KernelOperator::cross), SKI), the prior variances `k(x⋄, x⋄)` and the
    /// prior means at the test points (`N⋄ × C`; `None`: zero). One block product with
    /// `(1 + B)·C` columns.
    ///
    /// Errors: [`ModelError::LengthMismatch`] for shapes that do not match.
    pub fn predict(
        &self,
        cross: &dyn LinearOperator,
        prior_variance: ColRef<'_, f64>,
        prior_mean: Option<MatRef<'_, f64>>,
    ) -> Result<LatentMarginals> {
        let c = self.outputs;
        let n = self.weights.nrows() / c;
        let nt = cross.nrows();
        if cross.ncols() != n || prior_variance.nrows() != nt {
            return Err(ModelError::LengthMismatch {
                context:
                    "IterNcgpPosterior::predict: cross-covariance N⋄ × N and N⋄ prior variances",
                expected: n,
                found: cross.ncols(),
            });
        }
        if let Some(pm) = prior_mean {
            if pm.nrows() != nt || pm.ncols() != c {
                return Err(ModelError::LengthMismatch {
                    context: "IterNcgpPosterior::predict: prior means N⋄ × C",
                    expected: nt * c,
                    found: pm.nrows() * pm.ncols(),
                });
            }
        }
        let b = self.root.ncols();
        let mut stacked = Mat::<f64>::zeros(n * c, 1 + b);
        stacked.col_mut(0).copy_from(&self.weights);
        stacked.as_mut().subcols_mut(1, b).copy_from(&self.root);
        let blocks = cn_to_blocks(stacked.as_ref(), c);
        let mut out = Mat::<f64>::zeros(nt, blocks.ncols());
        cross.matmat(blocks.as_ref(), out.as_mut());
        let mean = Mat::from_fn(nt, c, |i, k| {
            out[(i, k)] + prior_mean.map_or(0.0, |pm| pm[(i, k)])
        });
        let variance = Mat::from_fn(nt, c, |i, k| {
            let explained: f64 = (1..=b).map(|col| out[(i, col * c + k)].powi(2)).sum();
            prior_variance[i] - explained
        });
        Ok(LatentMarginals { mean, variance })
    }
}
