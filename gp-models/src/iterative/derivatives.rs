//! Matrix-free contractions with the kernel derivatives: for every log hyperparameter `θ_k`
//! of the kernel and every column `c` of two `n × r` blocks `L`, `R`,
//!
//! ```text
//! Q[k, c] = L[:, c]ᵀ (∂K/∂θ_k) R[:, c],
//! ```
//!
//! without storing any `n × n` matrix: the gradient of the iterative GP needs
//! `αᵀ ∂K α` and the Hutchinson terms `(K̂⁻¹zᵢ)ᵀ ∂K (P⁻¹zᵢ)`, i.e. these contractions with
//! `L = [α | K̂⁻¹Z]` and `R = [α | P⁻¹Z]`.
//!
//! The pass runs over the tiles `(I, J)`, `J ≤ I`, of the lower triangle (every kernel
//! entry is evaluated once, by [`Kernel::eval_with_grad`], which gives all `p` derivatives
//! at once). By symmetry of `∂K`, an off-diagonal tile contributes both `(I, J)` and
//! `(J, I)`:
//!
//! ```text
//! Σ_{i∈I, j∈J} G_ij (L_ic R_jc + R_ic L_jc) = L_Iᵀ(G R_J) + R_Iᵀ(G L_J)   (column-wise),
//! ```
//!
//! so each tile is multiplied into the block `[R_J | L_J]` (one small GEMM per
//! hyperparameter, `2r` columns); a diagonal tile is counted with weight ½. Row tiles are
//! processed in parallel (rayon), each accumulating `p` blocks of `TILE × 2r`, which are
//! contracted with `[L_I | R_I]` at the end. The partial sums are added in a fixed order, so
//! the result does not depend on the scheduling. Cost: `n²/2` kernel evaluations with
//! gradient and `2 n² r p` flops of GEMM; memory `O(p · TILE² + p · TILE · r)` per thread.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use gp_kernels::Kernel;
use rayon::prelude::*;

/// Rows (and columns) of a tile of kernel entries.
const TILE: usize = 128;

/// `Q[k, c] = L[:, c]ᵀ (∂K/∂θ_k) R[:, c]` for the kernel's log hyperparameters `θ_k`
/// (`p × r`). `xs` holds the `n` points row major (`n × d`); `left` and `right` are `n × r`.
///
/// Contract (internal): the shapes agree and the points are finite.
pub(crate) fn derivative_quad_forms<K: Kernel + ?Sized>(
    kernel: &K,
    xs: &[f64],
    d: usize,
    left: MatRef<'_, f64>,
    right: MatRef<'_, f64>,
) -> Mat<f64> {
    let (n, r) = (left.nrows(), left.ncols());
    let p = kernel.n_params();
    // B = [R | L] (n × 2r), so that a tile G_IJ times B_J gives [G R_J | G L_J].
    let mut b = Mat::<f64>::zeros(n, 2 * r);
    b.as_mut().subcols_mut(0, r).copy_from(right);
    b.as_mut().subcols_mut(r, r).copy_from(left);
    let n_tiles = n.div_ceil(TILE);
    let partials: Vec<Mat<f64>> = (0..n_tiles)
        .into_par_iter()
        .map(|ti| row_tile(kernel, xs, d, b.as_ref(), left, right, p, ti))
        .collect();
    let mut q = Mat::<f64>::zeros(p, r);
    for part in &partials {
        q += part;
    }
    q
}

/// The contribution of row tile `ti` (all tiles `(ti, tj)`, `tj ≤ ti`).
#[allow(clippy::too_many_arguments)]
fn row_tile<K: Kernel + ?Sized>(
    kernel: &K,
    xs: &[f64],
    d: usize,
    b: MatRef<'_, f64>,
    left: MatRef<'_, f64>,
    right: MatRef<'_, f64>,
    p: usize,
    ti: usize,
) -> Mat<f64> {
    let n = b.nrows();
    let r = left.ncols();
    let i0 = ti * TILE;
    let mi = TILE.min(n - i0);
    // p derivative tiles, column major (mi × mj), one after the other.
    let mut tiles = vec![0.0; p * TILE * TILE];
    let mut acc: Vec<Mat<f64>> = (0..p).map(|_| Mat::zeros(mi, 2 * r)).collect();
    let mut grad = vec![0.0; p];
    for tj in 0..=ti {
        gp_linalg::simd::clear_upper_vector_state();
        let j0 = tj * TILE;
        let mj = TILE.min(n - j0);
        let size = mi * mj;
        for jj in 0..mj {
            let xj = &xs[(j0 + jj) * d..(j0 + jj + 1) * d];
            for ii in 0..mi {
                let xi = &xs[(i0 + ii) * d..(i0 + ii + 1) * d];
                kernel.eval_with_grad(xi, xj, &mut grad);
                let at = jj * mi + ii;
                for (k, g) in grad.iter().enumerate() {
                    tiles[k * size + at] = *g;
                }
            }
        }
        let weight = if tj == ti { 0.5 } else { 1.0 };
        for (k, acc_k) in acc.iter_mut().enumerate() {
            let g = MatRef::from_column_major_slice(&tiles[k * size..(k + 1) * size], mi, mj);
            matmul(
                acc_k.as_mut(),
                Accum::Add,
                g,
                b.subrows(j0, mj),
                weight,
                Par::Seq,
            );
        }
    }
    // Q[k, c] = L_I[:, c] · acc_k[:, c] + R_I[:, c] · acc_k[:, r + c].
    let l_i = left.subrows(i0, mi);
    let r_i = right.subrows(i0, mi);
    Mat::from_fn(p, r, |k, c| {
        let a = &acc[k];
        (0..mi)
            .map(|i| l_i[(i, c)] * a[(i, c)] + r_i[(i, c)] * a[(i, r + c)])
            .sum()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gp_kernels::SquaredExponential;

    #[test]
    fn matches_dense_derivatives() {
        // n not a multiple of the tile, to exercise the ragged edge.
        let (n, d, r) = (300, 2, 3);
        let x = Mat::from_fn(n, d, |i, j| ((i * 7 + j * 13) % 31) as f64 / 31.0);
        let xs: Vec<f64> = (0..n)
            .flat_map(|i| (0..d).map(move |j| ((i * 7 + j * 13) % 31) as f64 / 31.0))
            .collect();
        let kernel = SquaredExponential::new(vec![0.3, 0.5], 1.7).unwrap();
        let left = Mat::from_fn(n, r, |i, c| ((i + 3 * c) as f64 * 0.37).sin());
        let right = Mat::from_fn(n, r, |i, c| ((2 * i + c) as f64 * 0.11).cos());
        let q = derivative_quad_forms(&kernel, &xs, d, left.as_ref(), right.as_ref());
        let (_, grads) = kernel.matrix_and_grads(x.as_ref()).unwrap();
        for (k, g) in grads.iter().enumerate() {
            for c in 0..r {
                let exact = (left.col(c).transpose() * g * right.col(c)).abs();
                let scale = exact.abs().max(1.0);
                assert!(
                    (q[(k, c)] - (left.col(c).transpose() * g * right.col(c))).abs()
                        < 1e-10 * scale,
                    "k = {k}, c = {c}"
                );
            }
        }
    }
}
