//! The SKI model's log marginal likelihood and its gradient at given hyperparameters on the
//! 3DRoad stand-in (the data of `reproduce rtgps --only structured`), from CG run to a
//! relative residual of 1e-5 (up to 8000 iterations) with 10 probes: a check of where a
//! training run ended, at a size where Cholesky cannot be used.
//!
//! `cargo run --release -p gp-bench --example ski_lml_at -- [--rank K] LOGPARAMS [LOGPARAMS ...]`,
//! each `LOGPARAMS` being `log ℓ₁,log ℓ₂,log ℓ₃,log s,log σ²` (the `log_params` of a step in
//! the experiment's `results.json`). Prints `log p(y) / n`, the data fit, the log-determinant,
//! the gradient divided by `n` and the CG iterations. At an optimum the gradient is near zero.
//! The solves are preconditioned by the rank-`K` pivoted Cholesky of `W K_G Wᵀ` (default 5,
//! the training's; `--rank 0` for none).

use std::time::Instant;

use gp_kernels::SquaredExponential;
use gp_models::objective::{krylov_estimate, KrylovDepth, KrylovObjectiveOptions, SkiCovariance};
use gp_models::{Ski, SkiOptions};
use rand::SeedableRng;

/// The stand-in's training size, grid and noise (as in the experiment's `--full`).
const N: usize = 278_319;
const TEST: usize = 20_000;
const GRID: usize = 32;
const NOISE: f64 = 0.01;
/// The experiment's data seed (`ctx.seed ^ 0x3D` with seed 0).
const DATA_SEED: u64 = 0x3D;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut rank = KrylovObjectiveOptions::default().preconditioner_rank;
    if let Some(at) = args.iter().position(|a| a == "--rank") {
        rank = args.get(at + 1).ok_or("--rank needs a value")?.parse()?;
        args.drain(at..at + 2);
    }
    let points: Vec<Vec<f64>> = args
        .iter()
        .map(|a| {
            a.split(',')
                .map(str::parse)
                .collect::<Result<Vec<f64>, _>>()
        })
        .collect::<Result<_, _>>()?;
    if points.is_empty() || points.iter().any(|p| p.len() != 5) {
        return Err("pass one or more `log ℓ₁,log ℓ₂,log ℓ₃,log s,log σ²` lists".into());
    }
    let (x, y) = gp_bench::synthetic::smooth_regression(N + TEST, 3, NOISE, DATA_SEED);
    let (x, y) = (x.subrows(0, N), y.subrows(0, N));
    let mut options = SkiOptions::default();
    options.grid.sizes = vec![GRID; 3];
    let start = std::f64::consts::LN_2;
    let base = Ski::fit(
        SquaredExponential::isotropic(3, start, start)?,
        x,
        y,
        start,
        &options,
    )?;
    for log_params in points {
        let ski = base.with_log_params(&log_params)?;
        let krylov = KrylovObjectiveOptions {
            tolerance: 1e-5,
            with_value: true,
            preconditioner_rank: rank,
            ..KrylovObjectiveOptions::default()
        };
        let covariance = SkiCovariance::with_options(&ski, &krylov)?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let t = Instant::now();
        let e = krylov_estimate(
            &covariance,
            ski.train_y().as_mat(),
            KrylovDepth::Fixed(8000),
            &krylov,
            None,
            &mut rng,
        )?;
        let per_n = |v: f64| v / N as f64;
        println!(
            "{log_params:?}, rank {rank}: log p / n {:.4}, data fit {:.4e}, log det {:.4e}, gradient / n {:?}, {} CG iterations ({:.0} s)",
            e.lml.map_or(f64::NAN, per_n),
            e.data_fit.unwrap_or(f64::NAN),
            e.log_det.unwrap_or(f64::NAN),
            e.gradient.iter().map(|g| (per_n(*g) * 1e4).round() / 1e4).collect::<Vec<_>>(),
            e.work,
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
