//! Vector kernels (`dot`, `axpy`, `scale`, norms) and small block helpers.
//!
//! The slice kernels run sequentially below [`PARALLEL_THRESHOLD`] elements and split the
//! work over rayon above it. Reductions are summed over fixed chunks of [`CHUNK`] elements
//! whose partial sums are then added in order, so a result is bit-for-bit the same whether it
//! was computed sequentially or in parallel, and whatever the number of threads.
//!
//! The `*_col` variants take faer columns; a column with a non-unit stride is handled by a
//! plain strided loop.
//!
//! ```
//! use gp_linalg::vector::{axpy, dot, norm2};
//!
//! let x = [3.0, 4.0];
//! let mut y = [1.0, 1.0];
//! axpy(2.0, &x, &mut y)?; // y = [7, 9]
//! assert_eq!(dot(&x, &y)?, 57.0);
//! assert_eq!(norm2(&x), 5.0);
//! # Ok::<(), gp_linalg::LinalgError>(())
//! ```

use std::borrow::Cow;

use faer::linalg::matmul::matmul;
use faer::reborrow::ReborrowMut;
use faer::{Accum, Col, ColMut, ColRef, Mat, MatRef};
use rayon::prelude::*;

use crate::error::Result;
use crate::par::parallelism;
use crate::validate::check_shape;

/// Vectors with at least this many elements are processed by rayon; shorter ones
/// sequentially.
///
/// These kernels do one or two flops per element loaded, so they are bound by memory
/// bandwidth: on the reference machine (2 cores, about 20 GB/s) one thread already streams
/// close to the full bandwidth and a second thread gains little. Below 2¹⁶ elements
/// (512 KiB per `f64` vector) the cost of waking the rayon pool outweighs any gain.
pub const PARALLEL_THRESHOLD: usize = 1 << 16;

/// Reductions sum fixed chunks of this many elements, then add the chunk sums in order.
pub const CHUNK: usize = 1 << 13;

fn check_len(a: usize, b: usize, context: &'static str) -> Result<()> {
    check_shape((b, 1), (a, 1), context)
}

crate::simd_dispatch! {
    /// Dot product of two equal-length slices without the length check (four accumulators
    /// so the loop vectorizes without `-ffast-math`), AVX2 build where the CPU has it (the
    /// same operations in the same order, so the same bits; VEX code also avoids the
    /// legacy-SSE penalty after faer's or the SKI kernels' AVX-512 code, see `simd`).
    fn dot_seq(x: &[f64], y: &[f64]) -> f64 = dot_seq_body, avx2 via dot_seq_avx2;
}

