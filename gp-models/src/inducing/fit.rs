//! The factorization of a sparse GP in the numerically stable form of the reference code
//! (`FITC.m`, `DTC.m`), and its negative log evidence. Cost `O(N m²)`.
//!
//! With `K_UU = L_uu L_uuᵀ`, `V = L_uu⁻¹ K_UX` (so `Qᵢᵢ = ‖V_:,i‖²`):
//!
//! ```text
//! λᵢ = (kᵢᵢ − Qᵢᵢ)/σ² + 1   (FITC; λ ≡ 1 for SoR, DTC, VFE)
//! Φ = K_XU ./ √λ,  b = y ./ √λ,  L Lᵀ = σ² K_UU + ΦᵀΦ,  c = L⁻¹ Φᵀb
//! nlZ = ½[(bᵀb − ‖c‖²)/σ² + ln|LLᵀ| − ln|K_UU| + Σ ln λᵢ + (N − m) ln σ² + N ln 2π]
//! ```
//!
//! which is `½ yᵀ(Q + Λ)⁻¹y + ½ ln|Q + Λ| + (N/2) ln 2π` with `Λ = σ² diag(λ)` (Woodbury
//! and the matrix-determinant lemma): the terms are never formed as `N × N` matrices.

use faer::linalg::matmul::matmul;
use faer::reborrow::ReborrowMut;
use faer::{Accum, Col, ColRef, Mat, MatMut, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{parallelism, Cholesky, JitterLadder, LinalgError};

use crate::error::{ModelError, Result};
use crate::inducing::factor::{FactorContext, InducingFactor};
use crate::inducing::options::SparseMethod;

/// `½ ln 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// The negative log evidence of a sparse GP and its parts.
///
/// `objective` is what training minimizes: `nlZ` for SoR, DTC and FITC, `−ELBO =
/// nlZ_DTC + penalty` for VFE. The reference code's plotted VFE curve (a sign error, spec
/// §5 item 6) is [`paper_plotted_vfe`](Self::paper_plotted_vfe).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SparseEvidence {
    /// The approximation.
    pub method: SparseMethod,
    /// The training objective: `nlz` plus, for VFE only, `trace_penalty`.
    pub objective: f64,
    /// `−ln N(y | 0, Q + Λ)`: with `Λ = σ²I` (nlZ_DTC) for SoR, DTC and VFE, with FITC's
    /// `Λ = diag(K − Q) + σ²I` for FITC.
    pub nlz: f64,
    /// `yᵀ(Q + Λ)⁻¹y`.
    pub data_fit: f64,
    /// `ln|Q + Λ|`.
    pub log_det: f64,
    /// VFE's trace term `tr(K − Q)/(2σ²)`, clipped at 0 against round-off (computed for
    /// every method; it enters only VFE's objective).
    pub trace_penalty: f64,
}

impl SparseEvidence {
    /// The VFE curve the paper plots, `nlZ_DTC − trace_penalty` (the reference code's sign
    /// error); the textbook `−ELBO` is [`objective`](Self::objective).
    pub fn paper_plotted_vfe(&self) -> f64 {
        self.nlz - self.trace_penalty
    }
}

/// The factors of a fitted sparse GP and what predictions and gradients reuse.
#[derive(Debug, Clone)]
pub(crate) struct SparseFactors {
    /// `K_UU (+ jitter) = L_uu L_uuᵀ`.
    pub luu: Cholesky,
    /// `σ² K_UU + ΦᵀΦ (+ jitter) = L Lᵀ`.
    pub system: Cholesky,
    /// `K_UX` (`m × N`).
    pub kux: Mat<f64>,
    /// `V = L_uu⁻¹ K_UX` (`m × N`).
    pub v: Mat<f64>,
    /// FITC's `λ` (all ones for the other methods).
    pub lambda: Col<f64>,
    /// `β = (L Lᵀ)⁻¹ Φᵀb`: the mean is `k_{*U} β`.
    pub beta: Col<f64>,
    /// Whether the raw trace penalty was positive (its clipped gradient is zero otherwise).
    pub penalty_active: bool,
    /// The evidence.
    pub evidence: SparseEvidence,
}

