//! Classification metrics of the IterNCGP experiments (Tatzel et al., App. C.3; spec §3.7)
//! and the memory arithmetic of §5.2 (spec U15).
//!
//! The metrics take an `N × C` matrix of predictive class probabilities (rows are points,
//! e.g. from [`probit_softmax`](super::predictive::probit_softmax)) and the `N` labels in
//! `0..C`:
//!
//! * [`accuracy`]: the fraction of points whose most probable class is the label;
//! * [`negative_log_likelihood`]: the mean of `−ln π[label]` (the paper writes `log`
//!   without the minus sign, a typo);
//! * [`expected_calibration_error`]: torchmetrics' `MulticlassCalibrationError` with
//!   `norm = "l1"` on the top-label confidence, [`ECE_BINS`] bins in the paper.
//!
//! ```
//! use gp_models::faer::mat;
//! use gp_models::ncgp::metrics::{accuracy, expected_calibration_error};
//!
//! // The example of torchmetrics' documentation.
//! let preds = mat![[0.25, 0.20, 0.55], [0.55, 0.05, 0.40], [0.10, 0.30, 0.60], [0.90, 0.05, 0.05]];
//! let labels = [0, 1, 2, 0];
//! assert_eq!(accuracy(preds.as_ref(), &labels)?, 0.5);
//! assert!((expected_calibration_error(preds.as_ref(), &labels, 3)? - 0.2).abs() < 1e-12);
//! # Ok::<(), gp_models::ModelError>(())
//! ```

use faer::MatRef;

use crate::error::{ModelError, Result};

/// The number of calibration bins of the paper's ECE (torchmetrics' `n_bins = 15`).
pub const ECE_BINS: usize = 15;

