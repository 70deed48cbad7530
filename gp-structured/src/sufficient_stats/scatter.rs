//! The point-scatter path of the statistics pass (for few points per grid cell, fine grids):
//! every point's block `w wᵀ` goes straight into one shared stencil of `S`, with no per-worker
//! copy of anything of size `m`. See the [parent module](super) for the algorithm, its cost
//! and the rule that selects it.

use faer::{ColRef, MatRef};
use rayon::prelude::*;

use super::{cell_offsets, check_chunk, check_compatible, prefault, SufficientStats};
use crate::error::{Result, StructuredError};
use crate::grid::RegularGrid;
use crate::interpolation::{locate_rows, InterpolationOptions, InterpolationScheme, Locator};
use crate::slice_util::c_strides;
use crate::stencil_gram::StencilGram;

mod unrolled;

/// Rows located per parallel task when a chunk is added.
const LOCATE_ROWS: usize = 4096;

/// Bounds of the point buffer (points): at least this many, so that small grids still flush
/// in large batches (each flush streams the whole stencil once: at 30³, 3·10⁶ points, going
/// from 2^16 to 2^20 took the pass from 2.57–2.63 to 2.96–3.04 M points/s on 2 threads, for
/// 80 MB more scratch; at 20³ no change) ...
const MIN_BUFFER_POINTS: usize = 1 << 20;
/// ... and at most this many (1.3 GiB of scratch at `d = 3`).
const MAX_BUFFER_POINTS: usize = 1 << 24;

/// Stored stencil values per row segment of one task (256 KiB): the rows a task updates stay
/// in the core's L2 cache.
const SEGMENT_VALUES: usize = 1 << 15;

/// Bytes of the buffer per point, as budgeted: while a full buffer is put in cell order it
/// holds the cell index, `τ` (`d` values) and `y` of each point, 16 bytes of ordering scratch
/// and the `τ` being gathered into sorted order. The counting sort of [`cell_order`] needs 8 of
/// those 16 bytes plus the cell offsets; the budget is kept as it was when the pairs were
/// sorted, because it sets where flushes fall and so the last bits of the sums.
pub(super) fn point_bytes(d: usize) -> usize {
    8 + 8 * d + 8 + 16 + 8 * d
}

/// Points buffered before they are scattered, for a grid of `m` nodes whose stencil stores `h`
/// values per node: at most 1/8 of the bytes of the stencil (at [`point_bytes`] each),
/// clamped to `[2^16, 2^24]` points. Every flush streams the whole stencil through memory
/// once, so fewer, larger flushes pay off: at 100×100×80 (cubic, 1.1 GB stencil) going from
/// 1/16 to 1/8 took 3·10⁶ points from 2.0 to 1.7 s and 6·10⁶ from 3.5 to 3.0 s on 2 threads
/// (1/4 gained about 5% more for another 140 MB).
pub(super) fn buffer_points(m: usize, h: usize, d: usize) -> usize {
    let stencil_bytes = (m as u128) * (h as u128) * 8;
    let points = stencil_bytes / (8 * point_bytes(d) as u128);
    points.clamp(MIN_BUFFER_POINTS as u128, MAX_BUFFER_POINTS as u128) as usize
}

/// The buffered points in cell order, ties in arrival order (the order that sorting the
/// `(cell, index)` pairs gives), and where each cell's points start in it (`n_cells + 1`
/// offsets): a counting sort, two sequential passes over the points and one over the cells
/// (no more than the flush's pass over the stencil, which has at least one value per cell).
/// It replaced a parallel sort of the pairs, which perf put at 3–7% of the pass; side by side
/// (Zen 3, 2 threads, 3·10⁶ points) the pass did not measurably change, 1.43–1.60 → 1.45–1.62
/// M points/s at 100×100×80 and 1.98–2.18 → 2.14–2.26 at 30³, with 20 MB less peak memory
/// and no `(cell, index)` pairs to build.
fn cell_order(cells: &[usize], n_cells: usize) -> (Vec<usize>, Vec<usize>) {
    let start = cell_offsets(cells, n_cells);
    let mut next = start.clone();
    let mut order = vec![0usize; cells.len()];
    for (i, &c) in cells.iter().enumerate() {
        order[next[c]] = i;
        next[c] += 1;
    }
    (order, start)
}

/// Grid geometry of the scatter.
#[derive(Debug, Clone)]
struct Layout {
    d: usize,
    w: usize,
    /// Stored stencil entries per node, `(k + 1)/2` of the `k = (2w−1)^d` (the centre entry
    /// `k/2` and those after it).
    h: usize,
    m: usize,
    sizes: Vec<usize>,
    /// Cells per dimension (`m_l − w + 1`) and their C strides (a point's cell index is its
    /// sort key).
    cell_sizes: Vec<usize>,
    cell_strides: Vec<usize>,
    /// Pencils of cells: lines along the last dimension, one per cell of the leading `d − 1`
    /// dimensions (1 when `d = 1`).
    pencils: usize,
    /// Nodes per parallel task (a pencil of nodes, or a segment of it when `d = 1`) and per
    /// sequential segment inside a task.
    task_rows: usize,
    segment_rows: usize,
    /// `w^{d−1}`: multi-indices `a` over the leading dimensions.
    lead: usize,
    /// For each leading offset `a` and last-dimension offset `a_{d−1}` (index
    /// `a·w + a_{d−1}`), which of the `w^{d−1}` lines of a point's block fall in the stored
    /// half of the row of node `b + a`: see [`LineTable`].
    line_tables: Vec<LineTable>,
    /// `line_step[a']`: where line `a'` of a block starts in a row, relative to line 0
    /// (`Σ_l a'_l·(2w−1)^{d−1−l}` over the leading dimensions; the same for every row).
    line_step: Vec<usize>,
}