#[inline(always)]
fn dot_seq_body(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0_f64; 4];
    let xc = x.chunks_exact(4);
    let yc = y.chunks_exact(4);
    let (xr, yr) = (xc.remainder(), yc.remainder());
    for (a, b) in xc.zip(yc) {
        acc[0] += a[0] * b[0];
        acc[1] += a[1] * b[1];
        acc[2] += a[2] * b[2];
        acc[3] += a[3] * b[3];
    }
    let mut tail = 0.0;
    for (a, b) in xr.iter().zip(yr) {
        tail += a * b;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Sums `f` over fixed chunks of `x` (and the matching chunks of `y`), in order.
fn chunked_sum(x: &[f64], y: &[f64], f: impl Fn(&[f64], &[f64]) -> f64 + Sync) -> f64 {
    if x.len() < PARALLEL_THRESHOLD {
        x.chunks(CHUNK)
            .zip(y.chunks(CHUNK))
            .map(|(a, b)| f(a, b))
            .sum()
    } else {
        let partials: Vec<f64> = x
            .par_chunks(CHUNK)
            .zip(y.par_chunks(CHUNK))
            .map(|(a, b)| f(a, b))
            .collect();
        partials.iter().sum()
    }
}

/// `xᵀ y`. Errors with [`LinalgError::ShapeMismatch`](crate::LinalgError::ShapeMismatch) if
/// the lengths differ.
pub fn dot(x: &[f64], y: &[f64]) -> Result<f64> {
    check_len(x.len(), y.len(), "vector::dot")?;
    Ok(chunked_sum(x, y, dot_seq))
}

/// `y += a x`. Errors if the lengths differ.
pub fn axpy(a: f64, x: &[f64], y: &mut [f64]) -> Result<()> {
    check_len(x.len(), y.len(), "vector::axpy")?;
    let kernel = |xs: &[f64], ys: &mut [f64]| {
        for (yi, xi) in ys.iter_mut().zip(xs) {
            *yi += a * xi;
        }
    };
    if x.len() < PARALLEL_THRESHOLD {
        kernel(x, y);
    } else {
        y.par_chunks_mut(CHUNK)
            .zip(x.par_chunks(CHUNK))
            .for_each(|(ys, xs)| kernel(xs, ys));
    }
    Ok(())
}

/// `x *= a`.
pub fn scale(a: f64, x: &mut [f64]) {
    let kernel = |xs: &mut [f64]| xs.iter_mut().for_each(|v| *v *= a);
    if x.len() < PARALLEL_THRESHOLD {
        kernel(x);
    } else {
        x.par_chunks_mut(CHUNK).for_each(kernel);
    }
}

/// NaN-propagating maximum of absolute values.
fn max_abs_fold(m: f64, v: f64) -> f64 {
    let a = v.abs();
    if a > m || a.is_nan() {
        a
    } else {
        m
    }
}

/// `maxᵢ |xᵢ|` (0 for an empty slice; NaN if any entry is NaN).
pub fn norm_inf(x: &[f64]) -> f64 {
    if x.len() < PARALLEL_THRESHOLD {
        x.iter().copied().fold(0.0, max_abs_fold)
    } else {
        x.par_chunks(CHUNK)
            .map(|c| c.iter().copied().fold(0.0, max_abs_fold))
            .reduce(|| 0.0, max_abs_fold)
    }
}

/// Euclidean norm `‖x‖₂`, safe from overflow and underflow.
///
/// One pass sums the squares; only when that sum overflows or underflows is a second,
/// rescaled pass made.
pub fn norm2(x: &[f64]) -> f64 {
    norm2_from_sum_of_squares(chunked_sum(x, x, dot_seq), x)
}

/// The sequential kernel of [`dot`]: `xᵀy` over the common length in one pass (four
/// accumulators, then the tail).
///
/// [`dot`] applies it to each [`CHUNK`] of the vectors and adds the chunk sums in order. A
/// caller that fuses several reductions into one pass over row chunks (batched CG) gets
/// [`dot`]'s bits by doing the same: `Σ_k dot_chunk(x_k, y_k)` over the chunks in order.
pub fn dot_chunk(x: &[f64], y: &[f64]) -> f64 {
    dot_seq(x, y)
}

/// [`dot_chunk`] of every pair `(x, y)` in `pairs`, written to `out` (`out[k]` for pair
/// `k`): each value is `dot_chunk`'s, bit for bit.
///
/// A single dot product waits on its own four accumulators (the order that keeps `dot`'s
/// bits); several pairs of the same length are summed side by side in one loop, so their
/// additions overlap. Fused CG passes reduce a dozen pairs per row chunk this way.
///
/// Extra entries of `out` beyond `pairs.len()` are left alone; a shorter `out` receives the
/// first `out.len()` values.
pub fn dot_chunks(pairs: &[(&[f64], &[f64])], out: &mut [f64]) {
    let pairs = &pairs[..pairs.len().min(out.len())];
    let mut k = 0;
    while k < pairs.len() {
        // The longest run (up to four) of pairs whose vectors all have one length; a pair of
        // unequal lengths goes alone through `dot_chunk`'s own kernel.
        let len = pairs[k].0.len();
        let run = pairs[k..]
            .iter()
            .take(4)
            .take_while(|(x, y)| x.len() == len && y.len() == len)
            .count();
        let group = &pairs[k..k + run];
        let dst = &mut out[k..k + run];
        match run {
            4 => dst.copy_from_slice(&dot_group::<4>(group, len)),
            3 => dst.copy_from_slice(&dot_group::<3>(group, len)),
            2 => dst.copy_from_slice(&dot_group::<2>(group, len)),
            1 => dst[0] = dot_seq(group[0].0, group[0].1),
            _ => out[k] = dot_seq(pairs[k].0, pairs[k].1),
        }
        k += run.max(1);
    }
}

/// `dot_seq` of `N` pairs whose vectors all have length `len`, interleaved (each pair keeps
/// its own four accumulators and tail, in `dot_seq`'s order): with AVX2 where the CPU has it,
/// the baseline build otherwise.
fn dot_group<const N: usize>(pairs: &[(&[f64], &[f64])], len: usize) -> [f64; N] {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::simd_level() >= crate::simd::SimdLevel::Avx2 && pairs.len() >= N {
        let ok = pairs[..N]
            .iter()
            .all(|(x, y)| x.len() >= len && y.len() >= len);
        if ok {
            // SAFETY: the CPU has AVX2 (checked above), and every slice holds `len` values.
            return unsafe { dot_group_avx2::<N>(pairs, len) };
        }
    }
    dot_group_body::<N>(pairs, len)
}

/// [`dot_group_body`] in AVX2 intrinsics: each pair's four accumulators are the four lanes
/// of one register, updated by a product then a sum (no fused multiply-add), so every
/// lane sees `dot_seq`'s operations in its order, and the result is its bits. Written with
/// intrinsics because the compiler's vectorization of the portable body depends on the
/// code around it: the same source was compiled once to packed loops and once to scalar
/// code with its accumulators spilled to the stack (twice the time), after an unrelated
/// change elsewhere in the crate.
///
/// # Safety
/// The CPU must support AVX2, `pairs` must hold at least `N` pairs, and each of their
/// slices at least `len` values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_group_avx2<const N: usize>(pairs: &[(&[f64], &[f64])], len: usize) -> [f64; N] {
    use std::arch::x86_64::{
        __m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    };
    let body = len - len % 4;
    let x: [*const f64; N] = std::array::from_fn(|k| pairs[k].0.as_ptr());
    let y: [*const f64; N] = std::array::from_fn(|k| pairs[k].1.as_ptr());
    let mut acc: [__m256d; N] = [_mm256_setzero_pd(); N];
    let mut i = 0;
    while i < body {
        for k in 0..N {
            // SAFETY: `i + 4 ≤ body ≤ len`, within every slice (the caller's contract).
            let (a, b) = unsafe { (_mm256_loadu_pd(x[k].add(i)), _mm256_loadu_pd(y[k].add(i))) };
            acc[k] = _mm256_add_pd(acc[k], _mm256_mul_pd(a, b));
        }
        i += 4;
    }
    std::array::from_fn(|k| {
        let mut lanes = [0.0_f64; 4];
        // SAFETY: `lanes` holds four values.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), acc[k]) };
        let mut tail = 0.0;
        for (a, b) in pairs[k].0[body..len].iter().zip(&pairs[k].1[body..len]) {
            tail += a * b;
        }
        (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + tail
    })
}

#[inline(always)]
fn dot_group_body<const N: usize>(pairs: &[(&[f64], &[f64])], len: usize) -> [f64; N] {
    let body = len - len % 4;
    let x: [&[f64]; N] = std::array::from_fn(|k| &pairs[k].0[..len]);
    let y: [&[f64]; N] = std::array::from_fn(|k| &pairs[k].1[..len]);
    let mut acc = [[0.0_f64; 4]; N];
    let mut i = 0;
    while i < body {
        for k in 0..N {
            let (a, b) = (&x[k][i..i + 4], &y[k][i..i + 4]);
            acc[k][0] += a[0] * b[0];
            acc[k][1] += a[1] * b[1];
            acc[k][2] += a[2] * b[2];
            acc[k][3] += a[3] * b[3];
        }
        i += 4;
    }
    std::array::from_fn(|k| {
        let mut tail = 0.0;
        for (a, b) in x[k][body..].iter().zip(&y[k][body..]) {
            tail += a * b;
        }
        (acc[k][0] + acc[k][1]) + (acc[k][2] + acc[k][3]) + tail
    })
}

/// [`norm2`] of `x` given its sum of squares as [`dot`] forms it (`Σ_k dot_chunk(x_k, x_k)`
/// over the [`CHUNK`]s in order): the square root when that sum is safe, otherwise the
/// rescaled second pass. The same value as `norm2(x)`, without repeating the first pass.
pub fn norm2_from_sum_of_squares(sum_of_squares: f64, x: &[f64]) -> f64 {
    let ss = sum_of_squares;
    if ss.is_finite() && ss > f64::MIN_POSITIVE / f64::EPSILON {
        return ss.sqrt();
    }
    let m = norm_inf(x);
    if m == 0.0 || !m.is_finite() {
        return m;
    }
    let inv = 1.0 / m;
    let scaled = chunked_sum(x, x, |a, _| a.iter().map(|v| (v * inv) * (v * inv)).sum());
    m * scaled.sqrt()
}

/// A column as a slice: borrowed when it is contiguous, copied otherwise.
pub(crate) fn col_slice<'a>(c: ColRef<'a, f64>) -> Cow<'a, [f64]> {
    match c.try_as_col_major() {
        Some(c) => Cow::Borrowed(c.as_slice()),
        None => Cow::Owned(c.iter().copied().collect()),
    }
}

