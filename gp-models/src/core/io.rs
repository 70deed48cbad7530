//! What every saved model shares: the JSON envelope (a `format` name and a `version` in
//! front of the model's own fields), reading, the error mapping, the checks of the stored
//! training data and the string records of enums that carry no `serde`.
//!
//! Each model's `io` module ([`exact::io`](crate::exact::io),
//! [`iterative::io`](crate::iterative::io), [`ski::io`](crate::ski::io),
//! [`gsgp::io`](crate::gsgp::io), which stores the sufficient statistics instead of the data,
//! [`grief::io`](crate::grief::io)) defines its record and calls these helpers, so that every
//! format rejects a foreign or newer file in the same way: a wrong `format` is
//! [`ModelError::Serialization`], a version this crate does not read is
//! [`ModelError::UnsupportedVersion`], and unreadable or malformed JSON (a truncated file
//! included) is [`ModelError::Serialization`].
//!
//! Floats are written with shortest round-trip formatting and parsed exactly (`serde_json`'s
//! `float_roundtrip`), so a model refitted from a file sees the very same numbers and
//! predicts bit-identically.

use std::io::{Read, Write};

use faer::{ColRef, MatRef};
use gp_solvers::SlqScaling;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::core::settings::{EstimatorSettings, KrylovSettings};
use crate::error::{ModelError, Result};

/// Any serialization failure as [`ModelError::Serialization`].
pub(crate) fn ser_err(e: impl std::fmt::Display) -> ModelError {
    ModelError::Serialization {
        reason: e.to_string(),
    }
}

/// The fields every saved model starts with.
#[derive(Deserialize)]
struct Header {
    format: String,
    version: u32,
}

/// Writes `record` as JSON to `writer`.
pub(crate) fn write_json<W: Write, T: Serialize>(writer: W, record: &T) -> Result<()> {
    serde_json::to_writer(writer, record).map_err(ser_err)
}

/// `record` as a JSON string.
pub(crate) fn json_string<T: Serialize>(record: &T) -> Result<String> {
    serde_json::to_string(record).map_err(ser_err)
}

/// The whole of `reader` as text (a failing reader is [`ModelError::Serialization`]).
pub(crate) fn read_text<R: Read>(mut reader: R) -> Result<String> {
    let mut text = String::new();
    reader
        .read_to_string(&mut text)
        .map_err(|e| ser_err(format!("could not read the saved model: {e}")))?;
    Ok(text)
}

/// Parses `text` as a saved `format` of `version` into `T`.
///
/// The header is read on its own first, so that a file of another model or of a newer
/// version is reported as such rather than as whatever field of `T` it happens to lack.
pub(crate) fn parse_saved<T: DeserializeOwned>(
    text: &str,
    format: &'static str,
    version: u32,
) -> Result<T> {
    let header: Header = serde_json::from_str(text).map_err(ser_err)?;
    if header.format != format {
        return Err(ser_err(format!(
            "expected a saved `{format}`, found format `{}`",
            header.format
        )));
    }
    if header.version != version {
        return Err(ModelError::UnsupportedVersion {
            format,
            found: header.version,
            supported: version,
        });
    }
    serde_json::from_str(text).map_err(ser_err)
}

/// Stored training data of shape `n × d` as the views a `fit` takes: row-major points `x`
/// and targets `y`, checked first, since a matrix view of a slice of the wrong length would
/// be refused by faer with a panic rather than an error.
///
/// Errors: [`ModelError::EmptyData`] (with `context`), [`ModelError::Serialization`] when
/// `n·d` overflows, [`ModelError::LengthMismatch`].
pub(crate) fn saved_data<'a>(
    context: &'static str,
    n: usize,
    d: usize,
    x: &'a [f64],
    y: &'a [f64],
) -> Result<(MatRef<'a, f64>, ColRef<'a, f64>)> {
    if n == 0 || d == 0 {
        return Err(ModelError::EmptyData { context, n, d });
    }
    let expected_x = n
        .checked_mul(d)
        .ok_or_else(|| ser_err(format!("shape {n}×{d} overflows")))?;
    if x.len() != expected_x {
        return Err(ModelError::LengthMismatch {
            context: "saved training points x (n·d values, row major)",
            expected: expected_x,
            found: x.len(),
        });
    }
    if y.len() != n {
        return Err(ModelError::LengthMismatch {
            context: "saved training targets y (n values)",
            expected: n,
            found: y.len(),
        });
    }
    Ok((MatRef::from_row_major_slice(x, n, d), ColRef::from_slice(y)))
}

