//! The interpolation matrix `W` (`n × m`) in factorized storage, the default representation.
//!
//! Each row stores its stencil start (one flat grid index) and its `d·w` per-dimension
//! weights; the `w^d` entries `Π_l w^{(l)}_{a_l}` are formed on the fly. At `d = 3` (cubic)
//! that is `8 + 96 = 104` bytes per row instead of the `64·16 = 1024` bytes of CSR values and
//! column indices, and the benchmark (`examples/interp_bench.rs`) measured it faster than
//! [`CsrInterpolation`](crate::interpolation_csr::CsrInterpolation) for `W v` and `Wᵀ v` at
//! `n = 10^6`, which is why it is the default. [`InterpolationWeights::to_csr`] converts.
//!
//! `W v` is parallel over rows. `Wᵀ v` is parallel over contiguous row blocks, each
//! accumulating into a private buffer that spans only the columns its rows touch (about `m`
//! for unsorted points, about `m / blocks` after [`cell_order`](crate::interpolation::cell_order)),
//! then the buffers are added; the transpose is never stored.

use faer::{ColMut, ColRef, MatRef};
use gp_linalg::{LinearOperator, TransposeOperator};
use rayon::prelude::*;
use sprs::CsMat;

use crate::error::{Result, StructuredError};
use crate::grid::RegularGrid;
use crate::interpolation::{
    check_points, expand_weights, stencil_offsets, InterpolationOptions, InterpolationScheme,
    Locator,
};
use crate::slice_util::{col_as_slice, with_out_slice};

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
/// (stencil start + per-dimension weights per row). Implements [`LinearOperator`] (`W v`) and
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
    weights: Vec<f64>,
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
        let mut weights = vec![0.0; n * d * w];
        starts
            .par_chunks_mut(ROW_CHUNK)
            .zip(weights.par_chunks_mut(ROW_CHUNK * d * w))
            .enumerate()
            .try_for_each(|(c, (st, wt))| -> Result<()> {
                for (r, (s, wrow)) in st.iter_mut().zip(wt.chunks_exact_mut(d * w)).enumerate() {
                    let i = c * ROW_CHUNK + r;
                    let mut flat = 0;
                    for (l, wl) in wrow.chunks_exact_mut(w).enumerate() {
                        let (start, tau) = loc.locate_1d(i, l, x[(i, l)])?;
                        flat += start * strides[l];
                        loc.scheme.weights_1d(tau, wl);
                    }
                    *s = flat;
                }
                Ok(())
            })?;
        Ok(Self {
            n,
            m: grid.num_points(),
            d,
            w,
            scheme: opts.scheme,
            starts,
            weights,
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
    pub fn row_weights(&self, i: usize) -> Option<&[f64]> {
        let k = self.d * self.w;
        self.weights.get(i * k..(i + 1) * k)
    }

    /// Bytes of the stored representation (starts and weights).
    pub fn storage_bytes(&self) -> usize {
        self.starts.len() * std::mem::size_of::<usize>()
            + self.weights.len() * std::mem::size_of::<f64>()
    }

    /// Column indices (ascending) and values of row `i`, expanded; `None` if `i ≥ n`.
    pub fn row(&self, i: usize) -> Option<(Vec<usize>, Vec<f64>)> {
        let wrow = self.row_weights(i)?;
        let mut vals = vec![0.0; self.entries_per_row()];
        expand_weights(wrow, self.w, &mut vals);
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
                let k = self.d * self.w;
                expand_weights(&self.weights[i * k..(i + 1) * k], self.w, val);
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
        let (d, w) = (self.d, self.w);
        let k = d * w;
        out.par_chunks_mut(ROW_CHUNK)
            .enumerate()
            .for_each(|(c, out)| {
                let mut prefix = vec![0.0; self.outer_offsets.len()];
                let row0 = c * ROW_CHUNK;
                let weights = &self.weights[row0 * k..(row0 + out.len()) * k];
                let starts = &self.starts[row0..row0 + out.len()];
                let rows = out.iter_mut().zip(starts).zip(weights.chunks_exact(k));
                match (d, w) {
                    (1, 4) => rows.for_each(|((o, &st), wr)| *o = cubic_1d(wr, st, x)),
                    (2, 4) => {
                        let s0 = self.strides[0];
                        rows.for_each(|((o, &st), wr)| *o = cubic_2d(wr, st, s0, x))
                    }
                    (3, 4) => {
                        let (s0, s1) = (self.strides[0], self.strides[1]);
                        rows.for_each(|((o, &st), wr)| *o = cubic_3d(wr, st, s0, s1, x))
                    }
                    _ => rows.for_each(|((o, &st), wr)| {
                        *o = row_dot(wr, w, st, &self.outer_offsets, &mut prefix, x)
                    }),
                }
            });
    }

    /// `Wᵀ v` into a slice (`v.len() == n`, `out.len() == m`).
    fn scatter_rows(&self, v: &[f64], out: &mut [f64]) {
        let (d, w) = (self.d, self.w);
        let k = d * w;
        let span_last = self.outer_offsets.last().copied().unwrap_or(0) + w;
        transpose_by_blocks(self.n, self.m, ROW_CHUNK, out, |rows| {
            let lo = rows.clone().map(|i| self.starts[i]).min().unwrap_or(0);
            let hi = rows
                .clone()
                .map(|i| self.starts[i] + span_last)
                .max()
                .unwrap_or(0);
            let mut buf = vec![0.0; hi.saturating_sub(lo)];
            let mut prefix = vec![0.0; self.outer_offsets.len()];
            let (s0, s1) = (
                self.strides.first().copied().unwrap_or(0),
                self.strides.get(1).copied().unwrap_or(0),
            );
            for i in rows {
                let wrow = &self.weights[i * k..(i + 1) * k];
                let (at, vi) = (self.starts[i] - lo, v[i]);
                match (d, w) {
                    (1, 4) => {
                        scatter4(&mut buf, at, wrow, vi);
                        continue;
                    }
                    (2, 4) => {
                        for (a, wa) in wrow[..4].iter().enumerate() {
                            scatter4(&mut buf, at + a * s0, &wrow[4..8], wa * vi);
                        }
                        continue;
                    }
                    (3, 4) => {
                        for (a, wa) in wrow[..4].iter().enumerate() {
                            let wav = wa * vi;
                            for (b, wb) in wrow[4..8].iter().enumerate() {
                                scatter4(&mut buf, at + a * s0 + b * s1, &wrow[8..12], wav * wb);
                            }
                        }
                        continue;
                    }
                    _ => {}
                }
                row_scatter(
                    wrow,
                    w,
                    self.starts[i] - lo,
                    &self.outer_offsets,
                    &mut prefix,
                    v[i],
                    &mut buf,
                );
            }
            (lo, buf)
        });
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

/// One row of cubic `W` in 1-D.
#[inline(always)]
fn cubic_1d(wr: &[f64], start: usize, x: &[f64]) -> f64 {
    dot4(&wr[..4], x, start)
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
}

impl TransposeOperator for InterpolationWeights {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.scatter_rows(x, o));
    }
}
