//! One classical Gram–Schmidt pass against a stored basis, `w ← w − Q (Pᵀ w)`, split over
//! fixed row blocks: the re-orthogonalization step of the Lanczos runs ([`project_out`]), and
//! its two halves, `Pᵀ w` ([`block_dots`]) and `w += α Q c` ([`add_block_combination`]).
//!
//! `Q` holds the basis and `P = B Q` its image under the inner product's matrix (`P = Q` for
//! the Euclidean product), so `Pᵀ w` are the coefficients of `w` along `Q` in the
//! `B`-inner product. At large `m` and many columns the pass is bound by memory bandwidth
//! (it reads `P` and `Q` once each), so the row blocks are spread over rayon's threads: on
//! hosts where one thread does not saturate memory (measured: an Intel Xeon streams 12–13
//! GB/s on one thread, 20–21 GB/s on two) that is up to 1.6× faster. The coefficients are
//! summed from the blocks' partial products in block order, and the blocks are the same
//! whatever the thread count, so every result is bit-for-bit the same sequentially and in
//! parallel.
//!
//! ```
//! use faer::mat;
//! use gp_linalg::projection::project_out;
//!
//! // Remove the components along e₁ and e₂ (Euclidean: P = Q).
//! let q = mat![[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]];
//! let mut w = [3.0, 4.0, 5.0];
//! let mut coeffs = Vec::new();
//! let removed = project_out(q.as_ref(), q.as_ref(), &mut w, &mut coeffs)?;
//! assert_eq!((w, coeffs.as_slice(), removed), ([0.0, 0.0, 5.0], &[3.0, 4.0][..], 25.0));
//! # Ok::<(), gp_linalg::LinalgError>(())
//! ```

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

use crate::error::Result;
use crate::validate::check_shape;

/// Rows per block. The blocks fix the order in which the coefficients are summed, so this
/// is part of the result's bits, not only of its speed.
pub const PROJECTION_ROWS: usize = 2048;

/// Bases with fewer stored values (`m × j`) than this are projected on the calling thread:
/// below about 2 MB the pass takes well under a millisecond and waking the pool does not pay.
const PARALLEL_VALUES: usize = 1 << 18;

/// `c = Pᵀ w`, then `w −= Q c`, for `Q` and `P` of `m × j` and `w` of length `m`; `coeffs`
/// receives `c` (resized to `j`). Returns `‖c‖²`: when the columns of `Q` are orthonormal in
/// the inner product `P` encodes, the squared norm that the pass removed from `w`, which the
/// DGKS criterion ("twice is enough") compares with what is left.
///
/// Errors with [`LinalgError::ShapeMismatch`](crate::LinalgError::ShapeMismatch) unless `Q`
/// and `P` have the same shape and `m` rows match `w`.
pub fn project_out(
    q: MatRef<'_, f64>,
    p: MatRef<'_, f64>,
    w: &mut [f64],
    coeffs: &mut Vec<f64>,
) -> Result<f64> {
    check_shape(
        p.shape(),
        q.shape(),
        "project_out (P = B Q has the shape of Q)",
    )?;
    block_dots(p, w, coeffs)?;
    add_block_combination(q, coeffs, -1.0, w)?;
    Ok(coeffs.iter().map(|c| c * c).sum())
}

/// Whether a pass over an `m × j` block goes to rayon (the same results either way).
fn parallel(m: usize, j: usize) -> bool {
    m * j >= PARALLEL_VALUES && rayon::current_num_threads() > 1
}

/// `f((b, chunk))` on every `size`-long chunk `b` of `data`, on rayon's threads or in order.
fn each_block(
    data: &mut [f64],
    size: usize,
    parallel: bool,
    f: impl Fn((usize, &mut [f64])) + Sync + Send,
) {
    if parallel {
        data.par_chunks_mut(size).enumerate().for_each(f);
    } else {
        data.chunks_mut(size).enumerate().for_each(f);
    }
}

/// `out = Pᵀ w` for `P` of `m × j` and `w` of length `m` (`out` resized to `j`): the blocks'
/// partial products `P_bᵀ w_b`, summed in block order.
///
/// Errors with [`LinalgError::ShapeMismatch`](crate::LinalgError::ShapeMismatch) unless `w`
/// has `m` entries.
pub fn block_dots(p: MatRef<'_, f64>, w: &[f64], out: &mut Vec<f64>) -> Result<()> {
    let (m, j) = (p.nrows(), p.ncols());
    check_shape(
        (w.len(), 1),
        (m, 1),
        "block_dots (w has one entry per row of P)",
    )?;
    out.clear();
    out.resize(j, 0.0);
    if j == 0 || m == 0 {
        return Ok(());
    }
    let mut partials = vec![0.0; m.div_ceil(PROJECTION_ROWS) * j];
    let partial = |(b, dst): (usize, &mut [f64])| {
        let start = b * PROJECTION_ROWS;
        let len = PROJECTION_ROWS.min(m - start);
        matmul(
            MatMut::from_column_major_slice_mut(dst, j, 1),
            Accum::Replace,
            p.subrows(start, len).transpose(),
            MatRef::from_column_major_slice(&w[start..start + len], len, 1),
            1.0,
            Par::Seq,
        );
    };
    each_block(&mut partials, j, parallel(m, j), partial);
    for block in partials.chunks(j) {
        out.iter_mut().zip(block).for_each(|(c, v)| *c += v);
    }
    Ok(())
}

