//! Saving and loading an [`IterativeGp`] as JSON.
//!
//! The file stores the format name and version, the kernel (through its own `serde`
//! implementation), the noise variance, the [`IterativeOptions`] as a record and the
//! training data as plain vectors with their shape:
//!
//! ```text
//! { "format": "gpscale.iterative_gp", "version": 1, "kernel": {...}, "noise_variance": 0.01,
//!   "options": {"probes": 10, "cg_tolerance": 0.01, ..., "slq_scaling": "probe_norm",
//!               "seed": 0, "constant_mean": false},
//!   "n": 3, "d": 2, "x": [x₀₀, x₀₁, x₁₀, ...], "y": [y₀, y₁, y₂] }
//! ```
//!
//! `x` is row major: point `i` is `x[i·d .. (i+1)·d]`.
//!
//! Nothing solved is stored (the cached `α` is recomputed on first use): the solves are
//! deterministic for the same data, options and seed, so a reloaded model predicts and
//! estimates bit-identically. Loading runs every check of
//! [`IterativeGp::fit_with_options`].

use std::io::{Read, Write};

use gp_kernels::Kernel;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::core::io::{
    json_string, parse_saved, read_text, saved_data, write_json, EstimatorRecord, KrylovRecord,
};
use crate::error::Result;
use crate::iterative::model::IterativeGp;
use crate::iterative::options::IterativeOptions;

/// The `format` field of a saved [`IterativeGp`].
pub const ITERATIVE_GP_FORMAT: &str = "gpscale.iterative_gp";

/// The format version written by [`IterativeGp::save_json`] and the only one
/// [`IterativeGp::load_json`] reads.
pub const ITERATIVE_GP_FORMAT_VERSION: u32 = 1;

/// [`IterativeOptions`] as stored: the shared parts flattened into one object, field for
/// field as before the options were composed, so version-1 files keep loading.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct OptionsRecord {
    #[serde(flatten)]
    krylov: KrylovRecord,
    #[serde(flatten)]
    estimator: EstimatorRecord,
    max_lanczos_iterations: Option<usize>,
    preconditioner_rank: usize,
    constant_mean: bool,
}

impl From<&IterativeOptions> for OptionsRecord {
    fn from(o: &IterativeOptions) -> Self {
        Self {
            krylov: o.krylov.into(),
            estimator: o.estimator.into(),
            max_lanczos_iterations: o.max_lanczos_iterations,
            preconditioner_rank: o.preconditioner_rank,
            constant_mean: o.constant_mean,
        }
    }
}

impl From<OptionsRecord> for IterativeOptions {
    fn from(o: OptionsRecord) -> Self {
        Self {
            krylov: o.krylov.into(),
            estimator: o.estimator.into(),
            max_lanczos_iterations: o.max_lanczos_iterations,
            preconditioner_rank: o.preconditioner_rank,
            constant_mean: o.constant_mean,
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
    n: usize,
    d: usize,
    x: &'a [f64],
    y: Vec<f64>,
}

#[derive(Deserialize)]
struct Saved<K> {
    kernel: K,
    noise_variance: f64,
    options: OptionsRecord,
    n: usize,
    d: usize,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl<K: Kernel + Serialize> IterativeGp<K> {
    /// Writes the model as JSON to `writer` (see the [module docs](crate::iterative::io)
    /// for the layout).
    pub fn save_json<W: Write>(&self, writer: W) -> Result<()> {
        write_json(writer, &self.saved())
    }

    /// The model as a JSON string.
    pub fn to_json_string(&self) -> Result<String> {
        json_string(&self.saved())
    }

    fn saved(&self) -> SavedRef<'_, K> {
        SavedRef {
            format: ITERATIVE_GP_FORMAT,
            version: ITERATIVE_GP_FORMAT_VERSION,
            kernel: &self.kernel,
            noise_variance: self.noise_variance,
            options: (&self.options).into(),
            n: self.y.nrows(),
            d: self.x.ncols(),
            x: &self.xs,
            y: self.y.iter().copied().collect(),
        }
    }
}

impl<K: Kernel + Clone + DeserializeOwned> IterativeGp<K> {
    /// Reads a model written by [`save_json`](Self::save_json) and refits it.
    ///
    /// Errors: [`ModelError::Serialization`](crate::ModelError::Serialization) for
    /// unreadable or malformed JSON or a wrong `format`,
    /// [`ModelError::UnsupportedVersion`](crate::ModelError::UnsupportedVersion),
    /// [`ModelError::LengthMismatch`](crate::ModelError::LengthMismatch) when `x` or `y`
    /// disagree with `n` and `d`, and every error of
    /// [`fit_with_options`](Self::fit_with_options).
    pub fn load_json<R: Read>(reader: R) -> Result<Self> {
        Self::from_json_str(&read_text(reader)?)
    }

    /// Reads a model from a JSON string written by [`to_json_string`](Self::to_json_string)
    /// or [`save_json`](Self::save_json) and refits it (errors as
    /// [`load_json`](Self::load_json)).
    pub fn from_json_str(text: &str) -> Result<Self> {
        let saved: Saved<K> = parse_saved(text, ITERATIVE_GP_FORMAT, ITERATIVE_GP_FORMAT_VERSION)?;
        let (x, y) = saved_data(
            "loading a saved iterative GP",
            saved.n,
            saved.d,
            &saved.x,
            &saved.y,
        )?;
        Self::fit_with_options(
            saved.kernel,
            x,
            y,
            saved.noise_variance,
            &saved.options.into(),
        )
    }
}
