//! The log marginal likelihood of an exact GP and its gradient: the hot path of training.
//!
//! With `A = K + σ²I = L Lᵀ` and `α = A⁻¹ y`,
//!
//! ```text
//! log p(y) = −½ yᵀα − Σᵢ log Lᵢᵢ − (n/2) log 2π
//! ∂ log p(y) / ∂θ = ½ tr((ααᵀ − A⁻¹) ∂A/∂θ) = ½ Σᵢⱼ Wᵢⱼ (∂A/∂θ)ᵢⱼ,   W = ααᵀ − A⁻¹.
//! ```
//!
//! Cost of one value and gradient: the kernel matrix (lower triangle only, `n²/2`
//! evaluations, [`Kernel::fill_block`] over column tiles), one Cholesky factorization
//! (`n³/3` flops), the inverse from the factor (`2n³/3`: triangular inverse plus the
//! triangular product `L⁻ᵀL⁻¹`, faer's `llt::inverse`), and one fused pass over the lower
//! triangle that evaluates the kernel derivatives and accumulates all `p` traces, a column
//! at a time ([`Kernel::add_weighted_grads`]), so no derivative matrix is ever stored
//! (`O(n² p)` flops, `O(n d + p)` extra memory). Both kernel passes are vectorized for the
//! stationary ARD kernels. At `n = 9600`, `d = 26` (RTGPS's pol, 2-core Zen 3) they took
//! one value and gradient from 31.4–32.0 s with per-entry [`Kernel::eval`] and
//! [`Kernel::eval_with_grad`] calls to 25.4–25.9 s; faer's factorization and inverse
//! (about 22 s there) are the rest (`rtgps_step 9600 26 0 1.0 0.01 --cholesky`).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::inverse::{inverse, inverse_scratch};
use faer::{Col, ColRef, Mat, MatMut, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{parallelism_for, Cholesky, JitterLadder};
use rayon::prelude::*;

use crate::error::Result;

/// Columns per rayon task when filling the kernel matrix.
const COLUMN_TILE: usize = 16;

/// Columns per rayon task in the gradient pass (a fixed partition: deterministic sums).
const GRAD_COLUMN_BLOCK: usize = 16;

/// `½ log 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Buffers reused across evaluations of the log marginal likelihood (the kernel matrix,
/// the Cholesky factor, the inverse and faer's scratch space): at `n = 4000` each is
/// 128 MB, and allocating them afresh at every evaluation costs page faults comparable to
/// the kernel passes. At `n = 9600` (737 MB each) the three fresh matrices of one
/// evaluation took 650K page faults and about 1.4 s of system time on a 2-vCPU VM.
pub(crate) struct Workspace {
    gram: Vec<f64>,
    /// The storage of the last factor, handed back by [`Workspace::recycle`].
    factor: Mat<f64>,
    kinv: Mat<f64>,
    scratch: Option<(usize, MemBuffer)>,
}

impl Workspace {
    /// Empty buffers; they grow on first use.
    pub fn new() -> Self {
        Self {
            gram: Vec::new(),
            factor: Mat::new(),
            kinv: Mat::new(),
            scratch: None,
        }
    }

    /// Whether no evaluation has allocated the buffers yet.
    pub fn is_empty(&self) -> bool {
        self.gram.is_empty()
    }

    /// Keeps the storage of `f`'s factor for the next [`factorize`] (which overwrites it).
    fn recycle(&mut self, f: Factorization) {
        self.factor = f.chol.into_factor();
    }

    /// The exact terms at `kernel` and `noise_variance` for the row-major points `xs`
    /// (`d` columns) and centred targets `yc`, in these buffers: fill, factor (with
    /// `ladder`), inverse and gradient pass, the factor's storage kept for the next call.
    /// The first call checks that the three `n × n` buffers fit under `memory_limit`.
    pub fn evaluate<K: Kernel>(
        &mut self,
        kernel: &K,
        points: (&[f64], usize),
        yc: ColRef<'_, f64>,
        noise_variance: f64,
        ladder: &JitterLadder,
        memory_limit: Option<u64>,
    ) -> Result<ExactTerms> {
        let (xs, d) = points;
        if self.is_empty() {
            crate::exact::memory::check_dense_memory(
                yc.nrows(),
                3,
                "the exact objective: the Gram matrix, its Cholesky factor and (K + σ²I)⁻¹ for \
                 the gradient",
                memory_limit,
            )?;
        }
        let f = factorize(self, kernel, xs, d, yc, noise_variance, ladder)?;
        let lml = log_marginal_likelihood(&f, yc);
        let gradient = log_marginal_likelihood_grad(self, kernel, xs, d, &f, noise_variance);
        let data_fit = yc.transpose() * f.alpha.as_ref();
        let log_det = f.chol.log_det();
        self.recycle(f);
        Ok(ExactTerms {
            lml,
            data_fit,
            log_det,
            gradient,
        })
    }
}

/// What one exact evaluation returns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExactTerms {
    /// `log p(y | X, θ)`.
    pub lml: f64,
    /// `yᵀ (K + σ²I)⁻¹ y` (centred targets).
    pub data_fit: f64,
    /// `log det(K + σ²I)` (with the jitter the factorization needed).
    pub log_det: f64,
    /// The gradient with respect to the kernel's log hyperparameters, then `log σ²`.
    pub gradient: Vec<f64>,
}

