//! A stored symmetric matrix as an operator whose products with thin blocks (the `t + 1`
//! right-hand sides of a CG training step) read half the matrix once per product, near the
//! multiply-add peak of the CPU's vector units.
//!
//! **Layout.** The lower part is stored in panels of [`PANEL`] = 16 columns: panel `p` holds
//! rows `16p .. n` of columns `16p .. 16p + 15` row major (`A[j, 16p + r]` at
//! `(j − 16p)·16 + r`; the last panel padded with zero columns), `4n² + O(n)` bytes in all.
//!
//! **Product.** For a 12-wide pass of `X` (row major) each panel does two things with the
//! rows it stores, chunk of [`CHUNK`] rows by chunk:
//! - the *direct* sums `(A X)[16p + r, :] += Σ_{j ≥ 16p} A[j, 16p + r] X[j, :]`, a 16 × 12
//!   tile in 24 of the 32 AVX-512 registers, 16 contiguous entries read and 12 entries of
//!   `X` broadcast per row (every lane of every multiply-add useful);
//! - the *mirrored* sums for the rows below its diagonal block,
//!   `(A X)[j, :] += Σ_r A[j, 16p + r] X[16p + r, :]` (`A` symmetric), four rows at a time
//!   from cache, while the next panel's rows of the chunk are prefetched into L2, so the
//!   memory traffic of one pass overlaps the arithmetic of the other.
//!
//! The mirrored sums go to rows of later panels, so the panels are split into [`GROUPS`]
//! groups of about equal area that run in parallel, each with its own mirrored sums, added
//! in order of the group at the end. The split depends on `n` only: the bits do not depend
//! on the thread count, nor on the build (AVX-512 takes a whole panel per direct call, AVX2
//! and the baseline four rows; every sum is the same sequence of `mul_add`s).
//!
//! Measured at `n = 9600`, 11 columns, on the 2026-11-27 host (an AMD EPYC with 512-bit
//! units; `cargo run --release -p gp-bench --example rtgps_step`, quiet): 16.3–16.4 ms per
//! product on two threads and about 28 ms on one, where the full column-major matrix read
//! eight columns at a time took 33–36 ms and faer's GEMM 24–27 ms. The product is bound by
//! its multiply-adds (the mirrored sums use 12 of 16 lanes), not by the 368 MB it reads.
//!
//! The stored entries are [`Kernel::matrix`]'s, bit for bit ([`SymmetricStored::from_kernel`]
//! evaluates each with [`Kernel::fill_block`] as `matrix` does, and only the lower part).

use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_kernels::Kernel;
use gp_linalg::LinearOperator;
use gp_solvers::ColumnAccess;
use rayon::prelude::*;
use std::sync::Mutex;

use crate::error::Result;

/// Columns of `A` per panel (rows of the output per kernel tile).
pub(crate) const PANEL: usize = 16;
/// Columns of `X` handled per pass.
const WIDTH: usize = 12;
/// Rows of `X` per cache chunk (the partial sums of a chunk are added in order).
const CHUNK: usize = 1024;
/// Groups of consecutive panels (the parallel tasks, each with its own mirrored sums); a
/// constant, so the sums do not depend on the thread count.
const GROUPS: usize = 8;
/// Output rows per kernel call in the AVX2 and baseline builds: 4 rows × 12 columns of
/// accumulators fill 12 of the 16 vector registers.
const ROWS_NARROW: usize = 4;

/// A stored symmetric `n × n` matrix with fast thin products (see the module docs).
#[derive(Debug)]
pub struct SymmetricStored {
    n: usize,
    /// Panel `p` (rows `16p .. n` of columns `16p .. 16p + 16`) at `Self::offset(n, p)`,
    /// entry `(j, r)` at `(j − 16p)·16 + r`.
    panels: Vec<f64>,
    /// The product's buffers, kept between products: fresh ones cost page faults on every
    /// product of a CG run (several MB; about a tenth of a product's time at `n = 9600`).
    /// A product that finds them in use allocates its own.
    scratch: Mutex<Scratch>,
}

impl Clone for SymmetricStored {
    fn clone(&self) -> Self {
        Self {
            n: self.n,
            panels: self.panels.clone(),
            scratch: Mutex::default(),
        }
    }
}

