//! Saving and loading an [`ExactGp`] as JSON.
//!
//! The file stores the format name and version, the kernel (through its own `serde`
//! implementation), the noise variance, the fit options, and the training data as plain
//! vectors with their shape:
//!
//! ```text
//! { "format": "gpscale.exact_gp", "version": 1, "kernel": {...}, "noise_variance": 0.01,
//!   "constant_mean": false, "jitter": {"start": 1e-10, "growth": 10.0, "max": 1e-6, "relative": true},
//!   "n": 3, "d": 2, "x": [x₀₀, x₀₁, x₁₀, ...], "y": [y₀, y₁, y₂] }
//! ```
//!
//! `x` is row major: point `i` is `x[i·d .. (i+1)·d]`.
//!
//! Loading refits the Cholesky factor instead of storing it: the factor has `n²/2`
//! entries (a JSON file of gigabytes at `n = 10⁴`, against `n·(d+1)` numbers for the data),
//! while refitting costs one `O(n³)` factorization and, since the same inputs go through the
//! same deterministic code, gives bit-identical predictions (floats are written with
//! shortest round-trip formatting and parsed exactly, `serde_json`'s `float_roundtrip`).
//! Every check of [`ExactGp::fit`] runs again on load (finiteness, positive noise, the
//! kernel's dimension and hyperparameters), so a hand-edited file cannot produce a model
//! that [`fit`](ExactGp::fit) would have refused.

use std::io::{Read, Write};

use gp_kernels::Kernel;
use gp_linalg::JitterLadder;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::core::io::{json_string, parse_saved, read_text, saved_data, write_json};
use crate::error::Result;
use crate::exact::model::ExactGp;
use crate::exact::options::FitOptions;

/// The `format` field of a saved [`ExactGp`].
pub const EXACT_GP_FORMAT: &str = "gpscale.exact_gp";

/// The format version written by [`ExactGp::save_json`] and the only one
/// [`ExactGp::load_json`] reads.
pub const EXACT_GP_FORMAT_VERSION: u32 = 1;

/// The jitter ladder as stored (faer and gp-linalg types carry no serde).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct JitterRecord {
    start: f64,
    growth: f64,
    max: f64,
    relative: bool,
}

impl From<JitterLadder> for JitterRecord {
    fn from(j: JitterLadder) -> Self {
        Self {
            start: j.start,
            growth: j.growth,
            max: j.max,
            relative: j.relative,
        }
    }
}

impl From<JitterRecord> for JitterLadder {
    fn from(j: JitterRecord) -> Self {
        Self {
            start: j.start,
            growth: j.growth,
            max: j.max,
            relative: j.relative,
        }
    }
}

#[derive(Serialize)]
struct SavedRef<'a, K> {
    format: &'static str,
    version: u32,
    kernel: &'a K,
    noise_variance: f64,
    constant_mean: bool,
    jitter: JitterRecord,
    n: usize,
    d: usize,
    x: &'a [f64],
    y: Vec<f64>,
}

#[derive(Deserialize)]
struct Saved<K> {
    kernel: K,
    noise_variance: f64,
    constant_mean: bool,
    jitter: JitterRecord,
    n: usize,
    d: usize,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl<K: Kernel + Serialize> ExactGp<K> {
    /// Writes the model as JSON to `writer` (see the [module docs](crate::exact::io) for
    /// the layout).
    pub fn save_json<W: Write>(&self, writer: W) -> Result<()> {
        write_json(writer, &self.saved())
    }

    /// The model as a JSON string.
    pub fn to_json_string(&self) -> Result<String> {
        json_string(&self.saved())
    }

    fn saved(&self) -> SavedRef<'_, K> {
        SavedRef {
            format: EXACT_GP_FORMAT,
            version: EXACT_GP_FORMAT_VERSION,
            kernel: &self.kernel,
            noise_variance: self.noise_variance,
            constant_mean: self.options.constant_mean,
            jitter: self.options.jitter.into(),
            n: self.n_train(),
            d: self.d,
            x: &self.xs,
            y: (0..self.n_train()).map(|i| self.y[i]).collect(),
        }
    }
}

impl<K: Kernel + Clone + DeserializeOwned> ExactGp<K> {
    /// Reads a model written by [`save_json`](Self::save_json) and refits it.
    ///
    /// Errors: [`ModelError::Serialization`](crate::ModelError::Serialization) for
    /// unreadable or malformed JSON or a wrong `format`,
    /// [`ModelError::UnsupportedVersion`](crate::ModelError::UnsupportedVersion),
    /// [`ModelError::LengthMismatch`](crate::ModelError::LengthMismatch) when `x` or `y`
    /// disagree with `n` and `d`, and every error of [`fit`](Self::fit).
    pub fn load_json<R: Read>(reader: R) -> Result<Self> {
        Self::from_json_str(&read_text(reader)?)
    }

    /// Reads a model from a JSON string written by [`to_json_string`](Self::to_json_string)
    /// or [`save_json`](Self::save_json) and refits it (errors as
    /// [`load_json`](Self::load_json)).
    pub fn from_json_str(text: &str) -> Result<Self> {
        let saved: Saved<K> = parse_saved(text, EXACT_GP_FORMAT, EXACT_GP_FORMAT_VERSION)?;
        let (x, y) = saved_data(
            "loading a saved exact GP",
            saved.n,
            saved.d,
            &saved.x,
            &saved.y,
        )?;
        let options = FitOptions {
            constant_mean: saved.constant_mean,
            jitter: saved.jitter.into(),
            memory_limit: None,
        };
        Self::fit_with_options(saved.kernel, x, y, saved.noise_variance, &options)
    }
}
