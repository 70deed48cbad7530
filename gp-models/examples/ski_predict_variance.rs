//! Predictive variances of a large SKI model through the common interface's default
//! `predict` (LOVE above `LOVE_AUTO_MIN_TRAIN` points), timed and checked against exact
//! solves on a subset of the test points.
//!
//! ```text
//! cargo run --release -p gp-models --example ski_predict_variance -- [--n 1000000] [--m 10000] [--test 1000] [--check 20]
//! ```
//!
//! Data: `n` points uniform on `[0, 1]`, `y = sin(2π·3x) + 0.1 ε`; SE kernel `ℓ = 0.05`,
//! output scale 1, noise variance 0.01, a grid of `m` points, cubic interpolation (the
//! `gp-bench bench ski-matvec` problem at `d = 1`). Printed: the time of the mean (one CG
//! solve, reported iterations), of the default prediction with variances (LOVE rank
//! `LOVE_DEFAULT_RANK`), and of exact CG solves for `--check` of the test points, with the
//! largest absolute and relative difference of the latent variances on that subset.

#[path = "support/cli.rs"]
mod cli;
use cli::arg;

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::{GpModel, PredictRequest, Ski, SkiOptions, VarianceMethod};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = arg("--n", 1_000_000);
    let m: usize = arg("--m", 10_000);
    let b: usize = arg("--test", 1000);
    let check: usize = arg("--check", 20).min(b);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let x = Mat::from_fn(n, 1, |_, _| rng.random::<f64>());
    let y = Col::from_fn(n, |i| {
        (2.0 * std::f64::consts::PI * 3.0 * x[(i, 0)]).sin() + 0.1 * (rng.random::<f64>() - 0.5)
    });
    let x_test = Mat::from_fn(b, 1, |i, _| (i as f64 + 0.5) / b as f64);
    let kernel = SquaredExponential::new(vec![0.05], 1.0)?;
    let options = SkiOptions {
        grid: GridSettings {
            sizes: vec![m],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let t = Instant::now();
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.01, &options)?;
    println!("fit (grid, W): {:.2} s", t.elapsed().as_secs_f64());

    let t = Instant::now();
    let mean = ski.predict(x_test.as_ref(), &PredictRequest::mean())?;
    println!(
        "mean of {b} points: {:.2} s ({})",
        t.elapsed().as_secs_f64(),
        mean.mean_solve.map_or("no solve".into(), |s| s.to_string())
    );

    let t = Instant::now();
    let pred = ski.predict(x_test.as_ref(), &PredictRequest::default())?;
    println!(
        "default predict with variances of {b} points: {:.2} s ({:?})",
        t.elapsed().as_secs_f64(),
        pred.variance_source
    );

    let subset = x_test.subrows(0, check);
    let t = Instant::now();
    let exact = ski.predict(subset, &PredictRequest::variance(VarianceMethod::Exact))?;
    let secs = t.elapsed().as_secs_f64();
    let (mut abs, mut rel) = (0.0f64, 0.0f64);
    for i in 0..check {
        let d = (pred.latent_variance[i] - exact.latent_variance[i]).abs();
        abs = abs.max(d);
        rel = rel.max(d / exact.latent_variance[i].abs().max(f64::MIN_POSITIVE));
    }
    println!(
        "exact CG variances of {check} points: {secs:.2} s ({:.2} s per point); LOVE vs exact \
         latent variance: max |diff| {abs:.2e}, max rel {rel:.2e} (latent variances {:.2e}..{:.2e})",
        secs / check.max(1) as f64,
        (0..check).map(|i| exact.latent_variance[i]).fold(f64::INFINITY, f64::min),
        (0..check).map(|i| exact.latent_variance[i]).fold(0.0, f64::max),
    );
    Ok(())
}
