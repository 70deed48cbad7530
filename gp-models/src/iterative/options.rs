//! Options of the iterative exact GP.

use crate::core::settings::{EstimatorSettings, KrylovSettings, OptionOwner};
use crate::error::{ModelError, Result};

/// How an [`IterativeGp`](crate::IterativeGp) solves and estimates: the shared
/// [`Krylov`](KrylovSettings) and [`estimator`](EstimatorSettings) parts, the
/// preconditioner and the prior mean.
///
/// The defaults follow GPyTorch's recipe (10 probes, a rank-15 pivoted-Cholesky
/// preconditioner, CG capped at 1000 iterations and run for at least 20, as many as its
/// Lanczos quadrature uses) with one deliberate change towards accuracy: the training
/// tolerance is `1e-2` (GPyTorch trains with a relative residual of 1 and relies on the
/// 20-iteration floor). Predictions solve to
/// [`DEFAULT_PREDICTION_TOLERANCE`](crate::DEFAULT_PREDICTION_TOLERANCE) (`1e-4`; GPyTorch
/// evaluates with `1e-2`); set [`KrylovSettings::prediction_tolerance`] lower for means that
/// agree with the Cholesky model to more digits.
///
/// ```
/// use gp_models::{EstimatorSettings, IterativeOptions};
///
/// let opts = IterativeOptions {
///     estimator: EstimatorSettings { probes: 20, seed: 7, ..EstimatorSettings::default() },
///     ..IterativeOptions::default()
/// };
/// assert_eq!(opts.preconditioner_rank, 15);
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterativeOptions {
    /// Tolerances and iteration bounds of the batched CG solve on `[y | z₁..z_t]` behind the
    /// log marginal likelihood and its gradient, and of the prediction solves
    /// (`α = K̂⁻¹(y − m)` for the mean, computed once and reused, and `K̂⁻¹ K(X, x*)` for the
    /// variances). Default [`KrylovSettings::default`].
    pub krylov: KrylovSettings,
    /// Probe vectors `t` of the SLQ log determinant and the Hutchinson traces (default 10,
    /// seed 0).
    pub estimator: EstimatorSettings,
    /// Cap on the order of the Lanczos tridiagonals used by SLQ: only the first
    /// `max_lanczos_iterations` CG coefficients of each probe enter the quadrature
    /// (GPyTorch: 20). Default `None`: every CG iteration is used (the tridiagonals come
    /// for free from CG, so a cap saves nothing here; it exists for comparisons).
    pub max_lanczos_iterations: Option<usize>,
    /// Rank `k` of the pivoted-Cholesky preconditioner `P = L Lᵀ + σ²I` (default 15,
    /// GPyTorch's later default; the RTGPS paper uses 5). `0` disables preconditioning; then
    /// the probes are Rademacher (`±1`) instead of `N(0, P)`.
    pub preconditioner_rank: usize,
    /// Use the sample mean of the targets as a constant prior mean (default `false`: zero
    /// prior mean), as [`FitOptions::constant_mean`](crate::FitOptions::constant_mean).
    pub constant_mean: bool,
}

impl Default for IterativeOptions {
    fn default() -> Self {
        Self {
            krylov: KrylovSettings::default(),
            estimator: EstimatorSettings::default(),
            max_lanczos_iterations: None,
            preconditioner_rank: 15,
            constant_mean: false,
        }
    }
}

impl IterativeOptions {
    /// Checks the options: at least one probe, finite non-negative tolerances, at least
    /// one CG iteration and a Lanczos cap of at least 1.
    ///
    /// Errors with [`ModelError::InvalidOption`].
    pub fn validate(&self) -> Result<()> {
        self.estimator.validate(OptionOwner::Iterative)?;
        self.krylov.validate(OptionOwner::Iterative)?;
        if self.max_lanczos_iterations == Some(0) {
            return Err(ModelError::InvalidOption {
                name: "IterativeOptions::max_lanczos_iterations",
                reason: "must be at least 1 (or None for no cap)".into(),
            });
        }
        Ok(())
    }
}
