//! The interpolation matrix `W` (`n × m`) in factorized storage, the default representation.
//!
//! Each row stores its stencil start (one flat grid index) and its `d` fractional offsets
//! `τ_l` inside the grid cell; the `d·w` per-dimension weights `w^{(l)}_a(τ_l)` are computed
//! from them at every product (the same polynomial evaluation the constructor would store,
//! so the products are bit for bit those of stored weights), and the `w^d` entries
//! `Π_l w^{(l)}_{a_l}` are formed on the fly. At `d = 1` that is `8 + 8 = 16` bytes per row
//! (stored cubic weights took 40, CSR 64), at `d = 3` `8 + 24 = 32` (stored weights 104, CSR
//! 1024). At large `n` the products are bound by memory traffic, so fewer bytes per row is
//! the speed: `gp-bench bench ski-matvec`, three runs interleaved with the stored-weights
//! build, measured the whole `W K_G Wᵀ + σ²I` product at `n = 10⁶`, `d = 1` in 10.8–15.3 ms
//! against 17.8–21.1 ms, and at `n = 10⁵`, `d = 3` in 4.4–5.8 ms against 5.6–6.6 ms (the
//! cubic loops in their AVX2 builds, the weights' polynomials included). Those figures time
//! `apply`, which also allocates the `n`-vector output; the bench now also times the product
//! into an output it holds (as a solver runs it): 4.2–5.6 ms at `d = 1` where `apply` took
//! 12.7–14.9 ms in the same runs, the difference being the kernel faulting in the fresh 8 MB.
//! [`InterpolationWeights::to_csr`] converts.
//!
//! `W v` is parallel over rows. `Wᵀ v` is parallel over contiguous row blocks, each
//! accumulating into a private buffer that spans only the columns its rows touch (about `m`
//! for unsorted points, about `m / blocks` after [`cell_order`](crate::interpolation::cell_order)),
//! then the buffers are added; the transpose is never stored. In 3-D a block's consecutive
//! rows with the same stencil (one grid cell's points, after `cell_order`) are summed per
//! stencil entry before they are added to the buffer, so the buffer is written once per run
//! rather than once per row: 64 entries × 12 columns per point otherwise. That took the
//! 11-column SKI product at 3DRoad's size from 17–21 ms to 15–17 ms (`ski_rtgps_step
//! --cell-order`).
//!
//! Products with blocks of columns (`matmat`, `matmat_transpose`, `matmat_plus_scaled`) take
//! twelve columns per pass over the rows for the cubic stencils in 1–3 dimensions, each
//! row's weights computed once (module `block`); every column equals its column-by-column
//! product bit for bit. At 3DRoad's size (n = 278 319, 32³ grid, 11 columns) that took an
//! RR-CG step on the SKI operator from 6.2 s to 5.1–5.5 s, and to 3.6–3.7 s with the points
//! in cell order (`cargo run --release -p gp-bench --example ski_rtgps_step`, 2 threads).

use faer::reborrow::ReborrowMut;
use faer::{ColMut, ColRef, MatMut, MatRef};
use gp_linalg::{LinearOperator, TransposeOperator};
use rayon::prelude::*;
use sprs::CsMat;

use crate::error::{Result, StructuredError};
use crate::grid::RegularGrid;
use crate::interpolation::{
    check_points, expand_weights, locate_rows, stencil_offsets, InterpolationOptions,
    InterpolationScheme, Locator,
};
use crate::slice_util::{col_as_slice, with_out_slice};

mod block;
mod diagonal;

/// Rows per parallel task in `W v`, and the fewest rows of a block of `Wᵀ v`.
pub(crate) const ROW_CHUNK: usize = 4096;

/// Number of row blocks (private buffers) a transpose product `Wᵀ v` sums, whatever the
/// thread count: a fixed count fixes the floating-point summation order, so `Wᵀ v` (and every
/// model built on it) gives the same bits on 1, 2 or 64 threads. Two is the count the
/// 2-thread machines the reference results were produced on used (one block per thread), so
/// those results did not change; more blocks would let more threads help at the cost of one
/// more buffer of about `m` values each and a one-time change in the last bits.
const SUM_BLOCKS: usize = 2;

