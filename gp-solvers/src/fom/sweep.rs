//! Passes over the tall `N × j` blocks `S` and `Z` (column-major slices), blocked by rows.
//!
//! At `N = 10⁶` with hundreds of columns every pass over `S` or `Z` reads gigabytes and is
//! memory-bound, so a pass that needs the same block twice (`r = b − Z a`, then `Zᵀr`)
//! walks it one row block at a time: the block is read from memory once and reused from
//! cache. The blocks are multiplied sequentially (`Par::Seq`) so results do not depend on
//! the thread count.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

/// Rows per block: about 256 KiB of a block with `cols` columns, so it stays in L2.
fn block_rows(cols: usize) -> usize {
    (32 * 1024 / cols.max(1)).clamp(64, 8192)
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

/// `(Sᵀ z, Zᵀ s)` in one sweep over the row blocks of `S` and `Z` (both `N × j`, `s` and
/// `z` of length `N`).
pub(crate) fn cross_products(
    s_mat: MatRef<'_, f64>,
    z_mat: MatRef<'_, f64>,
    s: &[f64],
    z: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let (n, j) = (s_mat.nrows(), s_mat.ncols());
    let mut stz = vec![0.0; j];
    let mut zts = vec![0.0; j];
    let rows = block_rows(j);
    let mut start = 0;
    while start < n {
        let len = rows.min(n - start);
        let zb = col(&z[start..start + len]);
        let sb = col(&s[start..start + len]);
        matmul(
            col_mut(&mut stz),
            Accum::Add,
            s_mat.subrows(start, len).transpose(),
            zb,
            1.0,
            Par::Seq,
        );
        matmul(
            col_mut(&mut zts),
            Accum::Add,
            z_mat.subrows(start, len).transpose(),
            sb,
            1.0,
            Par::Seq,
        );
        start += len;
    }
    (stz, zts)
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
    let mut ztr = vec![0.0; j];
    let rows = block_rows(j);
    let mut start = 0;
    while start < n {
        let len = rows.min(n - start);
        let zb = z_mat.subrows(start, len);
        let rb = &mut r[start..start + len];
        rb.copy_from_slice(&b[start..start + len]);
        matmul(col_mut(rb), Accum::Add, zb, col(a), -1.0, Par::Seq);
        matmul(
            col_mut(&mut ztr),
            Accum::Add,
            zb.transpose(),
            col(rb),
            1.0,
            Par::Seq,
        );
        start += len;
    }
    ztr
}

/// `y += M c` for an `N × j` block `M` (one pass; the workspace's parallelism setting).
pub(crate) fn add_combination(m: MatRef<'_, f64>, c: &[f64], y: &mut [f64]) {
    matmul(
        col_mut(y),
        Accum::Add,
        m,
        col(c),
        1.0,
        gp_linalg::parallelism(),
    );
}
