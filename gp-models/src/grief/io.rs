//! Saving and loading a [`Grief`] model as JSON.
//!
//! The file stores the format name and version, the kernel (through its own `serde`
//! implementation), the noise variance, the [`GriefOptions`] as a record (its
//! [`GridOptions`] flattened into it), the inducing grid as its axes, and the training data
//! as plain vectors with their shape:
//!
//! ```text
//! { "format": "gpscale.grief", "version": 1, "kernel": {...}, "noise_variance": 0.05,
//!   "options": {"points_per_axis": 6, "beyond_domain": 0.0, "p": 12,
//!               "cap_to_grid": false, "block_rows": 2048},
//!   "grid": {"axes": [[u₀⁽¹⁾, …, u_{m̄₁−1}⁽¹⁾], [u₀⁽²⁾, …]]},
//!   "n": 40, "d": 2, "x": [x₀₀, x₀₁, x₁₀, ...], "y": [y₀, …, y₃₉] }
//! ```
//!
//! `x` is row major: point `i` is `x[i·d .. (i+1)·d]`. A model whose selection of
//! eigenfunctions is frozen ([`Grief::with_selection_frozen`]) also stores it,
//! `"selection": [idx₀₀, …]` (row-major `p' × d` multi-indices), and is reloaded frozen with
//! that selection; without the field the selection is redone on load.
//!
//! **Why the data.** Predictions and the log marginal likelihood need only the sufficient
//! statistics `ΦᵀΦ`, `Φᵀy`, `yᵀy`, but they hold at the current length scales only: every
//! [`with_log_params`](Grief::with_log_params) (so every training step) re-selects the
//! eigenfunctions and rebuilds the basis and the statistics from the data, and the
//! length-scale gradient takes a pass over it. So the model keeps `(x, y)`, and so does its
//! file: a reloaded model trains like the one saved.
//!
//! **Why the grid.** The grid is stored point for point (floats are written with shortest
//! round-trip formatting and parsed exactly), not re-derived from the data and
//! [`GridOptions`]: the reloaded grid is the saved one to the last bit, also for a grid a
//! caller built some other way. It is checked by [`InducingGrid::from_axes`] (finite,
//! strictly increasing, non-empty axes) and must have one axis per input dimension.
//!
//! **What is not stored.** The basis (the per-axis eigendecompositions and the selection)
//! and the statistics are rebuilt on load from the kernel, the grid and the data, exactly as
//! [`with_log_params`](Grief::with_log_params) rebuilds them. That is deterministic for the
//! same inputs, so a reloaded model predicts (mean and variance) and evaluates its log
//! marginal likelihood bit-identically. Loading runs the checks of [`Grief::fit`] (the
//! options, the grid options included, finite data, the kernel's dimension and
//! hyperparameters, a positive noise), so a hand-edited file cannot produce a model that
//! [`fit`](Grief::fit) would have refused.
//!
//! ```
//! use gp_kernels::SquaredExponential;
//! use gp_models::faer::{Col, Mat};
//! use gp_models::grief::{GridOptions, Grief, GriefOptions};
//! use gp_models::prelude::*;
//!
//! let x = Mat::from_fn(40, 2, |i, j| ((i * (2 * j + 3)) as f64 * 0.611).sin());
//! let y = Col::from_fn(40, |i| x[(i, 0)] - 0.5 * x[(i, 1)]);
//! let options = GriefOptions {
//!     p: 12,
//!     grid: GridOptions { points_per_axis: 6, ..GridOptions::default() },
//!     ..GriefOptions::default()
//! };
//! let kernel = SquaredExponential::new(vec![0.8, 1.3], 1.0)?;
//! let model = Grief::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &options)?;
//!
//! let mut file = Vec::new();
//! model.save_json(&mut file)?;
//! let back = Grief::load_json(file.as_slice())?;
//!
//! let request = PredictRequest::default();
//! let (a, b) = (model.predict(x.as_ref(), &request)?, back.predict(x.as_ref(), &request)?);
//! assert_eq!(a.mean, b.mean);
//! assert_eq!(a.variance, b.variance);
//! assert_eq!(back.basis().grid(), model.basis().grid());
//! # Ok::<(), ModelError>(())
//! ```

use std::io::{Read, Write};

use serde::{Deserialize, Serialize};

use gp_kernels::SquaredExponential;

use crate::core::io::{json_string, parse_saved, read_text, write_json, DataRecord};
use crate::error::Result;
use crate::grief::grid::{GridOptions, InducingGrid};
use crate::grief::model::Grief;
use crate::grief::options::GriefOptions;
use crate::validate::{check_grid_dims, check_training_data};

/// The `format` field of a saved [`Grief`] model.
pub const GRIEF_FORMAT: &str = "gpscale.grief";

/// The format version written by [`Grief::save_json`] and the only one [`Grief::load_json`]
/// reads.
pub const GRIEF_FORMAT_VERSION: u32 = 1;

/// [`GridOptions`] as stored.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct GridOptionsRecord {
    points_per_axis: usize,
    beyond_domain: f64,
}

impl From<GridOptions> for GridOptionsRecord {
    fn from(g: GridOptions) -> Self {
        Self {
            points_per_axis: g.points_per_axis,
            beyond_domain: g.beyond_domain,
        }
    }
}