/// Runs `f` on a column as a mutable slice (through a temporary when it is strided).
pub(crate) fn with_col_slice_mut<R>(mut c: ColMut<'_, f64>, f: impl FnOnce(&mut [f64]) -> R) -> R {
    if let Some(s) = c.rb_mut().try_as_col_major_mut() {
        return f(s.as_slice_mut());
    }
    let mut tmp: Vec<f64> = c.as_ref().iter().copied().collect();
    let r = f(&mut tmp);
    for (i, v) in tmp.into_iter().enumerate() {
        c[i] = v;
    }
    r
}

/// [`dot`] for faer columns.
pub fn dot_col(x: ColRef<'_, f64>, y: ColRef<'_, f64>) -> Result<f64> {
    dot(&col_slice(x), &col_slice(y))
}

/// [`axpy`] for faer columns: `y += a x`.
pub fn axpy_col(a: f64, x: ColRef<'_, f64>, y: ColMut<'_, f64>) -> Result<()> {
    let xs = col_slice(x);
    with_col_slice_mut(y, |ys| axpy(a, &xs, ys))
}

/// [`scale`] for a faer column: `x *= a`.
pub fn scale_col(a: f64, x: ColMut<'_, f64>) {
    with_col_slice_mut(x, |xs| scale(a, xs))
}

