//! Options of the GSGP model and the grid they describe.

use faer::MatRef;
use gp_structured::{InterpolationOptions, RegularGrid};

use crate::core::settings::{EstimatorSettings, KrylovSettings, OptionOwner};
use crate::error::{ModelError, Result};
use crate::grid::GridSettings;
use crate::gsgp::memory::gsgp_memory;

/// Which factorized CG solver runs the solves whose start vector is not in `range(W)` (the
/// posterior mean, `z₀ = y`). Solves with a right-hand side `W r̂₀` (covariances, the gradient's
/// probes) use the simplified EFCG (paper Alg. 4) with [`Efcg`](Self::Efcg) and FCG with a
/// start vector `g = S r̂₀`, `ρ = r̂₀ᵀ S r̂₀` with [`Fcg`](Self::Fcg).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GsgpSolver {
    /// Efficiently factorized CG (paper Alg. 3, corrected): one `K_G` and one `S` product per
    /// iteration. The default.
    #[default]
    Efcg,
    /// Factorized CG (paper Alg. 2): one `K_G` and three `S` products per iteration.
    Fcg,
}

/// How a [`Gsgp`](crate::Gsgp) model builds its grid, solves and estimates: composed of the
/// same shared parts as [`SkiOptions`](crate::SkiOptions) (so the same parts and data give
/// the grid [`Ski`](crate::Ski) would build, [`grid_for`](Self::grid_for)), with the
/// factorized solvers instead of plain CG.
///
/// ```
/// use gp_models::grid::GridSettings;
/// use gp_models::{GsgpOptions, GsgpSolver, SkiOptions};
///
/// let ski = SkiOptions {
///     grid: GridSettings { sizes: vec![50, 40], ..GridSettings::default() },
///     ..SkiOptions::default()
/// };
/// // The same grid, solves and probes as the SKI options, the default factorized solver.
/// let opts = GsgpOptions::from_parts(ski.grid.clone(), ski.krylov, ski.estimator);
/// assert_eq!(opts.grid.sizes, vec![50, 40]);
/// assert_eq!(opts.solver, GsgpSolver::Efcg);
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GsgpOptions {
    /// The grid and the interpolation on it (default: sizes from `n`, cubic, padded data
    /// range). The memory limit applies to the GSGP estimate of
    /// [`gsgp::memory`](crate::gsgp::memory).
    pub grid: GridSettings,
    /// Tolerances and iteration bounds of the training solves (log determinant, gradient
    /// probes) and the prediction solves (mean, covariances); default
    /// [`KrylovSettings::default`].
    pub krylov: KrylovSettings,
    /// Probe vectors of the log-determinant and gradient estimates (default 10, seed 0).
    pub estimator: EstimatorSettings,
    /// The factorized solver of the mean solve (default [`GsgpSolver::Efcg`]).
    pub solver: GsgpSolver,
    /// Largest number of grid points `m_l` of a dimension whose Toeplitz factor gets a dense
    /// eigen square root in the log determinant (default
    /// [`DEFAULT_LOG_DET_DENSE_FACTOR_MAX`] = 2048); larger factors get an `O(m_l)`-memory
    /// circulant-embedding square root. Both are exact square roots (see
    /// [`gsgp::log_det`](crate::gsgp::log_det)): the dense one has fewer columns (`r_l ≤ m_l`
    /// against the embedding length `M_l ≥ 2m_l − 1`) and often a much smaller SLQ standard
    /// error for the same probes, but costs `O(m_l³)` time, `24 m_l²` bytes and `O(m_l r_l)`
    /// per product against two FFTs of length `M_l`. `0` uses circulant square roots everywhere,
    /// `usize::MAX` dense ones everywhere (as before the circulant root existed).
    pub log_det_dense_factor_max: usize,
}

/// Default of [`GsgpOptions::log_det_dense_factor_max`]: a dense eigendecomposition of order
/// 2048 takes seconds and 100 MB.
pub const DEFAULT_LOG_DET_DENSE_FACTOR_MAX: usize = 2048;

impl Default for GsgpOptions {
    fn default() -> Self {
        Self {
            grid: GridSettings::default(),
            krylov: KrylovSettings::default(),
            estimator: EstimatorSettings::default(),
            solver: GsgpSolver::default(),
            log_det_dense_factor_max: DEFAULT_LOG_DET_DENSE_FACTOR_MAX,
        }
    }
}

impl GsgpOptions {
    /// Options from the shared parts (for example those of a [`SkiOptions`](crate::SkiOptions),
    /// so that both models run on one grid with the same solves and probes), with the default
    /// solver and log-determinant settings.
    pub fn from_parts(
        grid: GridSettings,
        krylov: KrylovSettings,
        estimator: EstimatorSettings,
    ) -> Self {
        Self {
            grid,
            krylov,
            estimator,
            ..Self::default()
        }
    }

    /// The interpolation options (scheme and out-of-grid policy).
    pub fn interpolation(&self) -> InterpolationOptions {
        self.grid.interpolation()
    }

    /// Checks the options: those of [`SkiOptions::validate`](crate::SkiOptions::validate) (at least one probe,
    /// finite non-negative tolerances, at least one iteration, finite bounds with `lo < hi`,
    /// a positive memory limit).
    ///
    /// Errors with [`ModelError::InvalidOption`].
    pub fn validate(&self) -> Result<()> {
        self.estimator.validate(OptionOwner::Gsgp)?;
        self.krylov.validate(OptionOwner::Gsgp)?;
        self.grid.validate(OptionOwner::Gsgp)
    }

    /// The grid [`Ski`](crate::Ski) builds for these options and the points `x` (`n × d`):
    /// sizes from [`GridSettings::sizes`] or the default rule, bounds from
    /// [`GridSettings::bounds`] or the data's bounding box padded by
    /// [`GridSettings::padding`] cells. Use it to accumulate
    /// [`SufficientStats`](gp_structured::SufficientStats) in a streaming pass (for
    /// example over a sample or the known range of the data) before
    /// [`Gsgp::from_stats`](crate::Gsgp::from_stats).
    ///
    /// Errors: [`ModelError::EmptyData`] for no points, [`ModelError::InvalidOption`],
    /// [`ModelError::GridTooLarge`] when the GSGP memory estimate (see
    /// [`gsgp::memory`](crate::gsgp::memory)) exceeds the limit, [`ModelError::Structured`]
    /// for a grid that cannot be built, [`ModelError::NonFinite`] for non-finite points.
    pub fn grid_for(&self, x: MatRef<'_, f64>) -> Result<RegularGrid> {
        let (n, d) = (x.nrows(), x.ncols());
        if n == 0 || d == 0 {
            return Err(ModelError::EmptyData {
                context: "building a GSGP grid",
                n,
                d,
            });
        }
        gp_linalg::validate::check_finite_mat(x, "the training points X")
            .map_err(ModelError::from_finite_check)?;
        self.validate()?;
        let sizes = self.grid.resolved_sizes_for(n, d, OptionOwner::Gsgp)?;
        gsgp_memory(
            &sizes,
            self.grid.scheme,
            self.estimator.probes,
            self.grid.memory_limit,
        )
        .check()?;
        self.grid.grid_with_sizes(x, &sizes, OptionOwner::Gsgp)
    }
}
