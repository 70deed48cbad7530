//! The sparse approximation and the options of [`SparseGp`](crate::SparseGp).

use gp_linalg::JitterLadder;

/// Which inducing-point approximation of the exact GP, all with `Q = K_XU K_UU⁻¹ K_UX`
/// (Quiñonero-Candela & Rasmussen 2005).
///
/// ```
/// use gp_models::SparseMethod;
///
/// assert_eq!(SparseMethod::Vfe.to_string(), "VFE");
/// assert!(SparseMethod::Fitc.is_fitc());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SparseMethod {
    /// Subset of regressors: the degenerate kernel `Q` everywhere, so the latent variance
    /// `σ² k_{*U} A⁻¹ k_{U*}` collapses to 0 far from the data. Evidence as DTC.
    Sor,
    /// Deterministic training conditional: SoR's mean and evidence, the exact prior
    /// variance `k_**` at test points.
    Dtc,
    /// Titsias' variational free energy: DTC's mean and variance, trained by the ELBO
    /// `−nlZ_DTC − tr(K − Q)/(2σ²)`.
    Vfe,
    /// Fully independent training conditional: covariance `Q + diag(K − Q) + σ²I`.
    Fitc,
}

impl SparseMethod {
    /// The four methods, in the order of the enum.
    pub const ALL: [SparseMethod; 4] = [Self::Sor, Self::Dtc, Self::Vfe, Self::Fitc];

    /// Whether the training covariance has FITC's heteroscedastic diagonal.
    pub fn is_fitc(self) -> bool {
        self == Self::Fitc
    }
}

impl std::fmt::Display for SparseMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Sor => "SoR",
            Self::Dtc => "DTC",
            Self::Vfe => "VFE",
            Self::Fitc => "FITC",
        })
    }
}

/// How a [`SparseGp`](crate::SparseGp) is fitted.
///
/// ```
/// use gp_linalg::JitterLadder;
/// use gp_models::{SparseMethod, SparseOptions};
///
/// // The paper's setting: no jitter, so an ill-conditioned K_UU is an error ("crash").
/// let paper = SparseOptions::new(SparseMethod::Fitc);
/// assert_eq!(paper.jitter, JitterLadder::none());
/// // A robust setting: escalate a relative jitter up to 1e-6 · mean diag.
/// let robust = SparseOptions { jitter: JitterLadder::default(), ..paper };
/// assert_eq!(robust.method, SparseMethod::Fitc);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SparseOptions {
    /// The approximation.
    pub method: SparseMethod,
    /// The jitter ladder of both Cholesky factorizations (`K_UU` and the `m × m` system
    /// `σ² K_UU + ΦᵀΦ`). Default [`JitterLadder::none`]: the reference code uses no jitter
    /// and reports a failed factorization as a crash, so by default this model does too
    /// (a typed [`ModelError::InducingCholesky`](crate::ModelError::InducingCholesky)).
    /// The jitter actually used is reported by
    /// [`SparseGp::jitter`](crate::SparseGp::jitter).
    pub jitter: JitterLadder,
}

impl SparseOptions {
    /// The method with no jitter.
    pub fn new(method: SparseMethod) -> Self {
        Self {
            method,
            jitter: JitterLadder::none(),
        }
    }
}
