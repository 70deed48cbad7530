//! Times one training step of the RR-CG, CG and Cholesky objectives (LML gradient, 10
//! probes, rank-5 pivoted-Cholesky preconditioner) on synthetic data of a given size: the
//! issue's target is one RR-CG step (E[J] ≈ 100) at n = 9600, d = 26 in ≤ 4 s.
//!
//! `cargo run --release -p gp-bench --example rtgps_step -- [n] [d] [repeats] [ℓ] [σ²] [--cholesky]`
//! (defaults 9600, 26, 3, 1.0, 0.01). Inputs are uniform in `[−1, 1]^d`.

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_linalg::LinearOperator;
use gp_models::objective::{
    cholesky_estimate, krylov_estimate, DenseKernelCovariance, Estimator, KrylovCovariance,
    KrylovDepth, KrylovObjectiveOptions,
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
    let arg = |i: usize, default: f64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (lengthscale, sigma2) = (arg(3, 1.0), arg(4, 0.01));
    let kernel = SquaredExponential::new(vec![lengthscale; d], 1.0)?;
    let opts = KrylovObjectiveOptions {
        with_value: false,
        ..KrylovObjectiveOptions::default()
    };
    println!("n = {n}, d = {d}, ℓ = {lengthscale}, σ² = {sigma2}, 10 probes, rank-5 preconditioner, gradient only");
    let rr = Estimator::rr_cg_exp_decay(0.05, 80, n)?;
    let Estimator::RrCg { law, .. } = &rr else {
        unreachable!()
    };
    {
        // The product the CG iterations repeat: K̂ times 11 columns, stored-symmetric kernel
        // against faer's GEMM on the same matrix.
        let cov = DenseKernelCovariance::new(&kernel, x.as_ref(), sigma2, &opts)?;
        let block = Mat::from_fn(n, 11, |i, j| ((i + 3 * j) % 7) as f64 - 3.0);
        let mut out = Mat::<f64>::zeros(n, 11);
        let op = cov.operator();
        let t = Instant::now();
        for _ in 0..5 {
            op.matmat(block.as_ref(), out.as_mut());
        }
        let ours = t.elapsed().as_secs_f64() / 5.0;
        let dense = gp_linalg::DenseOperator::new(op.to_dense());
        let t = Instant::now();
        for _ in 0..5 {
            dense.matmat(block.as_ref(), out.as_mut());
        }
        let faer_time = t.elapsed().as_secs_f64() / 5.0;
        println!(
            "one product with 11 columns: SymmetricStored {:.1} ms, faer GEMM (DenseOperator) {:.1} ms; reading the stored half once at 20 GB/s: {:.1} ms",
            1e3 * ours,
            1e3 * faer_time,
            1e3 * (n * n * 4) as f64 / 20e9
        );
    }
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
