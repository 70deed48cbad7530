//! [`StencilGram`]: a symmetric `m × m` matrix on a regular grid whose non-zeros join grid
//! nodes at most `r` steps apart in every dimension, stored as the upper half of a dense
//! grid-offset stencil.
//!
//! This is the storage of `S = WᵀW` ([`SufficientStats`](crate::sufficient_stats::SufficientStats)):
//! for cubic weights two nodes share a point only if their multi-indices differ by at most 3 in
//! every dimension (`r = 3`, `7^d` offsets), for linear by at most 1 (`r = 1`, `3^d`).
//!
//! # Layout
//!
//! Number the `k = (2r+1)^d` offsets `Δ ∈ {−r..r}^d` in C order (last dimension fastest);
//! the centre `Δ = 0` is entry `c = (k − 1)/2`, and the entries after it are exactly the
//! offsets that are lexicographically positive. Row `j` stores the `h = (k + 1)/2` values
//! `S[j, j + Δ_e]` for `e = c, …, k − 1` (the diagonal first), with zeros where `j + Δ`
//! leaves the grid; the other half is `S[j, j − Δ] = S[j − Δ, j]`, stored in row `j − Δ`.
//! In a row the values come as one partial line of `r + 1` (the last-dimension offsets
//! `0..=r` of the centre line), then `((2r+1)^{d−1} − 1)/2` whole lines of `2r + 1`
//! consecutive last-dimension offsets.
//!
//! Why a stencil and not CSR: no column indices are stored (8 bytes per entry instead of 16),
//! entry `(j, j+Δ)` has a fixed address so the streaming accumulation and [`merge`] are plain
//! array additions, and the product `S x` reads each row contiguously with fixed offsets. Why
//! half: the product is limited by streaming the values, and symmetry makes the other half
//! redundant (it also halves the memory: 70 MB instead of 140 MB for the radar-like
//! `80·80·8` cubic grid). The cost is that every grid node has a full row even when no data
//! are near it; for grids that data cover only sparsely use [`StencilGram::to_csr`], which
//! drops exact zeros.
//!
//! # The product
//!
//! * `x` is first copied into a grid padded with `r` zero nodes on every side, and `S x` is
//!   accumulated in a padded grid too. Every stencil neighbour of every node then has an
//!   address, so boundary nodes use the same kernel as interior ones with no bounds tests per
//!   entry (the stored values for neighbours outside the grid are zero, and the padded `x` is
//!   zero there too).
//! * Row `j` adds `Σ_e s_e x[j + Δ_e]` to `out[j]` (its upper half) and `s_e x[j]` to
//!   `out[j + Δ_e]` for each stored off-diagonal `s_e` (the lower half, as a scatter): each
//!   stored value is read once and used twice. The kernel has the line length as a
//!   compile-time constant and sums into independent accumulators.
//! * Rows that are entirely zero (nodes with no data nearby, or whose upper half is empty) are
//!   flagged on the first product after the values change (or by [`StencilGram::prepare`])
//!   and are not read again.
//! * Large stencils are prefetched in software, a few live rows ahead of the row being
//!   multiplied: the hardware prefetchers stop at every 4 KiB page and lose the stream at the
//!   skipped rows, which left the product at less than half the machine's streaming rate.
//! * The padded grid is cut into blocks of `B` consecutive padded nodes, `B` longer than the
//!   largest offset, so a row writes only into its own block and the next. Blocks with even
//!   numbers run in parallel first, then those with odd numbers (each task owns its block and
//!   the next). The order in which the contributions reach an output entry is fixed by the
//!   blocks, so the result is the same bit for bit sequentially, in parallel and for any
//!   thread count.
//!
//! [`merge`]: crate::sufficient_stats::SufficientStats::merge

use std::sync::OnceLock;

use faer::{Col, ColMut, ColRef};
use gp_linalg::{LinearOperator, TransposeOperator};
use rayon::prelude::*;
use sprs::CsMat;

use crate::error::{Result, StructuredError};
use crate::slice_util::{c_strides, checked_product, col_as_slice, with_out_slice};

