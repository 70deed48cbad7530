//! What a prediction request asks for, and what it returns.

use faer::{Col, Mat};

use crate::core::estimate::SolveReport;
use crate::core::likelihood::Likelihood;

/// Number of training points from which [`VarianceMethod::Auto`] uses a rank-`k` LOVE cache
/// instead of one solve per test point, for the models that have one (`Ski`, `Gsgp`).
///
/// Below it, exact solves are cheap enough and give the variances to the solver tolerance;
/// above it, one solve per test point costs `O(J · cost(K̂))` each (SKI at `n = 10⁶` took
/// minutes for 1000 test points), while LOVE costs `k` products once and `O(4^d k)` per
/// test point. GPyTorch leaves its LOVE (`fast_pred_var`) to the user; here it is the
/// default for large `n`, with [`LOVE_DEFAULT_RANK`].
pub const LOVE_AUTO_MIN_TRAIN: usize = 20_000;

/// The Lanczos rank of the LOVE cache [`VarianceMethod::Auto`] builds (GPyTorch's
/// `max_root_decomposition_size` is 100).
pub const LOVE_DEFAULT_RANK: usize = 100;

/// What a prediction should contain besides the posterior mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PredictOutput {
    /// The posterior mean only.
    Mean,
    /// Mean, latent variances and predictive variances (the default).
    #[default]
    MeanAndVariance,
    /// Mean, variances and the full latent posterior covariance of the test points
    /// (`b × b`: meant for small test sets).
    Covariance,
}

/// How posterior variances and covariances are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum VarianceMethod {
    /// Exact solves below [`LOVE_AUTO_MIN_TRAIN`] training points, the LOVE cache of rank
    /// [`LOVE_DEFAULT_RANK`] above it for the models that have one; models without a LOVE
    /// cache (`ExactGp`, whose Cholesky factor is exact and cheap to reuse, and
    /// `IterativeGp`) always solve.
    #[default]
    Auto,
    /// One solve per test point (Cholesky or CG to the model's prediction tolerance).
    Exact,
    /// A rank-`rank` LOVE cache (Pleiss et al. 2018): `rank` Lanczos steps once, then
    /// `O(rank)` work per test point. Refused with
    /// [`ModelError::InvalidOption`](crate::ModelError::InvalidOption) by models without
    /// one.
    Love {
        /// The Lanczos rank `k` (at least 1).
        rank: usize,
    },
}

/// What a prediction does when its mean solve stops before the tolerance (at the iteration
/// cap): the mean is then not the posterior mean to the accuracy the options ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UnconvergedSolve {
    /// Fail with [`ModelError::NotConverged`](crate::ModelError::NotConverged), naming the
    /// iterations and the residual reached (the default: nothing silently inaccurate).
    #[default]
    Fail,
    /// Return the prediction with the solve's report in
    /// [`Prediction::mean_solve`], for the caller to judge.
    Report,
}

/// A prediction request: what is wanted, how variances are computed and what an
/// unconverged mean solve does.
///
/// ```
/// use gp_models::{PredictOutput, PredictRequest, VarianceMethod};
///
/// let mean_only = PredictRequest::mean();
/// assert_eq!(mean_only.output, PredictOutput::Mean);
/// let love = PredictRequest { variance: VarianceMethod::Love { rank: 50 }, ..Default::default() };
/// assert_eq!(love.output, PredictOutput::MeanAndVariance);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PredictRequest {
    /// What to compute (default: mean and variances).
    pub output: PredictOutput,
    /// How to compute variances (default [`VarianceMethod::Auto`]).
    pub variance: VarianceMethod,
    /// What an unconverged mean solve does (default [`UnconvergedSolve::Fail`]).
    pub unconverged: UnconvergedSolve,
}

impl PredictRequest {
    /// Refuses a LOVE request for a model without a LOVE cache: `why` says how the model
    /// computes its variances instead (`"ExactGp has no LOVE cache: its Cholesky factor gives
    /// exact variances"`); the message adds what to use.
    ///
    /// Errors: [`ModelError::InvalidOption`](crate::ModelError::InvalidOption) for a LOVE
    /// request.
    pub(crate) fn refuse_love(&self, why: &str) -> crate::error::Result<()> {
        if let VarianceMethod::Love { .. } = self.variance {
            return Err(crate::ModelError::InvalidOption {
                name: "PredictRequest::variance",
                reason: format!("{why} (use VarianceMethod::Exact or Auto)"),
            });
        }
        Ok(())
    }

    /// The posterior mean only.
    pub fn mean() -> Self {
        Self {
            output: PredictOutput::Mean,
            ..Self::default()
        }
    }

    /// Mean and variances by `method`.
    pub fn variance(method: VarianceMethod) -> Self {
        Self {
            output: PredictOutput::MeanAndVariance,
            variance: method,
            ..Self::default()
        }
    }

    /// Mean, variances and the latent covariance by `method`.
    pub fn covariance(method: VarianceMethod) -> Self {
        Self {
            output: PredictOutput::Covariance,
            variance: method,
            ..Self::default()
        }
    }

    /// The same request, returning predictions from unconverged mean solves with their
    /// report instead of failing ([`UnconvergedSolve::Report`]).
    pub fn accepting_unconverged(self) -> Self {
        Self {
            unconverged: UnconvergedSolve::Report,
            ..self
        }
    }