/// Factors a Cholesky with the ladder, naming the factor on failure.
pub(crate) fn factor_named(
    a: MatRef<'_, f64>,
    ladder: &JitterLadder,
    factor: InducingFactor,
    ctx: FactorContext,
) -> Result<Cholesky> {
    Cholesky::with_jitter(a, ladder).map_err(|err| match err {
        LinalgError::NotPositiveDefinite { largest_jitter, .. } => ModelError::InducingCholesky {
            method: ctx.method,
            factor,
            m: ctx.m,
            largest_jitter,
        },
        other => ModelError::Linalg(other),
    })
}

/// Fits: the factors and the evidence at the kernel's current hyperparameters.
#[allow(clippy::too_many_arguments)]
pub(crate) fn factorize<K: Kernel>(
    kernel: &K,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    u: MatRef<'_, f64>,
    noise_variance: f64,
    method: SparseMethod,
    ladder: &JitterLadder,
) -> Result<SparseFactors> {
    let (n, m) = (x.nrows(), u.nrows());
    let ctx = FactorContext { method, m };
    let mut kuu = kernel.matrix(u, u)?;
    let luu = factor_named(kuu.as_ref(), ladder, InducingFactor::Kuu, ctx)?;
    // The model is defined with the jittered K_UU throughout (Q, the system, ln|K_UU|),
    // so that the evidence is that of one consistent Gaussian.
    for a in 0..m {
        kuu[(a, a)] += luu.jitter();
    }
    let kux = kernel.matrix(u, x)?;
    let v = luu.solve_lower(kux.as_ref())?;
    let diag_k = kernel.diag(x)?;
    let q_diag: Vec<f64> = (0..n)
        .map(|i| v.col(i).iter().map(|t| t * t).sum())
        .collect();
    let stable = stable_system(
        &Blocks {
            kuu: kuu.as_ref(),
            log_det_kuu: luu.log_det(),
            kuu_jitter: luu.jitter(),
            kux: kux.as_ref(),
            q_diag: &q_diag,
            diag_k: diag_k.as_ref(),
        },
        y,
        noise_variance,
        method,
        ladder,
    )?;
    Ok(SparseFactors {
        luu,
        system: stable.system,
        kux,
        v,
        lambda: stable.lambda,
        beta: stable.beta,
        penalty_active: stable.penalty_active,
        evidence: stable.evidence,
    })
}

/// The parts of a sparse GP on `m` inducing inputs that the stable system is built from.
pub(crate) struct Blocks<'a> {
    /// `K_UU` (`m × m`, with the jitter its factor used).
    pub kuu: MatRef<'a, f64>,
    /// `ln|K_UU|`.
    pub log_det_kuu: f64,
    /// The jitter in `kuu` (reported when FITC's `λ` fails).
    pub kuu_jitter: f64,
    /// `K_UX` (`m × N`).
    pub kux: MatRef<'a, f64>,
    /// `Qᵢᵢ = ‖(L_uu⁻¹ K_UX)_{:,i}‖²`.
    pub q_diag: &'a [f64],
    /// `kᵢᵢ`.
    pub diag_k: ColRef<'a, f64>,
}

/// The system of a sparse GP in the stable form and what follows from it.
pub(crate) struct StableSystem {
    /// `σ² K_UU + ΦᵀΦ (+ jitter) = L Lᵀ`.
    pub system: Cholesky,
    /// FITC's `λ` (all ones for the other methods).
    pub lambda: Col<f64>,
    /// `β = (L Lᵀ)⁻¹ Φᵀb`.
    pub beta: Col<f64>,
    /// Whether the raw trace penalty was positive.
    pub penalty_active: bool,
    /// The evidence.
    pub evidence: SparseEvidence,
}

