//! The settings the iterative models share, as parts their options are composed of:
//! [`KrylovSettings`] (tolerances and iteration bounds of the training and prediction solves)
//! and [`EstimatorSettings`] (probe vectors of the stochastic log-determinant and trace
//! estimates). [`IterativeOptions`](crate::IterativeOptions),
//! [`SkiOptions`](crate::SkiOptions) and [`GsgpOptions`](crate::GsgpOptions) hold one of each
//! (and the grid models a [`GridSettings`](crate::grid::GridSettings)), so a setting has one
//! name, one default and one check in every model.
//!
//! ```
//! use gp_models::{EstimatorSettings, GsgpOptions, KrylovSettings, SkiOptions};
//!
//! // The same solver and estimator settings for two models.
//! let krylov = KrylovSettings { prediction_tolerance: 1e-6, ..KrylovSettings::default() };
//! let estimator = EstimatorSettings { probes: 30, seed: 7, ..EstimatorSettings::default() };
//! let ski = SkiOptions { krylov, estimator, ..SkiOptions::default() };
//! let gsgp = GsgpOptions { krylov, estimator, ..GsgpOptions::default() };
//! assert_eq!(ski.estimator, gsgp.estimator);
//! ```

use gp_solvers::SlqScaling;

use crate::error::{ModelError, Result};

/// Default of [`KrylovSettings::prediction_tolerance`]: a relative residual of `1e-4` for the
/// prediction solves.
///
/// Chosen for prediction, not for agreement with a direct solve: a relative residual `τ`
/// moves the predicted means by a few times `τ` in the targets' units, well below the noise
/// levels GPs are usually fitted at, while the solve takes well under half the iterations of `1e-8`.
/// Measured by this crate's `prediction_tolerance` example (SKI, `n = 10⁶`, `m = 10⁴`,
/// targets of unit amplitude with noise standard deviation 0.029): 137 CG iterations and a
/// largest change of the mean of `2.1e-4` at `1e-4`, against 308 iterations (`1.1e-8`) at
/// `1e-8`, 106 (`2.0e-3`) at `1e-3` and 82 (`7.5e-3`, a quarter of the noise) at `1e-2`.
/// GPyTorch evaluates with `1e-2` (`gpytorch.settings.eval_cg_tolerance`, default 0.01, on the
/// settings page of docs.gpytorch.ai, v1.13); ask for a tighter value when predictions are compared
/// digit by digit with a dense reference.
pub const DEFAULT_PREDICTION_TOLERANCE: f64 = 1e-4;

/// Default of [`KrylovSettings::variance_tolerance`]: a relative residual of `1e-8` for the
/// solves behind variances and covariances by solves.
///
/// A latent variance is the difference `k** − k*ᵀK̂⁻¹k*` of two nearly equal numbers when the
/// data determine `f(x*)` well, so the solve's relative error reaches the variance amplified by
/// `k**/var`: at `n = 10⁶` (the `ski_predict_variance` example) the variances are ~`1e-5` of
/// the prior and solves to `1e-4` return zeros, while `1e-8` agrees with the LOVE cache to
/// `5e-9`. The mean does not cancel this way, hence its looser default.
pub const DEFAULT_VARIANCE_TOLERANCE: f64 = 1e-8;

/// Tolerances and iteration bounds of the Krylov solves of an iterative model: the training
/// solves behind the log marginal likelihood and its gradient (`K̂⁻¹[y | z₁..z_t]`) and the
/// prediction solves (the mean weights `K̂⁻¹y`, exact variances and covariances).
///
/// Every stopping test is a relative residual `‖b − K̂x‖ ≤ tol·‖b‖` per column. The
/// iterations a prediction used are reported in
/// [`Prediction::mean_solve`](crate::Prediction::mean_solve).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KrylovSettings {
    /// Relative residual tolerance of the training solves (default `1e-2`).
    pub tolerance: f64,
    /// Maximum iterations of every solve (default 1000, GPyTorch's `max_cg_iterations`).
    pub max_iterations: usize,
    /// Minimum iterations of the training solves before a column may stop on the tolerance
    /// (default 20, GPyTorch's Lanczos depth; clamped to `min(n, max_iterations)`), so that
    /// the quadrature of the log determinant is not too shallow: early iterates bias it
    /// upwards more than the residual tolerance suggests.
    pub min_iterations: usize,
    /// Relative residual tolerance of the mean solve `K̂⁻¹y` of predictions (default
    /// [`DEFAULT_PREDICTION_TOLERANCE`] = `1e-4`).
    pub prediction_tolerance: f64,
    /// Relative residual tolerance of the solves behind variances and covariances computed by
    /// solves ([`VarianceMethod::Exact`](crate::VarianceMethod::Exact); default
    /// [`DEFAULT_VARIANCE_TOLERANCE`] = `1e-8`: variances cancel, see there).
    pub variance_tolerance: f64,
}

