//! The weighted derivative contraction of a stored squared-exponential (ARD) kernel matrix
//! by dense products, `O(n²(r + d))` flops in GEMMs instead of one kernel evaluation with
//! gradient per entry.
//!
//! With `M = L diag(w) Rᵀ` and `W = K_f ∘ M` (`K_f` the noise-free kernel matrix),
//!
//! ```text
//! Σ_c w_c L_cᵀ (∂K/∂log s) R_c   = Σ_pq W_pq,
//! Σ_c w_c L_cᵀ (∂K/∂log ℓ_k) R_c = Σ_pq W_pq (x_pk − x_qk)² / ℓ_k²
//!                                = [Σ_p x_pk² (W1)_p + Σ_q x_qk² (Wᵀ1)_q − 2 x_kᵀ W x_k] / ℓ_k²,
//! ```
//!
//! computed over column blocks of `M` so that no `n × n` matrix besides the stored `K̂` is
//! formed.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};
use rayon::prelude::*;

use crate::objective::stored_kernel::{SymmetricStored, PANEL};

/// Columns of `M` per block (a multiple of the stored kernel's panel width).
const BLOCK: usize = 16 * PANEL;

/// One block's share: row sums of `W` over the block's columns, `Σ_q x_qk² colsum_q` per
/// dimension, `W_blk X_blk` and `Σ W_blk`.
struct BlockPart {
    rowsum: Vec<f64>,
    col_term: Vec<f64>,
    wx: Mat<f64>,
    total: f64,
}

/// `[Σ_c w_c L_cᵀ ∂K/∂log ℓ_k R_c (k < d), Σ_c w_c L_cᵀ ∂K/∂log s R_c]` for the stored
/// `K̂ = K_f + σ²I` (`k_hat`, `n × n`), points `x` (`n × d`) and length scales.
pub(crate) fn se_weighted_contraction(
    k_hat: &SymmetricStored,
    noise_variance: f64,
    x: MatRef<'_, f64>,
    lengthscales: &[f64],
    left: MatRef<'_, f64>,
    right: MatRef<'_, f64>,
    weights: &[f64],
) -> Vec<f64> {
    let (n, d, r) = (x.nrows(), x.ncols(), left.ncols());
    // L diag(w), so that M = Lw Rᵀ.
    let lw = Mat::from_fn(n, r, |i, c| left[(i, c)] * weights[c]);
    let x_sq = Mat::from_fn(n, d, |i, k| x[(i, k)] * x[(i, k)]);
    let blocks: Vec<usize> = (0..n.div_ceil(BLOCK)).collect();
    // One `n × BLOCK` buffer for `W` and one column panel per rayon job, not per block:
    // fresh ones cost a page fault per 4 KiB on every block.
    let parts: Vec<BlockPart> = blocks
        .par_iter()
        .map_init(
            || (Mat::<f64>::zeros(n, BLOCK.min(n)), vec![0.0; n * PANEL]),
            |(w_buf, panel), &b| {
                let q0 = b * BLOCK;
                let bw = BLOCK.min(n - q0);
                let mut w = w_buf.as_mut().subcols_mut(0, bw);
                matmul(
                    w.as_mut(),
                    Accum::Replace,
                    lw.as_ref(),
                    right.subrows(q0, bw).transpose(),
                    1.0,
                    Par::Seq,
                );
                // W = K_f ∘ M over the block's 16-column panels: row `i` of a column panel holds
                // `K̂[i, 16pp + r]` contiguously. Every row sum is accumulated in order of the
                // column and every column sum in order of the row, as a column-by-column pass
                // would.
                let mut colsum = vec![0.0; bw];
                let mut rowsum = vec![0.0; n];
                for pp in 0..bw.div_ceil(PANEL) {
                    k_hat.column_panel(q0 / PANEL + pp, panel);
                    let h = PANEL.min(bw - pp * PANEL);
                    for (i, krow) in panel.chunks_exact(PANEL).enumerate() {
                        for (r, &kv) in krow[..h].iter().enumerate() {
                            let j = pp * PANEL + r;
                            let kf = if i == q0 + j { kv - noise_variance } else { kv };
                            let wv = w[(i, j)] * kf;
                            w[(i, j)] = wv;
                            colsum[j] += wv;
                            rowsum[i] += wv;
                        }
                    }
                }
                let mut total = 0.0;
                for s in &colsum {
                    total += s;
                }
                // Σ_q x_qk² colsum_q over the block.
                let col_term: Vec<f64> = (0..d)
                    .map(|k| (0..bw).map(|j| x_sq[(q0 + j, k)] * colsum[j]).sum())
                    .collect();
                let mut wx = Mat::<f64>::zeros(n, d);
                matmul(
                    wx.as_mut(),
                    Accum::Replace,
                    w.as_ref(),
                    x.subrows(q0, bw),
                    1.0,
                    Par::Seq,
                );
                BlockPart {
                    rowsum,
                    col_term,
                    wx,
                    total,
                }
            },
        )
        .collect();
    let mut rowsum = vec![0.0; n];
    let mut col_term = vec![0.0; d];
    let mut wx = Mat::<f64>::zeros(n, d);
    let mut total = 0.0;
    for part in &parts {
        for (a, b) in rowsum.iter_mut().zip(&part.rowsum) {
            *a += b;
        }
        for (a, b) in col_term.iter_mut().zip(&part.col_term) {
            *a += b;
        }
        wx += &part.wx;
        total += part.total;
    }
    let mut out: Vec<f64> = (0..d)
        .map(|k| {
            let row_term: f64 = (0..n).map(|p| x_sq[(p, k)] * rowsum[p]).sum();
            let cross: f64 = (0..n).map(|p| x[(p, k)] * wx[(p, k)]).sum();
            (row_term + col_term[k] - 2.0 * cross) / (lengthscales[k] * lengthscales[k])
        })
        .collect();
    out.push(total);
    out
}