/// Fills the lower triangle of `K(X, X) + σ²I` into `buf` (column major, `n × n`; the
/// strict upper triangle is left as it was and never read); `xs` holds the points row
/// major (`n × d`).
fn fill_gram_plus_noise_lower<K: Kernel>(
    kernel: &K,
    xs: &[f64],
    d: usize,
    noise_variance: f64,
    buf: &mut Vec<f64>,
) {
    let n = xs.len() / d.max(1);
    buf.resize(n * n, 0.0);
    if n == 0 {
        return;
    }
    // Column major, the layout the kernels' vectorized block fills read.
    let x = Mat::from_fn(n, d, |i, k| xs[i * d + k]);
    buf.par_chunks_mut(n * COLUMN_TILE)
        .enumerate()
        .for_each(|(t, tile)| {
            let j0 = t * COLUMN_TILE;
            let cols = tile.len() / n;
            // Rows j0.. of the tile's columns: the lower triangle plus the few entries
            // above the diagonal inside the tile (unspecified, never read).
            let out = MatMut::from_column_major_slice_mut(tile, n, cols);
            kernel.fill_block(
                x.subrows(j0, n - j0),
                x.subrows(j0, cols),
                out.subrows_mut(j0, n - j0),
            );
            for (jj, col) in tile.chunks_exact_mut(n).enumerate() {
                col[j0 + jj] += noise_variance;
            }
        });
}

/// The factor of `K + σ²I` and `α = (K + σ²I)⁻¹ y`.
#[derive(Debug, Clone)]
pub(crate) struct Factorization {
    /// Cholesky factor of `K + σ²I` (plus the jitter the ladder needed).
    pub chol: Cholesky,
    /// `(K + σ²I)⁻¹ y` for the centred targets.
    pub alpha: Col<f64>,
}

/// Factors `K + σ²I` for row-major points `xs` and solves for the centred targets `yc`.
pub(crate) fn factorize<K: Kernel>(
    ws: &mut Workspace,
    kernel: &K,
    xs: &[f64],
    d: usize,
    yc: ColRef<'_, f64>,
    noise_variance: f64,
    ladder: &JitterLadder,
) -> Result<Factorization> {
    let n = yc.nrows();
    fill_gram_plus_noise_lower(kernel, xs, d, noise_variance, &mut ws.gram);
    let chol = Cholesky::with_jitter_reusing(
        MatRef::from_column_major_slice(&ws.gram, n, n),
        ladder,
        std::mem::replace(&mut ws.factor, Mat::new()),
    )?;
    let alpha = chol.solve_col(yc)?;
    Ok(Factorization { chol, alpha })
}

/// `log p(y) = −½ yᵀα − ½ log det(K + σ²I) − (n/2) log 2π`.
pub(crate) fn log_marginal_likelihood(f: &Factorization, yc: ColRef<'_, f64>) -> f64 {
    let n = yc.nrows();
    let fit: f64 = (0..n).map(|i| yc[i] * f.alpha[i]).sum();
    -0.5 * fit - 0.5 * f.chol.log_det() - n as f64 * HALF_LN_2PI
}

/// Writes the lower triangle of `(L Lᵀ)⁻¹` into the workspace (strict upper triangle
/// unspecified).
fn inverse_lower(ws: &mut Workspace, chol: &Cholesky) {
    let n = chol.dim();
    let par = parallelism_for((n as f64).powi(3));
    if ws.kinv.nrows() != n || ws.kinv.ncols() != n {
        ws.kinv = Mat::zeros(n, n);
    }
    let scratch = match &mut ws.scratch {
        Some((m, buf)) if *m == n => buf,
        other => {
            &mut other
                .insert((n, MemBuffer::new(inverse_scratch::<f64>(n, par))))
                .1
        }
    };
    inverse(ws.kinv.as_mut(), chol.factor(), par, MemStack::new(scratch));
}

