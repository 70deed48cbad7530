//! What the GSGP experiments share: the paper's hyperparameters (spec `gsgp.md` §4.4), one
//! timed posterior-mean run of SKI or GSGP with the spec's memory metric (§4.3), the
//! process's peak resident memory, and small formatting helpers.
//!
//! **Per-iteration time** is the wall time of the whole mean solve divided by its
//! iterations, as the reference code does (`inf_time / num_iters`). The timed part is the
//! first call that needs the solve (`Ski::alpha_report`, `Gsgp::mean_solve_report`): the CG
//! (SKI, on `K̃ = W K_G Wᵀ + σ²I`) or factorized CG (GSGP, on `K_G`, `S = WᵀW`) iterations
//! plus forming the grid mean cache. Pre-processing (SKI: the grid, `W` and `K_G`; GSGP: the
//! grid, `S`, `Wᵀy`, `yᵀy` and `K_G`) is timed separately.
//!
//! **Memory** (spec §4.3, the paper's Table 1 metric): entry counts of what the method keeps
//! for the solve, SKI `nnz(W) + m + n` (every one of the `4^d` weights per row counted, zeros
//! included, as the reference's CSR `W` does) and GSGP `nnz(S) + 2m` (exact zeros of `S`
//! dropped, as scipy's product does). We also report the bytes of the structures this
//! implementation holds: SKI the factorized `W` (one start index and `4d` weights per point)
//! plus the CG's four `n`-vectors and two `m`-vectors; GSGP the stencil storage of `S`
//! (the upper half, `(7^d + 1)/2` values per grid node, zeros included) plus `t = Wᵀy` and
//! the simplified EFCG's six
//! `m`-vectors. The grid kernel's FFT data (the same for both) are not counted.

use std::time::Instant;

use faer::{Col, ColRef, MatRef};
use gp_kernels::SquaredExponential;
use gp_models::{GpModel, PredictRequest, Ski, SkiOptions};
use serde_json::{json, Value};

use crate::error::BenchError;

/// Fixed GP hyperparameters of one data set: noise standard deviation `σ`, length scales
/// `ℓ` (one per input dimension) and output scale `s` (the kernel's variance factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hypers {
    /// Noise standard deviation `σ` (`σ²` is added to the diagonal).
    pub noise_sd: f64,
    /// Length scales, one per input dimension.
    pub lengthscales: &'static [f64],
    /// Output scale `s` of `k(x, x') = s · exp(−Σ (x_l − x'_l)² / 2ℓ_l²)`.
    pub outputscale: f64,
}

impl Hypers {
    /// The scaled SE kernel.
    ///
    /// Errors: a non-positive value ([`BenchError::Kernel`]).
    pub fn kernel(&self) -> Result<SquaredExponential, BenchError> {
        Ok(SquaredExponential::new(
            self.lengthscales.to_vec(),
            self.outputscale,
        )?)
    }

    /// `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_sd * self.noise_sd
    }
}

/// Sine data (`configs/hypers.yaml`, Table 2: 0.074, 0.312, 1.439).
pub const SINE: Hypers = Hypers {
    noise_sd: 0.074_208_400_801_897_14,
    lengthscales: &[0.312_564_716_264_377_5],
    outputscale: 1.439_524_346_193_080_5,
};

/// SOUND (`configs/hypers.yaml`, Table 2: 0.009, 10.895, 0.002).
pub const SOUND: Hypers = Hypers {
    noise_sd: 0.009_999_999_999_999_893,
    lengthscales: &[10.895_870_623_712_57],
    outputscale: 0.002_600_000_000_000_016_4,
};

/// Radar (Table 2 = `hypers.yaml`): latitude and longitude in degrees, altitude in metres.
pub const RADAR: Hypers = Hypers {
    noise_sd: 50.0,
    lengthscales: &[0.25, 0.25, 200.0],
    outputscale: 3.5,
};

/// Precipitation, the paper's Table 2 values (the reference's `hypers.yaml` differs, spec §7
/// item 3; we use Table 2).
pub const PRECIPITATION: Hypers = Hypers {
    noise_sd: 3.990,
    lengthscales: &[3.094, 2.030, 0.189],
    outputscale: 2.786,
};

/// Which method a run used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// SKI: CG on `K̃ = W K_G Wᵀ + σ²I` (the paper's "SKI" / KISS-GP).
    Ski,
    /// GSGP: factorized CG on `K_G` and `S = WᵀW` (the paper's "GSGP").
    Gsgp,
}

impl Method {
    /// `SKI` or `GSGP`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Ski => "SKI",
            Self::Gsgp => "GSGP",
        }
    }
}

/// Memory of a mean solve: the paper's entry count and our bytes (see the
/// [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Memory {
    /// Spec §4.3: SKI `nnz(W) + m + n`, GSGP `nnz(S) + 2m`.
    pub entries: u64,
    /// Bytes of the structures this implementation holds for the solve.
    pub bytes: u64,
}

/// One timed posterior-mean run.
#[derive(Debug, Clone, PartialEq)]
pub struct MeanRun {
    /// The method.
    pub method: Method,
    /// Training points.
    pub n: usize,
    /// Grid points.
    pub m: usize,
    /// Pre-processing wall time (grid, `W` or `S`, `K_G`), seconds.
    pub precompute_seconds: f64,
    /// Wall time of the mean solve (iterations and the grid mean cache), seconds.
    pub solve_seconds: f64,
    /// Iterations of the solve.
    pub iterations: usize,
    /// Whether the solve met its tolerance.
    pub converged: bool,
    /// Memory of the solve.
    pub memory: Memory,
}