/// `λ`, `Φ`, the system `σ² K_UU + ΦᵀΦ` and its factor, `β` and the evidence from the
/// kernel blocks (the module's formulas). Cost `O(N m²)`.
pub(crate) fn stable_system(
    blocks: &Blocks<'_>,
    y: ColRef<'_, f64>,
    s2: f64,
    method: SparseMethod,
    ladder: &JitterLadder,
) -> Result<StableSystem> {
    let Blocks {
        kuu,
        log_det_kuu,
        kuu_jitter,
        kux,
        q_diag,
        diag_k,
    } = *blocks;
    let (m, n) = kux.shape();
    let ctx = FactorContext { method, m };
    let lambda = Col::from_fn(n, |i| {
        if method.is_fitc() {
            (diag_k[i] - q_diag[i]) / s2 + 1.0
        } else {
            1.0
        }
    });
    if lambda.iter().any(|t| !(*t > 0.0 && t.is_finite())) {
        return Err(ModelError::InducingCholesky {
            method,
            factor: InducingFactor::FitcDiagonal,
            m,
            largest_jitter: kuu_jitter,
        });
    }
    // Φᵀ = K_UX diag(1/√λ) (m × N) and b = y ./ √λ; without FITC, λ ≡ 1 and Φᵀ is K_UX.
    let inv_sqrt_lambda: Option<Vec<f64>> = method
        .is_fitc()
        .then(|| lambda.iter().map(|t| 1.0 / t.sqrt()).collect());
    let b = match &inv_sqrt_lambda {
        Some(w) => Col::from_fn(n, |i| y[i] * w[i]),
        None => y.to_owned(),
    };
    let mut system = Mat::from_fn(m, m, |a, j| s2 * kuu[(a, j)]);
    let mut c = Mat::<f64>::zeros(m, 1);
    add_gram_and_rhs(
        system.as_mut(),
        c.as_mut(),
        kux,
        inv_sqrt_lambda.as_deref(),
        b.as_ref(),
    );
    let l = factor_named(system.as_ref(), ladder, InducingFactor::System, ctx)?;
    l.solve_lower_in_place(c.as_mut())?;
    let btb: f64 = b.iter().map(|t| t * t).sum();
    let ctc: f64 = c.col(0).iter().map(|t| t * t).sum();
    let mut beta_mat = c;
    l.solve_upper_in_place(beta_mat.as_mut())?;
    let beta = Col::from_fn(m, |a| beta_mat[(a, 0)]);
    let (evidence, penalty_active) = assemble_evidence(&EvidenceParts {
        method,
        n,
        m,
        s2,
        data_fit: (btb - ctc) / s2,
        log_det_system: l.log_det(),
        log_det_kuu,
        sum_ln_lambda: lambda.iter().map(|t| t.ln()).sum(),
        trace_k: diag_k.iter().sum(),
        trace_q: q_diag.iter().sum(),
    });
    Ok(StableSystem {
        system: l,
        lambda,
        beta,
        penalty_active,
        evidence,
    })
}

/// Columns of `Φᵀ` scaled at a time by [`add_gram_and_rhs`]: `m × 2048` values (1 MiB at
/// `m = 64`) stay in cache for the two products, where scaling all `N` columns at once
/// allocated and page-faulted a second `m × N` matrix (400 MB at `N = 10⁶`, `m = 50`).
const SCALED_COLUMNS: usize = 2048;

/// `system += Φᵀ(Φᵀ)ᵀ` and `c += Φᵀb` for `Φᵀ = K_UX diag(w)` (`w = None`: `Φᵀ = K_UX`),
/// scaling [`SCALED_COLUMNS`] columns of `K_UX` at a time.
fn add_gram_and_rhs(
    mut system: MatMut<'_, f64>,
    mut c: MatMut<'_, f64>,
    kux: MatRef<'_, f64>,
    w: Option<&[f64]>,
    b: ColRef<'_, f64>,
) {
    let Some(w) = w else {
        matmul(
            system.rb_mut(),
            Accum::Add,
            kux,
            kux.transpose(),
            1.0,
            parallelism(),
        );
        matmul(c, Accum::Add, kux, b.as_mat(), 1.0, parallelism());
        return;
    };
    let (m, n) = kux.shape();
    let mut scaled = Mat::<f64>::zeros(m, SCALED_COLUMNS.min(n));
    for start in (0..n).step_by(SCALED_COLUMNS) {
        let cols = SCALED_COLUMNS.min(n - start);
        let mut block = scaled.as_mut().subcols_mut(0, cols);
        for j in 0..cols {
            let wj = w[start + j];
            let src = kux.col(start + j);
            for (dst, &k) in block.rb_mut().col_mut(j).iter_mut().zip(src.iter()) {
                *dst = k * wj;
            }
        }
        let block = scaled.as_ref().subcols(0, cols);
        matmul(
            system.rb_mut(),
            Accum::Add,
            block,
            block.transpose(),
            1.0,
            parallelism(),
        );
        matmul(
            c.rb_mut(),
            Accum::Add,
            block,
            b.subrows(start, cols).as_mat(),
            1.0,
            parallelism(),
        );
    }
}