impl From<GridOptionsRecord> for GridOptions {
    fn from(g: GridOptionsRecord) -> Self {
        Self {
            points_per_axis: g.points_per_axis,
            beyond_domain: g.beyond_domain,
        }
    }
}

/// [`GriefOptions`] as stored: the grid options flattened into one object, as the other
/// formats store their composed options.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct OptionsRecord {
    #[serde(flatten)]
    grid: GridOptionsRecord,
    p: usize,
    cap_to_grid: bool,
    block_rows: usize,
}

impl From<&GriefOptions> for OptionsRecord {
    fn from(o: &GriefOptions) -> Self {
        Self {
            grid: o.grid.into(),
            p: o.p,
            cap_to_grid: o.cap_to_grid,
            block_rows: o.block_rows,
        }
    }
}

impl From<OptionsRecord> for GriefOptions {
    fn from(o: OptionsRecord) -> Self {
        Self {
            grid: o.grid.into(),
            p: o.p,
            cap_to_grid: o.cap_to_grid,
            block_rows: o.block_rows,
        }
    }
}

/// The inducing grid as written (borrowing the model's axes).
#[derive(Serialize)]
struct GridRef<'a> {
    axes: &'a [Vec<f64>],
}

/// The inducing grid as read.
#[derive(Deserialize)]
struct GridRecord {
    axes: Vec<Vec<f64>>,
}

#[derive(Serialize)]
struct SavedRef<'a> {
    format: &'static str,
    version: u32,
    kernel: &'a SquaredExponential,
    noise_variance: f64,
    options: OptionsRecord,
    grid: GridRef<'a>,
    /// The frozen selection's multi-indices (row-major `p' × d`); absent when the model
    /// re-selects.
    #[serde(skip_serializing_if = "Option::is_none")]
    selection: Option<&'a [usize]>,
    #[serde(flatten)]
    data: DataRecord,
}

#[derive(Deserialize)]
struct Saved {
    kernel: SquaredExponential,
    noise_variance: f64,
    options: OptionsRecord,
    grid: GridRecord,
    #[serde(default)]
    selection: Option<Vec<usize>>,
    #[serde(flatten)]
    data: DataRecord,
}

impl Grief {
    /// Writes the model (kernel, noise, options, grid and training data) as JSON to
    /// `writer` (see the [module docs](crate::grief::io) for the layout).
    ///
    /// Errors: [`ModelError::Serialization`](crate::ModelError::Serialization) when
    /// writing fails.
    pub fn save_json<W: Write>(&self, writer: W) -> Result<()> {
        write_json(writer, &self.saved())
    }

    /// The model as a JSON string (errors as [`save_json`](Self::save_json)).
    pub fn to_json_string(&self) -> Result<String> {
        json_string(&self.saved())
    }

    fn saved(&self) -> SavedRef<'_> {
        SavedRef {
            format: GRIEF_FORMAT,
            version: GRIEF_FORMAT_VERSION,
            kernel: &self.kernel,
            noise_variance: self.noise_variance,
            options: (&self.options).into(),
            grid: GridRef {
                axes: self.basis.grid().axes(),
            },
            selection: self.selection_frozen.then(|| self.basis.indices()),
            data: DataRecord::new(self.x.as_ref(), self.y.as_ref()),
        }
    }

    /// Reads a model written by [`save_json`](Self::save_json) and rebuilds its basis and
    /// statistics on the stored grid.
    ///
    /// Errors ([`ModelError`](crate::ModelError)): `Serialization` for unreadable or
    /// malformed JSON (a non-finite number included: JSON has none) or a wrong `format`;
    /// `UnsupportedVersion`; `EmptyData` for `n = 0`, `d = 0`, a grid without axes or with
    /// an empty axis; `LengthMismatch` when `x` or `y` disagree with `n` and `d` or the grid
    /// has not `d` axes; `InvalidOption` for invalid options (the grid's included) or a grid
    /// axis that is not strictly increasing; and every error of [`fit`](Self::fit) (a
    /// kernel of another dimension is `KernelDim`, a non-positive noise `InvalidNoise`).
    pub fn load_json<R: Read>(reader: R) -> Result<Self> {
        Self::from_json_str(&read_text(reader)?)
    }

    /// Reads a model from a JSON string written by [`to_json_string`](Self::to_json_string)
    /// or [`save_json`](Self::save_json) and rebuilds it (errors as
    /// [`load_json`](Self::load_json)).
    pub fn from_json_str(text: &str) -> Result<Self> {
        let saved: Saved = parse_saved(text, GRIEF_FORMAT, GRIEF_FORMAT_VERSION)?;
        let (x, y) = saved.data.views("loading a saved GRIEF model")?;
        let options: GriefOptions = saved.options.into();
        options.validate()?;
        options.grid.validate()?;
        check_training_data(&saved.kernel, x, y, saved.noise_variance)?;
        let grid = InducingGrid::from_axes(saved.grid.axes)?;
        check_grid_dims(grid.dims(), x.ncols())?;
        Self::build(
            saved.kernel,
            saved.noise_variance,
            options,
            x.to_owned(),
            y.to_owned(),
            grid,
            saved.selection,
        )
    }
}
