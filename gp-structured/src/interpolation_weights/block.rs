//! `W X` and `Wᵀ V` for blocks of columns at once (the right-hand sides of a batched CG:
//! `y` and the trace probes), for the cubic stencils in 1, 2 and 3 dimensions.
//!
//! Column by column, every column recomputes every row's weights and walks its stencil with
//! one value per node; here a row's weights are computed once and each stencil node carries
//! [`LANES`] columns (a row of the grid-side block, stored row major), so one vector
//! multiply or add does the work of twelve scalar ones. Per column the operations and their
//! order are those of [`gather_nd`](super::gather_nd) and [`scatter_nd`](super::scatter_nd)
//! (multiplies and adds, no fused multiply-adds; the same block split and summation order of
//! `Wᵀ`), so every column equals its column-by-column product bit for bit.

use faer::reborrow::ReborrowMut;
use faer::{MatMut, MatRef};
use rayon::prelude::*;

use gp_linalg::vector::{dot_chunk, CHUNK};

use super::{
    fill_weights, next_run_3d, InterpolationWeights, ROW_CHUNK, RUN_MAX, SUM_BLOCKS, TILE_ROWS,
};
use crate::interpolation::InterpolationScheme;

/// Columns per pass.
pub(crate) const LANES: usize = 12;

/// One value per column of the pass.
type Lanes = [f64; LANES];

/// `a · b` lane by lane.
#[inline(always)]
fn scale(a: f64, b: &Lanes) -> Lanes {
    std::array::from_fn(|c| a * b[c])
}

/// `(w₀x₀ + w₁x₁) + (w₂x₂ + w₃x₃)` lane by lane over four consecutive rows of `x` from `at`
/// (the order of [`dot4`](super::dot4)).
#[inline(always)]
fn dot4(w: &[f64], x: &[Lanes], at: usize) -> Lanes {
    let xs = &x[at..at + 4];
    std::array::from_fn(|c| {
        (w[0] * xs[0][c] + w[1] * xs[1][c]) + (w[2] * xs[2][c] + w[3] * xs[3][c])
    })
}

/// `acc += a · b` lane by lane (a multiply, then an add).
#[inline(always)]
fn add_scaled(acc: &mut Lanes, a: f64, b: &Lanes) {
    for c in 0..LANES {
        acc[c] += a * b[c];
    }
}

/// `buf[at + q] += val · w[q]` for `q < 4`, lane by lane (the order of `scatter4`).
#[inline(always)]
fn scatter4(buf: &mut [Lanes], at: usize, w: &[f64], val: &Lanes) {
    for (q, row) in buf[at..at + 4].iter_mut().enumerate() {
        for c in 0..LANES {
            row[c] += val[c] * w[q];
        }
    }
}

gp_linalg::simd_dispatch! {
    /// `out_j = (W X)_j` for the rows of one chunk, `X` row major (`m × 12`).
    fn gather_block<const D: usize>(
        scheme: InterpolationScheme,
        taus: &[f64],
        starts: &[usize],
        strides: [usize; 2],
        x: &[Lanes],
        out: &mut [Lanes],
    ) = gather_block_body, avx512 via gather_block_avx512, avx2 via gather_block_avx2;
}

#[inline(always)]
fn gather_block_body<const D: usize>(
    scheme: InterpolationScheme,
    taus: &[f64],
    starts: &[usize],
    strides: [usize; 2],
    x: &[Lanes],
    out: &mut [Lanes],
) {
    let mut wr = [0.0; 12];
    let (s0, s1) = (strides[0], strides[1]);
    for ((o, &st), t) in out.iter_mut().zip(starts).zip(taus.chunks_exact(D)) {
        fill_weights(scheme, 4, t, &mut wr);
        *o = if D == 1 {
            dot4(&wr[..4], x, st)
        } else if D == 2 {
            let mut sum = [0.0; LANES];
            for (a, &wa) in wr[..4].iter().enumerate() {
                add_scaled(&mut sum, wa, &dot4(&wr[4..8], x, st + a * s0));
            }
            sum
        } else {
            let mut sum = [0.0; LANES];
            for (a, &wa) in wr[..4].iter().enumerate() {
                let base = st + a * s0;
                let mut inner = [0.0; LANES];
                for (b, &wb) in wr[4..8].iter().enumerate() {
                    add_scaled(&mut inner, wb, &dot4(&wr[8..12], x, base + b * s1));
                }
                add_scaled(&mut sum, wa, &inner);
            }
            sum
        };
    }
}

