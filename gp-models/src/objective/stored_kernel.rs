//! A stored symmetric matrix as an operator whose products with thin blocks (the `t + 1`
//! right-hand sides of a CG training step) stream the matrix once, at the arithmetic rate of
//! the CPU's vector units.
//!
//! **Layout.** The matrix is stored in panels of [`PANEL`] = 16 columns, each panel row
//! major: panel `p` holds `A[j, 16p + r]` at `j·16 + r` (the last panel padded with zero
//! columns). Since `A` is symmetric, panel `p` read row by row is the block of output rows
//! `16p … 16p + 15`: `(A X)[16p + r, c] = Σ_j panel_p[j, r] · X[j, c]`. The product kernel
//! keeps a 16 × 12 tile of the output in registers (24 of the 32 AVX-512 registers), reads
//! 16 contiguous entries of the panel and broadcasts 12 entries of `X` (row major) per `j`:
//! every lane of every multiply-add is useful and the panel is one contiguous stream.
//!
//! The column-major layout it replaces read eight columns of `A` against a 12-wide row of
//! `X` (one 8-lane and one 4-lane register per column: three lanes in four useful) and ran at
//! about a third of the multiply-add peak: 67.8 ms per 11-column product at `n = 9600` on
//! one thread of the 2026-11-27 host (an AMD EPYC with 512-bit units), where faer's GEMM took
//! 47.6 ms (`cargo run --release -p gp-bench --example rtgps_step`).
//!
//! **Same bits as before.** Every output entry is still `Σ_j A[j, i] X[j, c]` summed in
//! order of `j` with `mul_add`, in chunks of [`CHUNK`] rows added in order, whatever the
//! build (AVX-512 takes the whole panel per pass, AVX2 and the baseline four rows), and the
//! kernel matrix is evaluated entry by entry exactly as [`Kernel::matrix`] evaluates it.

use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_kernels::Kernel;
use gp_linalg::LinearOperator;
use gp_solvers::ColumnAccess;
use rayon::prelude::*;

use crate::error::Result;

/// Columns of `A` per panel (rows of the output per kernel tile).
pub(crate) const PANEL: usize = 16;
/// Columns of `X` handled per pass.
const WIDTH: usize = 12;
/// Rows of `X` per cache chunk (the partial sums of a chunk are added in order).
const CHUNK: usize = 1024;
/// Panels per parallel task.
const TASK_PANELS: usize = 16;
/// Output rows per kernel call in the AVX2 and baseline builds: 4 rows × 12 columns of
/// accumulators fill 12 of the 16 vector registers.
const ROWS_NARROW: usize = 4;

/// A stored symmetric `n × n` matrix with fast thin products (see the module docs).
#[derive(Debug, Clone)]
pub struct SymmetricStored {
    n: usize,
    /// Panel `p` at `[p·16n, (p + 1)·16n)`, entry `(j, r)` at `j·16 + r`.
    panels: Vec<f64>,
}

impl SymmetricStored {
    /// Stores `a`, which the caller guarantees to be symmetric (the stored panels are the
    /// columns of `a`, so the product is `Aᵀ X`). Holds `a` and its panels at once while
    /// copying; [`from_kernel`](Self::from_kernel) builds the panels directly.
    pub fn new(a: Mat<f64>) -> Self {
        let n = a.nrows().min(a.ncols());
        let mut panels = vec![0.0; n.div_ceil(PANEL) * PANEL * n];
        panels
            .par_chunks_mut(PANEL * n.max(1))
            .enumerate()
            .for_each(|(p, panel)| {
                for r in 0..PANEL.min(n - p * PANEL) {
                    let col = a.col(p * PANEL + r);
                    for j in 0..n {
                        panel[j * PANEL + r] = col[j];
                    }
                }
            });
        Self { n, panels }
    }

    /// `K(X, X)` for the points `x` (`n × d`), evaluated by [`Kernel::fill_block`] as
    /// [`Kernel::matrix`] evaluates it (the same bits), without ever holding it column major.
    ///
    /// Errors: the kernel's checks of the points (dimension, finiteness, range).
    pub fn from_kernel<K: Kernel + ?Sized>(kernel: &K, x: MatRef<'_, f64>) -> Result<Self> {
        gp_kernels::dense::points_row_major(kernel, x, "the training points X")?;
        let x = x.to_owned();
        let n = x.nrows();
        let mut panels = vec![0.0; n.div_ceil(PANEL) * PANEL * n];
        panels
            .par_chunks_mut(PANEL * n.max(1))
            .enumerate()
            .for_each(|(p, panel)| {
                let h = PANEL.min(n - p * PANEL);
                // K(X, X[16p..16p+h]) column major, as `Kernel::matrix` fills its tiles.
                let mut block = Mat::<f64>::zeros(n, h);
                kernel.fill_block(x.as_ref(), x.subrows(p * PANEL, h), block.as_mut());
                for r in 0..h {
                    let col = block.col(r);
                    for j in 0..n {
                        panel[j * PANEL + r] = col[j];
                    }
                }
            });
        Ok(Self { n, panels })
    }

