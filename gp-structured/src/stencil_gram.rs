//! [`StencilGram`]: a symmetric `m × m` matrix on a regular grid whose non-zeros join grid
//! nodes at most `r` steps apart in every dimension, stored as a dense grid-offset stencil.
//!
//! This is the storage of `S = WᵀW` ([`SufficientStats`](crate::sufficient_stats::SufficientStats)):
//! for cubic weights two nodes share a point only if their multi-indices differ by at most 3 in
//! every dimension (`r = 3`, `7^d` offsets), for linear by at most 1 (`r = 1`, `3^d`).
//! Row `j` stores the `(2r+1)^d` values `S[j, j + Δ]` for the offsets `Δ ∈ {−r..r}^d` in C
//! order (last dimension fastest), with zeros where `j + Δ` leaves the grid.
//!
//! Why a stencil and not CSR: no column indices are stored (8 bytes per entry instead of 16),
//! entry `(j, j+Δ)` has a fixed address so the streaming accumulation and [`merge`] are plain
//! array additions, and the product `S x` reads each row contiguously with fixed offsets. The
//! cost is that every grid node has a full row even when no data are near it; for grids that
//! data cover only sparsely use [`StencilGram::to_csr`], which drops exact zeros.
//!
//! # The product
//!
//! `S x` is limited by streaming the `8·m·(2r+1)^d` bytes of values (140 MB at the radar-like
//! `40·40·32` cubic grid), so the kernel is built to keep up with memory:
//!
//! * `x` is first copied into a grid padded with `r` zero nodes on every side. Every stencil
//!   neighbour of every node then has an address, so boundary nodes use the same kernel as
//!   interior ones with no bounds tests per entry (the stored values for neighbours outside
//!   the grid are zero, and the padded `x` is zero there too).
//! * Each row is `(2r+1)^{d−1}` lines of `2r+1` entries that are consecutive in the row and
//!   in the padded `x`; the kernel has the line length as a compile-time constant and sums
//!   into independent accumulators, so it is not bound by the latency of one chain of adds.
//! * Rows that are entirely zero (nodes with no data nearby) are flagged on the first product
//!   after the values change (or by [`StencilGram::prepare`]) and are not read again.
//! * Large stencils are prefetched in software, a few live rows ahead of the row being
//!   multiplied: the hardware prefetchers stop at every 4 KiB page and lose the stream at the
//!   skipped rows, which left the product at less than half the machine's streaming rate.
//! * Large products are split over rayon tasks by fixed chunks of output rows. Each output
//!   entry is computed by one task in a fixed order, so the result does not depend on the
//!   number of threads or on scheduling, bit for bit.
//!
//! [`merge`]: crate::sufficient_stats::SufficientStats::merge

use std::sync::OnceLock;

use faer::{Col, ColMut, ColRef};
use gp_linalg::LinearOperator;
use rayon::prelude::*;
use sprs::CsMat;

use crate::error::{Result, StructuredError};
use crate::slice_util::{c_strides, checked_product, col_as_slice, with_out_slice};

/// A symmetric banded ("stencil") matrix on a regular grid; see the [module docs](self).
///
/// Equality compares the grid, the radius and the stored values.
#[derive(Debug, Clone)]
pub struct StencilGram {
    sizes: Vec<usize>,
    strides: Vec<usize>,
    m: usize,
    radius: usize,
    /// `(2r+1)^d`.
    k: usize,
    /// Flat offset of each stencil entry.
    offsets: Vec<isize>,
    /// Multi-offsets, `k × d`, row-major.
    deltas: Vec<isize>,
    /// C strides of the grid padded by `r` nodes on each side, and its number of nodes.
    padded_strides: Vec<usize>,
    padded_len: usize,
    /// Offset in the padded grid of the first entry of each line of `2r+1` consecutive
    /// stencil entries (`k / (2r+1)` lines).
    padded_line_offsets: Vec<isize>,
    data: Vec<f64>,
    /// Which rows are not all zero, derived from `data` on first use by the product; reset
    /// whenever `data` may change.
    live: OnceLock<Vec<bool>>,
}

impl PartialEq for StencilGram {
    fn eq(&self, other: &Self) -> bool {
        // The other fields are functions of these; the cache is not part of the value.
        self.sizes == other.sizes && self.radius == other.radius && self.data == other.data
    }
}