gp_linalg::simd_dispatch! {
    /// `Wᵀ V` of one block of rows into `buf` (grid rows from `lo`), `V` row major.
    fn scatter_block<const D: usize>(
        scheme: InterpolationScheme,
        taus: &[f64],
        starts: &[usize],
        strides: [usize; 2],
        v: &[Lanes],
        lo: usize,
        buf: &mut [Lanes],
    ) = scatter_block_body, avx512 via scatter_block_avx512, avx2 via scatter_block_avx2;
}

#[inline(always)]
fn scatter_block_body<const D: usize>(
    scheme: InterpolationScheme,
    taus: &[f64],
    starts: &[usize],
    strides: [usize; 2],
    v: &[Lanes],
    lo: usize,
    buf: &mut [Lanes],
) {
    if D == 3 {
        scatter_runs_3d(scheme, taus, starts, strides, v, lo, buf);
        return;
    }
    let mut wr = [0.0; 12];
    let s0 = strides[0];
    for ((t, &st), vi) in taus.chunks_exact(D).zip(starts).zip(v) {
        fill_weights(scheme, 4, t, &mut wr);
        let at = st - lo;
        if D == 1 {
            scatter4(buf, at, &wr[..4], vi);
        } else {
            for (a, &wa) in wr[..4].iter().enumerate() {
                scatter4(buf, at + a * s0, &wr[4..8], &scale(wa, vi));
            }
        }
    }
}

/// The 3-D scatter by runs of consecutive rows with the same stencil (the points of one grid
/// cell, when the rows are in cell order): each of the 64 stencil rows sums the run's
/// contributions `((w_a v) w_b) w_c` in registers, in row order from zero, and is added to
/// `buf` once per run ([`super::next_run_3d`] splits the runs, as the column-by-column scatter
/// does, so the sums are the same bits).
#[inline(always)]
fn scatter_runs_3d(
    scheme: InterpolationScheme,
    taus: &[f64],
    starts: &[usize],
    strides: [usize; 2],
    v: &[Lanes],
    lo: usize,
    buf: &mut [Lanes],
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
                let mut acc = [[0.0; LANES]; 4];
                for (wr, vi) in weights.iter().zip(run) {
                    let wav = scale(wr[a], vi);
                    let val: Lanes = std::array::from_fn(|c| wav[c] * wr[4 + b]);
                    for (q, row) in acc.iter_mut().enumerate() {
                        for c in 0..LANES {
                            row[c] += val[c] * wr[8 + q];
                        }
                    }
                }
                let rows = &mut buf[at + a * s0 + b * s1..][..4];
                for (row, sum) in rows.iter_mut().zip(&acc) {
                    for c in 0..LANES {
                        row[c] += sum[c];
                    }
                }
            }
        }
        i = end;
    }
}

