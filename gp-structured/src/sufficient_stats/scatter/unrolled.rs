//! The point scatter's inner loop with the stencil's shape fixed at compile time, for grids of
//! one to three dimensions. With the node offset `a` of the pencil visit, the row length and
//! the stencil width all constants, every line of a point's block lands at a constant offset
//! of its row, so each line costs a broadcast, a multiply, an add from memory and a store,
//! with no table lookups, clamps or loop counters (profiling the table-driven loop showed
//! about 11 instructions per line, and the lines were more than half of the pass). On a
//! Zen 3 EPYC this took the 3-D cubic scatter from 1.05–1.20 to 1.63–2.26 M points/s at 30³
//! and from 0.75–0.93 to 1.33–1.36 at 100×100×80 (2 threads, `stats_bench`).
//!
//! The arithmetic is that of the table-driven loop in [`super::scatter_rows`], product for
//! product and in the same order per stored value, so the statistics are the same bits.

use super::Sorted;
use crate::interpolation::InterpolationScheme;

/// Leading offsets (and lines per row) the kernel is written for: `w^{d−1} ≤ 16`, i.e.
/// `d ≤ 3` at `w ≤ 4`.
const MAX_LEAD: usize = 16;
/// Widest stencil handled (cubic).
const MAX_W: usize = 4;

/// The grid dimension whose stored stencil row has `h` values at stencil width `w`
/// (`h = ((2w − 1)^d + 1)/2`), if it is one the kernel handles (`d ≤ 3`).
pub(super) const fn dims_of(w: usize, h: usize) -> Option<usize> {
    let q = 2 * w - 1;
    let mut d = 1;
    let mut k = q;
    while d <= 3 {
        if k.div_ceil(2) == h {
            return Some(d);
        }
        d += 1;
        k *= q;
    }
    None
}

/// `base^exp` in a const context.
const fn pow(base: usize, exp: usize) -> usize {
    let mut p = 1;
    let mut i = 0;
    while i < exp {
        p *= base;
        i += 1;
    }
    p
}

/// Where line `li` of node offset `(ai, al)` starts in a stored row, relative to the centre
/// entry (see [`super::LineTable`]): the stencil entry of offsets `(a' − a, −al)` (C order over
/// `(2w − 1)^d` entries, `a` and `a'` the leading multi-indices of `ai` and `li`) minus the
/// centre. At least 0: a whole stored line; in `(−w, 0)`: the centre line, whose first
/// `−start` values are not stored; at most `−w`: not stored.
const fn line_start(d: usize, w: usize, ai: usize, al: usize, li: usize) -> isize {
    let (r, q) = (w - 1, 2 * w - 1);
    let mut start = 0;
    let mut l = 0;
    while l + 1 < d {
        let place = pow(w, d - 2 - l);
        let (a, a2) = ((ai / place) % w, (li / place) % w);
        start = start * q + (a2 + r - a);
        l += 1;
    }
    start = start * q + (r - al);
    start as isize - (pow(q, d) / 2) as isize
}

/// [`line_start`] for every `(ai, al, li)` of the shape `(W, H)`; lines of leading offsets
/// that do not exist are "not stored".
struct Shape<const W: usize, const H: usize>;

impl<const W: usize, const H: usize> Shape<W, H> {
    const D: usize = match dims_of(W, H) {
        Some(d) => d,
        None => 0,
    };
    const LEAD: usize = if Self::D == 0 { 0 } else { pow(W, Self::D - 1) };
    const STARTS: [[[isize; MAX_LEAD]; MAX_W]; MAX_LEAD] = {
        let mut out = [[[isize::MIN; MAX_LEAD]; MAX_W]; MAX_LEAD];
        let mut ai = 0;
        while ai < Self::LEAD && ai < MAX_LEAD {
            let mut al = 0;
            while al < W && al < MAX_W {
                let mut li = 0;
                while li < Self::LEAD && li < MAX_LEAD {
                    out[ai][al][li] = line_start(Self::D, W, ai, al, li);
                    li += 1;
                }
                al += 1;
            }
            ai += 1;
        }
        out
    };
}

/// The line starts of the shape `(W, H)`, indexed `[ai][al][li]` (for tests).
#[cfg(test)]
pub(super) fn starts<const W: usize, const H: usize>() -> [[[isize; MAX_LEAD]; MAX_W]; MAX_LEAD] {
    Shape::<W, H>::STARTS
}

/// Tests switch the kernel off to compare it with the table-driven loop.
#[cfg(test)]
static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Whether the scatter uses this kernel where it handles the shape (always, outside tests).
#[inline(always)]
pub(super) fn enabled() -> bool {
    #[cfg(test)]
    {
        ENABLED.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(test))]
    {
        true
    }
}