impl StencilGram {
    /// An all-zero stencil matrix on a grid with the given sizes and stencil radius `r`.
    pub fn zeros(sizes: &[usize], radius: usize) -> Result<Self> {
        if sizes.is_empty() || sizes.contains(&0) {
            return Err(StructuredError::InvalidArgument {
                name: "sizes",
                reason: format!("a stencil matrix needs at least one dimension and no empty axis, got {sizes:?}"),
            });
        }
        let m = checked_product(sizes, "sizes")?;
        let d = sizes.len();
        let q = 2 * radius + 1;
        let k = checked_product(&vec![q; d], "radius")?;
        let len = m
            .checked_mul(k)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "sizes",
                reason: format!("{m} nodes × {k} stencil entries overflow usize"),
            })?;
        let strides = c_strides(sizes);
        let mut deltas = Vec::with_capacity(k * d);
        let mut offsets = Vec::with_capacity(k);
        for idx in 0..k {
            let mut rem = idx;
            let mut multi = vec![0isize; d];
            for l in (0..d).rev() {
                multi[l] = (rem % q) as isize - radius as isize;
                rem /= q;
            }
            offsets.push(
                multi
                    .iter()
                    .zip(&strides)
                    .map(|(&dl, &s)| dl * s as isize)
                    .sum(),
            );
            deltas.extend_from_slice(&multi);
        }
        let padded_sizes: Vec<usize> = sizes.iter().map(|&s| s + 2 * radius).collect();
        let padded_len = checked_product(&padded_sizes, "sizes")?;
        let padded_strides = c_strides(&padded_sizes);
        let padded_line_offsets = (0..k / q)
            .map(|line| {
                deltas[line * q * d..(line * q + 1) * d]
                    .iter()
                    .zip(&padded_strides)
                    .map(|(&dl, &s)| dl * s as isize)
                    .sum()
            })
            .collect();
        Ok(Self {
            sizes: sizes.to_vec(),
            strides,
            m,
            radius,
            k,
            offsets,
            deltas,
            padded_strides,
            padded_len,
            padded_line_offsets,
            data: vec![0.0; len],
            live: OnceLock::new(),
        })
    }

    /// Grid sizes `m_l`.
    pub fn grid_sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// Order `m` of the matrix (number of grid nodes).
    pub fn order(&self) -> usize {
        self.m
    }

    /// Stencil radius `r` (3 for cubic `WᵀW`, 1 for linear).
    pub fn radius(&self) -> usize {
        self.radius
    }

    /// Stencil entries per row, `(2r+1)^d`.
    pub fn stencil_len(&self) -> usize {
        self.k
    }

    /// The multi-offset `Δ` of stencil entry `e` (`e < stencil_len()`).
    pub fn stencil_offset(&self, e: usize) -> Option<&[isize]> {
        let d = self.sizes.len();
        self.deltas.get(e * d..(e + 1) * d)
    }

    /// Raw values, `m × (2r+1)^d`, row `j` = `S[j, j + Δ_e]` for each stencil entry `e`.
    pub fn values(&self) -> &[f64] {
        &self.data
    }

    pub(crate) fn values_mut(&mut self) -> &mut [f64] {
        // The caller may change which rows are empty.
        self.live = OnceLock::new();
        &mut self.data
    }

    /// Entry `S[i, j]` (zero outside the stencil), or `None` if an index is `≥ m`.
    pub fn entry(&self, i: usize, j: usize) -> Option<f64> {
        if i >= self.m || j >= self.m {
            return None;
        }
        let q = 2 * self.radius + 1;
        let mut e = 0usize;
        for (&s, &ml) in self.strides.iter().zip(&self.sizes) {
            let (a, b) = ((i / s) % ml, (j / s) % ml);
            let delta = b as isize - a as isize;
            if delta.unsigned_abs() > self.radius {
                return Some(0.0);
            }
            e = e * q + (delta + self.radius as isize) as usize;
        }
        Some(self.data[i * self.k + e])
    }

    /// Number of entries that are not exactly zero.
    pub fn nnz(&self) -> usize {
        self.data.par_iter().filter(|v| **v != 0.0).count()
    }

    /// Bytes of the stored values.
    pub fn storage_bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<f64>()
    }

    /// Adds another stencil matrix of the same shape into this one.
    pub fn add_assign(&mut self, other: &Self) -> Result<()> {
        if self.sizes != other.sizes || self.radius != other.radius {
            return Err(StructuredError::InvalidArgument {
                name: "other",
                reason: format!(
                    "cannot add stencil matrices of grids {:?} (radius {}) and {:?} (radius {})",
                    self.sizes, self.radius, other.sizes, other.radius
                ),
            });
        }
        self.data
            .par_iter_mut()
            .zip(other.data.par_iter())
            .for_each(|(a, b)| *a += b);
        self.live = OnceLock::new();
        Ok(())
    }

    /// The matrix in CSR form with exact zeros dropped (columns ascending in each row).
    pub fn to_csr(&self) -> Result<CsMat<f64>> {
        let rows: Vec<(Vec<usize>, Vec<f64>)> = (0..self.m)
            .into_par_iter()
            .map(|j| {
                let mut multi = vec![0usize; self.sizes.len()];
                self.multi_of(j, &mut multi);
                let mut cols = Vec::new();
                let mut vals = Vec::new();
                for e in 0..self.k {
                    let v = self.data[j * self.k + e];
                    if v != 0.0 && self.neighbour_in_grid(&multi, e) {
                        cols.push((j as isize + self.offsets[e]) as usize);
                        vals.push(v);
                    }
                }
                (cols, vals)
            })
            .collect();
        let mut indptr = Vec::with_capacity(self.m + 1);
        indptr.push(0usize);
        let mut indices = Vec::new();
        let mut data = Vec::new();
        for (c, v) in rows {
            indices.extend(c);
            data.extend(v);
            indptr.push(indices.len());
        }
        CsMat::try_new((self.m, self.m), indptr, indices, data).map_err(|(_, _, _, err)| {
            StructuredError::InvalidArgument {
                name: "StencilGram",
                reason: format!("internal error building CSR: {err}"),
            }
        })
    }

    fn multi_of(&self, j: usize, multi: &mut [usize]) {
        for ((mi, &s), &ml) in multi.iter_mut().zip(&self.strides).zip(&self.sizes) {
            *mi = (j / s) % ml;
        }
    }

    fn neighbour_in_grid(&self, multi: &[usize], e: usize) -> bool {
        let d = self.sizes.len();
        multi
            .iter()
            .zip(&self.deltas[e * d..(e + 1) * d])
            .zip(&self.sizes)
            .all(|((&i, &dl), &ml)| {
                let t = i as isize + dl;
                t >= 0 && (t as usize) < ml
            })
    }

    /// Does now the one pass over the values that the first product would otherwise do:
    /// finding the all-zero rows, which the product skips. Call it where set-up time belongs
    /// (a model's construction), so that the first product costs what the others do (for
    /// the 140 MB radar-like stencil the pass is about as long as a product). The flags are
    /// kept until the values change.
    pub fn prepare(&self) {
        self.live_rows();
    }

    /// Which rows have a non-zero value, computed on first use (one pass over the values)
    /// and kept until the values change. The product skips the other rows without reading
    /// them: they are the nodes with no data nearby (the padding ring of a data-fitted grid,
    /// regions the data do not cover).
    fn live_rows(&self) -> &[bool] {
        self.live.get_or_init(|| {
            let k = self.k;
            let mut live = vec![false; self.m];
            let chunk = PAR_CHUNK_VALUES.div_ceil(k);
            live.par_chunks_mut(chunk)
                .zip(self.data.par_chunks(chunk * k))
                .for_each(|(flags, rows)| {
                    for (f, row) in flags.iter_mut().zip(rows.chunks_exact(k)) {
                        *f = row.iter().any(|v| *v != 0.0);
                    }
                });
            live
        })
    }

    /// Index in the zero-padded copy of `x` of the node with multi-index `multi`.
    fn padded_index(&self, multi: &[usize]) -> usize {
        multi
            .iter()
            .zip(&self.padded_strides)
            .map(|(&i, &s)| (i + self.radius) * s)
            .sum()
    }

    /// `x` embedded in a grid with `r` zero nodes added on each side of every dimension, so
    /// that every stencil neighbour of every node has an address and those outside the grid
    /// read zero. Its size is at most `m·(2r+1)^d` (the stored values), in practice a small
    /// fraction of them (`46·46·38` for a `40·40·32` grid, 0.5% of the stencil).
    fn padded_x(&self, x: &[f64]) -> Vec<f64> {
        let d = self.sizes.len();
        let last = self.sizes[d - 1];
        let mut xp = vec![0.0; self.padded_len];
        let mut multi = vec![0usize; d];
        for (t, line) in x.chunks_exact(last).enumerate() {
            self.multi_of(t * last, &mut multi);
            let p = self.padded_index(&multi);
            xp[p..p + last].copy_from_slice(line);
        }
        xp
    }

    /// `out = S x` for contiguous slices (`x.len() == out.len() == m`).
    ///
    /// Rows are split into fixed chunks of about [`PAR_CHUNK_VALUES`] stored values; every
    /// output entry is computed by one call of a row kernel in a fixed summation order, so
    /// the result is bitwise the same sequentially, in parallel and for any thread count.
    fn matvec_slice(&self, x: &[f64], out: &mut [f64]) {
        let live = self.live_rows();
        let xp = self.padded_x(x);
        let chunk = PAR_CHUNK_VALUES.div_ceil(self.k);
        if self.data.len() >= PAR_MIN_VALUES && rayon::current_num_threads() > 1 {
            out.par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(c, o)| self.rows_into(c * chunk, &xp, live, o));
        } else {
            self.rows_into(0, &xp, live, out);
        }
    }

    /// Rows `start..start + out.len()` of `S x`. On x86-64 CPUs with AVX2 the kernel runs
    /// in a copy compiled for AVX2: the baseline build is SSE2, two lanes per instruction, and
    /// pays the AVX→SSE transition penalty after faer GEMMs on the same thread (measured: a
    /// 40×40×32 product on one thread 8.2 → 7.0 ms; GSGP's radar-like 80×80×8 product between
    /// K_G's GEMMs 7.2 → 6.7 ms on two threads). Both builds do the same additions and
    /// multiplications in the same order (no fused multiply-add), so results are bit-identical.
    fn rows_into(&self, start: usize, xp: &[f64], live: &[bool], out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked at run time just above), the only
                // requirement of the `target_feature` function.
                unsafe { self.rows_into_avx2(start, xp, live, out) };
                return;
            }
        }
        self.rows_into_body(start, xp, live, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn rows_into_avx2(&self, start: usize, xp: &[f64], live: &[bool], out: &mut [f64]) {
        self.rows_into_body(start, xp, live, out);
    }

    /// [`rows_into`](Self::rows_into)'s body, dispatched on the line length `2r + 1` so that
    /// the row kernel has it as a compile-time constant.
    #[inline(always)]
    fn rows_into_body(&self, start: usize, xp: &[f64], live: &[bool], out: &mut [f64]) {
        let offs = &self.padded_line_offsets;
        match 2 * self.radius + 1 {
            7 => self.rows_with(
                start,
                live,
                out,
                #[inline(always)]
                |p, row| row_dot::<7>(p, row, xp, offs),
            ),
            3 => self.rows_with(
                start,
                live,
                out,
                #[inline(always)]
                |p, row| row_dot::<3>(p, row, xp, offs),
            ),
            5 => self.rows_with(
                start,
                live,
                out,
                #[inline(always)]
                |p, row| row_dot::<5>(p, row, xp, offs),
            ),
            1 => self.rows_with(
                start,
                live,
                out,
                #[inline(always)]
                |p, row| row_dot::<1>(p, row, xp, offs),
            ),
            q => self.rows_with(start, live, out, |p, row| row_dot_dyn(p, row, xp, offs, q)),
        }
    }

    /// Walks rows `start..start + out.len()`, tracking each node's index in the padded `x`
    /// (an odometer, no divisions per node), and writes `kernel(padded index, row)` for live
    /// rows and zero for the others.
    #[inline(always)]
    fn rows_with(
        &self,
        start: usize,
        live: &[bool],
        out: &mut [f64],
        kernel: impl Fn(usize, &[f64]) -> f64,
    ) {
        let (d, k) = (self.sizes.len(), self.k);
        let last = self.sizes[d - 1];
        let mut multi = vec![0usize; d];
        self.multi_of(start, &mut multi);
        let mut p = self.padded_index(&multi);
        let rows = self.data[start * k..].chunks_exact(k);
        // Software prefetch of the rows `ahead` live rows in front (see `PREFETCH_BYTES`);
        // `queued` counts the live rows in `j..next`, whose values have been prefetched.
        let prefetching = self.data.len() * 8 >= PREFETCH_MIN_BYTES;
        let ahead = (PREFETCH_BYTES / (8 * k)).max(1);
        let (mut next, mut queued) = (start, 0usize);
        for ((j, (oj, row)), &is_live) in
            (start..).zip(out.iter_mut().zip(rows)).zip(&live[start..])
        {
            if is_live && prefetching {
                while queued <= ahead && next < self.m {
                    if live[next] {
                        prefetch(&self.data[next * k..(next + 1) * k]);
                        queued += 1;
                    }
                    next += 1;
                }
                debug_assert!(next > j);
                queued -= 1;
            }
            *oj = if is_live { kernel(p, row) } else { 0.0 };
            multi[d - 1] += 1;
            p += 1;
            if multi[d - 1] == last {
                // Carry into the leading dimensions (once per grid line). After the last node
                // of the grid `multi` runs past it, but it is not used again.
                let mut l = d - 1;
                while l > 0 && multi[l] == self.sizes[l] {
                    multi[l] = 0;
                    multi[l - 1] += 1;
                    l -= 1;
                }
                p = self.padded_index(&multi);
            }
        }
    }
}