/// The interpolation matrix `W` of `n` points on a [`RegularGrid`], stored factorized
/// (stencil start + per-dimension cell offsets per row). Implements [`LinearOperator`] (`W v`) and
/// [`TransposeOperator`] (`Wᵀ v`, and `Wᵀ` as an operator through
/// [`transposed`](TransposeOperator::transposed)).
#[derive(Debug, Clone)]
pub struct InterpolationWeights {
    n: usize,
    m: usize,
    d: usize,
    w: usize,
    scheme: InterpolationScheme,
    starts: Vec<usize>,
    /// `τ_l` of every row (`n·d`, row-major): the fractional offset of the point in its
    /// stencil's cell along dimension `l`.
    taus: Vec<f64>,
    /// Offsets of the stencil nodes over the first `d − 1` dimensions (the last dimension
    /// is a contiguous run of `w` nodes).
    outer_offsets: Vec<usize>,
    sizes: Vec<usize>,
    strides: Vec<usize>,
}

impl InterpolationWeights {
    /// Interpolation weights of the rows of `x` (`n × d`) on `grid`.
    ///
    /// Errors: `x` with the wrong number of columns, an axis too short for the scheme, a
    /// non-finite coordinate, or (with [`OutOfGrid::Error`](crate::interpolation::OutOfGrid))
    /// a point outside the grid.
    pub fn new(grid: &RegularGrid, x: MatRef<'_, f64>, opts: InterpolationOptions) -> Result<Self> {
        check_points(grid, x)?;
        let loc = Locator::new(grid, opts)?;
        let (n, d) = (x.nrows(), grid.dims());
        let w = opts.scheme.stencil_width();
        let strides = grid.strides();
        let mut starts = vec![0usize; n];
        let mut taus = vec![0.0; n * d];
        starts
            .par_chunks_mut(ROW_CHUNK)
            .zip(taus.par_chunks_mut(ROW_CHUNK * d))
            .enumerate()
            .try_for_each(|(c, (st, tt))| -> Result<()> {
                let first = c * ROW_CHUNK;
                let rows = x.subrows(first, st.len());
                locate_rows(&loc, rows, first, strides, st, tt)
            })?;
        Ok(Self {
            n,
            m: grid.num_points(),
            d,
            w,
            scheme: opts.scheme,
            starts,
            taus,
            outer_offsets: stencil_offsets(&strides[..d - 1], w),
            sizes: grid.sizes().to_vec(),
            strides: strides.to_vec(),
        })
    }

    /// Number of points `n` (rows).
    pub fn num_rows(&self) -> usize {
        self.n
    }

    /// Number of grid points `m` (columns).
    pub fn num_cols(&self) -> usize {
        self.m
    }

    /// The interpolation scheme.
    pub fn scheme(&self) -> InterpolationScheme {
        self.scheme
    }

    /// Grid sizes `m_l`.
    pub fn grid_sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// Entries per row, `w^d` (explicit zeros included).
    pub fn entries_per_row(&self) -> usize {
        self.w.pow(self.d as u32)
    }

    /// Flat grid index of the first stencil node of each row.
    pub fn stencil_starts(&self) -> &[usize] {
        &self.starts
    }

    /// The `d·w` per-dimension weights of row `i` (dimension-major), or `None` if `i ≥ n`.
    pub fn row_weights(&self, i: usize) -> Option<Vec<f64>> {
        let taus = self.taus.get(i * self.d..(i + 1) * self.d)?;
        let mut out = vec![0.0; self.d * self.w];
        fill_weights(self.scheme, self.w, taus, &mut out);
        Some(out)
    }

    /// Bytes of the stored representation (starts and fractional offsets).
    pub fn storage_bytes(&self) -> usize {
        self.starts.len() * std::mem::size_of::<usize>()
            + self.taus.len() * std::mem::size_of::<f64>()
    }