/// A symmetric banded ("stencil") matrix on a regular grid, stored as the upper half of its
/// stencil; see the [module docs](self).
///
/// Equality compares the grid, the radius and the stored values.
#[derive(Debug, Clone)]
pub struct StencilGram {
    sizes: Vec<usize>,
    strides: Vec<usize>,
    m: usize,
    radius: usize,
    /// `(2r+1)^d`, the whole stencil.
    k: usize,
    /// `(k + 1)/2`, the stored values per row.
    h: usize,
    /// Flat offset of each stencil entry (all `k`).
    offsets: Vec<isize>,
    /// Multi-offsets, `k × d`, row-major.
    deltas: Vec<isize>,
    /// C strides of the grid padded by `r` nodes on each side, and its number of nodes.
    padded_strides: Vec<usize>,
    padded_len: usize,
    /// Offset in the padded grid of the first entry of each whole line of `2r+1` stored
    /// values (the lines after the centre's partial line).
    padded_line_offsets: Vec<isize>,
    /// Padded nodes per block of the product: more than the largest padded offset of a stored
    /// entry, `r·Σ_l padded_stride_l`.
    block_len: usize,
    data: Vec<f64>,
    /// Which rows are not all zero and where each block's rows start, derived from `data` on
    /// first use by the product; reset whenever `data` may change.
    plan: OnceLock<ProductPlan>,
}