/// The lines of a point's block that one row stores, for one node offset `a` of the point.
/// The lines' stencil entries increase with `a'` (C order), so the whole stored lines are
/// those from `first` on, line `a'` starting at entry `base + line_step[a']` of the row; the
/// line before them may be the centre line, stored from its middle on (`partial = skipped
/// entries`); the lines before that are not stored. Precomputed so that the scatter's inner
/// loop has no branches on the stencil shape.
#[derive(Debug, Clone, Copy)]
struct LineTable {
    first: usize,
    /// `first`'s start in the row minus `line_step[first]` (wrapping: lines before `first`
    /// would start before the row).
    base: usize,
    partial: Option<usize>,
}

impl Layout {
    fn new(grid: &RegularGrid, scheme: InterpolationScheme) -> Self {
        let d = grid.dims();
        let w = scheme.stencil_width();
        let (r, q) = (w - 1, 2 * w - 1);
        let sizes = grid.sizes().to_vec();
        let cell_sizes: Vec<usize> = sizes.iter().map(|&m| m - w + 1).collect();
        let k = q.pow(d as u32);
        let h = k.div_ceil(2);
        let m_last = sizes[d - 1];
        let segment_rows = (SEGMENT_VALUES / h).max(2 * w).min(m_last);
        let task_rows = if d == 1 { segment_rows } else { m_last };
        let lead = w.pow(d as u32 - 1);
        // For each pair `(a, a')` of leading multi-indices (C order, `a` major): the stencil
        // entry of the line of offsets `(a' − a, −a_{d−1} … w−1−a_{d−1})` of node `b + a` for
        // a point with first node `b`, plus `a_{d−1}` (so the line starts at
        // `lead_entry[a, a'] − a_{d−1}`).
        let mut lead_entry = Vec::with_capacity(lead * lead);
        for a in 0..lead {
            for b in 0..lead {
                let (mut ra, mut rb) = (a, b);
                let (mut entry, mut qpow) = (r, q);
                for _ in 0..d - 1 {
                    entry += (rb % w + r - ra % w) * qpow;
                    ra /= w;
                    rb /= w;
                    qpow *= q;
                }
                lead_entry.push(entry);
            }
        }
        // Which lines each row stores, per node offset (see `LineTable`).
        let centre = k / 2;
        let line_step: Vec<usize> = (0..lead).map(|li| lead_entry[li] - lead_entry[0]).collect();
        let mut line_tables = Vec::with_capacity(lead * w);
        for ai in 0..lead {
            let entries = &lead_entry[ai * lead..(ai + 1) * lead];
            debug_assert!(entries.windows(2).all(|e| e[0] < e[1]));
            for al in 0..w {
                let first = entries.partition_point(|&entry| entry - al < centre);
                let base = (entries.get(first).map_or(centre, |&e| e - al) - centre)
                    .wrapping_sub(line_step.get(first).copied().unwrap_or(0));
                let partial = first
                    .checked_sub(1)
                    .map(|li| entries[li] - al)
                    .filter(|&start| start + w > centre)
                    .map(|start| centre - start);
                line_tables.push(LineTable {
                    first,
                    base,
                    partial,
                });
            }
        }
        Self {
            d,
            w,
            h,
            m: grid.num_points(),
            pencils: cell_sizes[..d - 1].iter().product(),
            cell_strides: c_strides(&cell_sizes),
            cell_sizes,
            sizes,
            task_rows,
            segment_rows,
            lead,
            line_tables,
            line_step,
        }
    }
}

/// The points of one buffer, sorted by cell (then by arrival), with the start of each pencil
/// of cells.
struct Sorted<'a> {
    /// Cell index along the last dimension, `τ` (`d` per point) and `y`, in sorted order.
    last: &'a [u32],
    taus: &'a [f64],
    ys: &'a [f64],
    /// `pencil_start[p] .. pencil_start[p + 1]` are the points of pencil `p`.
    pencil_start: &'a [usize],
}

/// Per-task scratch.
struct Scratch {
    /// The node's leading multi-index `j` and a leading offset multi-index `a`.
    j: Vec<usize>,
    a: Vec<usize>,
    weights: Vec<f64>,
    /// `w_l[a_l]·w_l[a']` for the leading dimensions, `w` per dimension.
    rows: Vec<f64>,
    /// Their tensor product over `a'` (`w^{d−1}` values).
    lead: Vec<f64>,
}