    /// Errors with [`ModelError::NotConverged`](crate::ModelError::NotConverged) when the
    /// request says [`UnconvergedSolve::Fail`] and `mean_solve` did not converge.
    pub fn check_mean_solve(&self, mean_solve: Option<&SolveReport>) -> crate::Result<()> {
        match (self.unconverged, mean_solve) {
            (UnconvergedSolve::Fail, Some(report)) if !report.converged => {
                Err(crate::ModelError::NotConverged {
                    context: "the prediction's mean solve K̂⁻¹y",
                    iterations: report.iterations,
                    relative_residual: report.max_relative_residual,
                })
            }
            _ => Ok(()),
        }
    }

    /// Whether variances are requested.
    pub fn wants_variance(&self) -> bool {
        !matches!(self.output, PredictOutput::Mean)
    }

    /// Whether the latent covariance is requested.
    pub fn wants_covariance(&self) -> bool {
        matches!(self.output, PredictOutput::Covariance)
    }

    /// The LOVE rank to use for a model with `n_train` points that has a LOVE cache, or
    /// `None` for exact solves.
    pub fn love_rank(&self, n_train: usize) -> Option<usize> {
        match self.variance {
            VarianceMethod::Auto if n_train >= LOVE_AUTO_MIN_TRAIN => Some(LOVE_DEFAULT_RANK),
            VarianceMethod::Auto | VarianceMethod::Exact => None,
            VarianceMethod::Love { rank } => Some(rank),
        }
    }
}

/// How the variances of a [`Prediction`] were computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum VarianceSource {
    /// By a dense Cholesky factor (exact to rounding).
    Cholesky,
    /// By one iterative solve per test point, to the model's prediction tolerance.
    Solves,
    /// By a LOVE cache of this rank (the rank reached; smaller than requested after a
    /// Lanczos breakdown).
    Love {
        /// The rank of the cache.
        rank: usize,
    },
}

/// The latent posterior at test points, as a model computes it: what
/// [`GpModel::predict_latent`](crate::GpModel::predict_latent) returns.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LatentPrediction {
    /// Posterior mean of `f(x*)` (the prior mean included).
    pub mean: Col<f64>,
    /// Posterior variances of `f(x*)`, clamped at 0, when requested.
    pub variance: Option<Col<f64>>,
    /// The `b × b` posterior covariance of `f(X*)`, when requested.
    pub covariance: Option<Mat<f64>>,
    /// How variances were computed (`None` when none were).
    pub variance_source: Option<VarianceSource>,
    /// The solve behind the mean (`None` for a factorization).
    pub mean_solve: Option<SolveReport>,
}

impl LatentPrediction {
    /// A latent prediction from its parts.
    pub fn new(
        mean: Col<f64>,
        variance: Option<Col<f64>>,
        covariance: Option<Mat<f64>>,
        variance_source: Option<VarianceSource>,
        mean_solve: Option<SolveReport>,
    ) -> Self {
        Self {
            mean,
            variance,
            covariance,
            variance_source,
            mean_solve,
        }
    }
}

/// Posterior predictions at a set of test points: the mean, and what the request asked for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Prediction {
    /// Posterior mean of the latent function (and of the noisy observations).
    pub mean: Col<f64>,
    /// Posterior variance of the latent function `f(x*)` (empty when not requested).
    pub latent_variance: Col<f64>,
    /// Posterior predictive variance of an observation `y*` (the latent variance plus the
    /// likelihood's noise; empty when not requested).
    pub variance: Col<f64>,
    /// The latent posterior covariance (`b × b`), when requested.
    pub latent_covariance: Option<Mat<f64>>,
    /// How the variances were computed (`None` when none were).
    pub variance_source: Option<VarianceSource>,
    /// How the solve behind the mean ended (iterations, residual), for iterative models.
    pub mean_solve: Option<SolveReport>,
}

impl Prediction {
    /// The prediction from a mean and latent variances, adding the Gaussian noise variance
    /// `σ²` for the predictive variance.
    pub fn from_latent(mean: Col<f64>, latent_variance: Col<f64>, noise_variance: f64) -> Self {
        let variance = Col::from_fn(latent_variance.nrows(), |i| {
            latent_variance[i] + noise_variance
        });
        Self {
            mean,
            latent_variance,
            variance,
            latent_covariance: None,
            variance_source: None,
            mean_solve: None,
        }
    }

    /// The prediction for observations under `likelihood` from a latent prediction.
    pub fn from_latent_prediction<L: Likelihood>(latent: LatentPrediction, likelihood: &L) -> Self {
        let latent_variance = latent.variance.unwrap_or_else(|| Col::zeros(0));
        let variance = Col::from_fn(latent_variance.nrows(), |i| {
            likelihood.predictive_variance(latent_variance[i])
        });
        Self {
            mean: latent.mean,
            latent_variance,
            variance,
            latent_covariance: latent.covariance,
            variance_source: latent.variance_source,
            mean_solve: latent.mean_solve,
        }
    }

    /// Whether variances were computed.
    pub fn has_variance(&self) -> bool {
        self.variance.nrows() == self.mean.nrows()
    }
}

/// Test points per batched variance solve of the models that solve for variances (iterative,
/// SKI, GSGP): `n × 64` (or `m × 64`) memory per block, enough columns for the batched
/// products to pay off.
pub const VARIANCE_BLOCK: usize = 64;

/// Latent variances plus the noise variance: the predictive variances of noisy observations.
pub(crate) fn with_noise(latent_variance: &Col<f64>, noise_variance: f64) -> Col<f64> {
    Col::from_fn(latent_variance.nrows(), |i| {
        latent_variance[i] + noise_variance
    })
}
