//! `gp-bench bench ski-matvec`: the SKI operator `K̃ = W K_G Wᵀ + σ²I` applied to one vector
//! at `n = 10^6`, `d = 1`, `m = 10^4`, and a `d = 3`, `n = 10^5`, `30³` grid SKI run (fit,
//! product, mean solve). GPyTorch's KISS-GP column quotes what
//! `gp-bench/scripts/ski_gpytorch_matvec.py` measured ([`super::ski_peer`]).

use std::time::Instant;

use faer::Col;
use gp_kernels::SquaredExponential;
use gp_linalg::LinearOperator;
use gp_models::grid::GridSettings;
use gp_models::{EstimatorSettings, KrylovSettings};
use gp_models::{Ski, SkiOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::ski_peer::{self, PeerRecord};
use crate::error::BenchError;
use crate::synthetic::{smooth_regression, standard_normal};
use crate::table::{fmt_seconds, Table};
use crate::timing::median_time;

/// Least number of timed products into a held output.
const MATVEC_REPS: usize = 15;

/// Fits SKI on `n` smooth-regression points in `[0, 1]^d` with `grid` points per dimension
/// and times: the fit, one operator product into a held output (median of `max(reps, 15)`,
/// as a solver runs it) and through `apply`, which allocates the output (median of `reps`),
/// and a mean solve to relative tolerance `1e-2`. Returns a table row.
fn row(
    n: usize,
    d: usize,
    grid: usize,
    reps: usize,
    peer: Option<&PeerRecord>,
) -> Result<[String; 10], BenchError> {
    let (x, y) = smooth_regression(n, d, 0.01, 11);
    let kernel = SquaredExponential::isotropic(d, 0.2, 1.0)?;
    let opts = SkiOptions {
        grid: GridSettings {
            sizes: vec![grid; d],
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            prediction_tolerance: 1e-2,
            variance_tolerance: 1e-2,
            ..KrylovSettings::default()
        },
        estimator: EstimatorSettings {
            probes: 1,
            ..EstimatorSettings::default()
        },
        // Plain CG (only the products are timed here).
        preconditioner_rank: 0,
    };
    let t0 = Instant::now();
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.01, &opts)?;
    let fit = t0.elapsed().as_secs_f64();
    let v: Col<f64> = standard_normal(n, &mut ChaCha8Rng::seed_from_u64(3));
    let op = ski.operator();
    let (t_apply, out) = median_time(reps, || op.apply(v.as_ref()));
    out?;
    // The product as an iterative solver performs it: into an output it already holds (`apply`
    // also allocates the n-vector, whose fresh pages the kernel zeroes on first touch). One
    // product costs milliseconds, so more repetitions than `reps` cost little and steady the
    // median on a noisy machine.
    let mut out = Col::<f64>::zeros(n);
    let (t_mv, ()) = median_time(reps.max(MATVEC_REPS), || {
        op.matvec(v.as_ref(), out.as_mut());
    });
    let t1 = Instant::now();
    let report = ski.alpha_report()?.clone();
    let solve = t1.elapsed().as_secs_f64();
    let m = ski.grid().num_points();
    // GPyTorch's product allocates its output, so it compares with `apply`.
    let vs_gpytorch = ski_peer::cell_here(peer, n, d, grid, t_apply);
    Ok([
        n.to_string(),
        d.to_string(),
        format!("{grid}^{d} = {m}"),
        fmt_seconds(fit),
        fmt_seconds(t_mv),
        fmt_seconds(t_apply),
        format!(
            "{} ({} iterations{})",
            fmt_seconds(solve),
            report.iterations,
            if report.converged {
                ""
            } else {
                ", not converged"
            }
        ),
        format!(
            "{:.1} MiB",
            ski.interpolation().storage_bytes() as f64 / (1u64 << 20) as f64
        ),
        vs_gpytorch,
        std::thread::available_parallelism()
            .map_or(1, |p| p.get())
            .to_string(),
    ])
}

/// The table: `n = sizes[0]` (default `10^6`) at `d = 1`, `m = 10^4`, then `d = 3`,
/// `n = 10^5`, grid `30³`.
///
/// Errors: the model's.
pub fn run(sizes: &[usize], reps: usize) -> Result<Table, BenchError> {
    let mut table = Table::new([
        "n",
        "d",
        "grid m",
        "fit (grid, W, K_G)",
        "K̃ v into a held output (median)",
        "apply: K̃ v into a new vector (median)",
        "mean solve (tol 1e-2)",
        "W storage",
        "GPyTorch KISS-GP",
        "threads",
    ]);
    let n1 = sizes.first().copied().unwrap_or(1_000_000);
    let peer = ski_peer::load().map(|(rec, _)| rec);
    table.row(row(n1, 1, 10_000, reps, peer.as_ref())?);
    table.row(row(100_000, 3, 30, reps, peer.as_ref())?);
    Ok(table)
}
