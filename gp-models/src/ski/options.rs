//! Options of the SKI model.

use gp_solvers::SlqScaling;
use gp_structured::{InterpolationScheme, OutOfGrid};

use crate::error::Result;
use crate::grid::options::{GridOptions, OptionNames};

/// How a [`Ski`](crate::Ski) model builds its grid, solves and estimates.
///
/// The grid: `grid_sizes[l]` points in dimension `l` over the bounding box of the training
/// points padded by `padding` cells on each side (or over explicit `bounds`). The solver
/// settings mirror [`IterativeOptions`](crate::IterativeOptions): plain (unpreconditioned)
/// CG on `K̂ = W K_G Wᵀ + σ²I`, `probes` probe vectors for the SLQ log determinant and the
/// Hutchinson traces, a loose tolerance for the likelihood and a tight one for predictions.
///
/// ```
/// use gp_models::SkiOptions;
///
/// let opts = SkiOptions { grid_sizes: vec![50, 40], seed: 3, ..SkiOptions::default() };
/// assert_eq!(opts.probes, 10);
/// assert_eq!(opts.resolved_padding(), 2); // cubic interpolation
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SkiOptions {
    /// Grid points per input dimension, `m_l` (each at least `2·padding + 2` and at least
    /// the stencil width, 4 for cubic). Default empty: chosen from `n` by the GSGP reference
    /// code's rule, `m_l = ⌈(n/2)^{1/d}⌉` interior points plus the padding on both sides
    /// (see [`resolved_grid_sizes`](Self::resolved_grid_sizes)).
    pub grid_sizes: Vec<usize>,
    /// Cells of padding on each side of the data range (default `None`: the scheme's
    /// recommendation, 2 for cubic and 1 for linear, so that every training point and test
    /// points up to one cell outside the data range have their full stencil). Ignored with
    /// explicit `bounds`.
    pub padding: Option<usize>,
    /// Explicit grid bounds `(lo_l, hi_l)` per dimension, both ends grid points (default
    /// `None`: the padded data range). Points whose stencil does not fit are handled by
    /// `out_of_grid`.
    pub bounds: Option<Vec<(f64, f64)>>,
    /// Interpolation scheme (default Keys cubic, `a = −½`, as SKI and GSGP).
    pub scheme: InterpolationScheme,
    /// What to do with points whose stencil does not fit in the grid (default
    /// [`OutOfGrid::Error`]: [`ModelError::OutsideGrid`](crate::ModelError::OutsideGrid)).
    pub out_of_grid: OutOfGrid,
    /// Number of probe vectors for the SLQ log determinant and the Hutchinson traces
    /// (default 10). At least 1; standard errors need 2.
    pub probes: usize,
    /// Relative residual tolerance of the batched CG solve on `[y | z₁..z_t]` behind the
    /// log marginal likelihood and its gradient (default `1e-2`).
    pub cg_tolerance: f64,
    /// Maximum CG iterations of every solve (default 1000).
    pub max_cg_iterations: usize,
    /// Minimum CG iterations of the likelihood solve (default 20, GPyTorch's Lanczos depth;
    /// clamped to `min(n, max_cg_iterations)`), so that the SLQ quadrature is not too shallow.
    pub min_cg_iterations: usize,
    /// Relative residual tolerance of the prediction solves (`α = K̂⁻¹y` for the mean cache
    /// and the variance solves; default `1e-8`).
    pub prediction_tolerance: f64,
    /// Factor in front of each probe's quadrature term (default [`SlqScaling::ProbeNorm`]).
    pub slq_scaling: SlqScaling,
    /// Seed of the probes (ChaCha8; default 0). The same seed gives the same estimate.
    pub seed: u64,
    /// Memory limit in bytes for the grid-space working set (default `None`: the
    /// `MemAvailable` line of `/proc/meminfo` when readable, else 16 GiB). See
    /// [`SkiMemory`](crate::ski::SkiMemory) for the estimate.
    pub memory_limit: Option<u64>,
}

impl Default for SkiOptions {
    fn default() -> Self {
        Self {
            grid_sizes: Vec::new(),
            padding: None,
            bounds: None,
            scheme: InterpolationScheme::Cubic,
            out_of_grid: OutOfGrid::Error,
            probes: 10,
            cg_tolerance: 1e-2,
            max_cg_iterations: 1000,
            min_cg_iterations: 20,
            prediction_tolerance: 1e-8,
            slq_scaling: SlqScaling::ProbeNorm,
            seed: 0,
            memory_limit: None,
        }
    }
}

/// The option names SKI's errors cite.
static SKI_NAMES: OptionNames = OptionNames {
    probes: "SkiOptions::probes",
    cg_tolerance: "SkiOptions::cg_tolerance",
    prediction_tolerance: "SkiOptions::prediction_tolerance",
    max_cg_iterations: "SkiOptions::max_cg_iterations",
    bounds: "SkiOptions::bounds",
    memory_limit: "SkiOptions::memory_limit",
    grid_sizes: "SkiOptions::grid_sizes",
};

impl SkiOptions {
    /// The settings SKI shares with GSGP, for the shared grid rules.
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
            names: &SKI_NAMES,
        }
    }

    /// The padding in cells: `padding`, or the scheme's recommendation.
    pub fn resolved_padding(&self) -> usize {
        self.grid_options().resolved_padding()
    }

    /// The grid sizes for `n` points in `d` dimensions: `grid_sizes` if given, otherwise
    /// `⌈(n/2)^{1/d}⌉ + 2·padding + 1` per dimension (at least the stencil width).
    ///
    /// Errors with [`ModelError::InvalidOption`](crate::ModelError::InvalidOption) if
    /// `grid_sizes` is given with a length other than `d`.
    pub fn resolved_grid_sizes(&self, n: usize, d: usize) -> Result<Vec<usize>> {
        self.grid_options().resolved_grid_sizes(n, d)
    }

    /// Checks the options: at least one probe, finite non-negative tolerances, at least one
    /// CG iteration, finite bounds with `lo < hi`, a positive memory limit.
    ///
    /// Errors with [`ModelError::InvalidOption`](crate::ModelError::InvalidOption).
    pub fn validate(&self) -> Result<()> {
        self.grid_options().validate()
    }
}