impl Scratch {
    fn new(lay: &Layout) -> Self {
        let (d, w) = (lay.d, lay.w);
        Self {
            j: vec![0; d - 1],
            a: vec![0; d - 1],
            weights: vec![0.0; d * w],
            rows: vec![0.0; (d - 1) * w],
            lead: vec![0.0; lay.lead],
        }
    }
}

/// The products `Π_l rows_l[a'_l]` over the `dims` leading dimensions for every leading
/// multi-index `a'` (C order), as [`expand_weights`](crate::interpolation::expand_weights)
/// computes them (the same products in the same order, so the same bits), written out for
/// the one and two leading dimensions of 2-D and 3-D grids.
#[inline(always)]
fn lead_products<const W: usize>(rows: &[f64], dims: usize, out: &mut [f64]) {
    match dims {
        0 => out[0] = 1.0,
        1 => out[..W].copy_from_slice(&rows[..W]),
        2 => {
            // `expand_weights` forms `(1·r₀[a'₀])·r₁[a'₁]`, and `1·x = x` exactly.
            for (a0, block) in out[..W * W].chunks_exact_mut(W).enumerate() {
                let r0 = rows[a0];
                for (o, &r1) in block.iter_mut().zip(&rows[W..2 * W]) {
                    *o = r0 * r1;
                }
            }
        }
        _ => {
            crate::interpolation::expand_weights(rows, W, out);
        }
    }
}

/// Adds `lead[a']·pa` to the whole stored lines `a' ≥ table.first` of one row (see
/// [`LineTable`]). With the row length `H` known at compile time the row is a fixed-size
/// array and each line's start is clamped to `H − W` (a no-op: the table puts every line
/// inside the row), so the loop carries no bounds checks.
#[inline(always)]
fn add_full_lines<const W: usize, const H: usize>(
    row: &mut [f64],
    table: LineTable,
    line_step: &[usize],
    lead: &[f64],
    pa: &[f64; W],
) {
    let (Some(steps), Some(lead)) = (line_step.get(table.first..), lead.get(table.first..)) else {
        return;
    };
    let lines = steps.iter().zip(lead);
    if H != 0 {
        let Ok(row) = <&mut [f64; H]>::try_from(row) else {
            return;
        };
        for (&step, &sv) in lines {
            let at = table.base.wrapping_add(step).min(H - W);
            for (v, &p) in row[at..at + W].iter_mut().zip(pa) {
                *v += sv * p;
            }
        }
    } else {
        for (&step, &sv) in lines {
            let at = table.base.wrapping_add(step);
            if let Some(line) = row.get_mut(at..at + W) {
                for (v, &p) in line.iter_mut().zip(pa) {
                    *v += sv * p;
                }
            }
        }
    }
}

