//! `W*ᵀ` of a few interpolated points as a dense `m × b` block (the right-hand sides of the
//! variance solves). The prior covariances `W_a K_G W_bᵀ` come from the stencils' 1-D forms
//! ([`GridKernel::interpolated_cross`](crate::grid::GridKernel), `interpolated_diagonal`).

use faer::Mat;
use gp_structured::InterpolationWeights;

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
