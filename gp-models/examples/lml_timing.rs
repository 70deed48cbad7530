//! Times one log-marginal-likelihood + gradient evaluation of an exact GP (SE-ARD kernel)
//! and, optionally, a full L-BFGS training run.
//!
//! ```text
//! cargo run --release -p gp-models --example lml_timing -- [--rayon] [--d 8] [--n 1000,2000,4000] [--train]
//! ```
//!
//! `--rayon` sets `gp_linalg::set_parallelism(Par::rayon(0))` (all cores) for the dense
//! factorizations; the kernel passes always use rayon. `--train` fits n = 4000, d = 3 data
//! from wrong initial hyperparameters and reports the L-BFGS run.

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::{train, ExactGp, TrainOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// CPU time (user + system) of this process in seconds, from `/proc/self/stat` (Linux;
/// 0 elsewhere). On a shared machine it is a steadier measure than wall time.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let utime: f64 = fields.get(11)?.parse().ok()?;
            let stime: f64 = fields.get(12)?.parse().ok()?;
            Some((utime + stime) / 100.0)
        })
        .unwrap_or(0.0)
}

fn data(n: usize, d: usize, seed: u64) -> (Mat<f64>, Col<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>() * 4.0);
    let y = Col::from_fn(n, |i| {
        let s: f64 = (0..d).map(|j| x[(i, j)] / (1.0 + j as f64)).sum();
        s.sin() + 0.3 * (2.0 * x[(i, 0)]).cos() + 0.1 * (rng.random::<f64>() - 0.5)
    });
    (x, y)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    if flag("--rayon") {
        gp_linalg::set_parallelism(faer::Par::rayon(0));
    }
    let d: usize = value("--d").map_or(Ok(8), |v| v.parse())?;
    let sizes: Vec<usize> = value("--n")
        .unwrap_or_else(|| "1000,2000,4000".into())
        .split(',')
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    println!(
        "parallelism {:?}, rayon threads {}, d = {d}",
        gp_linalg::parallelism(),
        rayon::current_num_threads()
    );
    println!(
        "| n | fit (K + Cholesky + α) | lml_and_grad (inverse + fused traces) | total wall | CPU per fit+grad | repeats |"
    );
    println!("|---|---|---|---|---|---|");
    for &n in &sizes {
        let (x, y) = data(n, d, 1);
        let kernel = SquaredExponential::isotropic(d, 1.5, 1.0)?;
        let repeats = if n <= 2000 { 5 } else { 3 };
        let (mut fit_best, mut grad_best) = (f64::INFINITY, f64::INFINITY);
        let cpu0 = cpu_seconds();
        for _ in 0..repeats {
            let t = Instant::now();
            let gp = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.05)?;
            let fit = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let (lml, grad) = gp.lml_and_grad();
            let g = t.elapsed().as_secs_f64();
            std::hint::black_box((lml, grad));
            fit_best = fit_best.min(fit);
            grad_best = grad_best.min(g);
        }
        let cpu = (cpu_seconds() - cpu0) / repeats as f64;
        println!(
            "| {n} | {fit_best:.3} s | {grad_best:.3} s | {:.3} s | {cpu:.2} s | best of {repeats} |",
            fit_best + grad_best
        );
    }
    if flag("--train") {
        let n: usize = value("--train-n").map_or(Ok(4000), |v| v.parse())?;
        let (x, y) = data(n, 3, 2);
        let kernel = SquaredExponential::new(vec![1.0, 1.0, 1.0], 1.0)?;
        let t = Instant::now();
        let cpu0 = cpu_seconds();
        let gp = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 1.0)?;
        let trained = train(&gp, &TrainOptions::default())?;
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        let best = trained.report.best().ok_or("no successful run")?;
        println!(
            "train n = {n}, d = 3: {secs:.1} s wall ({cpu:.1} s CPU), {} iterations, {} evaluations ({} failed), {:?}, |g|∞ = {:.2e}, NLML = {:.4}",
            best.iterations, best.evaluations, best.failed_evaluations, best.reason, best.grad_norm, best.f
        );
        if flag("--verbose") {
            for t in &best.trajectory {
                println!(
                    "  iter {:3} evals {:3} f {:.6} |g| {:.2e} x {:?}",
                    t.iteration, t.evaluations, t.f, t.grad_norm, t.x
                );
            }
        }
        println!(
            "learned {:?} = {:?}",
            trained.model.param_names(),
            trained
                .model
                .log_params()
                .iter()
                .map(|v| v.exp())
                .collect::<Vec<_>>()
        );
    }
    Ok(())
}