    /// Column indices (ascending) and values of row `i`, expanded; `None` if `i ≥ n`.
    pub fn row(&self, i: usize) -> Option<(Vec<usize>, Vec<f64>)> {
        let wrow = self.row_weights(i)?;
        let mut vals = vec![0.0; self.entries_per_row()];
        expand_weights(&wrow, self.w, &mut vals);
        let start = self.starts[i];
        let cols = self
            .outer_offsets
            .iter()
            .flat_map(|&o| (0..self.w).map(move |a| start + o + a))
            .collect();
        Some((cols, vals))
    }

    /// The same matrix in CSR form (`n·w^d` stored entries, explicit zeros kept).
    pub fn to_csr(&self) -> Result<CsMat<f64>> {
        let e = self.entries_per_row();
        let nnz = self
            .n
            .checked_mul(e)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "W",
                reason: format!("n·w^d = {}·{e} entries overflow usize", self.n),
            })?;
        let mut indices = vec![0usize; nnz];
        let mut data = vec![0.0; nnz];
        indices
            .par_chunks_mut(e)
            .zip(data.par_chunks_mut(e))
            .enumerate()
            .for_each(|(i, (ind, val))| {
                let mut wrow = vec![0.0; self.d * self.w];
                fill_weights(
                    self.scheme,
                    self.w,
                    &self.taus[i * self.d..(i + 1) * self.d],
                    &mut wrow,
                );
                expand_weights(&wrow, self.w, val);
                let start = self.starts[i];
                for (j, o) in self.outer_offsets.iter().enumerate() {
                    for a in 0..self.w {
                        ind[j * self.w + a] = start + o + a;
                    }
                }
            });
        let indptr: Vec<usize> = (0..=self.n).map(|i| i * e).collect();
        CsMat::try_new((self.n, self.m), indptr, indices, data).map_err(|(_, _, _, err)| {
            StructuredError::InvalidArgument {
                name: "W",
                reason: format!("internal error building CSR: {err}"),
            }
        })
    }

    /// `W v` into a slice (`x.len() == m`, `out.len() == n`).
    pub(crate) fn matvec_slice(&self, x: &[f64], out: &mut [f64]) {
        self.matvec_plus_scaled_slice(x, None, out);
    }

    /// `out = W x + α v` (`x` of length `m`, `v` and `out` of length `n`) in one pass over
    /// the rows: `v` is read once and `out` written once, where `W x` followed by adding `α v`
    /// takes a second pass over both (the SKI operator's `W K_G Wᵀ v + σ² v`). Every entry
    /// is rounded as `(W x)_i + α v_i`, so the result equals the two-pass one bit for bit.
    ///
    /// Errors: [`StructuredError::InvalidArgument`] when a length does not match `W`.
    pub fn matvec_plus_scaled(
        &self,
        x: ColRef<'_, f64>,
        alpha: f64,
        v: ColRef<'_, f64>,
        out: ColMut<'_, f64>,
    ) -> Result<()> {
        for (name, found, expected) in [
            ("x (W x + α v: one entry per grid point)", x.nrows(), self.m),
            ("v (W x + α v: one entry per row of W)", v.nrows(), self.n),
            (
                "out (W x + α v: one entry per row of W)",
                out.nrows(),
                self.n,
            ),
        ] {
            if found != expected {
                return Err(StructuredError::InvalidArgument {
                    name,
                    reason: format!("length {found}, expected {expected}"),
                });
            }
        }
        let (mut xbuf, mut vbuf) = (Vec::new(), Vec::new());
        let x = col_as_slice(x, &mut xbuf);
        let v = col_as_slice(v, &mut vbuf);
        with_out_slice(out, |o| {
            self.matvec_plus_scaled_slice(x, Some((alpha, v)), o)
        });
        Ok(())
    }

    /// `out = W X + α V` for blocks of columns (`X`: `m × k`; `V`, `out`: `n × k`), each
    /// column equal to [`matvec_plus_scaled`](Self::matvec_plus_scaled) bit for bit; cubic
    /// stencils in up to three dimensions take twelve columns per pass over the rows.
    ///
    /// Errors: [`StructuredError::InvalidArgument`] when a shape does not match `W`.
    pub fn matmat_plus_scaled(
        &self,
        x: MatRef<'_, f64>,
        alpha: f64,
        v: MatRef<'_, f64>,
        out: MatMut<'_, f64>,
    ) -> Result<()> {
        self.plus_scaled(x, alpha, v, out, false).map(|_| ())
    }

    /// [`matmat_plus_scaled`](Self::matmat_plus_scaled), also returning `v_jᵀ out_j` for every
    /// column with `gp_linalg::vector::dot`'s bits (`dot(v_j, out_j)`). For the cubic stencils
    /// of the blocked products each row chunk's dot is taken while it is in cache, so CG's
    /// curvatures `dᵀ(W K Wᵀ + σ²I) d` cost no pass of their own.
    ///
    /// Errors as [`matmat_plus_scaled`](Self::matmat_plus_scaled).
    pub fn matmat_plus_scaled_dots(
        &self,
        x: MatRef<'_, f64>,
        alpha: f64,
        v: MatRef<'_, f64>,
        out: MatMut<'_, f64>,
    ) -> Result<Vec<f64>> {
        self.plus_scaled(x, alpha, v, out, true)
    }

    /// `W X + α V` into `out`, and with `dots` the columns' `v_jᵀ out_j` (empty otherwise).
    fn plus_scaled(
        &self,
        x: MatRef<'_, f64>,
        alpha: f64,
        v: MatRef<'_, f64>,
        mut out: MatMut<'_, f64>,
        dots: bool,
    ) -> Result<Vec<f64>> {
        let k = x.ncols();
        for (name, (rows, cols), (er, ec)) in [
            (
                "X (W X + α V: one row per grid point)",
                x.shape(),
                (self.m, k),
            ),
            (
                "V (W X + α V: one row per row of W)",
                v.shape(),
                (self.n, k),
            ),
            (
                "out (W X + α V: one row per row of W)",
                out.shape(),
                (self.n, k),
            ),
        ] {
            if (rows, cols) != (er, ec) {
                return Err(StructuredError::InvalidArgument {
                    name,
                    reason: format!("shape {rows} × {cols}, expected {er} × {ec}"),
                });
            }
        }
        if k >= 2 && self.has_block_products() {
            return Ok(self
                .matmat_block(x, Some((alpha, v)), out, dots)
                .unwrap_or_default());
        }
        for j in 0..k {
            self.matvec_plus_scaled(x.col(j), alpha, v.col(j), out.rb_mut().col_mut(j))?;
        }
        if !dots {
            return Ok(Vec::new());
        }
        Ok(gp_linalg::vector::col_dots(v, out.as_ref())?
            .iter()
            .copied()
            .collect())
    }

    /// `W x + α v` into a slice (`x.len() == m`, `v.len() == out.len() == n`), or `W x`
    /// with `shift = None`: the shift fused into the same pass over the rows, so `v` is read
    /// once and `out` written once (the SKI operator's `W K_G Wᵀ v + σ² v`). Each entry is
    /// `(W x)_i + α v_i`, the same rounding as adding `α v` after the product.
    fn matvec_plus_scaled_slice(&self, x: &[f64], shift: Option<(f64, &[f64])>, out: &mut [f64]) {
        let (d, w) = (self.d, self.w);
        let scheme = self.scheme;
        out.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(c, out)| {
                let mut prefix = vec![0.0; self.outer_offsets.len()];
                let mut wr = vec![0.0; d * w];
                let row0 = c * ROW_CHUNK;
                let taus = &self.taus[row0 * d..(row0 + out.len()) * d];
                let starts = &self.starts[row0..row0 + out.len()];
                let rows = out.iter_mut().zip(starts).zip(taus.chunks_exact(d));
                let shifted = shift.map(|(alpha, v)| (alpha, &v[row0..row0 + rows.len()]));
                let finish = |j: usize, o: &mut f64, value: f64| {
                    *o = match shifted {
                        Some((alpha, v)) => value + alpha * v[j],
                        None => value,
                    }
                };
                let strides = self.leading_strides();
                match (d, w) {
                    (1, 4) => gather_nd::<1>(scheme, taus, starts, strides, x, shifted, out),
                    (2, 4) => gather_nd::<2>(scheme, taus, starts, strides, x, shifted, out),
                    (3, 4) => gather_nd::<3>(scheme, taus, starts, strides, x, shifted, out),
                    _ => rows.enumerate().for_each(|(j, ((o, &st), t))| {
                        fill_weights(scheme, w, t, &mut wr);
                        let value = row_dot(&wr, w, st, &self.outer_offsets, &mut prefix, x);
                        finish(j, o, value);
                    }),
                }
            });
    }

    /// The grid strides of the first two dimensions (0 where there are fewer), as the const-`D`
    /// kernels take them (a kernel reads only those of its first `D − 1` dimensions).
    fn leading_strides(&self) -> [usize; 2] {
        [
            self.strides.first().copied().unwrap_or(0),
            self.strides.get(1).copied().unwrap_or(0),
        ]
    }

    /// `Wᵀ v` into a slice (`v.len() == n`, `out.len() == m`).
    fn scatter_rows(&self, v: &[f64], out: &mut [f64]) {
        let (d, w) = (self.d, self.w);
        let scheme = self.scheme;
        let span_last = self.outer_offsets.last().copied().unwrap_or(0) + w;
        transpose_by_blocks(self.n, self.m, ROW_CHUNK, out, |rows| {
            // The columns the block touches, in one pass over its starts.
            let (lo, hi) = self.starts[rows.clone()]
                .iter()
                .fold((usize::MAX, 0), |(lo, hi), &st| {
                    (lo.min(st), hi.max(st + span_last))
                });
            let lo = lo.min(hi);
            let mut buf = vec![0.0; hi.saturating_sub(lo)];
            let mut prefix = vec![0.0; self.outer_offsets.len()];
            let mut wrow = vec![0.0; d * w];
            let taus = |i: usize| &self.taus[i * d..(i + 1) * d];
            // One loop per stencil shape, so the shape is not tested at every row.
            let (bt, bs, bv) = (
                &self.taus[rows.start * d..rows.end * d],
                &self.starts[rows.clone()],
                &v[rows.clone()],
            );
            let strides = self.leading_strides();
            match (d, w) {
                (1, 4) => scatter_nd::<1>(scheme, bt, bs, strides, bv, lo, &mut buf),
                (2, 4) => scatter_nd::<2>(scheme, bt, bs, strides, bv, lo, &mut buf),
                (3, 4) => scatter_nd::<3>(scheme, bt, bs, strides, bv, lo, &mut buf),
                _ => {
                    for i in rows {
                        fill_weights(scheme, w, taus(i), &mut wrow);
                        row_scatter(
                            &wrow,
                            w,
                            self.starts[i] - lo,
                            &self.outer_offsets,
                            &mut prefix,
                            v[i],
                            &mut buf,
                        );
                    }
                }
            }
            (lo, buf)
        });
    }
}