/// Adds to the rows `first .. first + t.len()` of one pencil of nodes (all in the same line
/// along the last dimension; `g` holds their stencil rows, `t` their entries of `Wᵀy`) the
/// contributions of every buffered point whose stencil covers them.
///
/// A point in cell `b` adds to the row of node `b + a` (`a ∈ {0..w−1}^d`) the values
/// `Π_l w_l[a_l]·w_l[a'_l]` at the stencil entries `a' − a` that are stored (the centre and
/// after, see [`StencilGram`]): for each leading `a'` a line of `w` consecutive entries (the
/// last dimension), `w^{d−1}` lines per row, of which those before the centre line are not
/// stored and the centre line only from the centre on. The rows are visited
/// per node, so a task writes only its own rows (they stay in cache) and needs no
/// synchronisation with other tasks; each point is visited by the `w^{d−1}` pencils of nodes
/// its stencil covers. Contributions reach every row in one fixed order (cells ascending, then
/// arrival), whatever the number of threads.
///
/// `H` is the stored row length `h` when it is known at compile time (then each row is a
/// fixed-length slice with constant offsets), 0 to read it from `lay`.
#[inline(always)]
fn scatter_rows<const W: usize, const H: usize>(
    lay: &Layout,
    scheme: InterpolationScheme,
    pts: &Sorted<'_>,
    first: usize,
    g: &mut [f64],
    t: &mut [f64],
    sc: &mut Scratch,
) {
    let d = lay.d;
    let h = if H == 0 { lay.h } else { H };
    let m_last = lay.sizes[d - 1];
    let (s, e) = (first % m_last, first % m_last + t.len());
    // The leading multi-index of the pencil of nodes.
    let mut rem = first / m_last;
    for l in (0..d - 1).rev() {
        sc.j[l] = rem % lay.sizes[l];
        rem /= lay.sizes[l];
    }
    // Leading offsets `a` with `b = j − a` a cell; `a` descending, so that the cells come in
    // ascending order.
    'offsets: for ai in (0..lay.lead).rev() {
        let mut rem = ai;
        let mut pencil = 0;
        for l in (0..d - 1).rev() {
            let a = rem % W;
            rem /= W;
            if sc.j[l] < a || sc.j[l] - a >= lay.cell_sizes[l] {
                continue 'offsets;
            }
            sc.a[l] = a;
            pencil += (sc.j[l] - a) * lay.cell_strides[l];
        }
        let pencil = pencil / lay.cell_sizes[d - 1];
        let range = pts.pencil_start[pencil]..pts.pencil_start[pencil + 1];
        // Points whose last-dimension stencil `b … b + W − 1` meets `s … e − 1`.
        let lo = s.saturating_sub(W - 1) as u32;
        let last = &pts.last[range.clone()];
        let from = range.start + last.partition_point(|&b| b < lo);
        let to = range.start + last.partition_point(|&b| (b as usize) < e);
        if const { unrolled::handles::<W, H>() } && unrolled::enabled() {
            let mut seg = unrolled::Segment {
                s,
                e,
                g: &mut *g,
                t: &mut *t,
            };
            unrolled::scatter_offset_at::<W, H>(ai, scheme, pts, from, to, &mut seg);
            continue;
        }
        let tables = &lay.line_tables[ai * W..(ai + 1) * W];
        for i in from..to {
            for (l, &tau) in pts.taus[i * d..(i + 1) * d].iter().enumerate() {
                scheme.weights_1d(tau, &mut sc.weights[l * W..(l + 1) * W]);
            }
            // `w_l[a_l]` for the leading dimensions (for `t`) and the rows of their blocks.
            let mut wa = 1.0;
            for l in 0..d - 1 {
                let wl = &sc.weights[l * W..(l + 1) * W];
                let wal = wl[sc.a[l]];
                wa *= wal;
                for (rv, &v) in sc.rows[l * W..(l + 1) * W].iter_mut().zip(wl) {
                    *rv = wal * v;
                }
            }
            lead_products::<W>(&sc.rows, d - 1, &mut sc.lead);
            let mut wl = [0.0; W];
            wl.copy_from_slice(&sc.weights[(d - 1) * W..d * W]);
            let b = pts.last[i] as usize;
            let y = pts.ys[i];
            for (al, &wal) in wl.iter().enumerate() {
                let node = b + al;
                if node < s || node >= e {
                    continue;
                }
                let pa: [f64; W] = std::array::from_fn(|j| wal * wl[j]);
                let row = &mut g[(node - s) * h..(node - s + 1) * h];
                let table = tables[al];
                add_full_lines::<W, H>(row, table, &lay.line_step, &sc.lead, &pa);
                if let Some(skip) = table.partial {
                    // The centre line (line `first − 1`): offsets `0 ..= W − 1 − a_{d−1}` along
                    // the last axis, added as a whole line whose last `skip` values are zeros
                    // (`v + ±0 = v` for every stored value, which is never `−0`: the stencil
                    // starts at `+0` and a rounded sum is `−0` only when both terms are), so
                    // the bits are those of adding the `W − skip` values alone, without a
                    // masked access.
                    let sv = sc.lead[table.first - 1];
                    let shifted: [f64; W] =
                        std::array::from_fn(|j| if j + skip < W { pa[j + skip] } else { 0.0 });
                    if let Some(line) = row.get_mut(..W) {
                        for (v, &p) in line.iter_mut().zip(&shifted) {
                            *v += sv * p;
                        }
                    }
                }
                t[node - s] += y * (wa * wal);
            }
        }
    }
}

gp_linalg::simd_dispatch! {
    /// [`scatter_rows`] over the segments of one task's rows, compiled for AVX2 when the CPU
    /// has it (lines of 4 in one vector register). No FMA contraction happens in either build,
    /// so both give the same bits.
    fn scatter_task<const W: usize, const H: usize>(
        lay: &Layout,
        scheme: InterpolationScheme,
        pts: &Sorted<'_>,
        first: usize,
        g: &mut [f64],
        t: &mut [f64],
    ) = scatter_task_body, avx2 via scatter_task_avx2;
}

#[inline(always)]
fn scatter_task_body<const W: usize, const H: usize>(
    lay: &Layout,
    scheme: InterpolationScheme,
    pts: &Sorted<'_>,
    first: usize,
    g: &mut [f64],
    t: &mut [f64],
) {
    let h = lay.h;
    let mut sc = Scratch::new(lay);
    let seg = lay.segment_rows;
    for (c, (gs, ts)) in g.chunks_mut(seg * h).zip(t.chunks_mut(seg)).enumerate() {
        scatter_rows::<W, H>(lay, scheme, pts, first + c * seg, gs, ts, &mut sc);
    }
}

/// Streaming accumulator of the point-scatter path: located points are buffered; each full
/// buffer is sorted by cell and scattered into the shared stencil, in parallel over pencils of
/// nodes.
#[derive(Debug, Clone)]
pub(super) struct ScatterAccumulator {
    grid: RegularGrid,
    opts: InterpolationOptions,
    loc: Locator,
    lay: Layout,
    /// Points per flush.
    capacity: usize,
    /// Allocated at the first flush.
    gram: Option<StencilGram>,
    wty: Vec<f64>,
    /// The buffer: cell index, `τ` (`d` per point) and `y` of each point.
    cells: Vec<usize>,
    taus: Vec<f64>,
    ys: Vec<f64>,
    yty: f64,
    n: usize,
}

