//! Which estimator of the log marginal likelihood, with what settings, and what it returns.

use std::sync::Arc;

use gp_solvers::truncation::{ExpDecay, TruncationLaw};
use gp_solvers::SlqScaling;

use crate::error::Result;
use crate::objective::krylov::KrylovDepth;

/// An estimator of `log p(y | X, θ)` and its gradient (spec `rtgps.md` §9).
#[derive(Debug, Clone)]
pub enum Estimator {
    /// The exact value and gradient by Cholesky (`O(n³)`).
    Cholesky,
    /// Truncated CG: `iterations` preconditioned CG steps on `[y | z₁..z_t]`, the SLQ
    /// log-determinant from the same depth (biased: Theorem 1).
    Cg {
        /// CG iterations `J`.
        iterations: usize,
    },
    /// Russian-roulette CG: `draws` independent depths from `law` per evaluation, one CG run
    /// of the largest, the gradient from two independent RR solves of `K̂⁻¹y` (unbiased for
    /// the series truncated at `law.max_support()`; use the number of training points there
    /// for the exact GP, spec §8.2).
    RrCg {
        /// The truncation law of the depth `J`.
        law: Arc<dyn TruncationLaw>,
        /// Independent draws per evaluation (at least 2; the paper uses 2).
        draws: usize,
    },
    /// Random Fourier features with `num_freqs` frequencies (biased: Theorem 2), redrawn
    /// at every evaluation. Squared-exponential and Matérn kernels.
    Rff {
        /// Frequencies `D` (`2D` feature columns).
        num_freqs: usize,
    },
    /// Single-sample RFF (spec §3): unbiased for its top term.
    SsRff(crate::objective::rff::SsRffOptions),
}

impl Estimator {
    /// RR-CG with the paper's exponential-decay law `P(J) ∝ e^{−λJ}` on `{j_min, …, n}`
    /// and two draws (λ = 0.05, `j_min` = 80 gives `E[J] ≈ 99.5`).
    pub fn rr_cg_exp_decay(lambda: f64, j_min: usize, n: usize) -> Result<Self> {
        Ok(Self::RrCg {
            law: Arc::new(ExpDecay::new(lambda, j_min, n)?),
            draws: 2,
        })
    }

    /// The Krylov depth of CG and RR-CG (`None` for the direct and RFF estimators).
    pub fn krylov_depth(&self) -> Option<KrylovDepth<'_>> {
        match self {
            Self::Cg { iterations } => Some(KrylovDepth::Fixed(*iterations)),
            Self::RrCg { law, draws } => Some(KrylovDepth::Random {
                law: law.as_ref(),
                draws: *draws,
            }),
            _ => None,
        }
    }

    /// A short name for tables (`Cholesky`, `CG(100)`, `RR-CG(E[J]=99.5)`, `RFF(700)`, ...).
    pub fn label(&self) -> String {
        match self {
            Self::Cholesky => "Cholesky".into(),
            Self::Cg { iterations } => format!("CG({iterations})"),
            Self::RrCg { law, .. } => format!("RR-CG(E[J]={:.1})", law.mean()),
            Self::Rff { num_freqs } => format!("RFF({num_freqs})"),
            Self::SsRff(o) => match crate::objective::rff::SsRff::new(*o) {
                Ok(ss) => format!("SS-RFF(E[D]={:.0})", ss.expected_num_freqs()),
                Err(_) => "SS-RFF(invalid options)".into(),
            },
        }
    }
}

/// Settings the Krylov estimators (CG, RR-CG) share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KrylovObjectiveOptions {
    /// Hutchinson probes `t` (default 10, GPyTorch's).
    pub probes: usize,
    /// Rank of the pivoted-Cholesky preconditioner (default 5, the paper's).
    pub preconditioner_rank: usize,
    /// No preconditioner below this many points (default 2000, GPyTorch's rule).
    pub min_preconditioning_size: usize,
    /// Relative residual at which a CG column stops (default 1e-10; see
    /// [`RrCgOptions::tolerance`](gp_solvers::RrCgOptions::tolerance)).
    pub tolerance: f64,
    /// The SLQ factor (default: the probe's whitened norm, unbiased).
    pub slq_scaling: SlqScaling,
    /// Compute the value (SLQ / RR-SLQ log-determinant) besides the gradient (default
    /// `true`; RR-SLQ costs `O(J³)` per probe).
    pub with_value: bool,
}

impl Default for KrylovObjectiveOptions {
    fn default() -> Self {
        Self {
            probes: 10,
            preconditioner_rank: 5,
            min_preconditioning_size: 2000,
            tolerance: 1e-10,
            slq_scaling: SlqScaling::ProbeNorm,
            with_value: true,
        }
    }
}

/// One evaluation of an estimator.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectiveEstimate {
    /// The estimate of `log p(y | X, θ)` (`None` when not computed).
    pub lml: Option<f64>,
    /// The estimate of the data fit `yᵀK̂⁻¹y`.
    pub data_fit: Option<f64>,
    /// The estimate of `log det K̂`.
    pub log_det: Option<f64>,
    /// The gradient of `log p` with respect to the kernel's log hyperparameters, then
    /// `log σ²`.
    pub gradient: Vec<f64>,
    /// Krylov iterations run (0 for direct methods), or frequencies used for RFF.
    pub work: usize,
}