impl Default for KrylovSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-2,
            max_iterations: 1000,
            min_iterations: 20,
            prediction_tolerance: DEFAULT_PREDICTION_TOLERANCE,
            variance_tolerance: DEFAULT_VARIANCE_TOLERANCE,
        }
    }
}

impl KrylovSettings {
    /// Checks the settings: finite non-negative tolerances and at least one iteration.
    /// Errors name the option as `owner` spells it.
    pub(crate) fn validate(&self, owner: OptionOwner) -> Result<()> {
        for (name, tol) in [
            (owner.name(OptionField::Tolerance), self.tolerance),
            (
                owner.name(OptionField::PredictionTolerance),
                self.prediction_tolerance,
            ),
            (
                owner.name(OptionField::VarianceTolerance),
                self.variance_tolerance,
            ),
        ] {
            if !(tol.is_finite() && tol >= 0.0) {
                return Err(ModelError::InvalidOption {
                    name,
                    reason: format!("must be finite and non-negative, got {tol}"),
                });
            }
        }
        if self.max_iterations == 0 {
            return Err(ModelError::InvalidOption {
                name: owner.name(OptionField::MaxIterations),
                reason: "must be at least 1".into(),
            });
        }
        Ok(())
    }
}

/// The probe vectors of the stochastic estimates: the stochastic Lanczos quadrature of the
/// log determinant and the Hutchinson traces of the gradient.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimatorSettings {
    /// Number of probe vectors (default 10, GPyTorch's `num_trace_samples`). At least 1;
    /// standard errors need 2.
    pub probes: usize,
    /// The factor in front of each probe's quadrature term (default
    /// [`SlqScaling::ProbeNorm`], unbiased for the quadrature value; [`SlqScaling::Dimension`]
    /// is GPyTorch's `n`, identical for Rademacher probes).
    pub slq_scaling: SlqScaling,
    /// Seed of the probes (ChaCha8, see [`Probes::generate`](gp_solvers::Probes::generate);
    /// default 0). The same seed gives the same estimate.
    pub seed: u64,
}

impl Default for EstimatorSettings {
    fn default() -> Self {
        Self {
            probes: 10,
            slq_scaling: SlqScaling::ProbeNorm,
            seed: 0,
        }
    }
}

impl EstimatorSettings {
    /// Checks the settings: at least one probe. Errors name the option as `owner` spells it.
    pub(crate) fn validate(&self, owner: OptionOwner) -> Result<()> {
        if self.probes == 0 {
            return Err(ModelError::InvalidOption {
                name: owner.name(OptionField::Probes),
                reason: "need at least one probe vector (two for standard errors)".into(),
            });
        }
        Ok(())
    }
}

/// Which model's options a shared setting belongs to, so that an error names the option as
/// the user wrote it (`SkiOptions::krylov.tolerance`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OptionOwner {
    /// [`IterativeOptions`](crate::IterativeOptions).
    Iterative,
    /// [`SkiOptions`](crate::SkiOptions).
    Ski,
    /// [`GsgpOptions`](crate::GsgpOptions).
    Gsgp,
}

/// A shared setting, as errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OptionField {
    Tolerance,
    MaxIterations,
    PredictionTolerance,
    VarianceTolerance,
    Probes,
    GridSizes,
    Bounds,
    MemoryLimit,
}

/// `"<Owner>Options::<part>.<field>"` for every owner, as a `&'static str`.
macro_rules! option_names {
    ($owner:expr, $path:literal) => {
        match $owner {
            OptionOwner::Iterative => concat!("IterativeOptions::", $path),
            OptionOwner::Ski => concat!("SkiOptions::", $path),
            OptionOwner::Gsgp => concat!("GsgpOptions::", $path),
        }
    };
}

impl OptionOwner {
    /// The full name of a shared option of this owner.
    pub(crate) fn name(self, field: OptionField) -> &'static str {
        match field {
            OptionField::Tolerance => option_names!(self, "krylov.tolerance"),
            OptionField::MaxIterations => option_names!(self, "krylov.max_iterations"),
            OptionField::PredictionTolerance => {
                option_names!(self, "krylov.prediction_tolerance")
            }
            OptionField::VarianceTolerance => option_names!(self, "krylov.variance_tolerance"),
            OptionField::Probes => option_names!(self, "estimator.probes"),
            OptionField::GridSizes => option_names!(self, "grid.sizes"),
            OptionField::Bounds => option_names!(self, "grid.bounds"),
            OptionField::MemoryLimit => option_names!(self, "grid.memory_limit"),
        }
    }
}