/// Buffers of one product: `X` row major and each group's sums.
#[derive(Debug, Default)]
struct Scratch {
    xr: Vec<f64>,
    parts: Vec<GroupPart>,
}

impl SymmetricStored {
    /// Stores the lower part of `a`, which the caller guarantees to be symmetric (an entry
    /// above the diagonal blocks is read from its mirror). Holds `a` and its panels at once
    /// while copying; [`from_kernel`](Self::from_kernel) builds the panels directly.
    pub fn new(a: Mat<f64>) -> Self {
        let n = a.nrows().min(a.ncols());
        let mut s = Self::zeroed(n);
        s.panels_mut().into_par_iter().for_each(|(p, panel)| {
            let p0 = p * PANEL;
            for r in 0..PANEL.min(n - p0) {
                let col = a.col(p0 + r);
                for j in p0..n {
                    panel[(j - p0) * PANEL + r] = col[j];
                }
            }
        });
        s
    }

    /// `K(X, X)` for the points `x` (`n × d`), each stored entry evaluated by
    /// [`Kernel::fill_block`] as [`Kernel::matrix`] evaluates it (the same bits), without
    /// ever holding the whole matrix, and half of it evaluated.
    ///
    /// Errors: the kernel's checks of the points (dimension, finiteness, range).
    pub fn from_kernel<K: Kernel + ?Sized>(kernel: &K, x: MatRef<'_, f64>) -> Result<Self> {
        gp_kernels::dense::points_row_major(kernel, x, "the training points X")?;
        let x = x.to_owned();
        let n = x.nrows();
        let mut s = Self::zeroed(n);
        s.panels_mut().into_par_iter().for_each(|(p, panel)| {
            let p0 = p * PANEL;
            let h = PANEL.min(n - p0);
            // K(X[16p..], X[16p..16p+h]) column major, as `Kernel::matrix` fills its tiles.
            let mut block = Mat::<f64>::zeros(n - p0, h);
            kernel.fill_block(x.subrows(p0, n - p0), x.subrows(p0, h), block.as_mut());
            for r in 0..h {
                let col = block.col(r);
                for j in 0..n - p0 {
                    panel[j * PANEL + r] = col[j];
                }
            }
        });
        Ok(s)
    }

    fn zeroed(n: usize) -> Self {
        let panels = n.div_ceil(PANEL);
        let len = if panels == 0 {
            0
        } else {
            Self::offset(n, panels)
        };
        Self {
            n,
            panels: vec![0.0; len],
            scratch: Mutex::default(),
        }
    }

    /// Where panel `p` starts: `Σ_{q<p} 16 (n − 16q)`.
    fn offset(n: usize, p: usize) -> usize {
        PANEL * (p * n - PANEL * (p * p.saturating_sub(1) / 2))
    }

    /// The panels, mutable, with their indices.
    fn panels_mut(&mut self) -> Vec<(usize, &mut [f64])> {
        let n = self.n;
        let mut rest = &mut self.panels[..];
        let mut out = Vec::with_capacity(n.div_ceil(PANEL));
        for p in 0..n.div_ceil(PANEL) {
            let (panel, tail) = rest.split_at_mut(PANEL * (n - p * PANEL));
            out.push((p, panel));
            rest = tail;
        }
        out
    }

    /// Panel `p`: rows `16p .. n` of columns `16p .. 16p + 16`, row major.
    fn panel(&self, p: usize) -> &[f64] {
        let start = Self::offset(self.n, p);
        &self.panels[start..start + PANEL * (self.n - p * PANEL)]
    }

    /// `A[i, j]` as stored (from its mirror above the diagonal blocks). Contract: `i, j < n`.
    fn entry(&self, i: usize, j: usize) -> f64 {
        let (pi, pj) = (i / PANEL, j / PANEL);
        if pi >= pj {
            self.panel(pj)[(i - pj * PANEL) * PANEL + j % PANEL]
        } else {
            self.panel(pi)[(j - pi * PANEL) * PANEL + i % PANEL]
        }
    }

