//! Saving and loading a [`Gsgp`] model as JSON.
//!
//! A GSGP model keeps no training data, only the sufficient statistics (see the
//! [module docs](crate::gsgp)), so that is what the file stores: the format name and
//! version, the kernel (through its own `serde` implementation), the noise variance, the
//! [`GsgpOptions`] as a record (as given), the grid, and the statistics (their interpolation
//! scheme and out-of-grid policy, `n`, `yᵀy`, `t = Wᵀy` and the stored upper half of the
//! stencil of `S = WᵀW`):
//!
//! ```text
//! { "format": "gpscale.gsgp", "version": 1, "kernel": {...}, "noise_variance": 0.01,
//!   "options": {"grid_sizes": [], "padding": null, "bounds": null, "scheme": "cubic",
//!               "out_of_grid": "error", ..., "solver": "efcg",
//!               "log_det_dense_factor_max": 2048},
//!   "grid": {"sizes": [40, 30], "lo": [-0.1, 2.0], "spacing": [0.05, 0.1]},
//!   "stats": {"scheme": "cubic", "out_of_grid": "error", "n": 5000, "yty": 4711.2,
//!             "wty": [t₀, …, t_{m−1}], "gram": [S₀, …]} }
//! ```
//!
//! `gram` is [`StencilGram::values`]: `m` rows of
//! [`StencilGram::stored_row_len`]`(d, r)` values each (`r = 3` for cubic, 1 for linear),
//! the diagonal first, in the layout of [`gp_structured::stencil_gram`]. The file therefore
//! grows with the grid, not with `n`: about `20·m·((2r+1)^d + 1)/2` bytes of text.
//!
//! The grid is stored as in [`ski::io`](crate::ski::io), per axis its first point and its
//! spacing, so that the reloaded grid is the same to the last bit (the statistics are only
//! meaningful on the grid they were accumulated on).
//!
//! Loading rebuilds the statistics with [`StencilGram::from_values`] and
//! [`SufficientStats::from_parts`] and the model with [`Gsgp::from_stats`], so a damaged file
//! fails the same checks as statistics built by hand. Nothing solved is stored: the caches
//! are recomputed on first use, deterministically for the same statistics, options and seed,
//! so a reloaded model predicts bit-identically.

use std::io::{Read, Write};

use faer::Col;
use gp_kernels::Kernel;
use gp_structured::{InterpolationOptions, StencilGram, SufficientStats};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::core::io::{
    json_string, parse_saved, read_text, ser_err, write_json, EstimatorRecord, KrylovRecord,
};
use crate::error::{ModelError, Result};
use crate::grid::record::{GridRecord, GridSettingsRecord, OutOfGridRecord, SchemeRecord};
use crate::gsgp::model::Gsgp;
use crate::gsgp::options::{GsgpOptions, GsgpSolver};

/// The `format` field of a saved [`Gsgp`] model.
pub const GSGP_FORMAT: &str = "gpscale.gsgp";

/// The format version written by [`Gsgp::save_json`] and the only one [`Gsgp::load_json`]
/// reads.
pub const GSGP_FORMAT_VERSION: u32 = 1;

/// [`GsgpSolver`] as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SolverRecord {
    Efcg,
    Fcg,
}

impl From<GsgpSolver> for SolverRecord {
    fn from(s: GsgpSolver) -> Self {
        match s {
            GsgpSolver::Efcg => Self::Efcg,
            GsgpSolver::Fcg => Self::Fcg,
        }
    }
}

impl From<SolverRecord> for GsgpSolver {
    fn from(s: SolverRecord) -> Self {
        match s {
            SolverRecord::Efcg => Self::Efcg,
            SolverRecord::Fcg => Self::Fcg,
        }
    }
}

/// [`GsgpOptions`] as stored: the shared parts flattened into one object, field for field
/// as before the options were composed, so version-1 files keep loading.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct OptionsRecord {
    #[serde(flatten)]
    grid: GridSettingsRecord,
    #[serde(flatten)]
    krylov: KrylovRecord,
    #[serde(flatten)]
    estimator: EstimatorRecord,
    solver: SolverRecord,
    log_det_dense_factor_max: usize,
}

impl From<&GsgpOptions> for OptionsRecord {
    fn from(o: &GsgpOptions) -> Self {
        Self {
            grid: (&o.grid).into(),
            krylov: o.krylov.into(),
            estimator: o.estimator.into(),
            solver: o.solver.into(),
            log_det_dense_factor_max: o.log_det_dense_factor_max,
        }
    }
}

impl From<OptionsRecord> for GsgpOptions {
    fn from(o: OptionsRecord) -> Self {
        Self {
            grid: o.grid.into(),
            krylov: o.krylov.into(),
            estimator: o.estimator.into(),
            solver: o.solver.into(),
            log_det_dense_factor_max: o.log_det_dense_factor_max,
        }
    }
}

/// The sufficient statistics as written (borrowing the model's vectors).
#[derive(Serialize)]
struct StatsRef<'a> {
    scheme: SchemeRecord,
    out_of_grid: OutOfGridRecord,
    n: usize,
    yty: f64,
    wty: Vec<f64>,
    gram: &'a [f64],
}

