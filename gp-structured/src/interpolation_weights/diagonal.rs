//! The diagonal of `W K_G Wᵀ` for a grid kernel that is a Kronecker product of symmetric
//! Toeplitz factors (a stationary product kernel on the regular grid).
//!
//! Row `i` of `W` is the tensor product of its per-dimension weights `w^{(l)}` over
//! contiguous runs of `w` nodes, so with `K_G = s ⊗_l T(c_l)`
//!
//! `(W K_G Wᵀ)_{ii} = s Π_l Σ_{a,b<w} w^{(l)}_a w^{(l)}_b c_l[|a − b|]`,
//!
//! `O(d w²)` per row where the expanded form `Σ_{p,q} W_ip W_iq K_G[p, q]` costs
//! `O(w^{2d} d)` (4096 products of `d` factors per row for cubic stencils in 3-D). It is what
//! a pivoted-Cholesky preconditioner of the SKI kernel needs at every set of
//! hyperparameters, and the prior variance of SKI predictions.

use rayon::prelude::*;

use super::{fill_weights, InterpolationWeights, ROW_CHUNK};
use crate::error::{Result, StructuredError};

impl InterpolationWeights {
    /// The diagonal of `W K_G Wᵀ` (length `n`) for `K_G = scale · T(c_0) ⊗ … ⊗ T(c_{d−1})`,
    /// `T(c)` the symmetric Toeplitz matrix with first column `c` (only its first `w`
    /// entries are read, `w` the stencil width).
    ///
    /// Errors: [`StructuredError::InvalidArgument`] when `columns` does not hold one column
    /// per dimension, a column is shorter than the stencil width or than its grid axis, or
    /// `scale` or a read entry is not finite.
    pub fn toeplitz_kronecker_diagonal(&self, scale: f64, columns: &[&[f64]]) -> Result<Vec<f64>> {
        let invalid = |reason: String| StructuredError::InvalidArgument {
            name: "toeplitz_kronecker_diagonal",
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
            if let Some(v) = c[..self.w.min(m)].iter().find(|v| !v.is_finite()) {
                return Err(invalid(format!("first column {l} holds {v}")));
            }
        }
        if !scale.is_finite() {
            return Err(invalid(format!("the scale must be finite, got {scale}")));
        }
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
}

/// `Σ_{a,b} u_a u_b c[|a − b|]` = `c[0] Σ u_a² + 2 Σ_{δ≥1} c[δ] Σ_a u_a u_{a+δ}`.
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
