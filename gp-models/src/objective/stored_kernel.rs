//! A stored symmetric matrix as an operator whose products with thin blocks (the `t + 1`
//! right-hand sides of a CG training step) stream the matrix once.
//!
//! faer's GEMM packs the large left factor before multiplying it with a block of 11
//! columns: at `n = 9600` a product took 190 ms on one thread and 500 ms on two (measured
//! with faer 0.24 on the project's machine), against the ~37 ms it takes to read the
//! 737 MB matrix once. Here `A` symmetric gives `(A X)[i, :] = A[:, i]ᵀ X`: columns of `A`
//! are read contiguously, three at a time (eight in the AVX-512 build), against row chunks
//! of `X` (stored row major, padded to a multiple of 4 columns) that stay in cache, in
//! parallel over column blocks.
//!
//! On a CPU with AVX-512 (the 2026-11-27 host, an AMD EPYC with 512-bit units) faer's GEMM
//! runs its AVX-512 kernels and the picture changes: the same product took 26 ms with faer
//! and 37.6 ms here with the AVX2 build, 31.5 ms with the AVX-512 build
//! (`cargo run --release -p gp-bench --example rtgps_step -- 9600 26 2 3.0 1e-3`, quiet).

use faer::{Col, ColMut, ColRef, Mat, MatMut, MatRef};
use gp_linalg::LinearOperator;
use rayon::prelude::*;

/// Columns of `X` handled per pass (a multiple of the vector width 4).
const WIDTH: usize = 12;
/// Rows of `X` per cache chunk.
const CHUNK: usize = 1024;
/// Columns of `A` (rows of the output) per parallel task.
const TASK: usize = 256;

/// A stored symmetric `n × n` matrix with cache-friendly thin products.
#[derive(Debug, Clone)]
pub struct SymmetricStored {
    a: Mat<f64>,
}

impl SymmetricStored {
    /// Wraps `a`, which the caller guarantees to be symmetric (only `A[:, i]ᵀ X` is used,
    /// i.e. the product is `Aᵀ X`).
    pub fn new(a: Mat<f64>) -> Self {
        Self { a }
    }

    /// The matrix.
    pub fn matrix(&self) -> MatRef<'_, f64> {
        self.a.as_ref()
    }
}

/// Columns of `A` per kernel call in the AVX2 and baseline builds. Three, not four: four
/// columns' 48 accumulators take 12 of the 16 vector registers and, with the three loads of
/// `X` and the broadcast, left the compiler one short, so one accumulator went through the
/// stack on every step (a store-to-load chain the profile showed as 60% of the kernel's
/// time). Three columns need 9 + 3 + 1 registers and keep every multiply-add unit busy all
/// the same.
const COLUMNS: usize = 3;

/// Columns of `A` per kernel call in the AVX-512 build: 32 vector registers hold eight
/// columns' accumulators (a 12-wide row is one 8-lane and one 4-lane register: 16 in all)
/// besides the two loads of `X` and the broadcast.
const COLUMNS_AVX512: usize = 8;

/// `acc[k][c] += Σ_{j ∈ chunk} a_k[j] · xr[j, c]` for `C` columns `a_k` of `A` and one
/// 12-wide pass of the row-major `xr`, each step a fused multiply-add (`mul_add`, correctly
/// rounded in every build, so they give the same bits): the AVX2+FMA and AVX-512 builds do
/// one instruction where a multiply and an add took two. (The baseline build, for CPUs
/// without FMA, computes `mul_add` in software: correct, slower.) Every entry is summed in the
/// order of `j` whatever the number of columns per call.
#[inline(always)]
fn columns_body<const C: usize>(a: [&[f64]; C], xr: &[f64], acc: &mut [[f64; WIDTH]; C]) {
    let mut s = *acc;
    for (j, x) in xr.chunks_exact(WIDTH).enumerate() {
        for k in 0..C {
            let v = a[k][j];
            for c in 0..WIDTH {
                s[k][c] = v.mul_add(x[c], s[k][c]);
            }
        }
    }
    *acc = s;
}

gp_linalg::simd_dispatch! {
    fn columns_kernel<const C: usize>(a: [&[f64]; C], xr: &[f64], acc: &mut [[f64; WIDTH]; C])
        = columns_body, avx512 via columns_kernel_avx512, avx2_fma via columns_kernel_avx2;
}

/// The rows `i0 .. i0 + len` of `A X` for one 12-wide pass `xr` of `X` (row major), `C`
/// columns of `A` per kernel call.
fn task_rows<const C: usize>(
    a: MatRef<'_, f64>,
    xr: &[f64],
    i0: usize,
    len: usize,
) -> Vec<[f64; WIDTH]> {
    let n = a.nrows();
    let mut res = vec![[0.0; WIDTH]; len];
    let col = |i: usize| -> &[f64] {
        a.col(i)
            .try_as_col_major()
            .map_or(&[][..], |c| c.as_slice())
    };
    for j0 in (0..n).step_by(CHUNK) {
        let jl = CHUNK.min(n - j0);
        let xc = &xr[j0 * WIDTH..(j0 + jl) * WIDTH];
        let mut k = 0;
        while k < len {
            let idx = |q: usize| (i0 + (k + q).min(len - 1)).min(n - 1);
            let cols: [&[f64]; C] = std::array::from_fn(|q| &col(idx(q))[j0..j0 + jl]);
            let mut acc = [[0.0; WIDTH]; C];
            columns_kernel::<C>(cols, xc, &mut acc);
            for q in 0..C.min(len - k) {
                for c in 0..WIDTH {
                    res[k + q][c] += acc[q][c];
                }
            }
            k += C;
        }
    }
    res
}

/// `out = A X` for symmetric `A` (`n × n`, column major) and `X` (`n × m`).
fn symmetric_thin_product(a: MatRef<'_, f64>, x: MatRef<'_, f64>, mut out: MatMut<'_, f64>) {
    let n = a.nrows();
    let m = x.ncols();
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
        // Eight columns of `A` per call where the AVX-512 build runs (same sums, same bits).
        let wide = gp_linalg::simd::simd_level() >= gp_linalg::simd::SimdLevel::Avx512;
        let rows: Vec<Vec<[f64; WIDTH]>> = (0..n.div_ceil(TASK))
            .into_par_iter()
            .map(|t| {
                let i0 = t * TASK;
                let len = TASK.min(n - i0);
                if wide {
                    task_rows::<COLUMNS_AVX512>(a, &xr, i0, len)
                } else {
                    task_rows::<COLUMNS>(a, &xr, i0, len)
                }
            })
            .collect();
        for (t, block) in rows.iter().enumerate() {
            for (q, r) in block.iter().enumerate() {
                for c in 0..w {
                    out[(t * TASK + q, c0 + c)] = r[c];
                }
            }
        }
    }
}

impl LinearOperator for SymmetricStored {
    fn nrows(&self) -> usize {
        self.a.nrows()
    }

    fn ncols(&self) -> usize {
        self.a.ncols()
    }

    fn matvec(&self, x: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        symmetric_thin_product(self.a.as_ref(), x.as_mat(), out.as_mat_mut());
    }

    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        symmetric_thin_product(self.a.as_ref(), x, out);
    }

    fn diagonal(&self) -> Option<Col<f64>> {
        Some(Col::from_fn(self.a.nrows(), |i| self.a[(i, i)]))
    }

    fn to_dense(&self) -> Mat<f64> {
        self.a.clone()
    }
}