/// The scalars the evidence is assembled from.
pub(crate) struct EvidenceParts {
    pub method: SparseMethod,
    pub n: usize,
    pub m: usize,
    pub s2: f64,
    /// `(bᵀb − ‖c‖²)/σ²`.
    pub data_fit: f64,
    /// `ln|σ² K_UU + ΦᵀΦ|`.
    pub log_det_system: f64,
    /// `ln|K_UU|`.
    pub log_det_kuu: f64,
    /// `Σ ln λᵢ` (0 unless FITC).
    pub sum_ln_lambda: f64,
    /// `tr K`.
    pub trace_k: f64,
    /// `tr Q`.
    pub trace_q: f64,
}

/// The evidence from its parts, and whether the raw trace penalty was positive (its
/// clipped gradient is zero otherwise).
pub(crate) fn assemble_evidence(p: &EvidenceParts) -> (SparseEvidence, bool) {
    let log_det =
        p.log_det_system - p.log_det_kuu + p.sum_ln_lambda + (p.n as f64 - p.m as f64) * p.s2.ln();
    let nlz = 0.5 * p.data_fit + 0.5 * log_det + p.n as f64 * HALF_LN_2PI;
    let raw_penalty = 0.5 * (p.trace_k - p.trace_q) / p.s2;
    let trace_penalty = raw_penalty.max(0.0);
    let objective = if p.method == SparseMethod::Vfe {
        nlz + trace_penalty
    } else {
        nlz
    };
    let evidence = SparseEvidence {
        method: p.method,
        objective,
        nlz,
        data_fit: p.data_fit,
        log_det,
        trace_penalty,
    };
    (evidence, raw_penalty > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocked Gram and right-hand side equal the products of the whole scaled `Φᵀ`,
    /// over several blocks and a short last one.
    #[test]
    fn blocked_scaled_gram_matches_the_whole_product() {
        let (m, n) = (7, 2 * SCALED_COLUMNS + 37);
        let kux = Mat::from_fn(m, n, |a, i| ((a * 31 + i * 17) % 101) as f64 / 50.0 - 1.0);
        let w: Vec<f64> = (0..n).map(|i| 0.5 + (i % 13) as f64 / 10.0).collect();
        let b = Col::from_fn(n, |i| ((i * 7) % 19) as f64 - 9.0);
        let phi_t = Mat::from_fn(m, n, |a, i| kux[(a, i)] * w[i]);
        let start = Mat::from_fn(m, m, |a, j| if a == j { 2.0 } else { 0.0 });
        let want_gram = &start + &phi_t * phi_t.transpose();
        let want_rhs = &phi_t * b.as_mat();
        for weights in [Some(w.as_slice()), None] {
            let (mut gram, mut rhs) = (start.clone(), Mat::<f64>::zeros(m, 1));
            add_gram_and_rhs(
                gram.as_mut(),
                rhs.as_mut(),
                kux.as_ref(),
                weights,
                b.as_ref(),
            );
            let (want_gram, want_rhs) = match weights {
                Some(_) => (want_gram.clone(), want_rhs.clone()),
                None => (&start + &kux * kux.transpose(), &kux * b.as_mat()),
            };
            let scale = want_gram.norm_max().max(want_rhs.norm_max());
            assert!((&gram - &want_gram).norm_max() <= 1e-12 * scale);
            assert!((&rhs - &want_rhs).norm_max() <= 1e-12 * scale);
        }
    }
}
