//! The GSGP side of the experiments: fitting `gp_models::Gsgp` (from data or from streamed
//! sufficient statistics) and timing its mean solve, with the spec's memory metric.

use std::time::Instant;

use faer::{ColRef, MatRef};
use gp_kernels::SquaredExponential;
use gp_models::{Gsgp, GsgpOptions, SkiOptions};
use gp_structured::sufficient_stats::{StatsPath, StatsPlan};
use gp_structured::{InterpolationScheme, SufficientStats};

use super::common::{Fitted, Hypers, MeanRun, Memory, Method};
use crate::error::BenchError;

/// GSGP's memory from its sufficient statistics: `nnz(S) + 2m` entries; bytes of the stored
/// half of the stencil of `S`, `t` and the six `m`-vectors of the simplified EFCG.
pub fn gsgp_memory(stats: &SufficientStats) -> Memory {
    let m = stats.grid().num_points() as u64;
    let gram = stats.gram();
    Memory {
        entries: gram.nnz() as u64 + 2 * m,
        bytes: gram.storage_bytes() as u64 + 8 * 7 * m,
    }
}

/// The GSGP options of the same grid, solves and probes as the SKI `options` (the default
/// factorized solver), so both sides of a comparison run on one grid.
pub fn gsgp_options(options: &SkiOptions) -> GsgpOptions {
    GsgpOptions::from_parts(options.grid.clone(), options.krylov, options.estimator)
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
    let sizes = gsgp_options(options).grid_for(x)?.sizes().to_vec();
    check_stats_fit(&sizes, x.nrows())?;
    let kernel = hypers.kernel()?;
    let t0 = Instant::now();
    let gsgp = Gsgp::fit(
        kernel,
        x,
        y,
        hypers.noise_variance(),
        &gsgp_options(options),
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
        &gsgp_options(options),
    )?;
    let build = t0.elapsed().as_secs_f64();
    gsgp_time_solve(&gsgp, precompute_seconds + build)
}

/// Bytes of the statistics pass on its cell-moment path for grid `sizes` (cubic), whatever
/// `n`: the per-thread moment records (`(7^d + 4^d)` per grid cell and thread, see
/// `gp_structured::sufficient_stats`) plus the stencil of `S` and 15 `m`-vectors. This is what
/// the pass needed before it could scatter points directly (over 40 GiB for the 6.4M radar grid on
/// two threads); [`stats_pass_bytes_for`] is the estimate of the path the pass takes.
pub fn stats_pass_bytes(sizes: &[usize]) -> u128 {
    let plan = SufficientStats::plan_with_path(
        sizes,
        InterpolationScheme::Cubic,
        None,
        StatsPath::CellMoments,
    );
    stats_bytes(sizes, &plan)
}

/// The plan of the statistics pass for `n` points on grid `sizes` (cubic): the path
/// `SufficientStats::compute` takes (cell moments for many points per cell, point scatter
/// otherwise or when the moment records would not fit in memory) and its memory.
pub fn stats_plan(sizes: &[usize], n: usize) -> StatsPlan {
    SufficientStats::plan(sizes, InterpolationScheme::Cubic, Some(n))
}

/// Bytes the statistics pass and the model need at their peak: the pass's scratch (see
/// [`StatsPlan`]) plus the stored half of the stencil of `S` (`(7^d + 1)/2` values per node)
/// and 15 `m`-vectors (`t` and the model's solve vectors, as `gp_models::gsgp::memory` counts
/// them).
fn stats_bytes(sizes: &[usize], plan: &StatsPlan) -> u128 {
    let d = sizes.len() as u32;
    let m: u128 = sizes.iter().map(|&s| s as u128).product();
    plan.scratch_bytes + 8 * m * (7u128.pow(d).div_ceil(2) + 15)
}

/// Bytes the statistics pass for `n` points on grid `sizes` (cubic) and the model need at
/// their peak, on the path the pass takes ([`stats_plan`]): its scratch (the per-thread moment
/// records, or the bounded point buffer of the point scatter) plus the stencil of `S` and 15
/// `m`-vectors. For the 6.4M radar grid at `n = 10.5M` this is the point scatter, about
/// 9.4 GiB (the stencil alone is 8.2 GiB).
pub fn stats_pass_bytes_for(sizes: &[usize], n: usize) -> u128 {
    stats_bytes(sizes, &stats_plan(sizes, n))
}

/// `MemAvailable` of `/proc/meminfo` in bytes, if readable.
pub fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    super::common::status_kb(&text, "MemAvailable:").map(|kb| kb * 1024)
}

/// Refuses a grid whose statistics pass for `n` points (and the model) would not fit in 90% of
/// the available memory (an allocation failure would abort the whole process instead of
/// failing one row).
///
/// Errors: [`BenchError::InvalidArgument`] saying how much was needed.
pub fn check_stats_fit(sizes: &[usize], n: usize) -> Result<(), BenchError> {
    let plan = stats_plan(sizes, n);
    let need = stats_bytes(sizes, &plan);
    let Some(avail) = mem_available_bytes() else {
        return Ok(());
    };
    if need > (avail as u128) * 9 / 10 {
        let gib = |b: u128| b as f64 / (1u64 << 30) as f64;
        return Err(BenchError::InvalidArgument {
            name: "grid",
            reason: format!(
                "skipped: the statistics pass for grid {sizes:?} and n = {n} ({} path) and the \
                 model need about {:.1} GiB (the stencil of S {:.1} GiB, the pass's scratch \
                 {:.1} GiB, 15 m-vectors), more than 90% of the {:.1} GiB available",
                plan.path.name(),
                gib(need),
                gib(plan.output_bytes),
                gib(plan.scratch_bytes),
                gib(avail as u128)
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_estimate_follows_the_path_of_the_pass() {
        let gib = 1u128 << 30;
        // Radar 6.4M of Table 1: 1.8 points per cell, the point scatter; the stencil of S
        // (8.2 GiB) dominates.
        let radar = [400, 400, 40];
        assert_eq!(stats_plan(&radar, 10_500_000).path, StatsPath::PointScatter);
        let need = stats_pass_bytes_for(&radar, 10_500_000);
        assert!(need > 9 * gib && need < 10 * gib, "{need}");
        // The cell moments would need the per-thread records on top.
        assert!(stats_pass_bytes(&radar) > need + 10 * gib);
        // The entire-US run (10^8 points on 160×80×10): the cell moments, well under 1 GiB.
        let us = [160, 80, 10];
        assert_eq!(stats_plan(&us, 100_000_000).path, StatsPath::CellMoments);
        assert_eq!(
            stats_pass_bytes_for(&us, 100_000_000),
            stats_pass_bytes(&us)
        );
        assert!(stats_pass_bytes(&us) < gib);
    }
}
