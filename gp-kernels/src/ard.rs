//! Fast tile builders for stationary ARD kernels `σ² g(r²)`, generic over the
//! [`RadialProfile`] so that `g` is inlined and the inner loops vectorize.
//!
//! Layout: points are read dimension by dimension (a faer `n × d` matrix is column major,
//! so each input dimension is a contiguous slice). For a block of up to [`ROW_BLOCK`] rows and
//! one column `j`, `r²` is accumulated over dimensions as `Σₖ ((xᵢₖ − zⱼₖ)/ℓₖ)²` — by
//! differences, never through `‖x‖² + ‖z‖² − 2xᵀz`, which loses all relative accuracy near
//! the diagonal — into a small buffer that stays in L1, and `σ² g(r²)` is then written in one
//! pass. `1/ℓₖ` is computed once per call.

use std::borrow::Cow;

use faer::reborrow::ReborrowMut;
use faer::{ColRef, Mat, MatMut, MatRef};
use gp_linalg::validate::check_finite_mat;
use rayon::prelude::*;

use crate::error::{KernelError, Result};
use crate::profile::RadialProfile;
use crate::stationary::{lengthscale_grad, ArdParams};
use gp_linalg::simd_dispatch;

/// Rows per inner block (the `r²` buffer and the block of each input column stay in L1).
pub const ROW_BLOCK: usize = 256;
/// Columns per parallel task of the dense builders.
pub const COLUMN_TILE: usize = 64;