/// Switches the kernel on or off (tests only; the other path gives the same bits, so a test
/// running beside one that switches it off is not affected).
#[cfg(test)]
pub(super) fn set_enabled(on: bool) {
    ENABLED.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether [`scatter_offset`] handles the shape `(W, H)`.
pub(super) const fn handles<const W: usize, const H: usize>() -> bool {
    W <= MAX_W && Shape::<W, H>::D != 0 && Shape::<W, H>::LEAD <= MAX_LEAD
}

/// Adds `sv·pa` to line `LI` of node offset `(AI, AL)` in `row`: the whole line, the stored
/// part of the centre line, or nothing, as the shape says.
#[inline(always)]
fn line<const W: usize, const H: usize, const AI: usize, const AL: usize, const LI: usize>(
    row: &mut [f64; H],
    sv: f64,
    pa: &[f64; W],
) {
    let start = const { Shape::<W, H>::STARTS[AI][AL][LI] };
    if start >= 0 {
        let at = start as usize;
        if at + W <= H {
            for j in 0..W {
                row[at + j] += sv * pa[j];
            }
        }
    } else if start > -(W as isize) {
        // The centre line from its middle on: its value `j` goes to entry `j − skip`.
        let skip = start.unsigned_abs();
        for j in skip..W {
            if j - skip < H {
                row[j - skip] += sv * pa[j];
            }
        }
    }
}

/// `line::<W, H, AI, AL, LI>(row, lead[LI], pa)` for `LI` = 0 … 15.
macro_rules! each_line {
    ($row:expr, $lead:expr, $pa:expr; $w:ident, $h:ident, $ai:ident, $al:ident) => {
        each_line!(@ $row, $lead, $pa; $w, $h, $ai, $al; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $row:expr, $lead:expr, $pa:expr; $w:ident, $h:ident, $ai:ident, $al:ident; $($li:literal)*) => {
        $( line::<$w, $h, $ai, $al, $li>($row, $lead[$li], $pa); )*
    };
}

/// Adds line `LI` of every node offset `(AI, 0 … W−1)` to the rows of a point whose last-axis
/// stencil lies in the segment (lines outermost, so each `lead[LI]` is broadcast once).
#[inline(always)]
fn line_all_rows<const W: usize, const H: usize, const AI: usize, const LI: usize>(
    rows: &mut [[f64; H]],
    sv: f64,
    pa: &[[f64; W]; W],
) {
    match rows {
        [r0, r1, r2, r3] => {
            line::<W, H, AI, 0, LI>(r0, sv, &pa[0]);
            line::<W, H, AI, 1, LI>(r1, sv, &pa[1 % W]);
            line::<W, H, AI, 2, LI>(r2, sv, &pa[2 % W]);
            line::<W, H, AI, 3, LI>(r3, sv, &pa[3 % W]);
        }
        [r0, r1] => {
            line::<W, H, AI, 0, LI>(r0, sv, &pa[0]);
            line::<W, H, AI, 1, LI>(r1, sv, &pa[1 % W]);
        }
        _ => {}
    }
}

/// `line_all_rows::<W, H, AI, LI>(rows, lead[LI], pa)` for `LI` = 0 … 15.
macro_rules! each_line_all_rows {
    ($rows:expr, $lead:expr, $pa:expr; $w:ident, $h:ident, $ai:ident) => {
        each_line_all_rows!(@ $rows, $lead, $pa; $w, $h, $ai; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $rows:expr, $lead:expr, $pa:expr; $w:ident, $h:ident, $ai:ident; $($li:literal)*) => {
        $( line_all_rows::<$w, $h, $ai, $li>($rows, $lead[$li], $pa); )*
    };
}

/// Adds to the row of node `b + (AI, AL)` every stored line of a point's block.
#[inline(always)]
fn add_row<const W: usize, const H: usize, const AI: usize, const AL: usize>(
    row: &mut [f64; H],
    lead: &[f64; MAX_LEAD],
    pa: &[f64; W],
) {
    each_line!(row, lead, pa; W, H, AI, AL);
}

/// [`add_row`] for a node offset `al` known only at run time.
#[inline(always)]
fn add_row_at<const W: usize, const H: usize, const AI: usize>(
    al: usize,
    row: &mut [f64; H],
    lead: &[f64; MAX_LEAD],
    pa: &[f64; W],
) {
    match al {
        0 => add_row::<W, H, AI, 0>(row, lead, pa),
        1 => add_row::<W, H, AI, 1>(row, lead, pa),
        2 => add_row::<W, H, AI, 2>(row, lead, pa),
        _ => add_row::<W, H, AI, 3>(row, lead, pa),
    }
}

/// [`scatter_offset`] for a leading offset `ai < 16` known only at run time.
#[inline(always)]
pub(super) fn scatter_offset_at<const W: usize, const H: usize>(
    ai: usize,
    scheme: InterpolationScheme,
    pts: &Sorted<'_>,
    from: usize,
    to: usize,
    seg: &mut Segment<'_>,
) {
    macro_rules! arms {
        ($($ai:literal)*) => {
            match ai {
                $( $ai => scatter_offset::<W, H, $ai>(scheme, pts, from, to, seg), )*
                _ => {}
            }
        };
    }
    arms!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// The rows (stored stencil values) and `Wᵀy` entries of one segment of a pencil of nodes.
pub(super) struct Segment<'a> {
    /// Rows `s .. e` of the pencil (along the last dimension).
    pub(super) s: usize,
    pub(super) e: usize,
    pub(super) g: &'a mut [f64],
    pub(super) t: &'a mut [f64],
}

/// Scatters points `from .. to` (sorted, all in the pencil of cells `j − a` for the leading
/// offset `AI`) into the segment's rows, as [`super::scatter_rows`] does for one offset.
#[inline(always)]
pub(super) fn scatter_offset<const W: usize, const H: usize, const AI: usize>(
    scheme: InterpolationScheme,
    pts: &Sorted<'_>,
    from: usize,
    to: usize,
    seg: &mut Segment<'_>,
) {
    let (d, lead_n) = (Shape::<W, H>::D, Shape::<W, H>::LEAD);
    if !handles::<W, H>() || AI >= lead_n {
        return;
    }
    let (s, e) = (seg.s, seg.e);
    let (rows, _) = seg.g.as_chunks_mut::<H>();
    let mut wts = [[0.0; W]; 3];
    let mut lead = [0.0; MAX_LEAD];
    for i in from..to {
        let Some(taus) = pts.taus.get(i * d..(i + 1) * d) else {
            return;
        };
        for (wl, &tau) in wts.iter_mut().zip(taus) {
            scheme.weights_1d(tau, wl);
        }
        // `w_l[a_l]` over the leading dimensions (for `t`) and the rows of their blocks.
        let mut wa = 1.0;
        let mut lead_rows = [[0.0; W]; 2];
        for l in 0..d - 1 {
            let al = (AI / pow(W, d - 2 - l)) % W;
            let wal = wts[l][al];
            wa *= wal;
            for (rv, &v) in lead_rows[l].iter_mut().zip(&wts[l]) {
                *rv = wal * v;
            }
        }
        // Their products over the leading multi-indices `a'` (C order), as
        // `super::lead_products` forms them.
        match d {
            1 => lead[0] = 1.0,
            2 => lead[..W].copy_from_slice(&lead_rows[0]),
            _ => {
                for a0 in 0..W {
                    for a1 in 0..W {
                        lead[a0 * W + a1] = lead_rows[0][a0] * lead_rows[1][a1];
                    }
                }
            }
        }
        let wl = wts[d - 1];
        // `pa[al][j] = pa[j][al]`: left visible, the compiler rebuilds each row's vector from
        // the products of the row before with shuffles that cost more than the multiplies
        // they save; `black_box` hides the symmetry.
        let pa: [[f64; W]; W] = std::hint::black_box(std::array::from_fn(|al| {
            std::array::from_fn(|j| wl[al] * wl[j])
        }));
        let b = pts.last[i] as usize;
        let y = pts.ys[i];
        let whole = if b >= s && b + W <= e {
            rows.get_mut(b - s..b - s + W)
        } else {
            None
        };
        // Every node of the point's last-axis stencil in the segment is the usual case.
        let whole = match whole {
            Some(rows) if rows.len() == W && (W == 2 || W == 4) => {
                each_line_all_rows!(rows, lead, &pa; W, H, AI);
                true
            }
            _ => false,
        };
        if whole {
            for (al, &wal) in wl.iter().enumerate() {
                seg.t[b - s + al] += y * (wa * wal);
            }
        } else {
            for al in 0..W {
                let node = b + al;
                if node < s || node >= e {
                    continue;
                }
                if let Some(row) = rows.get_mut(node - s) {
                    add_row_at::<W, H, AI>(al, row, &lead, &pa[al]);
                }
                seg.t[node - s] += y * (wa * wl[al]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_of_one_to_three_dimensions_are_recognised() {
        assert_eq!(dims_of(4, 4), Some(1));
        assert_eq!(dims_of(4, 25), Some(2));
        assert_eq!(dims_of(4, 172), Some(3));
        assert_eq!(dims_of(2, 2), Some(1));
        assert_eq!(dims_of(2, 5), Some(2));
        assert_eq!(dims_of(2, 14), Some(3));
        assert_eq!(dims_of(4, 1201), None);
        assert!(handles::<4, 172>() && handles::<2, 5>());
        assert!(!handles::<4, 0>() && !handles::<4, 1201>());
    }
}