/// Checks probabilities and labels: at least one row, one label per row, every label a
/// column, every probability finite and non-negative.
fn check_inputs(
    probabilities: MatRef<'_, f64>,
    labels: &[usize],
    what: &'static str,
) -> Result<()> {
    let (n, c) = probabilities.shape();
    if n == 0 {
        return Err(ModelError::InvalidOption {
            name: what,
            reason: "the probability matrix has no rows; need at least one point".to_string(),
        });
    }
    if labels.len() != n {
        return Err(ModelError::LengthMismatch {
            context: what,
            expected: n,
            found: labels.len(),
        });
    }
    if let Some((i, &label)) = labels.iter().enumerate().find(|&(_, &l)| l >= c) {
        return Err(ModelError::InvalidOption {
            name: what,
            reason: format!(
                "label {label} of point {i} is not a class: the probabilities have {c} columns"
            ),
        });
    }
    for j in 0..c {
        for i in 0..n {
            let value = probabilities[(i, j)];
            if !value.is_finite() {
                return Err(ModelError::NonFinite {
                    context: what,
                    row: i,
                    col: j,
                    value,
                });
            }
            if value < 0.0 {
                return Err(ModelError::InvalidOption {
                    name: what,
                    reason: format!(
                        "probabilities must be non-negative, got {value} at row {i}, column {j}"
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The most probable class of row `i` and its probability; ties go to the lowest index.
fn top_label(probabilities: MatRef<'_, f64>, i: usize) -> (usize, f64) {
    let mut best = (0, probabilities[(i, 0)]);
    for j in 1..probabilities.ncols() {
        let p = probabilities[(i, j)];
        if p > best.1 {
            best = (j, p);
        }
    }
    best
}

/// The accuracy: the fraction of rows whose largest probability is in the label's column
/// (ties go to the lowest column index).
///
/// # Errors
/// [`ModelError::InvalidOption`] for zero rows, a label that is not a column, or a negative
/// probability; [`ModelError::LengthMismatch`] if there is not one label per row;
/// [`ModelError::NonFinite`] for a NaN or infinite probability.
pub fn accuracy(probabilities: MatRef<'_, f64>, labels: &[usize]) -> Result<f64> {
    check_inputs(probabilities, labels, "accuracy")?;
    let correct = labels
        .iter()
        .enumerate()
        .filter(|&(i, &label)| top_label(probabilities, i).0 == label)
        .count();
    Ok(correct as f64 / labels.len() as f64)
}

/// The negative log likelihood: the mean over rows of `−ln p[label]`.
///
/// Non-negative for probabilities at most one. A zero probability of a label gives `+∞`
/// (the point is deemed impossible), and the mean is then `+∞`.
///
/// # Errors
/// As [`accuracy`].
pub fn negative_log_likelihood(probabilities: MatRef<'_, f64>, labels: &[usize]) -> Result<f64> {
    check_inputs(probabilities, labels, "negative_log_likelihood")?;
    let total: f64 = labels
        .iter()
        .enumerate()
        .map(|(i, &label)| -probabilities[(i, label)].ln())
        .sum();
    Ok(total / labels.len() as f64)
}

/// The expected calibration error of the top-label confidence, as torchmetrics'
/// `MulticlassCalibrationError(num_classes = C, n_bins = bins, norm = "l1")` computes it
/// (the paper uses 15 bins, [`ECE_BINS`]).
///
/// For each row the confidence is its largest probability and the prediction its column
/// (ties to the lowest index). The bin boundaries are `linspace(0, 1, bins + 1)`, i.e.
/// `b_k = k / bins`, and the bin of a confidence is (number of boundaries `≤` conf) `− 1`
/// (torch's `bucketize(…, right = True) − 1`): bins are left-closed and right-open, a
/// confidence exactly on a boundary goes to the bin that starts there, and a confidence of
/// exactly 1 (or above) falls into an extra bucket `bins` of its own. With `n_b` points,
/// mean accuracy `acc_b` and mean confidence `conf_b` in bucket `b`,
///
/// ```text
/// ECE = Σ_b (n_b / n) |acc_b − conf_b|     (empty buckets contribute 0).
/// ```
///
/// Differences from torchmetrics: everything is computed in `f64` (torchmetrics casts to
/// `f32`, so a confidence within `f32` rounding of a boundary may land in the other bin
/// there), the boundaries are the correctly rounded `k / bins`, and the probabilities are
/// used as given (torchmetrics applies a softmax first when they are not in `[0, 1]`).
///
/// # Errors
/// As [`accuracy`], and [`ModelError::InvalidOption`] for `bins = 0`.
pub fn expected_calibration_error(
    probabilities: MatRef<'_, f64>,
    labels: &[usize],
    bins: usize,
) -> Result<f64> {
    if bins == 0 {
        return Err(ModelError::InvalidOption {
            name: "expected_calibration_error (bins)",
            reason: "need at least one bin (the paper uses 15, ECE_BINS)".to_string(),
        });
    }
    check_inputs(probabilities, labels, "expected_calibration_error")?;
    let boundaries: Vec<f64> = (0..=bins).map(|k| k as f64 / bins as f64).collect();
    let mut count = vec![0usize; bins + 1];
    let mut conf_sum = vec![0.0f64; bins + 1];
    let mut acc_sum = vec![0.0f64; bins + 1];
    for (i, &label) in labels.iter().enumerate() {
        let (prediction, confidence) = top_label(probabilities, i);
        // `confidence ≥ 0 = b_0`, so at least one boundary is ≤ it.
        let bucket = boundaries
            .partition_point(|&b| b <= confidence)
            .saturating_sub(1);
        count[bucket] += 1;
        conf_sum[bucket] += confidence;
        if prediction == label {
            acc_sum[bucket] += 1.0;
        }
    }
    let n = labels.len() as f64;
    let ece = (0..=bins)
        .filter(|&b| count[b] > 0)
        .map(|b| {
            let nb = count[b] as f64;
            (nb / n) * (acc_sum[b] / nb - conf_sum[b] / nb).abs()
        })
        .sum();
    Ok(ece)
}

/// Bytes of the dense `NC × NC` system matrix (`K` or `K̂ = K + W⁻¹`) of `n` points with
/// `outputs` latent functions in 8-byte floats: `(n C)² · 8` (paper §5.2: 8.0e12 bytes for
/// `N = 10⁵`, `C = 10`). Computed in `f64`, so it does not overflow.
pub fn dense_system_bytes(n: usize, outputs: usize) -> f64 {
    let nc = n as f64 * outputs as f64;
    nc * nc * 8.0
}

/// Bytes of `buffers` IterNCGP buffers (`S`, `T = KS`, `Q`, …) of `columns` columns each,
/// for `n` points and `outputs` latent functions: `buffers · columns · n C · 8` (spec §7.12:
/// 8 MB per column at `N = 10⁵`, `C = 10`). Computed in `f64`.
pub fn buffer_bytes(n: usize, outputs: usize, columns: usize, buffers: usize) -> f64 {
    buffers as f64 * columns as f64 * n as f64 * outputs as f64 * 8.0
}
