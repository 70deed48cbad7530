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

use faer::{ColRef, MatRef};
use gp_kernels::Kernel;
use gp_linalg::JitterLadder;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};
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
struct Header {
    format: String,
    version: u32,
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

fn ser_err(e: impl std::fmt::Display) -> ModelError {
    ModelError::Serialization {
        reason: e.to_string(),
    }
}

impl<K: Kernel + Serialize> ExactGp<K> {
    /// Writes the model as JSON to `writer` (see the [module docs](crate::exact::io) for
    /// the layout).
    pub fn save_json<W: Write>(&self, writer: W) -> Result<()> {
        serde_json::to_writer(writer, &self.saved()).map_err(ser_err)
    }

    /// The model as a JSON string.
    pub fn to_json_string(&self) -> Result<String> {
        serde_json::to_string(&self.saved()).map_err(ser_err)
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
    /// Errors: [`ModelError::Serialization`] for unreadable or malformed JSON or a wrong
    /// `format`, [`ModelError::UnsupportedVersion`], [`ModelError::LengthMismatch`] when
    /// `x` or `y` disagree with `n` and `d`, and every error of [`fit`](Self::fit).
    pub fn load_json<R: Read>(mut reader: R) -> Result<Self> {
        let mut text = String::new();
        reader
            .read_to_string(&mut text)
            .map_err(|e| ser_err(format!("could not read the saved model: {e}")))?;
        Self::from_json_str(&text)
    }

    /// Reads a model from a JSON string written by [`to_json_string`](Self::to_json_string)
    /// or [`save_json`](Self::save_json) and refits it (errors as
    /// [`load_json`](Self::load_json)).
    pub fn from_json_str(text: &str) -> Result<Self> {
        let header: Header = serde_json::from_str(text).map_err(ser_err)?;
        if header.format != EXACT_GP_FORMAT {
            return Err(ser_err(format!(
                "expected a saved `{EXACT_GP_FORMAT}`, found format `{}`",
                header.format
            )));
        }
        if header.version != EXACT_GP_FORMAT_VERSION {
            return Err(ModelError::UnsupportedVersion {
                format: EXACT_GP_FORMAT,
                found: header.version,
                supported: EXACT_GP_FORMAT_VERSION,
            });
        }
        let saved: Saved<K> = serde_json::from_str(text).map_err(ser_err)?;
        if saved.n == 0 || saved.d == 0 {
            return Err(ModelError::EmptyData {
                context: "loading a saved exact GP",
                n: saved.n,
                d: saved.d,
            });
        }
        let expected_x = saved
            .n
            .checked_mul(saved.d)
            .ok_or_else(|| ser_err(format!("shape {}×{} overflows", saved.n, saved.d)))?;
        if saved.x.len() != expected_x {
            return Err(ModelError::LengthMismatch {
                context: "saved training points x (n·d values, row major)",
                expected: expected_x,
                found: saved.x.len(),
            });
        }
        if saved.y.len() != saved.n {
            return Err(ModelError::LengthMismatch {
                context: "saved training targets y (n values)",
                expected: saved.n,
                found: saved.y.len(),
            });
        }
        let options = FitOptions {
            constant_mean: saved.constant_mean,
            jitter: saved.jitter.into(),
        };
        let x = MatRef::from_row_major_slice(&saved.x, saved.n, saved.d);
        Self::fit_with_options(
            saved.kernel,
            x,
            ColRef::from_slice(&saved.y),
            saved.noise_variance,
            &options,
        )
    }
}
