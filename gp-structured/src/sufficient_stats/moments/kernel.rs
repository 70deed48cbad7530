//! The inner loop of the cell-moment path: the monomials `Π_l τ_l^{s_l}` of the points of a
//! chunk, packed and sorted by cell, added to their cells' records.
//!
//! The stencil width `W` and the moment count per axis `Q = 2W − 1` are const parameters, so
//! the rows of `Q` (and `W`) moments are fixed-length loops the compiler unrolls and
//! vectorizes; the [`simd_dispatch!`](gp_linalg::simd_dispatch) AVX2 build doubles the vector
//! width. Each row of a cell's record is loaded once for up to [`BATCH`] of the cell's
//! points, updated by each in turn, and stored. Profiling the former loop (runtime lengths,
//! one point at a time, points visited through a permutation) showed most of its time in
//! cache misses on the permuted reads of `τ`, `y` and the cell index; the points now arrive
//! packed in cell order, so those reads are sequential.
//!
//! Every entry receives its points' terms one at a time, in point order, by the operations
//! of the former loop (`c += p·l` as a product then a sum, never fused), so both builds and
//! any batching give the bits the former loop gave.

use crate::interpolation::expand_weights;
use crate::sufficient_stats::cell_offsets;

/// Points of one chunk sorted by cell (stable) and packed: `vals` holds `τ_1..τ_d, y` of each
/// point, `cells` its cell.
pub(super) struct PackedPoints {
    pub(super) d: usize,
    pub(super) cells: Vec<usize>,
    pub(super) vals: Vec<f64>,
}

impl PackedPoints {
    /// Packs points given by their `cells`, `taus` (`d` per point) and `y`, in order of cell,
    /// stably (a counting sort when the cells are few compared with the points, a comparison
    /// sort otherwise).
    pub(super) fn sorted(
        d: usize,
        cells: &[usize],
        taus: &[f64],
        y: impl Fn(usize) -> f64,
        num_cells: usize,
    ) -> Self {
        let n = cells.len();
        let mut sorted_cells = vec![0; n];
        let mut vals = vec![0.0; n * (d + 1)];
        let mut place = |i: usize, k: usize| {
            sorted_cells[k] = cells[i];
            let v = &mut vals[k * (d + 1)..(k + 1) * (d + 1)];
            // An element loop, not `copy_from_slice`: for d values that is a `memcpy` call.
            for (dst, &src) in v.iter_mut().zip(&taus[i * d..(i + 1) * d]) {
                *dst = src;
            }
            v[d] = y(i);
        };
        if num_cells <= 4 * n {
            // Counting sort, written as a scatter: the points are read in order and each
            // written to its slot (sequential reads; a gather would miss the cache per point).
            let mut next = cell_offsets(cells, num_cells);
            for (i, &c) in cells.iter().enumerate() {
                place(i, next[c]);
                next[c] += 1;
            }
        } else {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&i| cells[i]);
            for (k, &i) in order.iter().enumerate() {
                place(i, k);
            }
        }
        Self {
            d,
            cells: sorted_cells,
            vals,
        }
    }
}

gp_linalg::simd_dispatch! {
    /// Adds the moments of every point of `pts` to the records of `moments` (record `c` at
    /// `c·(q_len + y_len)`: `Q^d` sums for `S`, then `W^d` for `t`) and `y²` to `yty`,
    /// compiled for AVX2 when the CPU has it (no FMA in either build: same bits).
    pub(super) fn add_moments<const W: usize, const Q: usize>(
        pts: &PackedPoints,
        moments: &mut [f64],
        q_len: usize,
        y_len: usize,
        yty: &mut f64,
    ) = add_moments_body, avx2 via add_moments_avx2;
}

/// Points of one cell handled together: their monomials are formed first, then each row of
/// the cell's record is loaded once, updated by all of them in order, and stored.
const BATCH: usize = 64;

#[inline(always)]
fn add_moments_body<const W: usize, const Q: usize>(
    pts: &PackedPoints,
    moments: &mut [f64],
    q_len: usize,
    y_len: usize,
    yty: &mut f64,
) {
    let d = pts.d;
    let rec = q_len + y_len;
    // Rows of the record: `Q^{d−1}` rows of `Q` moments for `S`, `W^{d−1}` rows of `W` for `t`.
    let (rows_q, rows_w) = (q_len / Q, y_len / W);
    let mut pow_q = vec![0.0; d * Q];
    let mut pow_w = vec![0.0; d * W];
    // Per point of a batch: the row factors (the product of the powers of the first `d − 1`
    // coordinates), the powers of the last coordinate, and `y`.
    let mut pre_q = vec![0.0; BATCH * rows_q];
    let mut pre_w = vec![0.0; BATCH * rows_w];
    let mut last_q = [[0.0; Q]; BATCH];
    let mut last_w = [[0.0; W]; BATCH];
    let mut ys = [0.0; BATCH];
    let n = pts.cells.len();
    let mut k0 = 0;
    while k0 < n {
        let cell = pts.cells[k0];
        let mut k1 = k0 + 1;
        while k1 < n && k1 - k0 < BATCH && pts.cells[k1] == cell {
            k1 += 1;
        }
        let batch = k1 - k0;
        let points = pts.vals[k0 * (d + 1)..k1 * (d + 1)].chunks_exact(d + 1);
        for (b, point) in points.enumerate() {
            let (tau, yi) = (&point[..d], point[d]);
            for l in 0..d {
                let mut p = 1.0;
                for s in 0..Q {
                    pow_q[l * Q + s] = p;
                    p *= tau[l];
                }
                pow_w[l * W..(l + 1) * W].copy_from_slice(&pow_q[l * Q..l * Q + W]);
            }
            expand_weights(
                &pow_q[..(d - 1) * Q],
                Q,
                &mut pre_q[b * rows_q..(b + 1) * rows_q],
            );
            last_q[b].copy_from_slice(&pow_q[(d - 1) * Q..]);
            expand_weights(
                &pow_w[..(d - 1) * W],
                W,
                &mut pre_w[b * rows_w..(b + 1) * rows_w],
            );
            last_w[b].copy_from_slice(&pow_w[(d - 1) * W..]);
            ys[b] = yi;
            *yty += yi * yi;
        }
        k0 = k1;
        let Some(record) = moments.get_mut(cell * rec..(cell + 1) * rec) else {
            continue; // unreachable: cells come from the locator of this grid
        };
        let (mq, my) = record.split_at_mut(q_len);
        // Each entry still receives the points' terms one by one, in order: the sums (and
        // their bits) are those of adding point by point.
        for (j, row) in mq.as_chunks_mut::<Q>().0.iter_mut().enumerate() {
            let mut acc = *row;
            for (b, last) in last_q[..batch].iter().enumerate() {
                let p = pre_q[b * rows_q + j];
                for s in 0..Q {
                    acc[s] += p * last[s];
                }
            }
            *row = acc;
        }
        for (j, row) in my.as_chunks_mut::<W>().0.iter_mut().enumerate() {
            let mut acc = *row;
            for (b, last) in last_w[..batch].iter().enumerate() {
                let py = pre_w[b * rows_w + j] * ys[b];
                for s in 0..W {
                    acc[s] += py * last[s];
                }
            }
            *row = acc;
        }
    }
}
