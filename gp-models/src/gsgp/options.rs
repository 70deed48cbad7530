//! Options of the GSGP model and the grid they describe.

use faer::MatRef;
use gp_solvers::SlqScaling;
use gp_structured::{InterpolationOptions, InterpolationScheme, OutOfGrid, RegularGrid};

use crate::error::{ModelError, Result};
use crate::grid::options::{GridOptions, OptionNames};
use crate::gsgp::memory::gsgp_memory;
use crate::ski::SkiOptions;

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

/// How a [`Gsgp`](crate::Gsgp) model builds its grid, solves and estimates.
///
/// The grid fields mean exactly what they mean in [`SkiOptions`] (same defaults), so the same
/// options and data give the grid [`Ski`](crate::Ski) would build
/// ([`grid_for`](Self::grid_for)). The solver fields mirror [`SkiOptions`] too, with the
/// factorized solvers instead of plain CG.
///
/// ```
/// use gp_models::{GsgpOptions, GsgpSolver, SkiOptions};
///
/// let ski = SkiOptions { grid_sizes: vec![50, 40], seed: 3, ..SkiOptions::default() };
/// let opts = GsgpOptions::from(&ski);
/// assert_eq!(opts.grid_sizes, vec![50, 40]);
/// assert_eq!(opts.solver, GsgpSolver::Efcg);
/// assert!(opts.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GsgpOptions {
    /// Grid points per dimension (default empty: `⌈(n/2)^{1/d}⌉ + 2·padding + 1` per
    /// dimension, as [`SkiOptions::resolved_grid_sizes`]).
    pub grid_sizes: Vec<usize>,
    /// Cells of padding on each side of the data's bounding box (default `None`: the
    /// scheme's recommendation, 2 for cubic). Ignored when `bounds` is given.
    pub padding: Option<usize>,
    /// Explicit grid bounds `(lo, hi)` per dimension (default `None`: from the data).
    pub bounds: Option<Vec<(f64, f64)>>,
    /// Interpolation scheme (default cubic, `4^d` weights per point).
    pub scheme: InterpolationScheme,
    /// What to do with a point whose stencil does not fit in the grid (default: error).
    pub out_of_grid: OutOfGrid,
    /// Relative residual tolerance of the log-likelihood solves (default `1e-2`).
    pub cg_tolerance: f64,
    /// Maximum iterations of every solve (default 1000).
    pub max_cg_iterations: usize,
    /// Minimum iterations of the log-likelihood probe solves (default 20, clamped to the
    /// problem size), as [`SkiOptions::min_cg_iterations`].
    pub min_cg_iterations: usize,
    /// Relative residual tolerance of the prediction solves (mean, covariances; default
    /// `1e-8`).
    pub prediction_tolerance: f64,
    /// Number of probe vectors of the log-determinant and gradient estimates (default 10).
    pub probes: usize,
    /// Weight of each probe's quadrature in the SLQ log determinant (default
    /// [`SlqScaling::ProbeNorm`]).
    pub slq_scaling: SlqScaling,
    /// Seed of the probe vectors (default 0). The same seed gives the same estimate.
    pub seed: u64,
    /// Memory limit in bytes for the grid-space working set (default `None`: the
    /// `MemAvailable` line of `/proc/meminfo` when readable, else 16 GiB). See
    /// [`gsgp::memory`](crate::gsgp::memory) for the estimate.
    pub memory_limit: Option<u64>,
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
        Self::from(&SkiOptions::default())
    }
}

impl From<&SkiOptions> for GsgpOptions {
    /// The same grid, tolerances, probes, seed and memory limit; the default solver.
    fn from(o: &SkiOptions) -> Self {
        Self {
            grid_sizes: o.grid_sizes.clone(),
            padding: o.padding,
            bounds: o.bounds.clone(),
            scheme: o.scheme,
            out_of_grid: o.out_of_grid,
            cg_tolerance: o.cg_tolerance,
            max_cg_iterations: o.max_cg_iterations,
            min_cg_iterations: o.min_cg_iterations,
            prediction_tolerance: o.prediction_tolerance,
            probes: o.probes,
            slq_scaling: o.slq_scaling,
            seed: o.seed,
            memory_limit: o.memory_limit,
            solver: GsgpSolver::default(),
            log_det_dense_factor_max: DEFAULT_LOG_DET_DENSE_FACTOR_MAX,
        }
    }
}

impl GsgpOptions {
    /// The settings GSGP shares with SKI, for the shared grid rules.
    pub(crate) fn grid_options(&self) -> GridOptions<'_> {
        GridOptions {
            grid_sizes: &self.grid_sizes,
            padding: self.padding,
            bounds: self.bounds.as_deref(),
            scheme: self.scheme,
            probes: self.probes,
            cg_tolerance: self.cg_tolerance,
            prediction_tolerance: self.prediction_tolerance,
            max_cg_iterations: self.max_cg_iterations,
            memory_limit: self.memory_limit,
            names: &GSGP_NAMES,
        }
    }

    /// The interpolation options (scheme and out-of-grid policy).
    pub fn interpolation(&self) -> InterpolationOptions {
        InterpolationOptions {
            scheme: self.scheme,
            out_of_grid: self.out_of_grid,
        }
    }

    /// Checks the options: those of [`SkiOptions::validate`] (at least one probe,
    /// finite non-negative tolerances, at least one iteration, finite bounds with `lo < hi`,
    /// a positive memory limit).
    ///
    /// Errors with [`ModelError::InvalidOption`].
    pub fn validate(&self) -> Result<()> {
        self.grid_options().validate()
    }

    /// The grid [`Ski`](crate::Ski) builds for these options and the points `x` (`n × d`):
    /// sizes from [`grid_sizes`](Self::grid_sizes) or the default rule, bounds from
    /// [`bounds`](Self::bounds) or the data's bounding box padded by
    /// [`padding`](Self::padding) cells. Use it to accumulate
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
        let grid = self.grid_options();
        let sizes = grid.resolved_grid_sizes(n, d)?;
        gsgp_memory(&sizes, self.scheme, self.probes, self.memory_limit).check()?;
        grid.grid_with_sizes(x, &sizes)
    }
}

/// The option names GSGP's errors cite.
static GSGP_NAMES: OptionNames = OptionNames {
    probes: "GsgpOptions::probes",
    cg_tolerance: "GsgpOptions::cg_tolerance",
    prediction_tolerance: "GsgpOptions::prediction_tolerance",
    max_cg_iterations: "GsgpOptions::max_cg_iterations",
    bounds: "GsgpOptions::bounds",
    memory_limit: "GsgpOptions::memory_limit",
    grid_sizes: "GsgpOptions::grid_sizes",
};