impl ScatterAccumulator {
    /// An empty accumulator (nothing of size `m` is allocated before the first flush).
    pub(super) fn new(grid: &RegularGrid, opts: InterpolationOptions) -> Result<Self> {
        let loc = Locator::new(grid, opts)?;
        // Reject grids whose stencil does not fit the index type before anything else.
        super::stencil_len_checked(grid, opts)?;
        let lay = Layout::new(grid, opts.scheme);
        if u32::try_from(lay.cell_sizes[lay.d - 1]).is_err() {
            return Err(StructuredError::InvalidArgument {
                name: "grid",
                reason: format!(
                    "the point scatter indexes the cells of the last axis with 32 bits; axis {} \
                     has {} nodes",
                    lay.d - 1,
                    lay.sizes[lay.d - 1]
                ),
            });
        }
        let capacity = buffer_points(lay.m, lay.h, lay.d);
        Ok(Self {
            grid: grid.clone(),
            opts,
            loc,
            lay,
            capacity,
            gram: None,
            wty: Vec::new(),
            cells: Vec::new(),
            taus: Vec::new(),
            ys: Vec::new(),
            yty: 0.0,
            n: 0,
        })
    }

    /// Sets the number of points per flush (tests use small buffers to exercise many flushes).
    #[cfg(test)]
    pub(super) fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// Points accumulated so far.
    pub(super) fn num_points(&self) -> usize {
        self.n
    }

    /// Points per flush.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Adds a chunk; errors (wrong shapes, non-finite values, a point outside the grid) leave
    /// the accumulator unchanged. `first` is the index of the chunk's first row in error
    /// messages.
    pub(super) fn add_rows(
        &mut self,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        first: usize,
    ) -> Result<()> {
        check_chunk(&self.grid, x, y)?;
        let (nc, d) = (x.nrows(), self.lay.d);
        let old = self.cells.len();
        self.cells.resize(old + nc, 0);
        self.taus.resize((old + nc) * d, 0.0);
        let (loc, lay) = (&self.loc, &self.lay);
        let located: Vec<Result<()>> = self.cells[old..]
            .par_chunks_mut(LOCATE_ROWS)
            .zip(self.taus[old * d..].par_chunks_mut(LOCATE_ROWS * d))
            .enumerate()
            .map(|(b, (cells, taus))| {
                let row0 = b * LOCATE_ROWS;
                let rows = x.subrows(row0, cells.len());
                locate_rows(loc, rows, first + row0, &lay.cell_strides, cells, taus)
            })
            .collect();
        // The first failing point in row order, so the error does not depend on scheduling.
        if let Some(Err(e)) = located.into_iter().find(|r| r.is_err()) {
            self.cells.truncate(old);
            self.taus.truncate(old * d);
            return Err(e);
        }
        self.ys.extend(y.iter().copied());
        self.yty += y.iter().map(|v| v * v).sum::<f64>();
        self.n += nc;
        if self.cells.len() >= self.capacity {
            self.flush();
        }
        Ok(())
    }

    /// Scatters the buffered points into the stencil and empties the buffer: sorts them by
    /// cell (ties by arrival), then fills the rows of every pencil of nodes in parallel
    /// ([`scatter_rows`]).
    fn flush(&mut self) {
        if self.cells.is_empty() {
            return;
        }
        let lay = &self.lay;
        let d = lay.d;
        let gram = match &mut self.gram {
            Some(g) => g,
            None => {
                let mut g = StencilGram::zeros(&lay.sizes, lay.w - 1)
                    .expect("stencil size checked when the accumulator was built");
                prefault(g.values_mut());
                self.wty = vec![0.0; lay.m];
                self.gram.insert(g)
            }
        };
        let cells_last = lay.cell_sizes[d - 1];
        let (order, cell_start) = cell_order(&self.cells, lay.pencils * cells_last);
        // Gather into sorted order, one array at a time (the old one is freed at once).
        let mut taus = vec![0.0; self.taus.len()];
        taus.par_chunks_mut(d)
            .zip(order.par_iter())
            .for_each(|(t, &i)| t.copy_from_slice(&self.taus[i * d..(i + 1) * d]));
        self.taus = taus;
        self.ys = order.par_iter().map(|&i| self.ys[i]).collect();
        let cells = &self.cells;
        let last: Vec<u32> = order
            .par_iter()
            .map(|&i| (cells[i] % cells_last) as u32)
            .collect();
        let pencil_start: Vec<usize> = (0..=lay.pencils)
            .map(|p| cell_start[p * cells_last])
            .collect();
        drop((order, cell_start));
        let pts = Sorted {
            last: &last,
            taus: &self.taus,
            ys: &self.ys,
            pencil_start: &pencil_start,
        };
        let scheme = self.opts.scheme;
        let (h, rows) = (lay.h, lay.task_rows);
        gram.values_mut()
            .par_chunks_mut(rows * h)
            .zip(self.wty.par_chunks_mut(rows))
            .enumerate()
            .for_each(|(c, (g, t))| {
                let first = c * rows;
                // Compile-time stored row lengths for d ≤ 3.
                match (lay.w, h) {
                    (4, 172) => scatter_task::<4, 172>(lay, scheme, &pts, first, g, t),
                    (4, 25) => scatter_task::<4, 25>(lay, scheme, &pts, first, g, t),
                    (4, 4) => scatter_task::<4, 4>(lay, scheme, &pts, first, g, t),
                    (4, _) => scatter_task::<4, 0>(lay, scheme, &pts, first, g, t),
                    (_, 14) => scatter_task::<2, 14>(lay, scheme, &pts, first, g, t),
                    (_, 5) => scatter_task::<2, 5>(lay, scheme, &pts, first, g, t),
                    (_, 2) => scatter_task::<2, 2>(lay, scheme, &pts, first, g, t),
                    _ => scatter_task::<2, 0>(lay, scheme, &pts, first, g, t),
                }
            });
        self.cells.clear();
        self.taus.clear();
        self.ys.clear();
    }

