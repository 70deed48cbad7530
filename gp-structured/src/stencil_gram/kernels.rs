//! The row kernels of the product: the walk over a block's rows (with software prefetch),
//! the symmetric row kernel per line length, and the AVX2 build of both.

use super::product::{PREFETCH_BYTES, PREFETCH_MIN_BYTES};
use super::StencilGram;

gp_linalg::simd_dispatch! {
    /// [`StencilGram::rows_into`], in the AVX2 build where the CPU has it.
    fn rows_into_dispatch(
        g: &StencilGram,
        rows: std::ops::Range<usize>,
        base: usize,
        xp: &[f64],
        live: &[bool],
        y: &mut [f64],
    ) = rows_into_free, avx2 via rows_into_avx2;
}

/// [`StencilGram::rows_into_body`] as a free function, the form the dispatch takes.
#[inline(always)]
fn rows_into_free(
    g: &StencilGram,
    rows: std::ops::Range<usize>,
    base: usize,
    xp: &[f64],
    live: &[bool],
    y: &mut [f64],
) {
    g.rows_into_body(rows, base, xp, live, y);
}

impl StencilGram {
    /// Adds the products of rows `rows` into `y`, the padded output from padded node `base`
    /// on. On x86-64 CPUs with AVX2 the kernel runs in a copy compiled for AVX2: the baseline
    /// build is SSE2, two lanes per instruction, and pays the AVX→SSE transition penalty after
    /// faer GEMMs on the same thread. Both builds do the same additions and multiplications
    /// in the same order (no fused multiply-add), so results are bit-identical.
    pub(super) fn rows_into(
        &self,
        rows: std::ops::Range<usize>,
        base: usize,
        xp: &[f64],
        live: &[bool],
        y: &mut [f64],
    ) {
        rows_into_dispatch(self, rows, base, xp, live, y);
    }

    /// [`rows_into`](Self::rows_into)'s body, dispatched on the line length `2r + 1` so that
    /// the row kernel has it as a compile-time constant. The closures are inlined so that
    /// they are compiled inside the AVX2 copy (a closure is otherwise its own function, built
    /// for the baseline target).
    #[inline(always)]
    pub(super) fn rows_into_body(
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
    pub(super) fn rows_with(
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
                            gp_linalg::simd::prefetch(&self.data[next * h..(next + 1) * h]);
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
pub(super) fn row_sym<const Q: usize>(
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
pub(super) fn row_sym_dyn(
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

/// Accumulators of the row kernels (at least the line length `2r + 1` of the specialised
/// kernels).
const LANES: usize = 8;
