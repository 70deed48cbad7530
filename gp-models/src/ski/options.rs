//! Options of the SKI model.

use crate::core::settings::{EstimatorSettings, KrylovSettings, OptionOwner};
use crate::error::Result;
use crate::grid::GridSettings;

/// How a [`Ski`](crate::Ski) model builds its grid, solves and estimates: composed of the
/// shared parts, the [`grid`](GridSettings), the [`Krylov solves`](KrylovSettings) (plain,
/// unpreconditioned CG on `K̂ = W K_G Wᵀ + σ²I`) and the [`probe estimator`](EstimatorSettings)
/// of the SLQ log determinant and the Hutchinson traces.
///
/// ```
/// use gp_models::grid::GridSettings;
/// use gp_models::{EstimatorSettings, SkiOptions};
///
/// let opts = SkiOptions {
///     grid: GridSettings { sizes: vec![50, 40], ..GridSettings::default() },
///     estimator: EstimatorSettings { seed: 3, ..EstimatorSettings::default() },
///     ..SkiOptions::default()
/// };
/// assert_eq!(opts.estimator.probes, 10);
/// assert_eq!(opts.grid.resolved_padding(), 2); // cubic interpolation
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SkiOptions {
    /// The grid and the interpolation on it (default: sizes from `n`, cubic, padded data
    /// range).
    pub grid: GridSettings,
    /// Tolerances and iteration bounds of the training and prediction solves (default
    /// [`KrylovSettings::default`]: `1e-2` for training, at least 20 and at most 1000
    /// iterations, [`DEFAULT_PREDICTION_TOLERANCE`](crate::DEFAULT_PREDICTION_TOLERANCE) for
    /// predictions).
    pub krylov: KrylovSettings,
    /// Probe vectors of the stochastic estimates (default 10, seed 0).
    pub estimator: EstimatorSettings,
}

impl SkiOptions {
    /// The grid sizes for `n` points in `d` dimensions, as
    /// [`GridSettings::resolved_sizes`] (errors name `SkiOptions::grid.sizes`).
    pub fn resolved_grid_sizes(&self, n: usize, d: usize) -> Result<Vec<usize>> {
        self.grid.resolved_sizes_for(n, d, OptionOwner::Ski)
    }

    /// Checks the options: at least one probe, finite non-negative tolerances, at least one
    /// CG iteration, finite bounds with `lo < hi`, a positive memory limit.
    ///
    /// Errors with [`ModelError::InvalidOption`](crate::ModelError::InvalidOption).
    pub fn validate(&self) -> Result<()> {
        self.estimator.validate(OptionOwner::Ski)?;
        self.krylov.validate(OptionOwner::Ski)?;
        self.grid.validate(OptionOwner::Ski)
    }
}
