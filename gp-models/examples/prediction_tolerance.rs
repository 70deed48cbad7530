//! What the prediction tolerance costs and buys: the predictive mean of a large SKI model
//! solved to relative residuals from `1e-10` to `1e-2`, with the CG iterations, the time and
//! the largest change of the mean against the `1e-10` solve. This is the measurement behind
//! [`DEFAULT_PREDICTION_TOLERANCE`](gp_models::DEFAULT_PREDICTION_TOLERANCE).
//!
//! ```text
//! cargo run --release -p gp-models --example prediction_tolerance -- [--n 1000000] [--m 10000]
//! ```
//!
//! Data: `n` points uniform on `[0, 1]`, `y = sin(2π·3x) + 0.1 ε` with `ε` uniform on
//! `[−½, ½]` (noise standard deviation 0.029); SE kernel `ℓ = 0.05`, output scale 1, noise
//! variance 0.01, a grid of `m` points, cubic interpolation (the `ski_predict_variance`
//! problem); the mean at 1000 test points.

#[path = "support/cli.rs"]
mod cli;
use cli::arg;

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::{GpModel, KrylovSettings, PredictRequest, Ski, SkiOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = arg("--n", 1_000_000);
    let m = arg("--m", 10_000);
    let b = 1000;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let x = Mat::from_fn(n, 1, |_, _| rng.random::<f64>());
    let y = Col::from_fn(n, |i| {
        (2.0 * std::f64::consts::PI * 3.0 * x[(i, 0)]).sin() + 0.1 * (rng.random::<f64>() - 0.5)
    });
    let x_test = Mat::from_fn(b, 1, |i, _| (i as f64 + 0.5) / b as f64);
    let kernel = SquaredExponential::new(vec![0.05], 1.0)?;
    println!("n = {n}, m = {m}, {b} test points; reference: the mean solved to 1e-10");
    println!("| tolerance | mean solve | seconds | max abs change of the mean |");
    println!("|---|---|---|---|");
    let mut reference: Option<Col<f64>> = None;
    for tol in [1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2] {
        let options = SkiOptions {
            grid: GridSettings {
                sizes: vec![m],
                ..GridSettings::default()
            },
            krylov: KrylovSettings {
                prediction_tolerance: tol,
                ..KrylovSettings::default()
            },
            ..SkiOptions::default()
        };
        let ski = Ski::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.01, &options)?;
        let t = Instant::now();
        let p = ski.predict(x_test.as_ref(), &PredictRequest::mean())?;
        let secs = t.elapsed().as_secs_f64();
        let change = reference.as_ref().map_or(0.0, |r| {
            (0..b).map(|i| (p.mean[i] - r[i]).abs()).fold(0.0, f64::max)
        });
        println!(
            "| {tol:.0e} | {} | {secs:.2} | {change:.1e} |",
            p.mean_solve.map_or("no solve".into(), |s| s.to_string())
        );
        reference.get_or_insert(p.mean);
    }
    Ok(())
}