    /// Columns `16q .. 16q + 16` as an `n × 16` row-major block (`K[i, 16q + r]` at
    /// `i·16 + r`), into `out`: the stored panel below the diagonal block, the mirrored
    /// 16 × 16 blocks of the earlier panels above it.
    pub(crate) fn column_panel(&self, q: usize, out: &mut [f64]) {
        let q0 = q * PANEL;
        out[q0 * PANEL..self.n * PANEL].copy_from_slice(self.panel(q));
        for pi in 0..q {
            let src = &self.panel(pi)[(q0 - pi * PANEL) * PANEL..];
            let dst = &mut out[pi * PANEL * PANEL..(pi + 1) * PANEL * PANEL];
            for r in 0..PANEL {
                for c in 0..PANEL.min(self.n - q0) {
                    dst[r * PANEL + c] = src[c * PANEL + r];
                }
            }
        }
    }

    /// Adds `v` to every diagonal entry.
    pub fn add_to_diagonal(&mut self, v: f64) {
        for i in 0..self.n {
            let p = i / PANEL;
            let at = Self::offset(self.n, p) + (i - p * PANEL) * PANEL + i % PANEL;
            self.panels[at] += v;
        }
    }
}

/// The stored columns, for the pivoted-Cholesky preconditioner.
impl ColumnAccess for SymmetricStored {
    fn dim(&self) -> usize {
        self.n
    }

    fn diagonal(&self) -> Col<f64> {
        Col::from_fn(self.n, |i| self.entry(i, i))
    }

    fn column(&self, j: usize, mut out: ColMut<'_, f64>) {
        for i in 0..self.n {
            out[i] = self.entry(i, j);
        }
    }
}

/// `acc[c][r] += Σ_j rows[j, r0 + r] · xc[j, c]` over the given panel rows, each step a fused
/// multiply-add (`mul_add`, correctly rounded in every build, so they give the same bits;
/// the baseline build, for CPUs without FMA, computes it in software).
#[inline(always)]
fn direct_body<const R: usize>(rows: &[f64], r0: usize, xc: &[f64], acc: &mut [[f64; R]; WIDTH]) {
    let mut s = *acc;
    for (a, x) in rows.chunks_exact(PANEL).zip(xc.chunks_exact(WIDTH)) {
        let a = &a[r0..r0 + R];
        for c in 0..WIDTH {
            let xb = x[c];
            for r in 0..R {
                s[c][r] = a[r].mul_add(xb, s[c][r]);
            }
        }
    }
    *acc = s;
}

/// The mirrored contribution of panel rows below the diagonal block:
/// `trans[j, c] += Σ_r rows[j, r] · xp[r, c]` (the sum over `r` in order with `mul_add`,
/// then added), with `xp` the panel's own 16 rows of `X`. `J` rows at a time, so that `2J`
/// independent accumulator chains keep the multiply-add units busy; a row's sums do not
/// depend on `J`.
///
/// `ahead` (the next panel's rows of the same chunk, or nothing) is prefetched into L2 at
/// the pace of the rows: the direct pass of the next panel then finds its rows in cache, and
/// their memory traffic overlaps this pass's arithmetic.
#[inline(always)]
fn mirrored_body<const J: usize>(
    rows: &[f64],
    xp: &[f64],
    trans: &mut [[f64; WIDTH]],
    ahead: &[f64],
) {
    let mut row_groups = rows.chunks_exact(J * PANEL);
    let mut trans_groups = trans.chunks_exact_mut(J);
    let mut ahead_groups = ahead.chunks(J * PANEL);
    for (a, t) in (&mut row_groups).zip(&mut trans_groups) {
        if let Some(next) = ahead_groups.next() {
            gp_linalg::simd::prefetch_l2(next);
        }
        let mut u = [[0.0; WIDTH]; J];
        for r in 0..PANEL {
            let x = &xp[r * WIDTH..(r + 1) * WIDTH];
            for jj in 0..J {
                let ab = a[jj * PANEL + r];
                for c in 0..WIDTH {
                    u[jj][c] = ab.mul_add(x[c], u[jj][c]);
                }
            }
        }
        for jj in 0..J {
            for c in 0..WIDTH {
                t[jj][c] += u[jj][c];
            }
        }
    }
    for (a, t) in row_groups
        .remainder()
        .chunks_exact(PANEL)
        .zip(trans_groups.into_remainder())
    {
        let mut u = [0.0; WIDTH];
        for r in 0..PANEL {
            let ab = a[r];
            for c in 0..WIDTH {
                u[c] = ab.mul_add(xp[r * WIDTH + c], u[c]);
            }
        }
        for c in 0..WIDTH {
            t[c] += u[c];
        }
    }
}