gp_linalg::simd_dispatch! {
    /// `out_j = (W x)_j (+ α v_j)` for the rows of one chunk of a `D`-dimensional (1, 2 or 3),
    /// 4-wide stencil with strides `strides` of the first `D − 1` dimensions, compiled for
    /// AVX2 where the CPU has it (the same bits in both builds).
    fn gather_nd<const D: usize>(
        scheme: InterpolationScheme,
        taus: &[f64],
        starts: &[usize],
        strides: [usize; 2],
        x: &[f64],
        shift: Option<(f64, &[f64])>,
        out: &mut [f64],
    ) = gather_nd_body, avx2 via gather_nd_avx2;
}

#[inline(always)]
fn gather_nd_body<const D: usize>(
    scheme: InterpolationScheme,
    taus: &[f64],
    starts: &[usize],
    strides: [usize; 2],
    x: &[f64],
    shift: Option<(f64, &[f64])>,
    out: &mut [f64],
) {
    let mut wr = [0.0; 12];
    for (j, ((o, &st), t)) in out
        .iter_mut()
        .zip(starts)
        .zip(taus.chunks_exact(D))
        .enumerate()
    {
        fill_weights(scheme, 4, t, &mut wr);
        let value = if D == 1 {
            dot4(&wr[..4], x, st)
        } else if D == 2 {
            cubic_2d(&wr, st, strides[0], x)
        } else {
            cubic_3d(&wr, st, strides[0], strides[1], x)
        };
        *o = match shift {
            Some((alpha, v)) => value + alpha * v[j],
            None => value,
        };
    }
}

