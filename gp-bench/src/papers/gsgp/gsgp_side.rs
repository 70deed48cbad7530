//! The GSGP side of the experiments: fitting `gp_models::Gsgp` (from data or from streamed
//! sufficient statistics) and timing its mean solve, with the spec's memory metric.

use std::time::Instant;

use faer::{Col, ColRef, MatRef};
use gp_kernels::SquaredExponential;
use gp_models::{Gsgp, GsgpOptions, SkiOptions};
use gp_structured::SufficientStats;

use super::common::{Fitted, Hypers, MeanPredictor, MeanRun, Memory, Method};
use crate::error::BenchError;

impl MeanPredictor for Gsgp<SquaredExponential> {
    fn predict_mean(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>, BenchError> {
        Ok(Gsgp::predict_mean(self, x_test)?)
    }
}

/// GSGP's memory from its sufficient statistics: `nnz(S) + 2m` entries; bytes of the stencil
/// of `S`, `t` and the six `m`-vectors of the simplified EFCG.
pub fn gsgp_memory(stats: &SufficientStats) -> Memory {
    let m = stats.grid().num_points() as u64;
    let gram = stats.gram();
    Memory {
        entries: gram.nnz() as u64 + 2 * m,
        bytes: gram.storage_bytes() as u64 + 8 * 7 * m,
    }
}

/// Fits GSGP (the sufficient statistics in one pass over the data, same grid as SKI with
/// the same `options`) and times its mean solve.
///
/// Errors: the model's.
pub fn gsgp_fit(
    hypers: &Hypers,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    options: &SkiOptions,
) -> Result<(Gsgp<SquaredExponential>, f64), BenchError> {
    let sizes = GsgpOptions::from(options).grid_for(x)?.sizes().to_vec();
    check_stats_fit(&sizes)?;
    let kernel = hypers.kernel()?;
    let t0 = Instant::now();
    let gsgp = Gsgp::fit(
        kernel,
        x,
        y,
        hypers.noise_variance(),
        &GsgpOptions::from(options),
    )?;
    Ok((gsgp, t0.elapsed().as_secs_f64()))
}

/// Times the mean solve of a fitted GSGP model (the first call that needs it).
///
/// Errors: the model's.
pub fn gsgp_time_solve(
    gsgp: &Gsgp<SquaredExponential>,
    precompute_seconds: f64,
) -> Result<MeanRun, BenchError> {
    let t1 = Instant::now();
    let report = gsgp.mean_solve_report()?;
    let solve_seconds = t1.elapsed().as_secs_f64();
    let stats = gsgp.stats();
    Ok(MeanRun {
        method: Method::Gsgp,
        n: stats.num_points(),
        m: stats.grid().num_points(),
        precompute_seconds,
        solve_seconds,
        iterations: report.iterations,
        converged: report.converged,
        memory: gsgp_memory(stats),
    })
}

/// Fits GSGP and times its mean solve.
///
/// Errors: the model's.
pub fn gsgp_mean(
    hypers: &Hypers,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    options: &SkiOptions,
) -> Result<(MeanRun, Fitted), BenchError> {
    let (gsgp, pre) = gsgp_fit(hypers, x, y, options)?;
    let run = gsgp_time_solve(&gsgp, pre)?;
    Ok((run, Box::new(gsgp)))
}

/// GSGP from precomputed (streamed) sufficient statistics: the timed mean solve.
/// `precompute_seconds` is the time of the pass that produced `stats`.
///
/// Errors: the model's.
pub fn gsgp_mean_from_stats(
    hypers: &Hypers,
    stats: SufficientStats,
    options: &SkiOptions,
    precompute_seconds: f64,
) -> Result<MeanRun, BenchError> {
    let t0 = Instant::now();
    let gsgp = Gsgp::from_stats(
        hypers.kernel()?,
        stats,
        hypers.noise_variance(),
        &GsgpOptions::from(options),
    )?;
    let build = t0.elapsed().as_secs_f64();
    gsgp_time_solve(&gsgp, precompute_seconds + build)
}

/// Bytes the statistics pass and the model need at their peak for grid `sizes` (cubic):
/// the per-thread accumulators (`(7^d + 4^d)` moments per grid cell and thread, see
/// `gp_structured::sufficient_stats`) plus the stencil of `S` and 15 `m`-vectors.
pub fn stats_pass_bytes(sizes: &[usize]) -> u128 {
    let d = sizes.len() as u32;
    let m: u128 = sizes.iter().map(|&s| s as u128).product();
    let cells: u128 = sizes.iter().map(|&s| s.saturating_sub(3) as u128).product();
    let threads = rayon::current_num_threads().max(1) as u128;
    let moments = 7u128.pow(d) + 4u128.pow(d);
    8 * (threads * cells * moments + m * (7u128.pow(d) + 15))
}

/// `MemAvailable` of `/proc/meminfo` in bytes, if readable.
pub fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    super::common::status_kb(&text, "MemAvailable:").map(|kb| kb * 1024)
}

/// Refuses a grid whose statistics pass would not fit in 90% of the available memory (an
/// allocation failure would abort the whole process instead of failing one row).
///
/// Errors: [`BenchError::InvalidArgument`] saying how much was needed.
pub fn check_stats_fit(sizes: &[usize]) -> Result<(), BenchError> {
    let need = stats_pass_bytes(sizes);
    let Some(avail) = mem_available_bytes() else {
        return Ok(());
    };
    if need > (avail as u128) * 9 / 10 {
        return Err(BenchError::InvalidArgument {
            name: "grid",
            reason: format!(
                "skipped: the statistics pass for grid {sizes:?} needs about {:.1} GiB \
                 (per-thread moment accumulators plus the 7^d stencil of S), more than 90% of \
                 the {:.1} GiB available",
                need as f64 / (1u64 << 30) as f64,
                avail as f64 / (1u64 << 30) as f64
            ),
        });
    }
    Ok(())
}