/// [`norm2`] for a faer column.
pub fn norm2_col(x: ColRef<'_, f64>) -> f64 {
    norm2(&col_slice(x))
}

/// [`norm_inf`] for a faer column.
pub fn norm_inf_col(x: ColRef<'_, f64>) -> f64 {
    norm_inf(&col_slice(x))
}

/// Column-wise dot products of two `n×k` blocks: `out[j] = A[:, j]ᵀ B[:, j]`.
///
/// Errors with [`LinalgError::ShapeMismatch`](crate::LinalgError::ShapeMismatch) if the
/// shapes differ.
pub fn col_dots(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Col<f64>> {
    check_shape(
        (b.nrows(), b.ncols()),
        (a.nrows(), a.ncols()),
        "vector::col_dots",
    )?;
    let mut out = Col::zeros(a.ncols());
    for j in 0..a.ncols() {
        out[j] = dot(&col_slice(a.col(j)), &col_slice(b.col(j)))?;
    }
    Ok(out)
}

/// Euclidean norm of every column of `a`.
pub fn col_norms(a: MatRef<'_, f64>) -> Col<f64> {
    Col::from_fn(a.ncols(), |j| norm2_col(a.col(j)))
}

/// The Gram matrix `AᵀA` (`k×k` for an `n×k` block), through faer's matrix product.
pub fn gram(a: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = Mat::zeros(a.ncols(), a.ncols());
    matmul(
        out.as_mut(),
        Accum::Replace,
        a.transpose(),
        a,
        1.0,
        parallelism(),
    );
    out
}

/// The cross product `AᵀB` of two blocks with the same number of rows.
///
/// Errors with [`LinalgError::ShapeMismatch`](crate::LinalgError::ShapeMismatch) if the
/// row counts differ.
pub fn cross_gram(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Result<Mat<f64>> {
    check_shape(
        (b.nrows(), b.ncols()),
        (a.nrows(), b.ncols()),
        "vector::cross_gram",
    )?;
    let mut out = Mat::zeros(a.ncols(), b.ncols());
    matmul(
        out.as_mut(),
        Accum::Replace,
        a.transpose(),
        b,
        1.0,
        parallelism(),
    );
    Ok(out)
}