gp_linalg::simd_dispatch! {
    /// `Wᵀ v` of one block for a `D`-dimensional (1, 2 or 3), 4-wide stencil into `buf`
    /// (columns from `lo`), compiled for AVX2 where the CPU has it (the same bits).
    fn scatter_nd<const D: usize>(
        scheme: InterpolationScheme,
        taus: &[f64],
        starts: &[usize],
        strides: [usize; 2],
        v: &[f64],
        lo: usize,
        buf: &mut [f64],
    ) = scatter_nd_body, avx2 via scatter_nd_avx2;
}

#[inline(always)]
fn scatter_nd_body<const D: usize>(
    scheme: InterpolationScheme,
    taus: &[f64],
    starts: &[usize],
    strides: [usize; 2],
    v: &[f64],
    lo: usize,
    buf: &mut [f64],
) {
    if D == 3 {
        scatter_runs_3d(scheme, taus, starts, strides, v, lo, buf);
        return;
    }
    let mut wr = [0.0; 12];
    let s0 = strides[0];
    for ((t, &st), &vi) in taus.chunks_exact(D).zip(starts).zip(v) {
        fill_weights(scheme, 4, t, &mut wr);
        let at = st - lo;
        if D == 1 {
            scatter4(buf, at, &wr[..4], vi);
        } else {
            for (a, wa) in wr[..4].iter().enumerate() {
                scatter4(buf, at + a * s0, &wr[4..8], wa * vi);
            }
        }
    }
}