    /// Adds another accumulator on the same grid and scheme.
    pub(super) fn merge(mut self, mut other: Self) -> Result<Self> {
        check_compatible(&self.grid, self.opts, &other.grid, other.opts)?;
        self.flush();
        other.flush();
        self.absorb(other.gram, &other.wty, other.yty, other.n)?;
        Ok(self)
    }

    /// Adds finished statistics on the same grid and scheme.
    pub(super) fn merge_stats(mut self, other: SufficientStats) -> Result<Self> {
        check_compatible(&self.grid, self.opts, &other.grid, other.opts)?;
        self.flush();
        let wty: Vec<f64> = other.wty.iter().copied().collect();
        self.absorb(Some(other.gram), &wty, other.yty, other.n)?;
        Ok(self)
    }

    fn absorb(&mut self, gram: Option<StencilGram>, wty: &[f64], yty: f64, n: usize) -> Result<()> {
        if let Some(g) = gram {
            match &mut self.gram {
                Some(mine) => {
                    mine.add_assign(&g)?;
                    self.wty
                        .par_iter_mut()
                        .zip(wty.par_iter())
                        .for_each(|(a, b)| *a += b);
                }
                None => {
                    self.gram = Some(g);
                    self.wty = wty.to_vec();
                }
            }
        }
        self.yty += yty;
        self.n += n;
        Ok(())
    }

