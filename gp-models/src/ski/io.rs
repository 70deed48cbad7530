//! Saving and loading a [`Ski`] model as JSON.
//!
//! The file stores the format name and version, the kernel (through its own `serde`
//! implementation), the noise variance, the [`SkiOptions`] as a record (as given, so that a
//! reloaded model reports the same options), the resolved grid and the training data as
//! plain vectors with their shape:
//!
//! ```text
//! { "format": "gpscale.ski", "version": 1, "kernel": {...}, "noise_variance": 0.01,
//!   "options": {"grid_sizes": [], "padding": null, "bounds": null, "scheme": "cubic",
//!               "out_of_grid": "error", "probes": 10, ..., "memory_limit": null},
//!   "grid": {"sizes": [40, 30], "lo": [-0.1, 2.0], "spacing": [0.05, 0.1]},
//!   "n": 3, "d": 2, "x": [x₀₀, x₀₁, x₁₀, ...], "y": [y₀, y₁, y₂] }
//! ```
//!
//! `x` is row major: point `i` is `x[i·d .. (i+1)·d]`.
//!
//! **Why the grid is stored.** The default grid is derived from the training data (its
//! size from `n`, its range from the data's bounding box), so it would come out the same on
//! reload today, but a file must not depend on that rule staying unchanged. Each axis is
//! stored as its first point and its spacing, the two numbers the grid is made of: storing
//! the upper bound instead and dividing again, `h = (hi − lo)/(m − 1)`, can change the last
//! bit of the spacing and with it every prediction. A grid that differs from the one the
//! options would build is accepted as long as it passes the checks of a fit (one axis per
//! dimension, the memory limit, every training point inside).
//!
//! Nothing solved is stored: the caches are recomputed on first use, deterministically for
//! the same data, grid, options and seed, so a reloaded model predicts bit-identically.

use std::io::{Read, Write};

use gp_kernels::Kernel;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::core::io::{
    json_string, parse_saved, read_text, write_json, DataRecord, EstimatorRecord, KrylovRecord,
};
use crate::error::Result;
use crate::grid::record::{GridRecord, GridSettingsRecord};
use crate::ski::model::Ski;
use crate::ski::options::SkiOptions;

/// The `format` field of a saved [`Ski`] model.
pub const SKI_FORMAT: &str = "gpscale.ski";

/// The format version written by [`Ski::save_json`] and the only one [`Ski::load_json`]
/// reads.
pub const SKI_FORMAT_VERSION: u32 = 1;

/// [`SkiOptions`] as stored: the shared parts flattened into one object, field for field
/// as before the options were composed, so version-1 files keep loading.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct OptionsRecord {
    #[serde(flatten)]
    grid: GridSettingsRecord,
    #[serde(flatten)]
    krylov: KrylovRecord,
    #[serde(flatten)]
    estimator: EstimatorRecord,
    /// Absent from files written before the option existed (rank 0, as those models were).
    #[serde(default)]
    preconditioner_rank: usize,
}

impl From<&SkiOptions> for OptionsRecord {
    fn from(o: &SkiOptions) -> Self {
        Self {
            grid: (&o.grid).into(),
            krylov: o.krylov.into(),
            estimator: o.estimator.into(),
            preconditioner_rank: o.preconditioner_rank,
        }
    }
}

impl From<OptionsRecord> for SkiOptions {
    fn from(o: OptionsRecord) -> Self {
        Self {
            grid: o.grid.into(),
            krylov: o.krylov.into(),
            estimator: o.estimator.into(),
            preconditioner_rank: o.preconditioner_rank,
        }
    }
}

#[derive(Serialize)]
struct SavedRef<'a, K> {
    format: &'static str,
    version: u32,
    kernel: &'a K,
    noise_variance: f64,
    options: OptionsRecord,
    grid: GridRecord,
    #[serde(flatten)]
    data: DataRecord,
}

#[derive(Deserialize)]
struct Saved<K> {
    kernel: K,
    noise_variance: f64,
    options: OptionsRecord,
    grid: GridRecord,
    #[serde(flatten)]
    data: DataRecord,
}

impl<K: Kernel + Serialize> Ski<K> {
    /// Writes the model as JSON to `writer` (see the [module docs](crate::ski::io) for the
    /// layout).
    pub fn save_json<W: Write>(&self, writer: W) -> Result<()> {
        write_json(writer, &self.saved())
    }

    /// The model as a JSON string.
    pub fn to_json_string(&self) -> Result<String> {
        json_string(&self.saved())
    }

    fn saved(&self) -> SavedRef<'_, K> {
        SavedRef {
            format: SKI_FORMAT,
            version: SKI_FORMAT_VERSION,
            kernel: &self.kernel,
            noise_variance: self.noise_variance,
            options: (&self.options).into(),
            grid: (&self.grid).into(),
            // Row major, as the other formats (the model keeps `x` column major).
            data: DataRecord::new(self.x.as_ref(), self.y.as_ref()),
        }
    }
}

impl<K: Kernel + Clone + DeserializeOwned> Ski<K> {
    /// Reads a model written by [`save_json`](Self::save_json) and refits it on the stored
    /// grid.
    ///
    /// Errors: [`ModelError::Serialization`](crate::ModelError::Serialization) for unreadable or malformed JSON or a wrong
    /// `format`, [`ModelError::UnsupportedVersion`](crate::ModelError::UnsupportedVersion), [`ModelError::LengthMismatch`](crate::ModelError::LengthMismatch) when
    /// `x` or `y` disagree with `n` and `d` or the grid's fields with each other or with
    /// `d`, [`ModelError::Structured`](crate::ModelError::Structured) for an invalid grid axis, and every error of
    /// [`fit`](Self::fit).
    pub fn load_json<R: Read>(reader: R) -> Result<Self> {
        Self::from_json_str(&read_text(reader)?)
    }

    /// Reads a model from a JSON string written by [`to_json_string`](Self::to_json_string)
    /// or [`save_json`](Self::save_json) and refits it (errors as
    /// [`load_json`](Self::load_json)).
    pub fn from_json_str(text: &str) -> Result<Self> {
        let saved: Saved<K> = parse_saved(text, SKI_FORMAT, SKI_FORMAT_VERSION)?;
        let (x, y) = saved.data.views("loading a saved SKI model")?;
        let grid = saved.grid.to_grid()?;
        Self::fit_on_grid(
            saved.kernel,
            x,
            y,
            saved.noise_variance,
            &saved.options.into(),
            grid,
        )
    }
}