/// Four consecutive entries of `x` from `at`, dotted with the four weights `w`.
#[inline(always)]
fn dot4(w: &[f64], x: &[f64], at: usize) -> f64 {
    let xs = &x[at..at + 4];
    (w[0] * xs[0] + w[1] * xs[1]) + (w[2] * xs[2] + w[3] * xs[3])
}

/// `buf[at + a] += val · w[a]` for `a < 4`.
#[inline(always)]
fn scatter4(buf: &mut [f64], at: usize, w: &[f64], val: f64) {
    let bs = &mut buf[at..at + 4];
    bs[0] += val * w[0];
    bs[1] += val * w[1];
    bs[2] += val * w[2];
    bs[3] += val * w[3];
}

/// The `d·w` per-dimension weights of one row (dimension-major) from its offsets `τ_l`.
#[inline(always)]
fn fill_weights(scheme: InterpolationScheme, w: usize, taus: &[f64], out: &mut [f64]) {
    for (tau, wl) in taus.iter().zip(out.chunks_exact_mut(w)) {
        scheme.weights_1d(*tau, wl);
    }
}

/// The 3-D scatter of one column by runs of rows with the same stencil ([`next_run_3d`]): each
/// of the 64 stencil entries sums the run's contributions `((w_a v) w_b) w_c` from zero in
/// row order and is added to `buf` once per run, the order of the blocked scatter, so each
/// column of a blocked `Wᵀ V` is this one's bits.
#[inline(always)]
fn scatter_runs_3d(
    scheme: InterpolationScheme,
    taus: &[f64],
    starts: &[usize],
    strides: [usize; 2],
    v: &[f64],
    lo: usize,
    buf: &mut [f64],
) {
    let (s0, s1) = (strides[0], strides[1]);
    let mut weights = [[0.0; 12]; RUN_MAX];
    let mut i = 0;
    while i < starts.len() {
        let end = next_run_3d(scheme, taus, starts, i, &mut weights);
        let run = &v[i..end];
        let at = starts[i] - lo;
        for a in 0..4 {
            for b in 0..4 {
                let mut acc = [0.0; 4];
                for (wr, &vi) in weights.iter().zip(run) {
                    let val = wr[a] * vi * wr[4 + b];
                    for (q, sum) in acc.iter_mut().enumerate() {
                        *sum += val * wr[8 + q];
                    }
                }
                let row = &mut buf[at + a * s0 + b * s1..][..4];
                for (entry, sum) in row.iter_mut().zip(acc) {
                    *entry += sum;
                }
            }
        }
        i = end;
    }
}

