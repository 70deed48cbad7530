//! `W_a K_G W_bᵀ` and `diag(W K_G Wᵀ)` for a grid kernel that is a Kronecker product of
//! symmetric Toeplitz factors (a stationary product kernel on the regular grid), from the
//! interpolation stencils alone.
//!
//! Row `i` of `W` is the tensor product of its per-dimension weights `u^{(l)}` over
//! contiguous runs of `w` nodes starting at node `a_l` of axis `l`, so with
//! `K_G = s ⊗_l T(c_l)`
//!
//! `(W_a K_G W_bᵀ)_{ij} = s Π_l Σ_{p,q<w} u^{(l)}_p v^{(l)}_q c_l[|a_l + p − b_l − q|]`,
//!
//! `O(d w²)` per pair where the expanded form `Σ_{p,q} W_ip W_jq K_G[p, q]` costs
//! `O(w^{2d} d)` (4096 products of `d` factors per pair for cubic stencils in 3-D). The
//! diagonal is what a pivoted-Cholesky preconditioner of the SKI kernel needs at every set of
//! hyperparameters, and the prior variance of SKI predictions; the cross term gives their
//! prior covariances.

use faer::Mat;
use rayon::prelude::*;

use super::{fill_weights, InterpolationWeights, ROW_CHUNK};
use crate::error::{Result, StructuredError};

impl InterpolationWeights {
    /// The diagonal of `W K_G Wᵀ` (length `n`) for `K_G = scale · T(c_0) ⊗ … ⊗ T(c_{d−1})`,
    /// `T(c)` the symmetric Toeplitz matrix with first column `c` (as long as its grid axis;
    /// the diagonal reads its first `w` entries, `w` the stencil width).
    ///
    /// Errors: [`StructuredError::InvalidArgument`] when `columns` does not hold one column
    /// per dimension, a column's length differs from its grid axis, or `scale` or an entry
    /// is not finite.
    pub fn toeplitz_kronecker_diagonal(&self, scale: f64, columns: &[&[f64]]) -> Result<Vec<f64>> {
        self.check_toeplitz_columns(scale, columns)?;
        let (d, w) = (self.d, self.w);
        let mut out = vec![0.0; self.n];
        out.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(chunk, rows)| {
                let mut weights = vec![0.0; d * w];
                let first = chunk * ROW_CHUNK;
                for (k, value) in rows.iter_mut().enumerate() {
                    let i = first + k;
                    fill_weights(self.scheme, w, &self.taus[i * d..(i + 1) * d], &mut weights);
                    let mut product = scale;
                    for (wl, c) in weights.chunks_exact(w).zip(columns) {
                        product *= stencil_quadratic_form(wl, c);
                    }
                    *value = product;
                }
            });
        Ok(out)
    }

    /// `W K_G Vᵀ` (`n × n_other`) for the points of `self` and of `other`, interpolated
    /// onto the same grid with the same scheme, and `K_G` as in
    /// [`toeplitz_kronecker_diagonal`](Self::toeplitz_kronecker_diagonal): the prior
    /// covariances of two (small) sets of points, entry by entry from their stencils.
    ///
    /// Errors as [`toeplitz_kronecker_diagonal`](Self::toeplitz_kronecker_diagonal), and
    /// [`StructuredError::InvalidArgument`] when `other` interpolates onto another grid or
    /// with another scheme.
    pub fn toeplitz_kronecker_cross(
        &self,
        other: &InterpolationWeights,
        scale: f64,
        columns: &[&[f64]],
    ) -> Result<Mat<f64>> {
        self.check_toeplitz_columns(scale, columns)?;
        if other.sizes != self.sizes || other.scheme != self.scheme {
            return Err(StructuredError::InvalidArgument {
                name: "toeplitz_kronecker_cross",
                reason: format!(
                    "both sets of points must be interpolated onto the same grid with the same \
                     scheme: grid {:?} ({}) against {:?} ({})",
                    self.sizes,
                    self.scheme.name(),
                    other.sizes,
                    other.scheme.name()
                ),
            });
        }
        let (a, b) = (self.stencils(), other.stencils());
        let w = self.w;
        Ok(Mat::from_fn(self.n, other.n, |i, j| {
            let ((first_a, u), (first_b, v)) = (&a[i], &b[j]);
            let mut product = scale;
            for (l, c) in columns.iter().enumerate() {
                let lane = l * w..(l + 1) * w;
                let offset = first_a[l] as isize - first_b[l] as isize;
                product *= stencil_form(&u[lane.clone()], &v[lane], offset, c);
            }
            product
        }))
    }

    /// Per row: the first stencil node on every axis and the `d·w` per-dimension weights
    /// (dimension-major).
    fn stencils(&self) -> Vec<(Vec<usize>, Vec<f64>)> {
        (0..self.n)
            .filter_map(|i| {
                let weights = self.row_weights(i)?;
                let first = self
                    .strides
                    .iter()
                    .zip(&self.sizes)
                    .map(|(&stride, &size)| (self.starts[i] / stride) % size)
                    .collect();
                Some((first, weights))
            })
            .collect()
    }

    /// One first column per dimension, as long as its axis, finite where read; a finite
    /// scale.
    fn check_toeplitz_columns(&self, scale: f64, columns: &[&[f64]]) -> Result<()> {
        let invalid = |reason: String| StructuredError::InvalidArgument {
            name: "toeplitz_kronecker_diagonal / _cross",
            reason,
        };
        if columns.len() != self.d {
            return Err(invalid(format!(
                "need one Toeplitz first column per grid dimension ({}), got {}",
                self.d,
                columns.len()
            )));
        }
        for (l, (c, &m)) in columns.iter().zip(&self.sizes).enumerate() {
            if c.len() != m {
                return Err(invalid(format!(
                    "first column {l} has {} entries but grid axis {l} has {m} points",
                    c.len()
                )));
            }
            if let Some(v) = c.iter().find(|v| !v.is_finite()) {
                return Err(invalid(format!("first column {l} holds {v}")));
            }
        }
        if !scale.is_finite() {
            return Err(invalid(format!("the scale must be finite, got {scale}")));
        }
        Ok(())
    }
}

/// `Σ_{a,b} u_a u_b c[|a − b|]` = `c[0] Σ u_a² + 2 Σ_{δ≥1} c[δ] Σ_a u_a u_{a+δ}`: the
/// diagonal's factor, each lag summed once (half the products of [`stencil_form`]).
fn stencil_quadratic_form(u: &[f64], c: &[f64]) -> f64 {
    let mut sum = 0.0;
    for (delta, &cd) in c.iter().enumerate().take(u.len()) {
        let lagged: f64 = u.iter().zip(&u[delta..]).map(|(a, b)| a * b).sum();
        sum += if delta == 0 {
            cd * lagged
        } else {
            2.0 * cd * lagged
        };
    }
    sum
}

/// `Σ_{p,q} u_p v_q c[|offset + p − q|]`: one dimension's factor of the stencil form, for
/// stencils whose first nodes are `offset` apart.
fn stencil_form(u: &[f64], v: &[f64], offset: isize, c: &[f64]) -> f64 {
    let mut sum = 0.0;
    for (p, up) in u.iter().enumerate() {
        for (q, vq) in v.iter().enumerate() {
            sum += up * vq * c[(offset + p as isize - q as isize).unsigned_abs()];
        }
    }
    sum
}