/// `out = lane q of vals (+ α v)`, through slices when the columns are contiguous.
fn write_lane(
    vals: &[Lanes],
    q: usize,
    shift: Option<(f64, faer::ColRef<'_, f64>)>,
    mut out: faer::ColMut<'_, f64>,
) {
    let shift_slice = shift.map(|(alpha, v)| (alpha, v.try_as_col_major().map(|v| v.as_slice())));
    match (out.rb_mut().try_as_col_major_mut(), shift_slice) {
        (Some(o), None) => {
            for (o, v) in o.as_slice_mut().iter_mut().zip(vals) {
                *o = v[q];
            }
        }
        (Some(o), Some((alpha, Some(s)))) => {
            for ((o, v), &sv) in o.as_slice_mut().iter_mut().zip(vals).zip(s) {
                *o = v[q] + alpha * sv;
            }
        }
        _ => {
            for (j, v) in vals.iter().enumerate() {
                out[j] = match shift {
                    Some((alpha, s)) => v[q] + alpha * s[j],
                    None => v[q],
                };
            }
        }
    }
}

/// `dot_chunk(a, b)` of two columns of one row chunk (copied to slices when strided, so the
/// bits are `dot_chunk`'s either way).
fn chunk_dot(a: faer::ColRef<'_, f64>, b: faer::ColRef<'_, f64>) -> f64 {
    match (a.try_as_col_major(), b.try_as_col_major()) {
        (Some(a), Some(b)) => dot_chunk(a.as_slice(), b.as_slice()),
        _ => {
            let (a, b): (Vec<f64>, Vec<f64>) =
                (a.iter().copied().collect(), b.iter().copied().collect());
            dot_chunk(&a, &b)
        }
    }
}

/// Rows `i0 .. i0 + rows.len()` of columns `c0 .. c0 + width` of `x` into `rows` (lanes
/// past `width` keep their values: the caller's zeros, whose sums are never read).
fn fill_rows(x: MatRef<'_, f64>, c0: usize, width: usize, i0: usize, rows: &mut [Lanes]) {
    let len = rows.len();
    for c in 0..width {
        let col = x.col(c0 + c).subrows(i0, len);
        match col.try_as_col_major() {
            Some(col) => {
                for (row, &v) in rows.iter_mut().zip(col.as_slice()) {
                    row[c] = v;
                }
            }
            None => {
                for (row, &v) in rows.iter_mut().zip(col.iter()) {
                    row[c] = v;
                }
            }
        }
    }
}

/// Columns `c0 .. c0 + width` of `x` as rows of [`LANES`] (zero padded), filled a
/// [`TILE_ROWS`] tile at a time so the rows stay in L1 across the columns.
fn rows_of(x: MatRef<'_, f64>, c0: usize, width: usize) -> Vec<Lanes> {
    let mut rows = vec![[0.0; LANES]; x.nrows()];
    rows.par_chunks_mut(ROW_CHUNK)
        .enumerate()
        .for_each(|(b, chunk)| {
            for (s, tile) in chunk.chunks_mut(TILE_ROWS).enumerate() {
                fill_rows(x, c0, width, b * ROW_CHUNK + s * TILE_ROWS, tile);
            }
        });
    rows
}

impl InterpolationWeights {
    /// Whether the blocked products cover this stencil (cubic, `d ≤ 3`).
    pub(crate) fn has_block_products(&self) -> bool {
        self.w == 4 && (1..=3).contains(&self.d)
    }

    /// `out = W X (+ α V)` for `X` (`m × k`) and, with a shift, `V` (`n × k`), [`LANES`]
    /// columns per pass; each column equals
    /// [`matvec_plus_scaled`](InterpolationWeights::matvec_plus_scaled) bit for bit.
    ///
    /// With `dots` (and a shift), also returns `v_jᵀ out_j` for every column, summed as
    /// `gp_linalg::vector::dot` sums them (`dot_chunk` over chunks of
    /// [`CHUNK`](gp_linalg::vector::CHUNK) rows, added in order): the same bits, taken while
    /// each chunk of `out` is still in cache. Contract: the stencil has block products and
    /// the shapes match.
    pub(crate) fn matmat_block(
        &self,
        x: MatRef<'_, f64>,
        shift: Option<(f64, MatRef<'_, f64>)>,
        mut out: MatMut<'_, f64>,
        dots: bool,
    ) -> Option<Vec<f64>> {
        let strides = self.leading_strides();
        let (d, scheme) = (self.d, self.scheme);
        let mut sums = Vec::with_capacity(x.ncols());
        for c0 in (0..x.ncols()).step_by(LANES) {
            let width = LANES.min(x.ncols() - c0);
            let xg = rows_of(x, c0, width);
            // Tasks of `CHUNK` rows (the chunks of `dot`), gathered `ROW_CHUNK` rows at a time.
            let partials: Vec<Vec<f64>> = out
                .rb_mut()
                .subcols_mut(c0, width)
                .par_row_chunks_mut(CHUNK)
                .enumerate()
                .map(|(t, mut out)| {
                    let task0 = t * CHUNK;
                    let mut vals = vec![[0.0; LANES]; ROW_CHUNK.min(out.nrows())];
                    for sub0 in (0..out.nrows()).step_by(ROW_CHUNK) {
                        let row0 = task0 + sub0;
                        let len = ROW_CHUNK.min(out.nrows() - sub0);
                        let taus = &self.taus[row0 * d..(row0 + len) * d];
                        let starts = &self.starts[row0..row0 + len];
                        let vals = &mut vals[..len];
                        match d {
                            1 => gather_block::<1>(scheme, taus, starts, strides, &xg, vals),
                            2 => gather_block::<2>(scheme, taus, starts, strides, &xg, vals),
                            _ => gather_block::<3>(scheme, taus, starts, strides, &xg, vals),
                        }
                        for q in 0..width {
                            let col = out.rb_mut().col_mut(q).subrows_mut(sub0, len);
                            let shifted =
                                shift.map(|(alpha, s)| (alpha, s.col(c0 + q).subrows(row0, len)));
                            write_lane(vals, q, shifted, col);
                        }
                    }
                    match shift {
                        Some((_, v)) if dots => (0..width)
                            .map(|q| {
                                let rows = out.nrows();
                                chunk_dot(v.col(c0 + q).subrows(task0, rows), out.as_ref().col(q))
                            })
                            .collect(),
                        _ => Vec::new(),
                    }
                })
                .collect();
            if dots && shift.is_some() {
                sums.extend((0..width).map(|q| partials.iter().map(|p| p[q]).sum::<f64>()));
            }
        }
        (dots && shift.is_some()).then_some(sums)
    }

    /// `out = Wᵀ V` for `V` (`n × k`), [`LANES`] columns per pass; each column equals the
    /// column-by-column `Wᵀ v` bit for bit (the same blocks, summed in the same order).
    /// Contract: the stencil has block products and the shapes match.
    pub(crate) fn matmat_transpose_block(&self, v: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
        let strides = self.leading_strides();
        let (n, d, scheme) = (self.n, self.d, self.scheme);
        let span_last = self.outer_offsets.last().copied().unwrap_or(0) + self.w;
        let nblocks = SUM_BLOCKS.min(n.div_ceil(ROW_CHUNK)).max(1);
        let per = n.div_ceil(nblocks).max(1);
        for c0 in (0..v.ncols()).step_by(LANES) {
            let width = LANES.min(v.ncols() - c0);
            let parts: Vec<(usize, Vec<Lanes>)> = (0..nblocks)
                .into_par_iter()
                .map(|b| {
                    let rows = b * per..((b + 1) * per).min(n);
                    let (lo, hi) = self.starts[rows.clone()]
                        .iter()
                        .fold((usize::MAX, 0), |(lo, hi), &st| {
                            (lo.min(st), hi.max(st + span_last))
                        });
                    let lo = lo.min(hi);
                    let mut buf = vec![[0.0; LANES]; hi.saturating_sub(lo)];
                    // The block's rows of V, a tile at a time in row-major form (the
                    // scatter is row by row, so tiles give the same sums as one call).
                    let mut tile = vec![[0.0; LANES]; TILE_ROWS];
                    for t0 in rows.clone().step_by(TILE_ROWS) {
                        let t1 = (t0 + TILE_ROWS).min(rows.end);
                        let vt = &mut tile[..t1 - t0];
                        fill_rows(v, c0, width, t0, vt);
                        let (bt, bs) = (&self.taus[t0 * d..t1 * d], &self.starts[t0..t1]);
                        match d {
                            1 => scatter_block::<1>(scheme, bt, bs, strides, vt, lo, &mut buf),
                            2 => scatter_block::<2>(scheme, bt, bs, strides, vt, lo, &mut buf),
                            _ => scatter_block::<3>(scheme, bt, bs, strides, vt, lo, &mut buf),
                        }
                    }
                    (lo, buf)
                })
                .collect();
            // The blocks' sums added in order of the block, from 0 (as `transpose_by_blocks`).
            out.rb_mut()
                .subcols_mut(c0, width)
                .par_row_chunks_mut(1 << 14)
                .enumerate()
                .for_each(|(c, mut o)| {
                    let r0 = c * (1 << 14);
                    let len = o.nrows();
                    let mut acc = vec![[0.0; LANES]; len];
                    for (lo, buf) in &parts {
                        let (a, b) = ((*lo).max(r0), (lo + buf.len()).min(r0 + len));
                        for i in a..b.max(a) {
                            let (dst, src) = (&mut acc[i - r0], &buf[i - lo]);
                            for q in 0..LANES {
                                dst[q] += src[q];
                            }
                        }
                    }
                    for q in 0..width {
                        let mut col = o.rb_mut().col_mut(q);
                        for (i, a) in acc.iter().enumerate() {
                            col[i] = a[q];
                        }
                    }
                });
        }
    }
}