/// Training data as stored by the formats whose model keeps `x` as a matrix (SKI, GRIEF):
/// the shape and, as plain vectors, the points row major (point `i` at `x[i·d .. (i+1)·d]`)
/// and the targets. Flattened into the file's object, so the fields are those of the
/// version-1 files: `"n", "d", "x", "y"`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DataRecord {
    n: usize,
    d: usize,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl DataRecord {
    /// The record of the points `x` (`n × d`) and targets `y`.
    pub(crate) fn new(x: MatRef<'_, f64>, y: ColRef<'_, f64>) -> Self {
        let (n, d) = (x.nrows(), x.ncols());
        Self {
            n,
            d,
            x: (0..n)
                .flat_map(|i| (0..d).map(move |l| x[(i, l)]))
                .collect(),
            y: y.iter().copied().collect(),
        }
    }

    /// The stored data as views, checked by [`saved_data`] (errors as there).
    pub(crate) fn views(
        &self,
        context: &'static str,
    ) -> Result<(MatRef<'_, f64>, ColRef<'_, f64>)> {
        saved_data(context, self.n, self.d, &self.x, &self.y)
    }
}

/// [`SlqScaling`] as stored (gp-solvers carries no serde): `"probe_norm"` or `"dimension"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SlqScalingRecord {
    ProbeNorm,
    Dimension,
}

impl From<SlqScaling> for SlqScalingRecord {
    fn from(s: SlqScaling) -> Self {
        match s {
            SlqScaling::ProbeNorm => Self::ProbeNorm,
            SlqScaling::Dimension => Self::Dimension,
        }
    }
}

impl From<SlqScalingRecord> for SlqScaling {
    fn from(s: SlqScalingRecord) -> Self {
        match s {
            SlqScalingRecord::ProbeNorm => Self::ProbeNorm,
            SlqScalingRecord::Dimension => Self::Dimension,
        }
    }
}

/// [`KrylovSettings`] as stored. The field names are those of the version-1 files.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct KrylovRecord {
    cg_tolerance: f64,
    max_cg_iterations: usize,
    min_cg_iterations: usize,
    prediction_tolerance: f64,
    /// Absent in files written before it existed: those models solved variances to the
    /// prediction tolerance, and load that way.
    #[serde(default)]
    variance_tolerance: Option<f64>,
}

impl From<KrylovSettings> for KrylovRecord {
    fn from(k: KrylovSettings) -> Self {
        Self {
            cg_tolerance: k.tolerance,
            max_cg_iterations: k.max_iterations,
            min_cg_iterations: k.min_iterations,
            prediction_tolerance: k.prediction_tolerance,
            variance_tolerance: Some(k.variance_tolerance),
        }
    }
}

impl From<KrylovRecord> for KrylovSettings {
    fn from(k: KrylovRecord) -> Self {
        Self {
            tolerance: k.cg_tolerance,
            max_iterations: k.max_cg_iterations,
            min_iterations: k.min_cg_iterations,
            prediction_tolerance: k.prediction_tolerance,
            variance_tolerance: k.variance_tolerance.unwrap_or(k.prediction_tolerance),
        }
    }
}

/// [`EstimatorSettings`] as stored.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct EstimatorRecord {
    probes: usize,
    slq_scaling: SlqScalingRecord,
    seed: u64,
}

impl From<EstimatorSettings> for EstimatorRecord {
    fn from(e: EstimatorSettings) -> Self {
        Self {
            probes: e.probes,
            slq_scaling: e.slq_scaling.into(),
            seed: e.seed,
        }
    }
}

impl From<EstimatorRecord> for EstimatorSettings {
    fn from(e: EstimatorRecord) -> Self {
        Self {
            probes: e.probes,
            slq_scaling: e.slq_scaling.into(),
            seed: e.seed,
        }
    }
}
