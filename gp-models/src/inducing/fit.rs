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
use faer::{Accum, Col, ColRef, Mat, MatRef};
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
    let s2 = noise_variance;
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
            largest_jitter: luu.jitter(),
        });
    }
    // Φᵀ = K_UX diag(1/√λ) (m × N) and b = y ./ √λ.
    let phi_t = Mat::from_fn(m, n, |a, i| kux[(a, i)] / lambda[i].sqrt());
    let b = Col::from_fn(n, |i| y[i] / lambda[i].sqrt());
    let mut system = Mat::<f64>::zeros(m, m);
    for j in 0..m {
        for a in 0..m {
            system[(a, j)] = s2 * kuu[(a, j)];
        }
    }
    matmul(
        system.as_mut(),
        Accum::Add,
        phi_t.as_ref(),
        phi_t.transpose(),
        1.0,
        parallelism(),
    );
    let l = factor_named(system.as_ref(), ladder, InducingFactor::System, ctx)?;
    let mut c = Mat::<f64>::zeros(m, 1);
    matmul(
        c.as_mut(),
        Accum::Replace,
        phi_t.as_ref(),
        b.as_mat(),
        1.0,
        parallelism(),
    );
    l.solve_lower_in_place(c.as_mut())?;
    let btb: f64 = b.iter().map(|t| t * t).sum();
    let ctc: f64 = c.col(0).iter().map(|t| t * t).sum();
    let mut beta_mat = c;
    l.solve_upper_in_place(beta_mat.as_mut())?;
    let beta = Col::from_fn(m, |a| beta_mat[(a, 0)]);

    let data_fit = (btb - ctc) / s2;
    let sum_ln_lambda: f64 = lambda.iter().map(|t| t.ln()).sum();
    let log_det = l.log_det() - luu.log_det() + sum_ln_lambda + (n as f64 - m as f64) * s2.ln();
    let nlz = 0.5 * data_fit + 0.5 * log_det + n as f64 * HALF_LN_2PI;
    let raw_penalty = 0.5 * (diag_k.iter().sum::<f64>() - q_diag.iter().sum::<f64>()) / s2;
    let penalty_active = raw_penalty > 0.0;
    let trace_penalty = raw_penalty.max(0.0);
    let objective = if method == SparseMethod::Vfe {
        nlz + trace_penalty
    } else {
        nlz
    };
    Ok(SparseFactors {
        luu,
        system: l,
        kux,
        v,
        lambda,
        beta,
        penalty_active,
        evidence: SparseEvidence {
            method,
            objective,
            nlz,
            data_fit,
            log_det,
            trace_penalty,
        },
    })
}