/// The sufficient statistics as read.
#[derive(Deserialize)]
struct StatsRecord {
    scheme: SchemeRecord,
    out_of_grid: OutOfGridRecord,
    n: usize,
    yty: f64,
    wty: Vec<f64>,
    gram: Vec<f64>,
}

#[derive(Serialize)]
struct SavedRef<'a, K> {
    format: &'static str,
    version: u32,
    kernel: &'a K,
    noise_variance: f64,
    options: OptionsRecord,
    grid: GridRecord,
    stats: StatsRef<'a>,
}

#[derive(Deserialize)]
struct Saved<K> {
    kernel: K,
    noise_variance: f64,
    options: OptionsRecord,
    grid: GridRecord,
    stats: StatsRecord,
}

impl<K: Kernel + Serialize> Gsgp<K> {
    /// Writes the model (its sufficient statistics, kernel, noise and options) as JSON to
    /// `writer` (see the [module docs](crate::gsgp::io) for the layout).
    ///
    /// Errors: [`ModelError::Serialization`] when writing fails.
    pub fn save_json<W: Write>(&self, writer: W) -> Result<()> {
        write_json(writer, &self.saved())
    }

    /// The model as a JSON string (errors as [`save_json`](Self::save_json)).
    pub fn to_json_string(&self) -> Result<String> {
        json_string(&self.saved())
    }

    fn saved(&self) -> SavedRef<'_, K> {
        let stats = &*self.stats;
        let interp = stats.options();
        SavedRef {
            format: GSGP_FORMAT,
            version: GSGP_FORMAT_VERSION,
            kernel: &self.kernel,
            noise_variance: self.noise_variance,
            options: (&self.options).into(),
            grid: stats.grid().into(),
            stats: StatsRef {
                scheme: interp.scheme.into(),
                out_of_grid: interp.out_of_grid.into(),
                n: stats.num_points(),
                yty: stats.yty(),
                // A copy of `m` values (the stencil, `(2r+1)^d/2` times larger, is borrowed).
                wty: stats.wty().iter().copied().collect(),
                gram: stats.gram().values(),
            },
        }
    }
}

impl<K: Kernel + Clone + DeserializeOwned> Gsgp<K> {
    /// Reads a model written by [`save_json`](Self::save_json) and rebuilds it from the
    /// stored statistics with [`from_stats`](Self::from_stats) (no pass over data).
    ///
    /// Errors: [`ModelError::Serialization`] for unreadable or malformed JSON or a wrong
    /// `format`, [`ModelError::UnsupportedVersion`], [`ModelError::LengthMismatch`] when the
    /// grid's fields disagree with each other or `wty` or `gram` with the grid,
    /// [`ModelError::Structured`] for an invalid grid axis or statistics that fail the checks
    /// of [`StencilGram::from_values`] and [`SufficientStats::from_parts`] (non-finite
    /// values, a non-zero stencil value outside the grid, a negative `yᵀy`), and every error
    /// of [`from_stats`](Self::from_stats) (`n = 0` is [`ModelError::EmptyData`]).
    pub fn load_json<R: Read>(reader: R) -> Result<Self> {
        Self::from_json_str(&read_text(reader)?)
    }

    /// Reads a model from a JSON string written by [`to_json_string`](Self::to_json_string)
    /// or [`save_json`](Self::save_json) and rebuilds it (errors as
    /// [`load_json`](Self::load_json)).
    pub fn from_json_str(text: &str) -> Result<Self> {
        let saved: Saved<K> = parse_saved(text, GSGP_FORMAT, GSGP_FORMAT_VERSION)?;
        let grid = saved.grid.to_grid()?;
        let s = saved.stats;
        let interp = InterpolationOptions {
            scheme: s.scheme.into(),
            out_of_grid: s.out_of_grid.into(),
        };
        if s.n == 0 {
            // Before the statistics' own check, so that it reads as in `from_stats`.
            return Err(ModelError::EmptyData {
                context: "loading a saved GSGP model",
                n: 0,
                d: grid.dims(),
            });
        }
        let m = grid.num_points();
        let radius = interp.scheme.stencil_width() - 1;
        let gram_len = StencilGram::stored_row_len(grid.dims(), radius)
            .and_then(|h| h.checked_mul(m))
            .ok_or_else(|| {
                ser_err(format!(
                    "the stencil of a {:?} grid overflows",
                    grid.sizes()
                ))
            })?;
        for (context, expected, found) in [
            (
                "saved statistics: wty (one value per grid node)",
                m,
                s.wty.len(),
            ),
            (
                "saved statistics: gram (grid nodes × stored stencil values per node)",
                gram_len,
                s.gram.len(),
            ),
        ] {
            if found != expected {
                return Err(ModelError::LengthMismatch {
                    context,
                    expected,
                    found,
                });
            }
        }
        let gram = StencilGram::from_values(grid.sizes(), radius, s.gram)?;
        let wty = Col::from_fn(m, |j| s.wty[j]);
        let stats = SufficientStats::from_parts(grid, interp, gram, wty, s.yty, s.n)?;
        Self::from_stats(
            saved.kernel,
            stats,
            saved.noise_variance,
            &saved.options.into(),
        )
    }
}