impl MeanRun {
    /// Solve wall time / iterations (iterations counted at least 1).
    pub fn per_iteration(&self) -> f64 {
        self.solve_seconds / self.iterations.max(1) as f64
    }

    /// The run as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "method": self.method.label(),
            "n": self.n,
            "m": self.m,
            "precompute_seconds": self.precompute_seconds,
            "solve_seconds": self.solve_seconds,
            "iterations": self.iterations,
            "per_iteration_seconds": self.per_iteration(),
            "converged": self.converged,
            "memory_entries": self.memory.entries,
            "memory_bytes": self.memory.bytes,
        })
    }
}

/// A fitted model of either method, kept for predictions after the timed mean solve.
///
/// A trait object rather than [`GpModel`], which is not object safe (it returns `Self`);
/// every [`GpModel`] is one, through the interface's mean-only prediction.
pub trait MeanPredictor {
    /// Posterior mean at the rows of `x_test`.
    ///
    /// Errors: the model's.
    fn predict_mean(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>, BenchError>;
}

impl<M: GpModel> MeanPredictor for M {
    fn predict_mean(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>, BenchError> {
        Ok(self.predict_latent(x_test, &PredictRequest::mean())?.mean)
    }
}

/// A boxed fitted model.
pub type Fitted = Box<dyn MeanPredictor>;

/// `4^d` (cubic weights per point).
fn cubic_weights_per_row(d: usize) -> u64 {
    4u64.pow(d as u32)
}

/// SKI's memory for `n` points in `d` dimensions on `m` grid points with `w_bytes` bytes of
/// interpolation weights.
pub fn ski_memory(n: usize, d: usize, m: usize, w_bytes: usize) -> Memory {
    let (n, m) = (n as u64, m as u64);
    Memory {
        entries: n * cubic_weights_per_row(d) + m + n,
        bytes: w_bytes as u64 + 8 * (4 * n + 2 * m),
    }
}

/// Fits SKI and times the mean solve.
///
/// Errors: the model's ([`BenchError::Model`]).
pub fn ski_mean(
    hypers: &Hypers,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    options: &SkiOptions,
) -> Result<(MeanRun, Fitted), BenchError> {
    let kernel = hypers.kernel()?;
    let t0 = Instant::now();
    let ski = Ski::fit(kernel, x, y, hypers.noise_variance(), options)?;
    let precompute_seconds = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let report = ski.alpha_report()?.clone();
    let solve_seconds = t1.elapsed().as_secs_f64();
    let m = ski.grid().num_points();
    let run = MeanRun {
        method: Method::Ski,
        n: x.nrows(),
        m,
        precompute_seconds,
        solve_seconds,
        iterations: report.iterations,
        converged: report.converged,
        memory: ski_memory(x.nrows(), x.ncols(), m, ski.interpolation().storage_bytes()),
    };
    Ok((run, Box::new(ski)))
}

/// The process's peak resident set size in bytes (`VmHWM` of `/proc/self/status`), if
/// readable.
pub fn peak_rss_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    status_kb(&text, "VmHWM:").map(|kb| kb * 1024)
}

/// The current resident set size in bytes (`VmRSS`), if readable.
pub fn current_rss_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    status_kb(&text, "VmRSS:").map(|kb| kb * 1024)
}

/// Resets the kernel's peak-RSS counter of this process (writes `5` to
/// `/proc/self/clear_refs`), so that a later [`peak_rss_bytes`] measures from now. Returns
/// whether it worked.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The `<key>  <value> kB` line of a `/proc/self/status` text, in kB.
pub fn status_kb(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Bytes with a binary unit (`1.50 GiB`).
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// A count with a K/M suffix as the paper prints grid sizes (`51.2K`, `6.4M`).
pub fn fmt_count(v: usize) -> String {
    if v >= 1_000_000 {
        format!("{}M", trim(v as f64 / 1e6))
    } else if v >= 1000 {
        format!("{}K", trim(v as f64 / 1e3))
    } else {
        v.to_string()
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines() {
        let text = "Name: x\nVmHWM:\t  2048 kB\nVmRSS:   1024 kB\n";
        assert_eq!(status_kb(text, "VmHWM:"), Some(2048));
        assert_eq!(status_kb(text, "VmRSS:"), Some(1024));
        assert_eq!(status_kb(text, "VmPeak:"), None);
    }

    #[test]
    fn counts_and_bytes() {
        assert_eq!(fmt_count(51_200), "51.2K");
        assert_eq!(fmt_count(6_400_000), "6.4M");
        assert_eq!(fmt_count(8000), "8K");
        assert_eq!(fmt_count(700), "700");
        assert_eq!(fmt_bytes(3 << 30), "3.00 GiB");
    }

    #[test]
    fn paper_memory_rule_for_sound() {
        // Spec §4.3 sanity arithmetic: n = 59 306, m = 60 000, d = 1: SKI counts 4n + m + n.
        let mem = ski_memory(59_306, 1, 60_000, 0);
        assert_eq!(mem.entries, 4 * 59_306 + 60_000 + 59_306);
    }
}
