//! Products with interpolation stencils: the prior SKI covariance `w_aᵀ K_G w_b` from the
//! `4^d` entries of each row (`O(16^d d)` per pair, independent of `m`), and `W*ᵀ` as a
//! dense `m × b` block.

use faer::Mat;
use gp_structured::InterpolationWeights;

use crate::grid::kernel::GridKernel;

/// The expanded rows (column indices and values) of `w`.
fn rows(w: &InterpolationWeights) -> Vec<(Vec<usize>, Vec<f64>)> {
    (0..w.num_rows()).filter_map(|i| w.row(i)).collect()
}

/// `Σ_a Σ_b u_a v_b K_G[c_a, c_b]` for two stencils.
fn stencil_form(gk: &GridKernel, a: &(Vec<usize>, Vec<f64>), b: &(Vec<usize>, Vec<f64>)) -> f64 {
    let mut sum = 0.0;
    for (&ca, &va) in a.0.iter().zip(&a.1) {
        if va == 0.0 {
            continue;
        }
        let mut inner = 0.0;
        for (&cb, &vb) in b.0.iter().zip(&b.1) {
            inner += vb * gk.entry(ca, cb);
        }
        sum += va * inner;
    }
    sum
}

/// The prior SKI covariance `W_a K_G W_bᵀ` (`n_a × n_b`), entry by entry from the stencils.
pub(crate) fn prior_covariance(
    gk: &GridKernel,
    wa: &InterpolationWeights,
    wb: &InterpolationWeights,
) -> Mat<f64> {
    let (ra, rb) = (rows(wa), rows(wb));
    Mat::from_fn(ra.len(), rb.len(), |i, j| stencil_form(gk, &ra[i], &rb[j]))
}

/// Rows `start .. start + len` of `w`, transposed into a dense `m × len` block.
pub(crate) fn transposed_block(w: &InterpolationWeights, start: usize, len: usize) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(w.num_cols(), len);
    for j in 0..len {
        if let Some((cols, vals)) = w.row(start + j) {
            for (c, v) in cols.into_iter().zip(vals) {
                out[(c, j)] += v;
            }
        }
    }
    out
}