gp_linalg::simd_dispatch! {
    fn direct_kernel<const R: usize>(rows: &[f64], r0: usize, xc: &[f64], acc: &mut [[f64; R]; WIDTH])
        = direct_body, avx512 via direct_kernel_avx512, avx2_fma via direct_kernel_avx2;
}

gp_linalg::simd_dispatch! {
    fn mirrored_kernel<const J: usize>(rows: &[f64], xp: &[f64], trans: &mut [[f64; WIDTH]], ahead: &[f64])
        = mirrored_body, avx512 via mirrored_kernel_avx512, avx2_fma via mirrored_kernel_avx2;
}

/// Adds one chunk's sums of the `R` output rows starting at `r0` into `res` (row major,
/// 12 wide, rows of the panel).
fn add_tile<const R: usize>(acc: &[[f64; R]; WIDTH], r0: usize, res: &mut [[f64; WIDTH]]) {
    for (r, row) in res[r0..r0 + R].iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v += acc[c][r];
        }
    }
}

/// One group of consecutive panels' share of a 12-wide pass: the direct sums of its own
/// rows and the mirrored sums of the rows below its first panel.
#[derive(Debug, Default)]
struct GroupPart {
    /// First output row of the group.
    first_row: usize,
    /// `Σ_{j ≥ 16p} A[j, i] X[j, :]` for the group's rows `i` (panel `p` of `i`).
    direct: Vec<[f64; WIDTH]>,
    /// The group's mirrored contributions to rows `first_row ..`.
    mirrored: Vec<[f64; WIDTH]>,
}

/// Panels `panels` of `s` against one 12-wide pass `xr` of `X` (row major), into `part`
/// (whose buffers are reused).
fn group_part(
    s: &SymmetricStored,
    xr: &[f64],
    panels: std::ops::Range<usize>,
    wide: bool,
    part: &mut GroupPart,
) {
    let n = s.n;
    let first_row = panels.start * PANEL;
    part.first_row = first_row;
    let (direct, mirrored) = (&mut part.direct, &mut part.mirrored);
    direct.clear();
    direct.resize(panels.len() * PANEL, [0.0; WIDTH]);
    mirrored.clear();
    mirrored.resize(n - first_row, [0.0; WIDTH]);
    for j0 in (first_row..n).step_by(CHUNK) {
        let j1 = (j0 + CHUNK).min(n);
        for (q, out) in direct.chunks_exact_mut(PANEL).enumerate() {
            let p = panels.start + q;
            let p0 = p * PANEL;
            if p0 >= j1 {
                break;
            }
            let panel = s.panel(p);
            let xp = &xr[p0 * WIDTH..(p0 + PANEL).min(n) * WIDTH];
            // Rows of the chunk in the diagonal block (direct only) and below it.
            let diag_end = (p0 + PANEL).min(n).max(j0);
            let (d0, d1) = (j0.max(p0), diag_end.min(j1));
            let (b0, b1) = (d1.max(j0), j1);
            let rows = |a: usize, b: usize| &panel[(a - p0) * PANEL..(b - p0) * PANEL];
            let xrows = |a: usize, b: usize| &xr[a * WIDTH..b * WIDTH];
            let trans = &mut mirrored[b0 - first_row..b1 - first_row];
            if wide {
                let mut acc = [[0.0; PANEL]; WIDTH];
                direct_kernel::<PANEL>(rows(d0, b1), 0, xrows(d0, b1), &mut acc);
                add_tile(&acc, 0, out);
            } else {
                for r0 in (0..PANEL).step_by(ROWS_NARROW) {
                    let mut acc = [[0.0; ROWS_NARROW]; WIDTH];
                    direct_kernel::<ROWS_NARROW>(rows(d0, b1), r0, xrows(d0, b1), &mut acc);
                    add_tile(&acc, r0, out);
                }
            }
            // The chunk's rows of the panel are in cache now: the mirrored pass.
            if xp.len() == PANEL * WIDTH {
                // The next panel's direct pass reads its rows `b0 .. b1` of this chunk.
                let ahead = if p + 1 < panels.end {
                    let next = s.panel(p + 1);
                    let start = b0.max(p0 + PANEL);
                    &next[(start - p0 - PANEL) * PANEL..(b1 - p0 - PANEL) * PANEL]
                } else {
                    &[][..]
                };
                if wide {
                    mirrored_kernel::<4>(rows(b0, b1), xp, trans, ahead);
                } else {
                    mirrored_kernel::<2>(rows(b0, b1), xp, trans, ahead);
                }
            }
        }
    }
}

