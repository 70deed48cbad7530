//! Times one training step of the RR-CG, CG and Cholesky objectives (LML gradient, 10
//! probes, rank-5 pivoted-Cholesky preconditioner) on synthetic data of a given size: the
//! issue's target is one RR-CG step (E[J] ≈ 100) at n = 9600, d = 26 in ≤ 4 s.
//!
//! `cargo run --release -p gp-bench --example rtgps_step -- [n] [d] [repeats] [--cholesky]`
//! (defaults 9600, 26, 3).

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::objective::{
    cholesky_estimate, krylov_estimate, DenseKernelCovariance, Estimator, KrylovDepth,
    KrylovObjectiveOptions,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (n, d, repeats) = (num(0, 9600), num(1, 26), num(2, 3));
    let with_cholesky = args.iter().any(|a| a == "--cholesky");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let x = Mat::from_fn(n, d, |_, _| 2.0 * rng.random::<f64>() - 1.0);
    let y = Col::from_fn(n, |i| {
        (2.0 * x[(i, 0)]).sin() + x[(i, 1)] * x[(i, 2 % d)] + 0.1 * (rng.random::<f64>() - 0.5)
    });
    let kernel = SquaredExponential::new(vec![1.0; d], 1.0)?;
    let sigma2 = 0.01;
    let opts = KrylovObjectiveOptions {
        with_value: false,
        ..KrylovObjectiveOptions::default()
    };
    println!("n = {n}, d = {d}, σ² = {sigma2}, 10 probes, rank-5 preconditioner, gradient only");
    let rr = Estimator::rr_cg_exp_decay(0.05, 80, n)?;
    let Estimator::RrCg { law, .. } = &rr else {
        unreachable!()
    };
    for rep in 0..repeats {
        let t = Instant::now();
        let cov = DenseKernelCovariance::new(&kernel, x.as_ref(), sigma2, &opts)?;
        let build = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let e = krylov_estimate(
            &cov,
            y.as_mat(),
            KrylovDepth::Random {
                law: law.as_ref(),
                draws: 2,
            },
            &opts,
            None,
            &mut rng,
        )?;
        let rr_time = t.elapsed().as_secs_f64();
        let rr_its = e.work;
        let t = Instant::now();
        let e = krylov_estimate(
            &cov,
            y.as_mat(),
            KrylovDepth::Fixed(100),
            &opts,
            None,
            &mut rng,
        )?;
        let cg_time = t.elapsed().as_secs_f64();
        println!(
            "rep {rep}: build K̂ + preconditioner {build:.2} s; RR-CG step {:.2} s ({rr_its} its, {:.1} ms/it); CG(100) step {:.2} s ({} its); RR-CG/CG {:.3}",
            build + rr_time,
            1e3 * rr_time / rr_its as f64,
            build + cg_time,
            e.work,
            (build + rr_time) / (build + cg_time)
        );
    }
    if with_cholesky {
        let t = Instant::now();
        cholesky_estimate(&kernel, x.as_ref(), y.as_ref(), sigma2)?;
        println!("Cholesky LML + gradient {:.2} s", t.elapsed().as_secs_f64());
    }
    Ok(())
}
