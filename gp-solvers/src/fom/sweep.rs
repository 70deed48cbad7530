//! Passes over the tall `N × j` blocks `S` and `Z` (column-major slices), blocked by rows.
//!
//! At `N = 10⁶` with hundreds of columns every pass over `S` or `Z` reads gigabytes and is
//! memory-bound, so a pass that needs the same block twice (`r = b − Z a`, then `Zᵀr`)
//! walks it one row block at a time: the block is read from memory once and reused from
//! cache. The row blocks are spread over rayon's threads (on hosts where one thread does not
//! saturate memory, two stream up to 1.6× faster); each block's products go to its own
//! partial, and the partials are summed in block order, so results do not depend on the
//! thread count.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

/// Rows per block: about 256 KiB of a block with `cols` columns, so it stays in L2.
fn block_rows(cols: usize) -> usize {
    (32 * 1024 / cols.max(1)).clamp(64, 8192)
}

/// Blocks with fewer entries (`N · j`) than this are swept on the calling thread: below
/// about 2 MB a pass takes well under a millisecond and waking the pool does not pay. The
/// results are the same either way.
const PARALLEL_ENTRIES: usize = 1 << 18;

fn parallel(n: usize, cols: usize) -> bool {
    n * cols >= PARALLEL_ENTRIES && rayon::current_num_threads() > 1
}

/// A column slice as an `len × 1` matrix view.
fn col(x: &[f64]) -> MatRef<'_, f64> {
    MatRef::from_column_major_slice(x, x.len(), 1)
}

/// A mutable column slice as an `len × 1` matrix view.
fn col_mut(x: &mut [f64]) -> MatMut<'_, f64> {
    let len = x.len();
    MatMut::from_column_major_slice_mut(x, len, 1)
}

/// The sum, in block order, of the `width` values each block wrote to its partial.
fn sum_partials(partials: &[f64], width: usize) -> Vec<f64> {
    let mut sum = vec![0.0; width];
    for block in partials.chunks(width) {
        sum.iter_mut().zip(block).for_each(|(s, v)| *s += v);
    }
    sum
}

/// `(Sᵀ z, Zᵀ s)` in one sweep over the row blocks of `S` and `Z` (both `N × j`, `s` and
/// `z` of length `N`).
pub(crate) fn cross_products(
    s_mat: MatRef<'_, f64>,
    z_mat: MatRef<'_, f64>,
    s: &[f64],
    z: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (n, j) = (s_mat.nrows(), s_mat.ncols());
    let rows = block_rows(j);
    // Each block's partial holds its `S_bᵀ z_b` then its `Z_bᵀ s_b`.
    let mut partials = vec![0.0; n.div_ceil(rows) * 2 * j];
    let block = |(b, out): (usize, &mut [f64])| {
        let start = b * rows;
        let len = rows.min(n - start);
        let (stz, zts) = out.split_at_mut(j);
        let range = start..start + len;
        let s_rows = s_mat.subrows(start, len).transpose();
        let z_rows = z_mat.subrows(start, len).transpose();
        matmul(
            col_mut(stz),
            Accum::Replace,
            s_rows,
            col(&z[range.clone()]),
            1.0,
            Par::Seq,
        );
        matmul(
            col_mut(zts),
            Accum::Replace,
            z_rows,
            col(&s[range]),
            1.0,
            Par::Seq,
        );
    };
    if j > 0 && parallel(n, j) {
        partials.par_chunks_mut(2 * j).enumerate().for_each(block);
    } else if j > 0 {
        partials.chunks_mut(2 * j).enumerate().for_each(block);
    }
    let both = sum_partials(&partials, 2 * j);
    let (stz, zts) = both.split_at(j);
    (stz.to_vec(), zts.to_vec())
}

