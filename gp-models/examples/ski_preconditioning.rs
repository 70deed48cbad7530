//! What [`SkiOptions::preconditioner_rank`] costs and buys: a 2-D SKI model's likelihood
//! estimate (value and gradient, 10 probes) and its mean solve, each run with plain CG and
//! with pivoted-Cholesky preconditioners of a few ranks, at several noise variances. Prints
//! the CG iterations, the seconds (the preconditioner's build included, as a training step
//! pays it), the log-likelihood per point and the largest change of the predictive mean
//! against plain CG's.
//!
//! ```text
//! cargo run --release -p gp-models --example ski_preconditioning -- \
//!     [--d 2] [--n 100000] [--m 100] [--ell 0.1] [--noise 0]
//! ```
//!
//! Data: `n` points uniform on `[0, 1]^d` (`d` = 1, 2 or 3),
//! `y = sin(2π·2x₁) Π_{l>1} cos(2π·x_l) + 0.1 ε` with `ε` uniform on `[−½, ½]`; SE kernel
//! of lengthscale `ℓ` (`--ell`, default 0.1), output scale 1, a grid of `m` points per axis,
//! cubic interpolation, training tolerance `1e-2` (at least 20 and at most 1000 iterations)
//! and prediction tolerance `1e-4` (the defaults); the mean at 1000 test points. The noise variances are `1e-2`, `1e-3` and
//! `1e-4`, or the one given with `--noise`.
//!
//! A row that reports 1000 iterations did not converge: its time is not a speed result.

#[path = "support/cli.rs"]
mod cli;
use cli::arg;

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::{Ski, SkiOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let d = arg("--d", 2usize).clamp(1, 3);
    let n = arg("--n", 100_000);
    let m = arg("--m", 100);
    let noises = match arg("--noise", 0.0) {
        v if v > 0.0 => vec![v],
        _ => vec![1e-2, 1e-3, 1e-4],
    };
    let b = 1000;
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>());
    let tau = 2.0 * std::f64::consts::PI;
    let y = Col::from_fn(n, |i| {
        let shape: f64 = (1..d).map(|l| (tau * x[(i, l)]).cos()).product();
        (tau * 2.0 * x[(i, 0)]).sin() * shape + 0.1 * (rng.random::<f64>() - 0.5)
    });
    let x_test = Mat::from_fn(b, d, |_, _| 0.05 + 0.9 * rng.random::<f64>());
    let ell = arg("--ell", 0.1);
    let kernel = SquaredExponential::new(vec![ell; d], 1.0)?;
    println!("n = {n}, d = {d}, grid {m}^{d}, SE ℓ = {ell}, {b} test points");
    println!(
        "| σ² | rank | likelihood: iterations | seconds | log p(y)/n | mean solve: iterations | \
         seconds | max abs change of the mean |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for noise in noises {
        let mut plain_mean: Option<Col<f64>> = None;
        for rank in [0, 5, 15, 30] {
            let options = SkiOptions {
                grid: GridSettings {
                    sizes: vec![m; d],
                    ..GridSettings::default()
                },
                preconditioner_rank: rank,
                ..SkiOptions::default()
            };
            // Two fits of the same model: each builds its own preconditioner, so both timings
            // include it.
            let fit = || Ski::fit(kernel.clone(), x.as_ref(), y.as_ref(), noise, &options);
            let ski = fit()?;
            let t = Instant::now();
            let estimate = ski.lml_and_grad_estimate()?;
            let lml_secs = t.elapsed().as_secs_f64();
            let ski = fit()?;
            let t = Instant::now();
            let mean = ski.predict_mean(x_test.as_ref())?;
            let mean_secs = t.elapsed().as_secs_f64();
            let change = plain_mean.as_ref().map_or(0.0, |p| (&mean - p).norm_max());
            println!(
                "| {noise:e} | {rank} | {} | {lml_secs:.2} | {:.4} | {} | {mean_secs:.2} | {change:.1e} |",
                estimate.solve.iterations,
                estimate.lml / n as f64,
                ski.alpha_report()?.iterations,
            );
            if rank == 0 {
                plain_mean = Some(mean);
            }
        }
    }
    Ok(())
}