    /// Panel `p` (`n × 16`, row major).
    pub(crate) fn panel(&self, p: usize) -> &[f64] {
        &self.panels[p * PANEL * self.n..(p + 1) * PANEL * self.n]
    }

    /// `A[i, j]` as stored (column `j`, row `i`). Contract: `i, j < n`.
    fn entry(&self, i: usize, j: usize) -> f64 {
        self.panel(j / PANEL)[i * PANEL + j % PANEL]
    }

    /// Adds `v` to every diagonal entry.
    pub fn add_to_diagonal(&mut self, v: f64) {
        for i in 0..self.n {
            self.panels[(i / PANEL) * PANEL * self.n + i * PANEL + i % PANEL] += v;
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

/// `acc[c][r] += Σ_j panel[j, r0 + r] · xc[j, c]` over the rows `j` of one chunk, each step a
/// fused multiply-add (`mul_add`, correctly rounded in every build, so they give the same
/// bits; the baseline build, for CPUs without FMA, computes it in software).
#[inline(always)]
fn rows_body<const R: usize>(panel: &[f64], r0: usize, xc: &[f64], acc: &mut [[f64; R]; WIDTH]) {
    let mut s = *acc;
    for (a, x) in panel.chunks_exact(PANEL).zip(xc.chunks_exact(WIDTH)) {
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

gp_linalg::simd_dispatch! {
    fn rows_kernel<const R: usize>(panel: &[f64], r0: usize, xc: &[f64], acc: &mut [[f64; R]; WIDTH])
        = rows_body, avx512 via rows_kernel_avx512, avx2_fma via rows_kernel_avx2;
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

/// The output rows of panels `p0 .. p0 + count` for one 12-wide pass `xr` of `X` (row
/// major), 16 rows per panel.
fn task_rows(
    s: &SymmetricStored,
    xr: &[f64],
    p0: usize,
    count: usize,
    wide: bool,
) -> Vec<[f64; WIDTH]> {
    let n = s.n;
    let mut res = vec![[0.0; WIDTH]; count * PANEL];
    for j0 in (0..n).step_by(CHUNK) {
        let jl = CHUNK.min(n - j0);
        let xc = &xr[j0 * WIDTH..(j0 + jl) * WIDTH];
        for (q, out) in res.chunks_exact_mut(PANEL).enumerate() {
            let panel = &s.panel(p0 + q)[j0 * PANEL..(j0 + jl) * PANEL];
            if wide {
                let mut acc = [[0.0; PANEL]; WIDTH];
                rows_kernel::<PANEL>(panel, 0, xc, &mut acc);
                add_tile(&acc, 0, out);
            } else {
                for r0 in (0..PANEL).step_by(ROWS_NARROW) {
                    let mut acc = [[0.0; ROWS_NARROW]; WIDTH];
                    rows_kernel::<ROWS_NARROW>(panel, r0, xc, &mut acc);
                    add_tile(&acc, r0, out);
                }
            }
        }
    }
    res
}

/// `out = A X` for the stored symmetric `A` and `X` (`n × m`).
fn symmetric_thin_product(s: &SymmetricStored, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
    let n = s.n;
    let m = x.ncols();
    let panels = n.div_ceil(PANEL);
    // The whole panel per kernel call where the AVX-512 build runs (same sums, same bits).
    let wide = gp_linalg::simd::simd_level() >= gp_linalg::simd::SimdLevel::Avx512;
    for c0 in (0..m).step_by(WIDTH) {
        let w = WIDTH.min(m - c0);
        // X[:, c0..c0+w] row major, padded with zeros to WIDTH.
        let mut xr = vec![0.0; n * WIDTH];
        for c in 0..w {
            let col = x.col(c0 + c);
            for j in 0..n {
                xr[j * WIDTH + c] = col[j];
            }
        }
        let rows: Vec<Vec<[f64; WIDTH]>> = (0..panels.div_ceil(TASK_PANELS))
            .into_par_iter()
            .map(|t| {
                let p0 = t * TASK_PANELS;
                task_rows(s, &xr, p0, TASK_PANELS.min(panels - p0), wide)
            })
            .collect();
        for (t, block) in rows.iter().enumerate() {
            let i0 = t * TASK_PANELS * PANEL;
            for (q, r) in block.iter().take(n - i0).enumerate() {
                for c in 0..w {
                    out[(i0 + q, c0 + c)] = r[c];
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