/// `r = b − Z a` and `Zᵀ r` in one sweep over the row blocks of `Z` (`N × j`); `r` has
/// length `N` and is overwritten. Returns `Zᵀ r`.
pub(crate) fn residual_and_projection(
    z_mat: MatRef<'_, f64>,
    b: &[f64],
    a: &[f64],
    r: &mut [f64],
) -> Vec<f64> {
    let (n, j) = (z_mat.nrows(), z_mat.ncols());
    let rows = block_rows(j);
    let mut partials = vec![0.0; n.div_ceil(rows) * j];
    let block = |(k, (rb, ztr)): (usize, (&mut [f64], &mut [f64]))| {
        let start = k * rows;
        let zb = z_mat.subrows(start, rb.len());
        rb.copy_from_slice(&b[start..start + rb.len()]);
        matmul(col_mut(rb), Accum::Add, zb, col(a), -1.0, Par::Seq);
        matmul(
            col_mut(ztr),
            Accum::Replace,
            zb.transpose(),
            col(rb),
            1.0,
            Par::Seq,
        );
    };
    if j == 0 {
        r.copy_from_slice(b);
    } else if parallel(n, j) {
        let blocks = r.par_chunks_mut(rows).zip(partials.par_chunks_mut(j));
        blocks.enumerate().for_each(block);
    } else {
        let blocks = r.chunks_mut(rows).zip(partials.chunks_mut(j));
        blocks.enumerate().for_each(block);
    }
    sum_partials(&partials, j)
}

/// `y += M c` for an `N × j` block `M`, one pass over its row blocks (each row's sum is the
/// same however the rows are split).
pub(crate) fn add_combination(m: MatRef<'_, f64>, c: &[f64], y: &mut [f64]) {
    let (n, j) = (m.nrows(), m.ncols());
    let rows = block_rows(j);
    let block = |(k, yb): (usize, &mut [f64])| {
        let mb = m.subrows(k * rows, yb.len());
        matmul(col_mut(yb), Accum::Add, mb, col(c), 1.0, Par::Seq);
    };
    if parallel(n, j) {
        y.par_chunks_mut(rows).enumerate().for_each(block);
    } else {
        y.chunks_mut(rows).enumerate().for_each(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    fn tall(n: usize, j: usize, salt: usize) -> Mat<f64> {
        Mat::from_fn(n, j, |i, k| {
            ((i * 7 + k * 13 + salt) % 19) as f64 / 19.0 - 0.45
        })
    }

    fn vector(n: usize, f: f64) -> Vec<f64> {
        (0..n).map(|i| (i as f64 * f).sin()).collect()
    }

    fn close(got: &[f64], want: MatRef<'_, f64>, context: &str) {
        let scale = want.norm_max().max(1.0);
        for (i, g) in got.iter().enumerate() {
            assert!((g - want[(i, 0)]).abs() <= 1e-12 * scale, "{context} [{i}]");
        }
    }

    /// The three sweeps against plain products, for a small block (one thread) and one with
    /// many row blocks (rayon), and the same bits on a one-thread pool.
    #[test]
    fn sweeps_match_dense_products_on_any_thread_count() {
        for &(n, j) in &[(300, 3), (100_003, 7)] {
            let (s_mat, z_mat) = (tall(n, j, 0), tall(n, j, 5));
            let (s, z, b) = (vector(n, 0.3), vector(n, 0.7), vector(n, 1.1));
            let a: Vec<f64> = (0..j).map(|k| 0.1 * k as f64 - 0.2).collect();

            let run = || {
                let cross = cross_products(s_mat.as_ref(), z_mat.as_ref(), &s, &z);
                let mut r = vec![f64::NAN; n];
                let ztr = residual_and_projection(z_mat.as_ref(), &b, &a, &mut r);
                let mut y = s.clone();
                add_combination(s_mat.as_ref(), &a, &mut y);
                (cross, r, ztr, y)
            };
            let got = run();
            let ((stz, zts), r, ztr, y) = &got;
            close(stz, (s_mat.transpose() * col(&z)).as_ref(), "Sᵀz");
            close(zts, (z_mat.transpose() * col(&s)).as_ref(), "Zᵀs");
            let r_want = col(&b) - &z_mat * col(&a);
            close(r, r_want.as_ref(), "b − Z a");
            close(ztr, (z_mat.transpose() * &r_want).as_ref(), "Zᵀr");
            close(y, (col(&s) + &s_mat * col(&a)).as_ref(), "s + S a");

            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            assert_eq!(pool.install(run), got, "n={n}");
        }
    }
}