/// The longest run of rows the 3-D scatters sum in registers before adding to the grid.
pub(crate) const RUN_MAX: usize = 32;

/// Rows of `V` turned row major per tile in the blocked `Wᵀ` pass: 24 KiB, so a tile stays
/// in L1 between its filling and its scatter, and no `n × 12` copy of `V` is made. Runs of
/// the 3-D scatters end at its multiples ([`next_run_3d`]).
pub(crate) const TILE_ROWS: usize = 256;

/// The run of cubic 3-D rows from `i` that share `starts[i]`: at most [`RUN_MAX`] rows, and
/// never across a multiple of [`TILE_ROWS`] (the blocked scatter's tiles). Writes the run's
/// per-dimension weights into `weights` (row `k` of the run in `weights[k]`) and returns
/// the run's end. The 3-D scatters, blocked and column by column, sum each run's
/// contributions before adding them to the grid, so both split the rows here.
#[inline(always)]
fn next_run_3d(
    scheme: InterpolationScheme,
    taus: &[f64],
    starts: &[usize],
    i: usize,
    weights: &mut [[f64; 12]; RUN_MAX],
) -> usize {
    let tile_end = (i / TILE_ROWS + 1) * TILE_ROWS;
    let limit = (i + RUN_MAX).min(tile_end).min(starts.len());
    let mut end = i + 1;
    while end < limit && starts[end] == starts[i] {
        end += 1;
    }
    for (wr, t) in weights.iter_mut().zip(taus[3 * i..3 * end].chunks_exact(3)) {
        fill_weights(scheme, 4, t, wr);
    }
    end
}

/// One row of cubic `W` in 2-D (`s0` = stride of dimension 0).
#[inline(always)]
fn cubic_2d(wr: &[f64], start: usize, s0: usize, x: &[f64]) -> f64 {
    let (w0, w1) = (&wr[..4], &wr[4..8]);
    let mut sum = 0.0;
    for (a, wa) in w0.iter().enumerate() {
        sum += wa * dot4(w1, x, start + a * s0);
    }
    sum
}

/// One row of cubic `W` in 3-D.
#[inline(always)]
fn cubic_3d(wr: &[f64], start: usize, s0: usize, s1: usize, x: &[f64]) -> f64 {
    let (w0, w1, w2) = (&wr[..4], &wr[4..8], &wr[8..12]);
    let mut sum = 0.0;
    for (a, wa) in w0.iter().enumerate() {
        let base = start + a * s0;
        let mut inner = 0.0;
        for (b, wb) in w1.iter().enumerate() {
            inner += wb * dot4(w2, x, base + b * s1);
        }
        sum += wa * inner;
    }
    sum
}