/// The gradient of `log p(y)` with respect to the kernel's log hyperparameters followed by
/// `log σ²`, by one fused pass over the lower triangle of `W = ααᵀ − (K + σ²I)⁻¹`.
pub(crate) fn log_marginal_likelihood_grad<K: Kernel>(
    ws: &mut Workspace,
    kernel: &K,
    xs: &[f64],
    d: usize,
    f: &Factorization,
    noise_variance: f64,
) -> Vec<f64> {
    let n = f.alpha.nrows();
    let p = kernel.n_params();
    inverse_lower(ws, &f.chol);
    let kinv = &ws.kinv;
    // Work with `c W` and `∂K/c` for the power of two `c` nearest the largest diagonal entry
    // of K + σ²I: with tiny variances (1e-300) the entries of ααᵀ (~1e600) overflow although
    // the gradient itself is finite. A power-of-two scaling is exact, so for ordinary scales
    // every product below rounds exactly as the unscaled one (same bits).
    let c = power_of_two_scale(kernel, xs, d, noise_variance);
    // 1/c is exact (a power of two), so `g · (1/c)` rounds as `g / c` without a division
    // in the O(n² p) loop.
    let inv_c = 1.0 / c;
    let alpha: Vec<f64> = (0..n).map(|i| f.alpha[i]).collect();
    let alpha_c: Vec<f64> = alpha.iter().map(|a| c * a).collect();
    // The points column major, the layout the kernels' vectorized gradient sums read.
    let x = Mat::from_fn(n, d, |i, k| xs[i * d + k]);
    // Per column j: Σ_{i ≥ j} c_ij Wᵢⱼ ∂Kᵢⱼ/∂θ (c = 1 on the diagonal, 2 below it) and Wⱼⱼ,
    // summed over fixed blocks of columns in parallel, then over blocks in order, so the
    // result does not depend on how rayon schedules the work (reproducible training).
    let n_blocks = n.div_ceil(GRAD_COLUMN_BLOCK);
    let partials: Vec<(Vec<f64>, f64)> = (0..n_blocks)
        .into_par_iter()
        .map(|b| {
            let mut acc = vec![0.0; p];
            let mut g = vec![0.0; p];
            let mut weights = vec![0.0; n];
            let mut trace_w = 0.0;
            for j in b * GRAD_COLUMN_BLOCK..((b + 1) * GRAD_COLUMN_BLOCK).min(n) {
                let xj = &xs[j * d..(j + 1) * d];
                let aj = alpha[j];
                let col = kinv.col_as_slice(j);
                let wjj = alpha_c[j] * aj - c * col[j];
                trace_w += wjj;
                kernel.eval_with_grad(xj, xj, &mut g);
                for (a, gq) in acc.iter_mut().zip(&g) {
                    *a += wjj * (gq * inv_c);
                }
                let below = &mut weights[j + 1..];
                for ((w, &ac), &ci) in below.iter_mut().zip(&alpha_c[j + 1..]).zip(&col[j + 1..]) {
                    *w = 2.0 * (ac * aj - c * ci);
                }
                kernel.add_weighted_grads(x.as_ref(), j, j + 1, below, inv_c, &mut acc);
            }
            (acc, trace_w)
        })
        .collect();
    let mut sums = vec![0.0; p];
    let mut trace_w = 0.0;
    for (acc, t) in &partials {
        for (s, a) in sums.iter_mut().zip(acc) {
            *s += a;
        }
        trace_w += t;
    }
    for s in &mut sums {
        *s *= 0.5;
    }
    // ∂(σ²I)/∂ log σ² = σ² I.
    sums.push(0.5 * (noise_variance * inv_c) * trace_w);
    sums
}

/// The power of two nearest the largest diagonal entry of `K + σ²I` (1 if that is not a
/// positive finite number), the scale the gradient pass works in.
fn power_of_two_scale<K: Kernel>(kernel: &K, xs: &[f64], d: usize, noise_variance: f64) -> f64 {
    let max_diag = xs
        .chunks_exact(d.max(1))
        .map(|x| kernel.eval(x, x))
        .fold(0.0f64, f64::max)
        + noise_variance;
    if !(max_diag.is_finite() && max_diag > 0.0) {
        return 1.0;
    }
    // Exponents of normal numbers only, so that c and 1/c are exact.
    let e = max_diag.log2().round().clamp(-1000.0, 1000.0) as i32;
    2f64.powi(e)
}

/// The negative log marginal likelihood as a function of all log hyperparameters (kernel
/// first, `log σ²` last): the objective of training.
pub(crate) struct NegLmlObjective<K> {
    /// A kernel of the right type; its hyperparameters are overwritten at each evaluation.
    pub kernel: K,
    /// Training points, row major.
    pub xs: Vec<f64>,
    /// Input dimension.
    pub d: usize,
    /// Centred targets.
    pub yc: Col<f64>,
    /// Jitter ladder for the factorization.
    pub ladder: JitterLadder,
    /// The memory limit checked before the first evaluation allocates its buffers.
    pub memory_limit: Option<u64>,
    /// Buffers reused across evaluations.
    pub workspace: Workspace,
}

impl<K: Kernel> NegLmlObjective<K> {
    /// `(−log p(y), −∇ log p(y))` at the log hyperparameters `params`.
    pub fn eval(&mut self, params: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (noise_variance, kernel_params) =
            crate::core::likelihood::split_log_params_with_noise(&self.kernel, params)?;
        self.kernel.set_log_params(kernel_params)?;
        let terms = self.workspace.evaluate(
            &self.kernel,
            (&self.xs, self.d),
            self.yc.as_ref(),
            noise_variance,
            &self.ladder,
            self.memory_limit,
        )?;
        Ok((-terms.lml, terms.gradient.into_iter().map(|g| -g).collect()))
    }
}