/// `w += α Q c` for `Q` of `m × j`, `c` of length `j` and `w` of length `m`, one pass over
/// the row blocks of `Q` (each row's sum is the same however the rows are spread).
///
/// Errors with [`LinalgError::ShapeMismatch`](crate::LinalgError::ShapeMismatch) unless the
/// lengths match `Q`.
pub fn add_block_combination(
    q: MatRef<'_, f64>,
    c: &[f64],
    alpha: f64,
    w: &mut [f64],
) -> Result<()> {
    let (m, j) = (q.nrows(), q.ncols());
    check_shape(
        (c.len(), 1),
        (j, 1),
        "add_block_combination (c has one entry per column of Q)",
    )?;
    check_shape(
        (w.len(), 1),
        (m, 1),
        "add_block_combination (w has one entry per row of Q)",
    )?;
    if j == 0 || m == 0 {
        return Ok(());
    }
    let c = MatRef::from_column_major_slice(c, j, 1);
    let update = |(b, wb): (usize, &mut [f64])| {
        let len = wb.len();
        matmul(
            MatMut::from_column_major_slice_mut(wb, len, 1),
            Accum::Add,
            q.subrows(b * PROJECTION_ROWS, len),
            c,
            alpha,
            Par::Seq,
        );
    };
    if parallel(m, j) {
        w.par_chunks_mut(PROJECTION_ROWS)
            .enumerate()
            .for_each(update);
    } else {
        w.chunks_mut(PROJECTION_ROWS).enumerate().for_each(update);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    fn basis(m: usize, j: usize) -> Mat<f64> {
        Mat::from_fn(m, j, |i, k| ((i * 7 + k * 13) % 17) as f64 / 17.0 - 0.4)
    }

    /// Against the plain products `c = Pᵀw`, `w − Q c`, over sizes with one block, several
    /// blocks with a ragged last one, and a basis large enough to run in parallel.
    #[test]
    fn matches_dense_products_and_is_the_same_sequential_and_parallel() {
        for &(m, j) in &[(5, 3), (2 * PROJECTION_ROWS + 77, 4), (70_001, 9)] {
            let q = basis(m, j);
            let p = Mat::from_fn(m, j, |i, k| q[(i, k)] * (1.0 + (i % 3) as f64));
            let w0: Vec<f64> = (0..m).map(|i| (i as f64 * 0.37).sin()).collect();
            let c_want = p.transpose() * MatRef::from_column_major_slice(&w0, m, 1);
            let w_want = MatRef::from_column_major_slice(&w0, m, 1) - &q * &c_want;

            let mut w = w0.clone();
            let mut c = Vec::new();
            let removed = project_out(q.as_ref(), p.as_ref(), &mut w, &mut c).unwrap();
            let scale = c_want.norm_max();
            for k in 0..j {
                assert!(
                    (c[k] - c_want[(k, 0)]).abs() <= 1e-12 * scale,
                    "m={m} c[{k}]"
                );
            }
            let want_removed: f64 = c.iter().map(|v| v * v).sum();
            assert_eq!(removed, want_removed);
            let w_scale = w_want.norm_max().max(1.0);
            for i in 0..m {
                assert!(
                    (w[i] - w_want[(i, 0)]).abs() <= 1e-12 * w_scale * scale,
                    "m={m} w[{i}]"
                );
            }

            // One thread gives the same bits.
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            let (mut w1, mut c1) = (w0.clone(), Vec::new());
            pool.install(|| project_out(q.as_ref(), p.as_ref(), &mut w1, &mut c1))
                .unwrap();
            assert_eq!((w1, c1), (w, c), "m={m}");
        }
    }

    #[test]
    fn refuses_mismatched_shapes_and_handles_an_empty_basis() {
        let q = basis(10, 2);
        let mut c = vec![1.0];
        assert!(project_out(q.as_ref(), basis(10, 3).as_ref(), &mut [0.0; 10], &mut c).is_err());
        assert!(project_out(q.as_ref(), q.as_ref(), &mut [0.0; 9], &mut c).is_err());
        let empty = Mat::<f64>::zeros(10, 0);
        let mut w = [1.0; 10];
        let removed = project_out(empty.as_ref(), empty.as_ref(), &mut w, &mut c).unwrap();
        assert_eq!((removed, c.len(), w), (0.0, 0, [1.0; 10]));
    }
}