/// Splits `0 .. panels` into at most [`GROUPS`] consecutive ranges of about equal stored
/// area (panel `p` holds `n − 16p` rows). The split depends on `n` only, never on the
/// thread count, so the sums (and the bits) do not either.
fn panel_groups(n: usize, panels: usize) -> Vec<std::ops::Range<usize>> {
    let area = |p: usize| (n - p * PANEL) as f64;
    let total: f64 = (0..panels).map(area).sum();
    let mut groups = Vec::new();
    let (mut start, mut acc) = (0, 0.0);
    for p in 0..panels {
        acc += area(p);
        if acc >= total * (groups.len() + 1) as f64 / GROUPS as f64 || p + 1 == panels {
            groups.push(start..p + 1);
            start = p + 1;
        }
    }
    groups
}

/// `out = A X` for the stored symmetric `A` and `X` (`n × m`). Per output entry: the direct
/// sum over the rows of its own panel (in chunks of [`CHUNK`] rows, each summed in order and
/// added in order), plus each group's mirrored sum, in order of the group.
fn symmetric_thin_product(s: &SymmetricStored, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
    let n = s.n;
    let m = x.ncols();
    let groups = panel_groups(n, n.div_ceil(PANEL));
    // The fused pass where the AVX-512 build runs (same sums, same bits).
    let wide = gp_linalg::simd::simd_level() >= gp_linalg::simd::SimdLevel::Avx512;
    let mut guard = s.scratch.try_lock().ok();
    let mut local = Scratch::default();
    let Scratch { xr, parts } = match guard.as_deref_mut() {
        Some(kept) => kept,
        None => &mut local,
    };
    parts.resize_with(groups.len(), GroupPart::default);
    for c0 in (0..m).step_by(WIDTH) {
        let w = WIDTH.min(m - c0);
        // X[:, c0..c0+w] row major, padded with zeros to WIDTH.
        xr.clear();
        xr.resize(n * WIDTH, 0.0);
        for c in 0..w {
            let col = x.col(c0 + c);
            for j in 0..n {
                xr[j * WIDTH + c] = col[j];
            }
        }
        groups
            .par_iter()
            .zip(parts.par_iter_mut())
            .for_each(|(g, part)| group_part(s, xr, g.clone(), wide, part));
        let parts = &parts[..];
        for part in parts {
            for (q, r) in part.direct.iter().take(n - part.first_row).enumerate() {
                let i = part.first_row + q;
                let mut v = *r;
                // Mirrored sums of this group's and every earlier group's panels, in order.
                for earlier in parts.iter().take_while(|e| e.first_row <= part.first_row) {
                    let t = &earlier.mirrored[i - earlier.first_row];
                    for c in 0..WIDTH {
                        v[c] += t[c];
                    }
                }
                for c in 0..w {
                    out[(i, c0 + c)] = v[c];
                }
            }
        }
    }
}

impl LinearOperator for SymmetricStored {
    fn nrows(&self) -> usize {
        self.n
    }

    fn ncols(&self) -> usize {
        self.n
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        symmetric_thin_product(self, x.as_mat(), out.as_mat_mut());
    }

    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        symmetric_thin_product(self, x, out);
    }

    fn diagonal(&self) -> Option<Col<f64>> {
        Some(ColumnAccess::diagonal(self))
    }

    fn to_dense(&self) -> Mat<f64> {
        Mat::from_fn(self.n, self.n, |i, j| self.entry(i, j))
    }
}
