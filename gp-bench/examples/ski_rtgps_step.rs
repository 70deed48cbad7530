//! Times RR-CG training steps (LML gradient, 10 probes, two draws of the exp-decay law with
//! λ = 0.05, J_min = 80) on the SKI operator at the 3DRoad stand-in's size: the target
//! is 300 such steps at n = 278 319 on a 32³ grid in ≤ 15 min (3 s per step).
//!
//! Each repeat also times the same number of 11-column operator products alone, so the
//! solver's own share of an iteration is the difference.
//!
//! `cargo run --release -p gp-bench --example ski_rtgps_step -- [n] [grid] [repeats] [rank]`
//! (defaults 278319, 32, 2, 5). Inputs are uniform in `[−1, 1]³`, targets a smooth function
//! plus noise of sd 0.1; hyperparameters at GPyTorch's start (ℓ = s = σ² ≈ 0.693). The solves
//! are preconditioned as in training (`SkiCovariance::with_options`) by the rank-`rank`
//! pivoted Cholesky of `W K_G Wᵀ`; rank 0 runs without a preconditioner.
//!
//! The `gp-bench` binary keeps freed memory for reuse (glibc `mallopt`, see its `src/main.rs`);
//! this example keeps glibc's defaults, under which every step faults its fresh `n × 11`
//! blocks in again. To time a step as the experiment runs it, set
//! `MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=2147483647`.

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::objective::{krylov_estimate, Estimator, KrylovDepth, SkiCovariance};
use gp_models::{Ski, SkiOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (n, grid, repeats, rank) = (num(0, 278_319), num(1, 32), num(2, 2), num(3, 5));
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x = Mat::from_fn(n, 3, |_, _| 2.0 * rng.random::<f64>() - 1.0);
    let y = Col::from_fn(n, |i| {
        (3.0 * x[(i, 0)]).sin() * (2.0 * x[(i, 1)]).cos()
            + 0.5 * x[(i, 2)]
            + 0.1 * (2.0 * rng.random::<f64>() - 1.0) * 3f64.sqrt()
    });
    let start = std::f64::consts::LN_2;
    let kernel = SquaredExponential::isotropic(3, start, start)?;
    let mut options = SkiOptions::default();
    options.grid.sizes = vec![grid; 3];
    let t = Instant::now();
    let mut ski = Ski::fit(
        kernel.clone(),
        x.as_ref(),
        y.as_ref(),
        start + 1e-4,
        &options,
    )?;
    if args.iter().any(|a| a == "--cell-order") {
        // The same points ordered by grid cell: every product then walks the grid in order.
        let perm = gp_structured::cell_order(
            ski.grid(),
            x.as_ref(),
            gp_structured::InterpolationOptions {
                scheme: options.grid.scheme,
                out_of_grid: options.grid.out_of_grid,
            },
        )?;
        let xs = gp_structured::permute_rows(x.as_ref(), &perm)?;
        let ys = Col::from_fn(n, |k| y[perm[k]]);
        ski = Ski::fit(kernel, xs.as_ref(), ys.as_ref(), start + 1e-4, &options)?;
        println!("points in cell order");
    }
    println!(
        "n = {n}, grid {grid}³: fit {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let rr = Estimator::rr_cg_exp_decay(0.05, 80, n)?;
    let Estimator::RrCg { law, .. } = &rr else {
        unreachable!()
    };
    let krylov = gp_models::objective::KrylovObjectiveOptions {
        preconditioner_rank: rank,
        // Training takes no value (Adam needs the gradient only; RR-SLQ costs O(J³) per probe).
        with_value: false,
        ..Default::default()
    };
    for rep in 0..repeats {
        let t = Instant::now();
        let cov = SkiCovariance::with_options(&ski, &krylov)?;
        let e = krylov_estimate(
            &cov,
            ski.train_y().as_mat(),
            KrylovDepth::Random {
                law: law.as_ref(),
                draws: 2,
            },
            &krylov,
            None,
            &mut rng,
        )?;
        let secs = t.elapsed().as_secs_f64();
        // The operator's share: the same number of 11-column products, timed alone.
        let op = gp_models::objective::KrylovCovariance::operator(&cov);
        let block = Mat::from_fn(n, 11, |i, j| ((i * (j + 1)) as f64).sin());
        let mut out = Mat::<f64>::zeros(n, 11);
        let t = Instant::now();
        for _ in 0..20 {
            op.matmat(block.as_ref(), out.as_mut());
        }
        let product = t.elapsed().as_secs_f64() / 20.0;
        println!(
            "rep {rep}: RR-CG step {secs:.2} s ({} its, {:.1} ms/it; the product alone {:.1} ms)",
            e.work,
            1e3 * secs / e.work as f64,
            1e3 * product
        );
    }
    Ok(())
}