/// Asks the CPU to bring the cache lines of `values` into L1 (no effect on other targets).
#[inline(always)]
fn prefetch(values: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    for line in values.chunks(8) {
        // SAFETY: a prefetch has no architectural effect (it cannot fault), and the address
        // is inside `values`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = values;
}

/// One row of `S x`: `Σ_e row[e] · xp[p + off_e]` over the stencil, by lines of `Q` entries
/// that are consecutive both in `row` and in the padded `x` (the last grid dimension is
/// contiguous).
///
/// Lines are taken in pairs into two sets of accumulators, so there are `2Q` independent
/// multiply-add chains and consecutive lines do not wait on each other's additions (one chain
/// is bound by the latency of the additions, well below the memory stream); the sets are
/// [`LANES`] wide (padded past `Q`), which lets the compiler keep them in vector registers
/// without repacking. Slicing whole lines leaves one bounds check per line, none per entry.
#[inline(always)]
fn row_dot<const Q: usize>(p: usize, row: &[f64], xp: &[f64], line_offsets: &[isize]) -> f64 {
    const { assert!(Q <= LANES) };
    let (lines, _) = row.as_chunks::<Q>();
    let mut acc0 = [0.0f64; LANES];
    let mut acc1 = [0.0f64; LANES];
    for (ls, offs) in lines.chunks_exact(2).zip(line_offsets.chunks_exact(2)) {
        let b0 = p.wrapping_add_signed(offs[0]);
        let b1 = p.wrapping_add_signed(offs[1]);
        let (x0, x1) = (&xp[b0..b0 + Q], &xp[b1..b1 + Q]);
        for q in 0..Q {
            acc0[q] += ls[0][q] * x0[q];
            acc1[q] += ls[1][q] * x1[q];
        }
    }
    if lines.len() % 2 == 1 {
        let t = lines.len() - 1;
        let b = p.wrapping_add_signed(line_offsets[t]);
        for (q, (v, xv)) in lines[t].iter().zip(&xp[b..b + Q]).enumerate() {
            acc0[q] += v * xv;
        }
    }
    // Lanes `Q..` are never used.
    acc0[..Q].iter().zip(&acc1[..Q]).map(|(a, b)| a + b).sum()
}

/// [`row_dot`] for a line length `q` without a specialised kernel (not produced by this
/// crate's sufficient statistics, which use `r = 1` or `r = 3`).
fn row_dot_dyn(p: usize, row: &[f64], xp: &[f64], line_offsets: &[isize], q: usize) -> f64 {
    let mut acc = [0.0f64; LANES];
    for (line, &off) in row.chunks_exact(q).zip(line_offsets) {
        let b = p.wrapping_add_signed(off);
        for (e, (v, xv)) in line.iter().zip(&xp[b..b + q]).enumerate() {
            acc[e % LANES] += v * xv;
        }
    }
    acc.iter().sum()
}

/// Stored values per parallel task of the product (about 0.5 MB): large enough that task
/// overhead is negligible, small enough for load balance on a few cores.
const PAR_CHUNK_VALUES: usize = 1 << 16;

/// How far ahead of the row being multiplied the product prefetches stored values (in bytes,
/// rounded to whole rows, at least one row): 16 KiB, six rows of a cubic `d = 3` stencil.
/// Without it the hardware prefetchers, which stop at 4 KiB page boundaries and are thrown off
/// by the skipped all-zero rows, left the product at 12 GB/s on one thread against 27 GB/s for
/// a plain sum (radar-like 80×80×8 grid, `stencil_bench --case 4`: one thread 8.4 → 3.4 ms,
/// two threads 4.6 → 1.9–2.0 ms; 4 to 8 rows ahead measured alike, 16 worse).
const PREFETCH_BYTES: usize = 16 << 10;

/// Stencils smaller than this (bytes of stored values) are not prefetched: they stay in the
/// caches between the products of an iterative solve, and the prefetch instructions cost
/// (a 10×10×10 cubic stencil, 2.7 MB: 0.032 → 0.047 ms per product with them).
const PREFETCH_MIN_BYTES: usize = 4 << 20;

/// Below this many stored values (8 MB, e.g. 3 000 nodes at `d = 3` cubic) the product runs
/// on the calling thread: the work (about 0.2 ms or less) does not amortise waking the pool
/// (measured: 1 000 nodes at `d = 3` are no faster on two threads).
const PAR_MIN_VALUES: usize = 1 << 20;

/// Accumulators per set of the row kernels (at least the line length `2r + 1` of the
/// specialised kernels).
const LANES: usize = 8;

impl LinearOperator for StencilGram {
    fn nrows(&self) -> usize {
        self.m
    }

    fn ncols(&self) -> usize {
        self.m
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        let mut buf = Vec::new();
        let x = col_as_slice(x, &mut buf);
        with_out_slice(out, |o| self.matvec_slice(x, o));
    }

    fn diagonal(&self) -> Option<Col<f64>> {
        let centre = self.k / 2;
        Some(Col::from_fn(self.m, |j| self.data[j * self.k + centre]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A stencil with random values wherever the neighbour is inside the grid (zeros
    /// elsewhere, as the sufficient statistics produce) and every third row empty.
    fn random_stencil(sizes: &[usize], radius: usize, seed: u64) -> StencilGram {
        let mut g = StencilGram::zeros(sizes, radius).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (k, d) = (g.k, sizes.len());
        let mut multi = vec![0usize; d];
        let mut vals = vec![0.0; g.data.len()];
        for j in (0..g.m).filter(|j| j % 3 != 1) {
            g.multi_of(j, &mut multi);
            for e in 0..k {
                if g.neighbour_in_grid(&multi, e) {
                    vals[j * k + e] = rng.random::<f64>() - 0.5;
                }
            }
        }
        g.values_mut().copy_from_slice(&vals);
        g
    }

    #[test]
    fn all_radii_match_the_csr_product() {
        // Radii 0, 2 and 4 are not produced by the sufficient statistics; 4 takes the kernel
        // without a compile-time line length.
        for (sizes, radius) in [
            (vec![9], 0),
            (vec![7, 6], 2),
            (vec![20, 3], 4),
            (vec![5, 11, 10], 4),
            (vec![12, 9, 8], 1),
            (vec![10, 9, 11], 3),
        ] {
            let g = random_stencil(&sizes, radius, 7);
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let x: Vec<f64> = (0..g.m).map(|_| rng.random::<f64>() - 0.5).collect();
            let mut out = vec![f64::NAN; g.m];
            g.matvec_slice(&x, &mut out);
            let csr = g.to_csr().unwrap();
            for (i, row) in csr.outer_iterator().enumerate() {
                let (want, scale) = row.iter().fold((0.0, 0.0), |(s, a), (j, &v)| {
                    (s + v * x[j], a + (v * x[j]).abs())
                });
                assert!(
                    (out[i] - want).abs() <= 1e-14 * scale,
                    "{sizes:?} r={radius} row {i}: {} vs {want}",
                    out[i]
                );
            }
        }
    }

    #[test]
    fn dispatched_kernel_equals_the_baseline_build_bit_for_bit() {
        // `rows_into` takes the AVX2 copy on CPUs that have it; the baseline body must give
        // the same bits (same operations in the same order, no fused multiply-add).
        for (sizes, radius) in [(vec![9, 8, 7], 3), (vec![30], 3), (vec![6, 13], 1)] {
            let g = random_stencil(&sizes, radius, 5);
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let x: Vec<f64> = (0..g.m).map(|_| rng.random::<f64>() - 0.5).collect();
            let xp = g.padded_x(&x);
            let live = g.live_rows();
            let (mut a, mut b) = (vec![0.0; g.m], vec![1.0; g.m]);
            g.rows_into(0, &xp, live, &mut a);
            g.rows_into_body(0, &xp, live, &mut b);
            assert!(
                a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{sizes:?}"
            );
        }
    }
}