/// What the product derives once from the values and the grid.
#[derive(Debug, Clone)]
struct ProductPlan {
    /// Rows with a non-zero stored value.
    live: Vec<bool>,
    /// First row of each block of `block_len` padded nodes (one more entry than blocks).
    block_rows: Vec<usize>,
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
        let h = k.div_ceil(2);
        let len = m
            .checked_mul(h)
            .ok_or_else(|| StructuredError::InvalidArgument {
                name: "sizes",
                reason: format!("{m} nodes × {h} stored stencil entries overflow usize"),
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
        // Whole lines after the centre line `(k/q)/2`.
        let centre_line = (k / q) / 2;
        let padded_line_offsets = (centre_line + 1..k / q)
            .map(|line| {
                deltas[line * q * d..(line * q + 1) * d]
                    .iter()
                    .zip(&padded_strides)
                    .map(|(&dl, &s)| dl * s as isize)
                    .sum()
            })
            .collect();
        let reach = radius * padded_strides.iter().sum::<usize>();
        let block_len = (reach + 1).max(PAR_CHUNK_VALUES.div_ceil(h));
        Ok(Self {
            sizes: sizes.to_vec(),
            strides,
            m,
            radius,
            k,
            h,
            offsets,
            deltas,
            padded_strides,
            padded_len,
            padded_line_offsets,
            block_len,
            data: vec![0.0; len],
            plan: OnceLock::new(),
        })
    }

    /// Values stored per row, `((2r+1)^d + 1)/2`, for `d` dimensions and radius `r`; `None`
    /// if `(2r+1)^d` overflows `usize`. (Memory estimates use it before any grid exists.)
    pub fn stored_row_len(dims: usize, radius: usize) -> Option<usize> {
        let q = radius.checked_mul(2)?.checked_add(1)?;
        q.checked_pow(u32::try_from(dims).ok()?)
            .map(|k| k.div_ceil(2))
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

    /// Entries of the whole stencil of a row, `(2r+1)^d` (half of them are stored, see
    /// [`row_len`](Self::row_len)).
    pub fn stencil_len(&self) -> usize {
        self.k
    }

    /// Values stored per row, `((2r+1)^d + 1)/2`: the diagonal and the offsets after it.
    pub fn row_len(&self) -> usize {
        self.h
    }

    /// The multi-offset `Δ` of stencil entry `e` (`e < stencil_len()`, C order); stored value
    /// `t` of a row is entry `e = stencil_len()/2 + t`.
    pub fn stencil_offset(&self, e: usize) -> Option<&[isize]> {
        let d = self.sizes.len();
        self.deltas.get(e * d..(e + 1) * d)
    }

    /// Raw values, `m × row_len()`: value `t` of row `j` is `S[j, j + Δ_e]` for the stencil
    /// entry `e = stencil_len()/2 + t` (see the [module docs](self)).
    pub fn values(&self) -> &[f64] {
        &self.data
    }

    pub(crate) fn values_mut(&mut self) -> &mut [f64] {
        // The caller may change which rows are empty.
        self.plan = OnceLock::new();
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
        Some(self.stored(i, j, e))
    }

    /// `S[i, i + Δ_e]` for the neighbour `j = i + Δ_e`, from row `i` when `e` is in the
    /// stored half, else from row `j` (entry `k − 1 − e`, the offset `−Δ_e`).
    fn stored(&self, i: usize, j: usize, e: usize) -> f64 {
        let c = self.k / 2;
        if e >= c {
            self.data[i * self.h + (e - c)]
        } else {
            self.data[j * self.h + (self.k - 1 - e - c)]
        }
    }

    /// Number of entries of the matrix that are not exactly zero (both halves).
    pub fn nnz(&self) -> usize {
        let h = self.h;
        let (all, diagonal) = self
            .data
            .par_chunks(h)
            .map(|row| {
                let all = row.iter().filter(|v| **v != 0.0).count();
                (all, usize::from(row[0] != 0.0))
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        // Every stored off-diagonal value stands for two entries.
        2 * all - diagonal
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
        self.plan = OnceLock::new();
        Ok(())
    }

    /// The matrix in CSR form with exact zeros dropped (columns ascending in each row; both
    /// halves).
    pub fn to_csr(&self) -> Result<CsMat<f64>> {
        let rows: Vec<(Vec<usize>, Vec<f64>)> = (0..self.m)
            .into_par_iter()
            .map(|i| {
                let mut multi = vec![0usize; self.sizes.len()];
                self.multi_of(i, &mut multi);
                let mut cols = Vec::new();
                let mut vals = Vec::new();
                for e in 0..self.k {
                    if !self.neighbour_in_grid(&multi, e) {
                        continue;
                    }
                    let j = (i as isize + self.offsets[e]) as usize;
                    let v = self.stored(i, j, e);
                    if v != 0.0 {
                        cols.push(j);
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
    /// the radar-like `80·80·8` stencil the pass is about as long as a product). The result
    /// is kept until the values change.
    pub fn prepare(&self) {
        self.plan();
    }

    /// The product's plan, computed on first use (one pass over the values) and kept until
    /// the values change. The product skips rows that are all zero without reading them:
    /// the nodes with no data nearby (the padding ring of a data-fitted grid, regions the
    /// data do not cover).
    fn plan(&self) -> &ProductPlan {
        self.plan.get_or_init(|| {
            let h = self.h;
            let mut live = vec![false; self.m];
            let chunk = PAR_CHUNK_VALUES.div_ceil(h);
            live.par_chunks_mut(chunk)
                .zip(self.data.par_chunks(chunk * h))
                .for_each(|(flags, rows)| {
                    for (f, row) in flags.iter_mut().zip(rows.chunks_exact(h)) {
                        *f = row.iter().any(|v| *v != 0.0);
                    }
                });
            // Rows in increasing order have increasing padded indices.
            let blocks = self.padded_len.div_ceil(self.block_len);
            let mut block_rows = Vec::with_capacity(blocks + 1);
            block_rows.push(0);
            let (d, last) = (self.sizes.len(), self.sizes[self.sizes.len() - 1]);
            let mut multi = vec![0usize; d];
            let mut row = 0;
            for b in 1..blocks {
                let start = b * self.block_len;
                // Whole grid lines first, then nodes.
                while row < self.m {
                    self.multi_of(row, &mut multi);
                    multi[d - 1] = last - 1;
                    if self.padded_index(&multi) >= start {
                        break;
                    }
                    row = (row / last + 1) * last;
                }
                while row < self.m {
                    self.multi_of(row, &mut multi);
                    if self.padded_index(&multi) >= start {
                        break;
                    }
                    row += 1;
                }
                block_rows.push(row.min(self.m));
            }
            block_rows.push(self.m);
            ProductPlan { live, block_rows }
        })
    }

    /// Index in the zero-padded grid of the node with multi-index `multi`.
    fn padded_index(&self, multi: &[usize]) -> usize {
        multi
            .iter()
            .zip(&self.padded_strides)
            .map(|(&i, &s)| (i + self.radius) * s)
            .sum()
    }

    /// `x` embedded in a grid with `r` zero nodes added on each side of every dimension, so
    /// that every stencil neighbour of every node has an address and those outside the grid
    /// read zero. Its size is at most `m·(2r+1)^d` (the stencil), in practice a small
    /// fraction of it (`46·46·38` for a `40·40·32` grid).
    fn padded_x(&self, x: &[f64]) -> Vec<f64> {
        let mut xp = vec![0.0; self.padded_len];
        self.for_each_grid_line(|t, p, last| xp[p..p + last].copy_from_slice(&x[t..t + last]));
        xp
    }

    /// Calls `f(first node, its padded index, line length)` for every grid line along the
    /// last dimension.
    fn for_each_grid_line(&self, mut f: impl FnMut(usize, usize, usize)) {
        let d = self.sizes.len();
        let last = self.sizes[d - 1];
        let mut multi = vec![0usize; d];
        for t in (0..self.m).step_by(last) {
            self.multi_of(t, &mut multi);
            f(t, self.padded_index(&multi), last);
        }
    }

    /// `out = S x` for contiguous slices (`x.len() == out.len() == m`); see the module docs
    /// for the blocks and why the result does not depend on the thread count.
    fn matvec_slice(&self, x: &[f64], out: &mut [f64]) {
        let plan = self.plan();
        let xp = self.padded_x(x);
        let mut yp = vec![0.0; self.padded_len];
        let b = self.block_len;
        let parallel = self.data.len() >= PAR_MIN_VALUES && rayon::current_num_threads() > 1;
        for phase in 0..2 {
            let Some(ys) = yp.get_mut(phase * b..) else {
                break;
            };
            // Task `c` owns blocks `2c + phase` and `2c + phase + 1`, and multiplies the rows
            // of the first.
            let task = |(c, y): (usize, &mut [f64])| {
                let block = 2 * c + phase;
                let rows = plan.block_rows[block]..plan.block_rows[block + 1];
                self.rows_into(rows, block * b, &xp, &plan.live, y);
            };
            if parallel {
                ys.par_chunks_mut(2 * b).enumerate().for_each(task);
            } else {
                ys.chunks_mut(2 * b).enumerate().for_each(task);
            }
        }
        self.for_each_grid_line(|t, p, last| out[t..t + last].copy_from_slice(&yp[p..p + last]));
    }

    /// Adds the products of rows `rows` into `y`, the padded output from padded node `base`
    /// on. On x86-64 CPUs with AVX2 the kernel runs in a copy compiled for AVX2: the baseline
    /// build is SSE2, two lanes per instruction, and pays the AVX→SSE transition penalty after
    /// faer GEMMs on the same thread. Both builds do the same additions and multiplications
    /// in the same order (no fused multiply-add), so results are bit-identical.
    fn rows_into(
        &self,
        rows: std::ops::Range<usize>,
        base: usize,
        xp: &[f64],
        live: &[bool],
        y: &mut [f64],
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked at run time just above), the only
                // requirement of the `target_feature` function.
                unsafe { self.rows_into_avx2(rows, base, xp, live, y) };
                return;
            }
        }
        self.rows_into_body(rows, base, xp, live, y);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn rows_into_avx2(
        &self,
        rows: std::ops::Range<usize>,
        base: usize,
        xp: &[f64],
        live: &[bool],
        y: &mut [f64],
    ) {
        self.rows_into_body(rows, base, xp, live, y);
    }

    /// [`rows_into`](Self::rows_into)'s body, dispatched on the line length `2r + 1` so that
    /// the row kernel has it as a compile-time constant. The closures are inlined so that
    /// they are compiled inside the AVX2 copy (a closure is otherwise its own function, built
    /// for the baseline target).
    #[inline(always)]
    fn rows_into_body(
        &self,
        rows: std::ops::Range<usize>,
        base: usize,
        xp: &[f64],
        live: &[bool],
        y: &mut [f64],
    ) {
        let offs = &self.padded_line_offsets;
        match 2 * self.radius + 1 {
            7 => self.rows_with(
                rows,
                base,
                live,
                y,
                #[inline(always)]
                |p, row, y| row_sym::<7>(p, row, xp, y, base, offs),
            ),
            3 => self.rows_with(
                rows,
                base,
                live,
                y,
                #[inline(always)]
                |p, row, y| row_sym::<3>(p, row, xp, y, base, offs),
            ),
            5 => self.rows_with(
                rows,
                base,
                live,
                y,
                #[inline(always)]
                |p, row, y| row_sym::<5>(p, row, xp, y, base, offs),
            ),
            1 => self.rows_with(
                rows,
                base,
                live,
                y,
                #[inline(always)]
                |p, row, y| row_sym::<1>(p, row, xp, y, base, offs),
            ),
            q => self.rows_with(rows, base, live, y, |p, row, y| {
                row_sym_dyn(p, row, xp, y, base, offs, q)
            }),
        }
    }

    /// Walks rows `rows`, tracking each node's index in the padded grid (an odometer, no
    /// divisions per node), and calls `kernel(padded index, row, y)` for the live ones.
    #[inline(always)]
    fn rows_with(
        &self,
        rows: std::ops::Range<usize>,
        base: usize,
        live: &[bool],
        y: &mut [f64],
        kernel: impl Fn(usize, &[f64], &mut [f64]),
    ) {
        if rows.is_empty() {
            return;
        }
        let (d, h) = (self.sizes.len(), self.h);
        let last = self.sizes[d - 1];
        let mut multi = vec![0usize; d];
        self.multi_of(rows.start, &mut multi);
        let mut p = self.padded_index(&multi);
        debug_assert!(p >= base);
        // Software prefetch of the rows `ahead` live rows in front (see `PREFETCH_BYTES`);
        // `queued` counts the live rows in `j..next`, whose values have been prefetched.
        let prefetching = self.data.len() * 8 >= PREFETCH_MIN_BYTES;
        let ahead = (PREFETCH_BYTES / (8 * h)).max(1);
        let (mut next, mut queued) = (rows.start, 0usize);
        let values = self.data[rows.start * h..rows.end * h].chunks_exact(h);
        for ((j, row), &is_live) in rows.clone().zip(values).zip(&live[rows]) {
            if is_live {
                if prefetching {
                    while queued <= ahead && next < self.m {
                        if live[next] {
                            prefetch(&self.data[next * h..(next + 1) * h]);
                            queued += 1;
                        }
                        next += 1;
                    }
                    debug_assert!(next > j);
                    queued -= 1;
                }
                kernel(p, row, y);
            }
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

/// One stored row at padded node `p`: adds `Σ_e s_e x[p + Δ_e]` to `y[p]` (the upper half of
/// row `p` of `S x`) and `s_e x[p]` to `y[p + Δ_e]` for the off-diagonal values (the lower
/// half, by symmetry). `y` holds the padded output from padded node `base` on.
///
/// The row is a partial line of `(Q + 1)/2` values (last-dimension offsets `0..=r` of the
/// centre line, the diagonal first), then whole lines of `Q` values that are consecutive
/// both in `row` and in the padded grid. The dot products go to [`LANES`]-wide accumulators,
/// padded past `Q` so that the compiler keeps them in vector registers; slicing whole lines
/// leaves a bounds check per line, none per value.
#[inline(always)]
fn row_sym<const Q: usize>(
    p: usize,
    row: &[f64],
    xp: &[f64],
    y: &mut [f64],
    base: usize,
    line_offsets: &[isize],
) {
    const { assert!(Q <= LANES) };
    let head = Q / 2 + 1;
    let xi = xp[p];
    let local = p - base;
    let mut acc = [0.0f64; LANES];
    let (first, lines) = row.split_at(head);
    let (xh, yh) = (&xp[p..p + head], &mut y[local..local + head]);
    acc[0] = first[0] * xh[0];
    for t in 1..head {
        acc[t] += first[t] * xh[t];
        yh[t] += first[t] * xi;
    }
    let (lines, _) = lines.as_chunks::<Q>();
    for (line, &off) in lines.iter().zip(line_offsets) {
        let b = p.wrapping_add_signed(off);
        let xs: &[f64; Q] = match xp[b..b + Q].try_into() {
            Ok(xs) => xs,
            Err(_) => continue,
        };
        let lb = local.wrapping_add_signed(off);
        let ys: &mut [f64; Q] = match (&mut y[lb..lb + Q]).try_into() {
            Ok(ys) => ys,
            Err(_) => continue,
        };
        for q in 0..Q {
            acc[q] += line[q] * xs[q];
            ys[q] += line[q] * xi;
        }
    }
    // Lanes `Q..` are never used.
    y[local] += acc[..Q].iter().sum::<f64>();
}

/// [`row_sym`] for a line length `q` without a specialised kernel (not produced by this
/// crate's sufficient statistics, which use `r = 1` or `r = 3`).
fn row_sym_dyn(
    p: usize,
    row: &[f64],
    xp: &[f64],
    y: &mut [f64],
    base: usize,
    line_offsets: &[isize],
    q: usize,
) {
    let head = q / 2 + 1;
    let xi = xp[p];
    let local = p - base;
    let (first, lines) = row.split_at(head);
    let mut acc = first[0] * xi;
    for t in 1..head {
        acc += first[t] * xp[p + t];
        y[local + t] += first[t] * xi;
    }
    for (line, &off) in lines.chunks_exact(q).zip(line_offsets) {
        let b = p.wrapping_add_signed(off);
        let lb = local.wrapping_add_signed(off);
        for (t, v) in line.iter().enumerate() {
            acc += v * xp[b + t];
            y[lb + t] += v * xi;
        }
    }
    y[local] += acc;
}

/// Stored values per parallel task of the product at least (about 0.5 MB): large enough that
/// task overhead is negligible, small enough for load balance on a few cores. A block is
/// also longer than the stencil's reach (see the module docs).
const PAR_CHUNK_VALUES: usize = 1 << 16;

/// How far ahead of the row being multiplied the product prefetches stored values (in bytes,
/// rounded to whole rows, at least one row): 16 KiB. Without it the hardware prefetchers,
/// which stop at 4 KiB page boundaries and are thrown off by the skipped all-zero rows, left
/// the product at 12 GB/s on one thread against 27 GB/s for a plain sum (radar-like 80×80×8
/// grid, `stencil_bench --case 4`, whole stencil: one thread 8.4 → 3.4 ms; 4 to 8 rows ahead
/// measured alike, 16 worse).
const PREFETCH_BYTES: usize = 16 << 10;

/// Stencils smaller than this (bytes of stored values) are not prefetched: they stay in the
/// caches between the products of an iterative solve, and the prefetch instructions cost
/// (a 10×10×10 cubic stencil: 0.032 → 0.047 ms per product with them).
const PREFETCH_MIN_BYTES: usize = 4 << 20;

/// Below this many stored values (8 MB, e.g. 6 000 nodes at `d = 3` cubic) the product runs
/// on the calling thread: the work (about 0.2 ms or less) does not amortise waking the pool
/// (measured: 1 000 nodes at `d = 3` are no faster on two threads).
const PAR_MIN_VALUES: usize = 1 << 20;

/// Accumulators of the row kernels (at least the line length `2r + 1` of the specialised
/// kernels).
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
        Some(Col::from_fn(self.m, |j| self.data[j * self.h]))
    }
}

/// `WᵀW` is symmetric: the transpose product is the product.
impl TransposeOperator for StencilGram {
    fn matvec_transpose(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.matvec(x, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The largest padded offset of a stored entry.
    fn reach(g: &StencilGram) -> usize {
        g.radius * g.padded_strides.iter().sum::<usize>()
    }

    /// A stencil with random values wherever the neighbour is inside the grid (zeros
    /// elsewhere, as the sufficient statistics produce) and every third row empty.
    fn random_stencil(sizes: &[usize], radius: usize, seed: u64) -> StencilGram {
        let mut g = StencilGram::zeros(sizes, radius).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (k, h, d) = (g.k, g.h, sizes.len());
        let mut multi = vec![0usize; d];
        let mut vals = vec![0.0; g.data.len()];
        for j in (0..g.m).filter(|j| j % 3 != 1) {
            g.multi_of(j, &mut multi);
            for e in k / 2..k {
                if g.neighbour_in_grid(&multi, e) {
                    vals[j * h + e - k / 2] = rng.random::<f64>() - 0.5;
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
            let x = random_vec(g.m, 11);
            let mut out = vec![f64::NAN; g.m];
            g.matvec_slice(&x, &mut out);
            assert_csr_product(
                &g.to_csr().unwrap(),
                &x,
                &out,
                &format!("{sizes:?} r={radius}"),
            );
        }
    }

    /// `m` values uniform in `[−0.5, 0.5)` from `seed`.
    fn random_vec(m: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..m).map(|_| rng.random::<f64>() - 0.5).collect()
    }

    /// `out` is `S x` for the CSR form of `S`, entry by entry to `1e-14` of `Σ_j |S_ij x_j|`.
    fn assert_csr_product(csr: &CsMat<f64>, x: &[f64], out: &[f64], case: &str) {
        for (i, row) in csr.outer_iterator().enumerate() {
            let (want, scale) = row.iter().fold((0.0, 0.0), |(s, a), (j, &v)| {
                (s + v * x[j], a + (v * x[j]).abs())
            });
            assert!(
                (out[i] - want).abs() <= 1e-14 * scale,
                "{case} row {i}: {} vs {want}",
                out[i]
            );
        }
    }

    #[test]
    fn dispatched_kernel_equals_the_baseline_build_bit_for_bit() {
        // `rows_into` takes the AVX2 copy on CPUs that have it; the baseline body must give
        // the same bits (same operations in the same order, no fused multiply-add).
        for (sizes, radius) in [(vec![9, 8, 7], 3), (vec![30], 3), (vec![6, 13], 1)] {
            let g = random_stencil(&sizes, radius, 5);
            let x = random_vec(g.m, 3);
            let xp = g.padded_x(&x);
            let live = &g.plan().live;
            let (mut a, mut b) = (vec![0.0; g.padded_len], vec![0.0; g.padded_len]);
            g.rows_into(0..g.m, 0, &xp, live, &mut a);
            g.rows_into_body(0..g.m, 0, &xp, live, &mut b);
            assert!(
                a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()),
                "{sizes:?}"
            );
        }
    }

    #[test]
    fn blocks_of_any_length_give_the_same_product() {
        // Blocks barely longer than the reach (many blocks, rows of one block writing into
        // the next) and one block for the whole grid; the product must match the CSR one,
        // and the block plan must list every row once.
        for (sizes, radius) in [(vec![9, 8, 7], 3), (vec![40], 3), (vec![6, 13], 1)] {
            let g = random_stencil(&sizes, radius, 9);
            let x = random_vec(g.m, 4);
            let csr = g.to_csr().unwrap();
            for block_len in [reach(&g) + 1, reach(&g) + 7, g.padded_len] {
                let mut gb = g.clone();
                gb.block_len = block_len;
                gb.plan = OnceLock::new();
                let rows = &gb.plan().block_rows;
                assert_eq!((rows[0], *rows.last().unwrap()), (0, g.m));
                assert!(rows.windows(2).all(|w| w[0] <= w[1]));
                let mut out = vec![f64::NAN; g.m];
                gb.matvec_slice(&x, &mut out);
                assert_csr_product(&csr, &x, &out, &format!("{sizes:?} block {block_len}"));
            }
        }
    }

    #[test]
    fn both_halves_read_the_stored_half() {
        let g = random_stencil(&[5, 6, 4], 3, 2);
        let csr = g.to_csr().unwrap();
        let mut count = 0;
        for i in 0..g.m {
            for j in 0..g.m {
                let v = g.entry(i, j).unwrap();
                assert_eq!(v.to_bits(), g.entry(j, i).unwrap().to_bits());
                assert_eq!(v, csr.get(i, j).copied().unwrap_or(0.0));
                count += usize::from(v != 0.0);
            }
        }
        assert_eq!(g.nnz(), count);
        assert_eq!(csr.nnz(), count);
        let diag = g.diagonal().unwrap();
        assert!((0..g.m).all(|j| diag[j] == g.entry(j, j).unwrap()));
        assert_eq!(StencilGram::stored_row_len(3, 3), Some(172));
        assert_eq!(StencilGram::stored_row_len(1, 1), Some(2));
        assert_eq!(g.row_len(), 172);
    }
}