/// `Σ_entries W[i, j] x[j]` for one factorized row.
#[inline]
fn row_dot(
    wrow: &[f64],
    w: usize,
    start: usize,
    outer: &[usize],
    prefix: &mut [f64],
    x: &[f64],
) -> f64 {
    let (outer_w, last) = wrow.split_at(wrow.len() - w);
    expand_weights(outer_w, w, prefix);
    let mut sum = 0.0;
    if w == 4 {
        let l = [last[0], last[1], last[2], last[3]];
        for (p, &o) in prefix.iter().zip(outer) {
            let xs = &x[start + o..start + o + 4];
            sum += p * (l[0] * xs[0] + l[1] * xs[1] + l[2] * xs[2] + l[3] * xs[3]);
        }
    } else {
        for (p, &o) in prefix.iter().zip(outer) {
            let xs = &x[start + o..start + o + w];
            let inner: f64 = last.iter().zip(xs).map(|(a, b)| a * b).sum();
            sum += p * inner;
        }
    }
    sum
}

/// `buf[start + entry] += v_i · W[i, entry]` for one factorized row.
#[inline]
fn row_scatter(
    wrow: &[f64],
    w: usize,
    start: usize,
    outer: &[usize],
    prefix: &mut [f64],
    vi: f64,
    buf: &mut [f64],
) {
    let (outer_w, last) = wrow.split_at(wrow.len() - w);
    expand_weights(outer_w, w, prefix);
    for (p, &o) in prefix.iter().zip(outer) {
        let pv = p * vi;
        let bs = &mut buf[start + o..start + o + w];
        for (b, l) in bs.iter_mut().zip(last) {
            *b += pv * l;
        }
    }
}

/// Runs a transpose product in parallel: `block(rows)` accumulates its rows into a private
/// buffer covering columns `lo .. lo + buf.len()`; the buffers are then added into `out` in
/// block order. A block gets at least `min_block_rows` rows (fewer blocks for small `n`).
pub(crate) fn transpose_by_blocks<F>(
    n: usize,
    m: usize,
    min_block_rows: usize,
    out: &mut [f64],
    block: F,
) where
    F: Fn(std::ops::Range<usize>) -> (usize, Vec<f64>) + Sync,
{
    // A fixed block count (not the pool size) fixes the summation order, so the result is
    // the same to the last bit on any number of threads.
    let nblocks = SUM_BLOCKS.min(n.div_ceil(min_block_rows.max(1))).max(1);
    let per = n.div_ceil(nblocks).max(1);
    let parts: Vec<(usize, Vec<f64>)> = (0..nblocks)
        .into_par_iter()
        .map(|b| block(b * per..((b + 1) * per).min(n)))
        .collect();
    const OUT_CHUNK: usize = 1 << 14;
    out.par_chunks_mut(OUT_CHUNK)
        .enumerate()
        .for_each(|(c, o)| {
            let c0 = c * OUT_CHUNK;
            o.fill(0.0);
            for (lo, buf) in &parts {
                let (a, b) = ((*lo).max(c0), (lo + buf.len()).min(c0 + o.len()));
                if a < b {
                    for (dst, src) in o[a - c0..b - c0].iter_mut().zip(&buf[a - lo..b - lo]) {
                        *dst += src;
                    }
                }
            }
        });
    debug_assert_eq!(out.len(), m);
}

impl LinearOperator for InterpolationWeights {
    fn nrows(&self) -> usize {
        self.n
    }

    fn ncols(&self) -> usize {
        self.m
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.matvec_slice(x, o));
    }

    fn matmat(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        if x.ncols() >= 2 && self.has_block_products() {
            self.matmat_block(x, None, out, false);
            return;
        }
        for j in 0..x.ncols() {
            self.matvec(x.col(j), out.rb_mut().col_mut(j));
        }
    }
}

impl TransposeOperator for InterpolationWeights {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.scatter_rows(x, o));
    }

    fn matmat_transpose(&self, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        if x.ncols() >= 2 && self.has_block_products() {
            self.matmat_transpose_block(x, out);
            return;
        }
        for j in 0..x.ncols() {
            self.matvec_transpose(x.col(j), out.rb_mut().col_mut(j));
        }
    }
}