/// A column as a slice, copying only when the view is not contiguous.
pub(crate) fn col_slice(c: ColRef<'_, f64>) -> Cow<'_, [f64]> {
    match c.try_as_col_major() {
        Some(s) => Cow::Borrowed(s.as_slice()),
        None => Cow::Owned(c.iter().copied().collect()),
    }
}

/// Largest coordinate magnitude the dense builders accept: the difference of two such
/// coordinates is finite, so no `xᵢ − zᵢ` overflows to `±∞` in the vectorized loops.
pub const MAX_COORDINATE: f64 = f64::MAX / 2.0;

/// Checks the column count, finiteness and range ([`MAX_COORDINATE`]) of a point matrix.
pub(crate) fn check_points(d: usize, x: MatRef<'_, f64>, context: &'static str) -> Result<()> {
    if x.ncols() != d {
        return Err(KernelError::InputDim {
            context,
            expected: d,
            found: x.ncols(),
        });
    }
    check_finite_mat(x, context)?;
    check_coordinate_range(x, context)
}

/// Errors with [`KernelError::InvalidArgument`] if an entry exceeds [`MAX_COORDINATE`] in
/// magnitude (call after the finiteness check).
pub(crate) fn check_coordinate_range(x: MatRef<'_, f64>, context: &'static str) -> Result<()> {
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            let v = x[(i, j)];
            if v.abs() > MAX_COORDINATE {
                return Err(KernelError::InvalidArgument {
                    name: "points",
                    reason: format!(
                        "{context}: entry ({i}, {j}) = {v:e} exceeds {MAX_COORDINATE:e} in \
                         magnitude, so differences of coordinates would overflow; rescale the \
                         inputs (for example standardize each column)"
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Writes `vals` into column `j` of `out` starting at row `i0`.
#[inline(always)]
pub(crate) fn write_col(out: MatMut<'_, f64>, j: usize, i0: usize, vals: &[f64]) {
    let mut col = out.col_mut(j).subrows_mut(i0, vals.len());
    if let Some(c) = col.rb_mut().try_as_col_major_mut() {
        c.as_slice_mut().copy_from_slice(vals);
        return;
    }
    for (i, &v) in vals.iter().enumerate() {
        col[i] = v;
    }
}

/// Accumulates `r²ᵢ = Σₖ ((xᵢₖ − zₖ)/ℓₖ)²` for the rows `rows` of `xcols` into `r2`.
#[inline(always)]
fn accumulate_r2(
    xcols: &[Cow<'_, [f64]>],
    z: &[f64],
    inv_l: &[f64],
    rows: std::ops::Range<usize>,
    r2: &mut [f64],
) {
    r2.fill(0.0);
    for ((xc, &zk), &il) in xcols.iter().zip(z).zip(inv_l) {
        for (r, &a) in r2.iter_mut().zip(&xc[rows.clone()]) {
            let t = (a - zk) * il;
            *r += t * t;
        }
    }
}

/// Writes `σ² g(r²)` for all pairs of rows of `x` (`m × d`) and `z` (`p × d`) into `out`
/// (`m × p`), sequentially.
///
/// Contract (unchecked, may panic otherwise): `x` and `z` have `params.dim()` columns and
/// `out` is `m × p`.
pub fn fill_block<P: RadialProfile>(
    params: &ArdParams,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    out: MatMut<'_, f64>,
) {
    fill_block_dispatch::<P>(params, x, z, out)
}

simd_dispatch! {
    fn fill_block_dispatch<P: RadialProfile>(
        params: &ArdParams,
        x: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        out: MatMut<'_, f64>,
    ) = fill_block_body, avx2_fma via fill_block_avx2;
}

#[inline(always)]
fn fill_block_body<P: RadialProfile>(
    params: &ArdParams,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    mut out: MatMut<'_, f64>,
) {
    let d = params.dim();
    let var = params.variance();
    let inv_l: Vec<f64> = params.lengthscales().iter().map(|l| 1.0 / l).collect();
    let xcols: Vec<Cow<'_, [f64]>> = (0..d).map(|k| col_slice(x.col(k))).collect();
    let (m, p) = (x.nrows(), z.nrows());
    let mut zj = vec![0.0; d];
    let mut r2 = [0.0; ROW_BLOCK];
    for i0 in (0..m).step_by(ROW_BLOCK) {
        let len = ROW_BLOCK.min(m - i0);
        let r2 = &mut r2[..len];
        for j in 0..p {
            for (k, v) in zj.iter_mut().enumerate() {
                *v = z[(j, k)];
            }
            accumulate_r2(&xcols, &zj, &inv_l, i0..i0 + len, r2);
            for r in r2.iter_mut() {
                *r = var * P::fast_value(*r);
            }
            write_col(out.rb_mut(), j, i0, r2);
        }
    }
}

/// `K(X, X)` and `∂K/∂θ` for `θ = [log ℓ₀, …, log ℓ_{d−1}, log σ²]`, checked, parallel over
/// column tiles. One pass computes `K` and `W = g'(r²)` (one `exp` per entry); one pass per
/// dimension forms `∂K/∂ log ℓₖ = −2σ² W ⊙ ((xᵢₖ − xⱼₖ)/ℓₖ)²`; `∂K/∂ log σ² = K`.
///
/// The derivative is formed as `−2 (σ² ((W s) s))` (`s` the scaled difference), as in
/// [`ArdParams::write_grad`]: exactly 0 where `g'` underflows (never `0 · ∞` when `s²`
/// overflows), and the unbounded Matérn-1/2 `g'` near `r = 0` meets `|s| ≤ r` before `σ²`.
pub fn matrix_and_grads<P: RadialProfile>(
    params: &ArdParams,
    x: MatRef<'_, f64>,
) -> Result<(Mat<f64>, Vec<Mat<f64>>)> {
    let d = params.dim();
    check_points(d, x, "kernel matrix and gradients, X")?;
    let x = x.to_owned();
    let n = x.nrows();
    let var = params.variance();
    let inv_l: Vec<f64> = params.lengthscales().iter().map(|l| 1.0 / l).collect();
    let xcols: Vec<Cow<'_, [f64]>> = (0..d).map(|k| col_slice(x.col(k))).collect();
    let mut k_mat = Mat::<f64>::zeros(n, n);
    let mut w_mat = Mat::<f64>::zeros(n, n);
    if n == 0 {
        let grads = (0..=d).map(|_| Mat::zeros(0, 0)).collect();
        return Ok((k_mat, grads));
    }
    k_mat
        .as_mut()
        .par_col_chunks_mut(COLUMN_TILE)
        .zip(w_mat.as_mut().par_col_chunks_mut(COLUMN_TILE))
        .enumerate()
        .for_each(|(t, (kt, wt))| {
            value_and_w_tile::<P>(&xcols, &inv_l, var, t * COLUMN_TILE, kt, wt)
        });
    let mut grads = Vec::with_capacity(d + 1);
    for (k, xc) in xcols.iter().enumerate() {
        let il = inv_l[k];
        let mut g = Mat::<f64>::zeros(n, n);
        g.as_mut()
            .par_col_chunks_mut(COLUMN_TILE)
            .enumerate()
            .for_each(|(t, mut gt)| {
                let mut buf = vec![0.0; n];
                for jj in 0..gt.ncols() {
                    let j = t * COLUMN_TILE + jj;
                    let xj = xc[j];
                    let wj = col_slice(w_mat.col(j));
                    for ((v, &a), &w) in buf.iter_mut().zip(xc.iter()).zip(wj.iter()) {
                        let s = (a - xj) * il;
                        // W = 0 where g' underflows (s² may then be ∞): never 0 · ∞.
                        *v = if w == 0.0 {
                            0.0
                        } else {
                            -2.0 * (var * ((w * s) * s))
                        };
                    }
                    write_col(gt.rb_mut(), jj, 0, &buf);
                }
            });
        grads.push(g);
    }
    grads.push(k_mat.clone());
    Ok((k_mat, grads))
}

simd_dispatch! {
    /// Columns `j0 ..` of `K` (into `kt`) and `W = g'(r²)` (into `wt`).
    fn value_and_w_tile<P: RadialProfile>(
        xcols: &[Cow<'_, [f64]>],
        inv_l: &[f64],
        var: f64,
        j0: usize,
        kt: MatMut<'_, f64>,
        wt: MatMut<'_, f64>,
    ) = value_and_w_tile_body, avx2_fma via value_and_w_tile_avx2;
}

#[inline(always)]
fn value_and_w_tile_body<P: RadialProfile>(
    xcols: &[Cow<'_, [f64]>],
    inv_l: &[f64],
    var: f64,
    j0: usize,
    mut kt: MatMut<'_, f64>,
    mut wt: MatMut<'_, f64>,
) {
    let n = kt.nrows();
    let mut zj = vec![0.0; xcols.len()];
    let mut r2 = [0.0; ROW_BLOCK];
    let mut w = [0.0; ROW_BLOCK];
    for jj in 0..kt.ncols() {
        for (v, xc) in zj.iter_mut().zip(xcols) {
            *v = xc[j0 + jj];
        }
        for i0 in (0..n).step_by(ROW_BLOCK) {
            let len = ROW_BLOCK.min(n - i0);
            let r2 = &mut r2[..len];
            accumulate_r2(xcols, &zj, inv_l, i0..i0 + len, r2);
            for (r, w) in r2.iter_mut().zip(w.iter_mut()) {
                let (g, dg) = P::fast_value_and_deriv(*r);
                *r = var * g;
                *w = dg;
            }
            write_col(kt.rb_mut(), jj, i0, r2);
            write_col(wt.rb_mut(), jj, i0, &w[..len]);
        }
    }
}

/// Independent partial sums per reduction in [`add_weighted_grads`]: strict floating-point
/// order forbids the compiler from splitting one running sum, so the loop keeps this many
/// (two AVX2 vectors), in a fixed order that does not depend on the build.
const LANES: usize = 8;

/// `Σᵢ term(wᵢ, aᵢ, bᵢ)` in [`LANES`] interleaved partial sums, added in lane order at the end.
#[inline(always)]
fn lane_sum(w: &[f64], a: &[f64], b: &[f64], term: impl Fn(f64, f64, f64) -> f64) -> f64 {
    let mut lanes = [0.0; LANES];
    let full = w.len() / LANES * LANES;
    for ((wc, ac), bc) in w[..full]
        .chunks_exact(LANES)
        .zip(a[..full].chunks_exact(LANES))
        .zip(b[..full].chunks_exact(LANES))
    {
        for l in 0..LANES {
            lanes[l] += term(wc[l], ac[l], bc[l]);
        }
    }
    for (l, ((&wi, &ai), &bi)) in w[full..].iter().zip(&a[full..]).zip(&b[full..]).enumerate() {
        lanes[l] += term(wi, ai, bi);
    }
    lanes.iter().sum()
}

/// `acc[q] += Σᵢ weights[i − i₀] · (∂k(xᵢ, xⱼ)/∂θ_q · scale)` over the rows
/// `i₀ = first_row .. first_row + weights.len()` of `x`, for `θ = [log ℓ₀, …, log σ²]`: one
/// column of the gradient pass `Σᵢⱼ Wᵢⱼ ∂Kᵢⱼ/∂θ` of exact-GP training, with no derivative
/// matrix formed. Per block of [`ROW_BLOCK`] rows: `r²` by differences, `g` and `g'` with the
/// vectorizable `exp`, then one pass per dimension; each sum is kept in 8 partial sums.
/// The derivative is formed as in [`ArdParams::write_grad`] (never `0 · ∞`).
///
/// Contract (unchecked, may panic otherwise): `x` has `params.dim()` columns, `j` and the rows
/// are rows of `x`, `acc` has `params.dim() + 1` entries.
pub fn add_weighted_grads<P: RadialProfile>(
    params: &ArdParams,
    x: MatRef<'_, f64>,
    j: usize,
    first_row: usize,
    weights: &[f64],
    scale: f64,
    acc: &mut [f64],
) {
    add_weighted_grads_dispatch::<P>(params, x, j, first_row, weights, scale, acc)
}

simd_dispatch! {
    fn add_weighted_grads_dispatch<P: RadialProfile>(
        params: &ArdParams,
        x: MatRef<'_, f64>,
        j: usize,
        first_row: usize,
        weights: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) = add_weighted_grads_body, avx2_fma via add_weighted_grads_avx2;
}

#[inline(always)]
fn add_weighted_grads_body<P: RadialProfile>(
    params: &ArdParams,
    x: MatRef<'_, f64>,
    j: usize,
    first_row: usize,
    weights: &[f64],
    scale: f64,
    acc: &mut [f64],
) {
    let d = params.dim();
    let var = params.variance();
    let inv_l: Vec<f64> = params.lengthscales().iter().map(|l| 1.0 / l).collect();
    let xcols: Vec<Cow<'_, [f64]>> = (0..d).map(|k| col_slice(x.col(k))).collect();
    let zj: Vec<f64> = xcols.iter().map(|c| c[j]).collect();
    let mut values = [0.0; ROW_BLOCK];
    let mut derivs = [0.0; ROW_BLOCK];
    for (b, w) in weights.chunks(ROW_BLOCK).enumerate() {
        let i0 = first_row + b * ROW_BLOCK;
        let len = w.len();
        let (values, derivs) = (&mut values[..len], &mut derivs[..len]);
        accumulate_r2(&xcols, &zj, &inv_l, i0..i0 + len, values);
        for (v, dg) in values.iter_mut().zip(derivs.iter_mut()) {
            let (g, dgv) = P::fast_value_and_deriv(*v);
            *v = var * g;
            *dg = dgv;
        }
        // ∂k/∂ log σ² = k.
        acc[d] += lane_sum(w, values, values, |wi, v, _| wi * (v * scale));
        for (k, (xc, (&zk, &il))) in xcols.iter().zip(zj.iter().zip(&inv_l)).enumerate() {
            let xc = &xc[i0..i0 + len];
            acc[k] += lane_sum(w, derivs, xc, |wi, dg, a| {
                let t = (a - zk) * il;
                wi * (lengthscale_grad(var, dg, t) * scale)
            });
        }
    }
}

#[cfg(test)]
mod simd_tests {
    use super::*;
    use crate::profile::{Matern12Profile, Matern32Profile, Matern52Profile, SeProfile};

    /// `n × d` deterministic points in `[0, 3)^d`.
    fn points(n: usize, d: usize, seed: usize) -> Mat<f64> {
        Mat::from_fn(n, d, |i, k| {
            ((i * 7919 + k * 104_729 + seed * 31) % 10_007) as f64 / 10_007.0 * 3.0
        })
    }

    fn same_bits(a: &Mat<f64>, b: &Mat<f64>) -> bool {
        a.col_iter().zip(b.col_iter()).all(|(x, y)| {
            x.iter()
                .zip(y.iter())
                .all(|(p, q)| p.to_bits() == q.to_bits())
        })
    }

    /// The dispatched tile fills (the AVX2+FMA build on CPUs that have it) against their
    /// baseline bodies, over more rows than one row block.
    fn check<P: RadialProfile>(name: &str) {
        let params = ArdParams::new(vec![0.7, 1.3, 0.4], 1.6).unwrap();
        let (n, p) = (ROW_BLOCK + 45, 70);
        let (x, z) = (points(n, 3, 1), points(p, 3, 2));
        let (mut a, mut b) = (Mat::zeros(n, p), Mat::zeros(n, p));
        fill_block_dispatch::<P>(&params, x.as_ref(), z.as_ref(), a.as_mut());
        fill_block_body::<P>(&params, x.as_ref(), z.as_ref(), b.as_mut());
        assert!(same_bits(&a, &b), "{name}: fill_block");
        let xcols: Vec<Cow<'_, [f64]>> = (0..3).map(|k| col_slice(x.col(k))).collect();
        let inv_l: Vec<f64> = params.lengthscales().iter().map(|l| 1.0 / l).collect();
        let (mut ka, mut wa) = (Mat::zeros(n, COLUMN_TILE), Mat::zeros(n, COLUMN_TILE));
        let (mut kb, mut wb) = (Mat::zeros(n, COLUMN_TILE), Mat::zeros(n, COLUMN_TILE));
        value_and_w_tile::<P>(&xcols, &inv_l, 1.6, 5, ka.as_mut(), wa.as_mut());
        value_and_w_tile_body::<P>(&xcols, &inv_l, 1.6, 5, kb.as_mut(), wb.as_mut());
        assert!(
            same_bits(&ka, &kb) && same_bits(&wa, &wb),
            "{name}: value and W"
        );
        let w: Vec<f64> = (0..n - 3).map(|i| (i % 7) as f64 - 3.0).collect();
        let (mut ga, mut gb) = (vec![0.0; 4], vec![0.0; 4]);
        add_weighted_grads_dispatch::<P>(&params, x.as_ref(), 5, 3, &w, 0.5, &mut ga);
        add_weighted_grads_body::<P>(&params, x.as_ref(), 5, 3, &w, 0.5, &mut gb);
        let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&ga), bits(&gb), "{name}: weighted gradient sums");
    }

    #[test]
    fn weighted_gradient_sums_match_the_per_entry_sums() {
        // More rows than one block, a count that is not a multiple of LANES, a column j
        // outside the rows and one inside them.
        use crate::{Kernel, Matern, MaternNu, SquaredExponential};
        let (ls, var) = (vec![0.7, 1.3, 0.4], 1.6);
        let kernels: Vec<Box<dyn Kernel>> = vec![
            Box::new(SquaredExponential::new(ls.clone(), var).unwrap()),
            Box::new(Matern::new(MaternNu::Half, ls.clone(), var).unwrap()),
            Box::new(Matern::new(MaternNu::ThreeHalves, ls.clone(), var).unwrap()),
            Box::new(Matern::new(MaternNu::FiveHalves, ls, var).unwrap()),
        ];
        let x = points(ROW_BLOCK + 45, 3, 1);
        let n = x.nrows();
        let scale = 0.25;
        for (j, first) in [(2, 4), (40, 7)] {
            let w: Vec<f64> = (first..n)
                .map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.3)
                .collect();
            for kernel in &kernels {
                let mut fast = vec![0.0; 4];
                kernel.add_weighted_grads(x.as_ref(), j, first, &w, scale, &mut fast);
                let mut slow = vec![0.0; 4];
                crate::dense::add_weighted_grads_generic(
                    kernel.as_ref(),
                    x.as_ref(),
                    j,
                    first,
                    &w,
                    scale,
                    &mut slow,
                );
                // Both orders of summation are within n·ε of Σ|terms| (plus a few ulp of
                // the vectorized exp per term).
                let mut abs = [0.0; 4];
                let mut g = vec![0.0; 4];
                let xj: Vec<f64> = x.row(j).iter().copied().collect();
                for (r, &wr) in w.iter().enumerate() {
                    let xi: Vec<f64> = x.row(first + r).iter().copied().collect();
                    kernel.eval_with_grad(&xi, &xj, &mut g);
                    for (a, gq) in abs.iter_mut().zip(&g) {
                        *a += (wr * gq * scale).abs();
                    }
                }
                for q in 0..4 {
                    assert!(
                        (fast[q] - slow[q]).abs() <= 1e-13 * abs[q],
                        "{kernel:?} j {j} q {q}: {} vs {}",
                        fast[q],
                        slow[q]
                    );
                    assert!(abs[q] > 0.0);
                }
            }
        }
    }

    #[test]
    fn dispatched_tiles_equal_the_baseline_build_bit_for_bit() {
        check::<SeProfile>("SE");
        check::<Matern12Profile>("Matérn 1/2");
        check::<Matern32Profile>("Matérn 3/2");
        check::<Matern52Profile>("Matérn 5/2");
    }
}
