//! The computation-aware latent posterior `GP(m_{i,j}, K_{i,j})` of IterNCGP.

use faer::{Col, ColRef, Mat, MatRef};
use gp_linalg::LinearOperator;

use super::shared_outputs::cn_to_blocks;
use crate::error::{ModelError, Result};

/// Entries of one block product's output in [`IterNcgpPosterior::predict`] (`2²⁵`, 256 MiB).
const PREDICT_BLOCK_ENTRIES: usize = 1 << 25;

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
    /// `(1 + B)·C` columns, split into chunks when its output would exceed 256 MiB.
    ///
    /// Errors: [`ModelError::LengthMismatch`] for shapes that do not match.
    pub fn predict(
        &self,
        cross: &dyn LinearOperator,
        prior_variance: ColRef<'_, f64>,
        prior_mean: Option<MatRef<'_, f64>>,
    ) -> Result<LatentMarginals> {
        self.predict_in_blocks(cross, prior_variance, prior_mean, PREDICT_BLOCK_ENTRIES)
    }

    /// [`predict`](Self::predict) with block products of at most `block_entries` output
    /// entries (at least one column each).
    fn predict_in_blocks(
        &self,
        cross: &dyn LinearOperator,
        prior_variance: ColRef<'_, f64>,
        prior_mean: Option<MatRef<'_, f64>>,
        block_entries: usize,
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
        // [v | Q] in chunks of columns: one block product per chunk, so that the product's
        // N⋄ × (chunk·C) output stays bounded when Q is wide (a full-rank root of a dense
        // reference has N·C columns: one product would need N⋄ × (1 + N·C) entries).
        let b = self.root.ncols();
        let chunk = (block_entries / (nt * c).max(1)).clamp(1, 1 + b);
        let mut mean = Mat::from_fn(nt, c, |i, k| prior_mean.map_or(0.0, |pm| pm[(i, k)]));
        let mut variance = Mat::from_fn(nt, c, |i, _| prior_variance[i]);
        let mut start = 0;
        while start < 1 + b {
            let width = chunk.min(1 + b - start);
            // Column 0 of the stack is v, columns 1.. are Q.
            let stacked = Mat::from_fn(n * c, width, |i, j| match start + j {
                0 => self.weights[i],
                col => self.root[(i, col - 1)],
            });
            let blocks = cn_to_blocks(stacked.as_ref(), c);
            let mut out = Mat::<f64>::zeros(nt, blocks.ncols());
            cross.matmat(blocks.as_ref(), out.as_mut());
            for j in 0..width {
                for k in 0..c {
                    let column = out.col(j * c + k);
                    if start + j == 0 {
                        for i in 0..nt {
                            mean[(i, k)] += column[i];
                        }
                    } else {
                        for i in 0..nt {
                            variance[(i, k)] -= column[i] * column[i];
                        }
                    }
                }
            }
            start += width;
        }
        Ok(LatentMarginals { mean, variance })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gp_linalg::DenseOperator;

    /// Column chunks of any width give the same marginals as one block product.
    #[test]
    fn chunked_prediction_equals_one_block() {
        let (n, c, b, nt) = (7, 3, 5, 4);
        let value = |i: usize, j: usize| ((i * 31 + j * 17) % 13) as f64 / 13.0 - 0.5;
        let post = IterNcgpPosterior::new(
            Col::from_fn(n * c, |i| value(i, 99)),
            Mat::from_fn(n * c, b, |i, j| 0.3 * value(i, j)),
            c,
        )
        .unwrap();
        let cross = DenseOperator::new(Mat::from_fn(nt, n, |i, j| value(i + 50, j)));
        let prior = Col::from_fn(nt, |_| 2.0);
        let pm = Mat::from_fn(nt, c, |i, k| value(i, k + 7));
        let whole = post
            .predict_in_blocks(&cross, prior.as_ref(), Some(pm.as_ref()), usize::MAX)
            .unwrap();
        for entries in [1, nt * c, 2 * nt * c + 1] {
            let parts = post
                .predict_in_blocks(&cross, prior.as_ref(), Some(pm.as_ref()), entries)
                .unwrap();
            assert!((&parts.mean - &whole.mean).norm_l2() <= 1e-14);
            assert!((&parts.variance - &whole.variance).norm_l2() <= 1e-14);
        }
    }
}
