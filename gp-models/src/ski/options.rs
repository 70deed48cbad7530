//! Options of the SKI model.

use crate::core::settings::{EstimatorSettings, KrylovSettings, OptionOwner};
use crate::error::Result;
use crate::grid::GridSettings;

/// How a [`Ski`](crate::Ski) model builds its grid, solves and estimates: composed of the
/// shared parts, the [`grid`](GridSettings), the [`Krylov solves`](KrylovSettings) (CG on
/// `K̂ = W K_G Wᵀ + σ²I`, plain or with a pivoted-Cholesky preconditioner of rank
/// [`preconditioner_rank`](Self::preconditioner_rank)) and the
/// [`probe estimator`](EstimatorSettings) of the SLQ log determinant and the Hutchinson
/// traces.
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
    /// Rank `k` of the pivoted-Cholesky preconditioner `P = L Lᵀ + σ²I` of every solve with
    /// `K̂` (the likelihood's and the predictions'), built from `k` columns of `W K_G Wᵀ`
    /// ([`SkiKernelColumns`](crate::ski::columns::SkiKernelColumns)) at `O(k (4^d n +
    /// m log m) + n k²)`. With `k > 0` the likelihood's probes are `N(0, P)` (GPyTorch's
    /// choice, which keeps the SLQ estimate unbiased), so caller-chosen probes are refused.
    ///
    /// Default `0`: plain CG, as in the SKI paper and in the GSGP paper's comparison, whose
    /// iteration counts the reproductions report. GPyTorch preconditions its SKI models with
    /// rank 15 from `n = 2000` on. A SKI product costs only `O(4^d n + m log m)`, so the
    /// `O(n k)` of applying `P⁻¹` is not free: the preconditioner pays off when the kernel
    /// matrix is close to low rank (long lengthscales against the data's extent) and `σ²` is
    /// small. Measured with the `ski_preconditioning` example (`n = 10⁵`, 2-D, 100² grid):
    /// at `ℓ = 0.3` and `σ² = 1e-4`, rank 30 took the likelihood estimate from 623 to 50
    /// iterations (10.9 to 1.2 s) and the mean solve from 939 to 96; at `ℓ = 0.1` the ranks
    /// up to 30 saved at most a third of the iterations and no time.
    pub preconditioner_rank: usize,
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
