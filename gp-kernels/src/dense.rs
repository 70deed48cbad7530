//! Dense kernel matrices, assembled in parallel over tiles of columns.
//!
//! The output is filled column-tile by column-tile in parallel (faer matrices are column
//! major, so a tile of columns is a contiguous block of memory), each tile by
//! [`Kernel::fill_block`]: the stationary kernels of this crate override it with vectorized
//! loops (see [`crate::ard`]), other kernels fall back to one [`Kernel::eval`] per entry.

use faer::{Col, Mat, MatMut, MatRef};
use gp_linalg::validate::check_finite_mat;
use rayon::prelude::*;

use crate::ard::{check_coordinate_range, check_points, COLUMN_TILE};
use crate::error::{KernelError, Result};
use crate::kernel::Kernel;

/// Copies the rows of `x` into a row-major buffer (point `i` at `[i*d .. (i+1)*d]`), after
/// checking the column count against the kernel's input dimension, finiteness and range
/// (entries at most [`MAX_COORDINATE`](crate::ard::MAX_COORDINATE) in magnitude).
pub fn points_row_major<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    context: &'static str,
) -> Result<Vec<f64>> {
    let d = kernel.input_dim();
    if x.ncols() != d {
        return Err(KernelError::InputDim {
            context,
            expected: d,
            found: x.ncols(),
        });
    }
    check_finite_mat(x, context)?;
    check_coordinate_range(x, context)?;
    let mut buf = vec![0.0; x.nrows() * d];
    for (i, row) in buf.chunks_exact_mut(d.max(1)).enumerate().take(x.nrows()) {
        for (k, v) in row.iter_mut().enumerate() {
            *v = x[(i, k)];
        }
    }
    Ok(buf)
}

/// Writes `K(X, Z)` into `out` by calling [`Kernel::eval`] per entry (the default of
/// [`Kernel::fill_block`]); same unchecked contract.
pub fn fill_block_generic<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    mut out: MatMut<'_, f64>,
) {
    let d = kernel.input_dim();
    let xs: Vec<f64> = (0..x.nrows())
        .flat_map(|i| (0..d).map(move |k| x[(i, k)]))
        .collect();
    let mut zj = vec![0.0; d];
    for j in 0..z.nrows() {
        for (k, v) in zj.iter_mut().enumerate() {
            *v = z[(j, k)];
        }
        for i in 0..x.nrows() {
            out[(i, j)] = kernel.eval(&xs[i * d..(i + 1) * d], &zj);
        }
    }
}

/// `K(X, Z)` for any kernel: checks the inputs, then fills column tiles in parallel with
/// [`Kernel::fill_block`].
pub fn cross_matrix<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
) -> Result<Mat<f64>> {
    let d = kernel.input_dim();
    check_points(d, x, "kernel matrix K(X, Z), X")?;
    check_points(d, z, "kernel matrix K(X, Z), Z")?;
    // A column-major copy makes every input dimension a contiguous slice.
    let x = x.to_owned();
    let (n, m) = (x.nrows(), z.nrows());
    let mut out = Mat::<f64>::zeros(n, m);
    if n == 0 || m == 0 {
        return Ok(out);
    }
    out.as_mut()
        .par_col_chunks_mut(COLUMN_TILE)
        .enumerate()
        .for_each(|(t, tile)| {
            kernel.fill_block(x.as_ref(), z.subrows(t * COLUMN_TILE, tile.ncols()), tile);
        });
    Ok(out)
}

/// The diagonal `k(xᵢ, xᵢ)`.
pub fn diagonal<K: Kernel + ?Sized>(kernel: &K, x: MatRef<'_, f64>) -> Result<Col<f64>> {
    let d = kernel.input_dim();
    let xs = points_row_major(kernel, x, "kernel diagonal, X")?;
    Ok(Col::from_fn(x.nrows(), |i| {
        kernel.diag_entry(&xs[i * d..(i + 1) * d])
    }))
}

/// `K(X, X)` and `∂K/∂θⱼ` for every log hyperparameter θⱼ, parallel over column tiles.
/// Only the lower triangle is evaluated; the upper is mirrored.
pub fn matrix_and_grads<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
) -> Result<(Mat<f64>, Vec<Mat<f64>>)> {
    let d = kernel.input_dim();
    let p = kernel.n_params();
    let xs = points_row_major(kernel, x, "kernel matrix and gradients, X")?;
    let n = x.nrows();
    // Each column j holds (K[j.., j], dK_0[j.., j], ..., dK_{p-1}[j.., j]).
    let columns: Vec<Vec<f64>> = (0..n)
        .into_par_iter()
        .map(|j| {
            let xj = &xs[j * d..(j + 1) * d];
            let len = n - j;
            let mut col = vec![0.0; len * (p + 1)];
            let mut grad = vec![0.0; p];
            for i in j..n {
                let v = kernel.eval_with_grad(&xs[i * d..(i + 1) * d], xj, &mut grad);
                col[i - j] = v;
                for (q, g) in grad.iter().enumerate() {
                    col[(q + 1) * len + (i - j)] = *g;
                }
            }
            col
        })
        .collect();
    let mut k = Mat::<f64>::zeros(n, n);
    let mut grads: Vec<Mat<f64>> = (0..p).map(|_| Mat::zeros(n, n)).collect();
    for (j, col) in columns.iter().enumerate() {
        let len = n - j;
        for i in j..n {
            let v = col[i - j];
            k[(i, j)] = v;
            k[(j, i)] = v;
            for (q, g) in grads.iter_mut().enumerate() {
                let v = col[(q + 1) * len + (i - j)];
                g[(i, j)] = v;
                g[(j, i)] = v;
            }
        }
    }
    Ok((k, grads))
}

/// [`Kernel::add_weighted_grads`] by [`Kernel::eval_with_grad`] row by row, added in row
/// order: the default for kernels without a vectorized pass.
pub(crate) fn add_weighted_grads_generic<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    j: usize,
    first_row: usize,
    weights: &[f64],
    scale: f64,
    acc: &mut [f64],
) {
    let xj: Vec<f64> = x.row(j).iter().copied().collect();
    let mut xi = vec![0.0; xj.len()];
    let mut g = vec![0.0; acc.len()];
    for (r, &w) in weights.iter().enumerate() {
        for (v, &e) in xi.iter_mut().zip(x.row(first_row + r).iter()) {
            *v = e;
        }
        kernel.eval_with_grad(&xi, &xj, &mut g);
        for (a, gq) in acc.iter_mut().zip(&g) {
            *a += w * (gq * scale);
        }
    }
}