    /// Scatters what is left in the buffer and returns the statistics.
    pub(super) fn finish(mut self) -> Result<SufficientStats> {
        self.flush();
        let gram = match self.gram {
            Some(g) => g,
            None => {
                self.wty = vec![0.0; self.lay.m];
                StencilGram::zeros(self.grid.sizes(), self.lay.w - 1)?
            }
        };
        Ok(SufficientStats {
            grid: self.grid,
            opts: self.opts,
            gram,
            wty: faer::Col::from_fn(self.wty.len(), |j| self.wty[j]),
            yty: self.yty,
            n: self.n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::{Col, Mat};

    fn data(n: usize, d: usize) -> (Mat<f64>, Col<f64>) {
        // A deterministic scatter of points in [0, 1]^d.
        let x = Mat::from_fn(n, d, |i, l| {
            let v = ((i * 7919 + l * 104_729) % 10_007) as f64 / 10_007.0;
            (v + 0.37 * l as f64).fract()
        });
        let y = Col::from_fn(n, |i| (i as f64 * 0.01).sin());
        (x, y)
    }

    fn grid(sizes: &[usize], pad: usize) -> RegularGrid {
        let d = sizes.len();
        let corners = Mat::from_fn(2, d, |i, _| i as f64);
        RegularGrid::from_data(corners.as_ref(), sizes, pad).unwrap()
    }

    /// The statistics of `x`, `y` by one accumulator and one flush.
    fn scatter_once(
        g: &RegularGrid,
        opts: InterpolationOptions,
        x: &Mat<f64>,
        y: &Col<f64>,
    ) -> SufficientStats {
        let mut acc = ScatterAccumulator::new(g, opts).unwrap();
        acc.add_rows(x.as_ref(), y.as_ref(), 0).unwrap();
        acc.finish().unwrap()
    }

    /// Asserts that two statistics have the same bits in `S` and `t`.
    fn assert_same_bits(a: &SufficientStats, b: &SufficientStats, what: &str) {
        let bits = |v: &mut dyn Iterator<Item = f64>| v.map(f64::to_bits).collect::<Vec<_>>();
        assert_eq!(
            bits(&mut a.gram().values().iter().copied()),
            bits(&mut b.gram().values().iter().copied()),
            "{what}"
        );
        assert_eq!(
            bits(&mut a.wty().iter().copied()),
            bits(&mut b.wty().iter().copied()),
            "{what}"
        );
    }

    #[test]
    fn cell_order_is_the_order_of_the_sorted_cell_index_pairs() {
        // Ties, empty cells (first, last and inside) and a cell list in no particular order.
        for (cells, n_cells) in [
            (vec![], 3),
            (vec![0], 1),
            (vec![2, 2, 2], 4),
            (
                (0..500)
                    .map(|i| (i * 7919 + 13) % 37 + 1)
                    .collect::<Vec<_>>(),
                40,
            ),
        ] {
            let (order, start) = cell_order(&cells, n_cells);
            let mut pairs: Vec<(usize, usize)> =
                cells.iter().enumerate().map(|(i, &c)| (c, i)).collect();
            pairs.sort_unstable();
            let sorted: Vec<usize> = pairs.iter().map(|&(_, i)| i).collect();
            assert_eq!(order, sorted, "{cells:?}");
            assert_eq!(start.len(), n_cells + 1);
            for c in 0..n_cells {
                let count = cells.iter().filter(|&&x| x == c).count();
                assert_eq!(start[c + 1] - start[c], count, "cell {c}");
                assert!(order[start[c]..start[c + 1]].iter().all(|&i| cells[i] == c));
            }
        }
    }

    #[test]
    fn many_small_flushes_equal_one_flush() {
        // Also a 1-D grid of several segments and a 3-D grid whose last axis is longer than
        // one segment.
        for (sizes, scheme) in [
            (vec![30], InterpolationScheme::Cubic),
            (vec![20_000], InterpolationScheme::Cubic),
            (vec![9, 12], InterpolationScheme::Linear),
            (vec![20, 9, 8], InterpolationScheme::Cubic),
            (vec![7, 6, 300], InterpolationScheme::Cubic),
        ] {
            let opts = InterpolationOptions {
                scheme,
                ..Default::default()
            };
            let g = grid(&sizes, scheme.recommended_padding());
            let (x, y) = data(3000, sizes.len());
            let mut one = ScatterAccumulator::new(&g, opts).unwrap();
            assert!(one.capacity() >= 3000);
            one.add_rows(x.as_ref(), y.as_ref(), 0).unwrap();
            let one = one.finish().unwrap();
            let mut many = ScatterAccumulator::new(&g, opts).unwrap().with_capacity(97);
            for s in (0..3000).step_by(250) {
                many.add_rows(x.subrows(s, 250), y.subrows(s, 250), s)
                    .unwrap();
            }
            let many = many.finish().unwrap();
            let scale = one
                .gram()
                .values()
                .iter()
                .fold(0.0f64, |m, v| m.max(v.abs()));
            for (a, b) in one.gram().values().iter().zip(many.gram().values()) {
                assert!((a - b).abs() <= 1e-13 * scale, "{sizes:?}");
            }
            assert!((one.wty() - many.wty()).norm_max() <= 1e-13 * one.wty().norm_max());
            assert_eq!(one.num_points(), many.num_points());
        }
    }

    #[test]
    fn dispatched_scatter_equals_the_baseline_build_bit_for_bit() {
        // The scatter task runs in its AVX2 build on CPUs that have it; capping the dispatch
        // level runs the baseline build through the same public path.
        use gp_linalg::simd::{set_max_simd_level, SimdLevel};
        for (sizes, scheme) in [
            (vec![30], InterpolationScheme::Cubic),
            (vec![9, 12], InterpolationScheme::Linear),
            (vec![20, 9, 8], InterpolationScheme::Cubic),
        ] {
            let opts = InterpolationOptions {
                scheme,
                ..Default::default()
            };
            let g = grid(&sizes, scheme.recommended_padding());
            let (x, y) = data(3000, sizes.len());
            let dispatched = scatter_once(&g, opts, &x, &y);
            let previous = set_max_simd_level(SimdLevel::Baseline);
            let baseline = scatter_once(&g, opts, &x, &y);
            set_max_simd_level(previous);
            assert_same_bits(&dispatched, &baseline, &format!("{sizes:?}"));
        }
    }

    #[test]
    fn unrolled_scatter_equals_the_table_driven_loop_bit_for_bit() {
        // Grids of one to three dimensions (the unrolled kernel's), cubic and linear, with a
        // last axis longer than one row segment and points on every segment boundary.
        for (sizes, scheme) in [
            (vec![20_000], InterpolationScheme::Cubic),
            (vec![40], InterpolationScheme::Linear),
            (vec![9, 12], InterpolationScheme::Cubic),
            (vec![30, 300], InterpolationScheme::Linear),
            (vec![20, 9, 8], InterpolationScheme::Cubic),
            (vec![7, 6, 300], InterpolationScheme::Cubic),
            (vec![12, 11, 10], InterpolationScheme::Linear),
        ] {
            let opts = InterpolationOptions {
                scheme,
                ..Default::default()
            };
            let g = grid(&sizes, scheme.recommended_padding());
            let (x, y) = data(3000, sizes.len());
            let fast = scatter_once(&g, opts, &x, &y);
            unrolled::set_enabled(false);
            let tables = scatter_once(&g, opts, &x, &y);
            unrolled::set_enabled(true);
            assert_same_bits(&fast, &tables, &format!("{sizes:?}"));
            assert!(fast.gram().values().iter().any(|&v| v != 0.0));
        }
    }

    #[test]
    fn unrolled_line_starts_match_the_line_tables() {
        for (sizes, scheme) in [
            (vec![30], InterpolationScheme::Cubic),
            (vec![9, 12], InterpolationScheme::Cubic),
            (vec![20, 9, 8], InterpolationScheme::Cubic),
            (vec![30], InterpolationScheme::Linear),
            (vec![9, 12], InterpolationScheme::Linear),
            (vec![20, 9, 8], InterpolationScheme::Linear),
        ] {
            let lay = Layout::new(&grid(&sizes, 0), scheme);
            let starts = match (lay.w, lay.h) {
                (4, 4) => unrolled::starts::<4, 4>(),
                (4, 25) => unrolled::starts::<4, 25>(),
                (4, 172) => unrolled::starts::<4, 172>(),
                (2, 2) => unrolled::starts::<2, 2>(),
                (2, 5) => unrolled::starts::<2, 5>(),
                (2, 14) => unrolled::starts::<2, 14>(),
                other => panic!("shape {other:?}"),
            };
            let w = lay.w as isize;
            for (ai, per_al) in starts.iter().enumerate().take(lay.lead) {
                for (al, per_li) in per_al.iter().enumerate().take(lay.w) {
                    let table = lay.line_tables[ai * lay.w + al];
                    for (li, &start) in per_li.iter().enumerate().take(lay.lead) {
                        let what = format!("{sizes:?} {scheme:?} ai {ai} al {al} li {li}");
                        if li >= table.first {
                            let at = table.base.wrapping_add(lay.line_step[li]);
                            assert_eq!(start, at as isize, "{what}");
                        } else if li + 1 == table.first && table.partial.is_some() {
                            assert_eq!(Some(start.unsigned_abs()), table.partial, "{what}");
                            assert!(start < 0 && start > -w, "{what}");
                        } else {
                            assert!(start <= -w, "{what}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn line_tables_match_the_stencil_entries_of_every_line() {
        // Each line of a point's block, for node offset `(a, a_{d−1})` and leading offset
        // `a'`, starts at the stencil entry of offsets `(a' − a, −a_{d−1})`, counted from first
        // principles here: stored whole when it starts at or after the centre, as the centre
        // line (from its middle) when it straddles it, not at all otherwise.
        for (sizes, scheme) in [
            (vec![30], InterpolationScheme::Cubic),
            (vec![9, 12], InterpolationScheme::Cubic),
            (vec![9, 12], InterpolationScheme::Linear),
            (vec![20, 9, 8], InterpolationScheme::Cubic),
            (vec![7, 8, 6, 7], InterpolationScheme::Cubic),
            (vec![6, 7, 5, 6], InterpolationScheme::Linear),
        ] {
            let lay = Layout::new(&grid(&sizes, 0), scheme);
            let (d, w) = (lay.d, lay.w);
            let (r, q) = (w - 1, 2 * w - 1);
            let centre = q.pow(d as u32) / 2;
            let digits = |mut idx: usize| {
                let mut v = vec![0; d - 1];
                for l in (0..d - 1).rev() {
                    v[l] = idx % w;
                    idx /= w;
                }
                v
            };
            for ai in 0..lay.lead {
                let a = digits(ai);
                for al in 0..w {
                    let table = lay.line_tables[ai * w + al];
                    for li in 0..lay.lead {
                        let a2 = digits(li);
                        let mut start = 0;
                        for l in 0..d - 1 {
                            start = start * q + (a2[l] + r - a[l]);
                        }
                        start = start * q + (r - al);
                        let what = format!("{sizes:?} a {a:?} a_last {al} a' {a2:?}");
                        if start >= centre {
                            assert!(li >= table.first, "{what}");
                            let at = table.base.wrapping_add(lay.line_step[li]);
                            assert_eq!(at, start - centre, "{what}");
                            assert!(at + w <= lay.h, "{what}");
                        } else {
                            assert!(li < table.first, "{what}");
                            if start + w > centre {
                                assert_eq!(li + 1, table.first, "{what}");
                                assert_eq!(table.partial, Some(centre - start), "{what}");
                            } else if li + 1 == table.first {
                                assert_eq!(table.partial, None, "{what}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn segments_and_tasks_cover_the_grid() {
        for (sizes, scheme) in [
            (vec![20_000], InterpolationScheme::Cubic),
            (vec![5, 7], InterpolationScheme::Cubic),
            (vec![400, 400, 40], InterpolationScheme::Cubic),
            (vec![3, 4], InterpolationScheme::Linear),
        ] {
            let lay = Layout::new(&grid(&sizes, 0), scheme);
            let m_last = *sizes.last().unwrap();
            assert!(lay.segment_rows >= 1 && lay.segment_rows <= m_last);
            assert!(lay.segment_rows * lay.h <= SEGMENT_VALUES.max(2 * lay.w * lay.h));
            // A task never spans two pencils of nodes.
            assert!(m_last % lay.task_rows == 0 || sizes.len() == 1);
            assert_eq!(lay.line_tables.len(), lay.lead * lay.w);
            assert_eq!(lay.line_step.len(), lay.lead);
        }
    }
}
