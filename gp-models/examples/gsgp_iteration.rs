//! Where one iteration of GSGP's mean solve spends its time: the `S = WᵀW` stencil product,
//! the `K_G` product, and the rest of the efficiently factorized CG (EFCG) iteration.
//!
//! ```text
//! cargo run --release -p gp-models --example gsgp_iteration -- [--sizes 80,80,8] [--n 1000000] [--reps 41]
//! ```
//!
//! The data are `n` points uniform in the box of Table 1's radar-like rows (lat 36–48,
//! lon −82…−64, alt 500–3000 m) with the paper's radar hyperparameters (SE, ℓ = 0.25, 0.25,
//! 200, output scale 3.5, noise sd 50), on a grid of the given sizes (default 80×80×8, the
//! radar 51.2K grid). The per-iteration cost does not depend on `n`; `n` only has to cover
//! the grid as densely as the real data would. Printed: medians over `reps` products, on the
//! global rayon pool; then the timed first mean solve (tolerance 1e-2, the radar rows'
//! setting) per iteration, as `gp-bench bench gsgp-table1` measures it.

#[path = "support/cli.rs"]
mod cli;
use cli::arg;

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::KrylovSettings;
use gp_models::{Gsgp, GsgpOptions};
use gp_solvers::factorized::WeightSpaceSystem;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Median wall time of `reps` calls after one warm-up; the first failing call's error.
fn median<F: FnMut() -> gp_solvers::Result<()>>(reps: usize, mut f: F) -> gp_solvers::Result<f64> {
    f()?;
    let mut t = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sizes: Vec<usize> = arg("--sizes", "80,80,8".to_string())
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let n: usize = arg("--n", 1_000_000);
    let reps: usize = arg("--reps", 41);
    let bounds = [(36.0, 48.0), (-82.0, -64.0), (500.0, 3000.0)];
    if sizes.len() != 3 {
        return Err("--sizes needs three sizes, e.g. 80,80,8".into());
    }

    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let x = Mat::from_fn(n, 3, |_, l| {
        let (lo, hi) = bounds[l];
        lo + (hi - lo) * rng.random::<f64>()
    });
    let y = Col::from_fn(n, |i| {
        20.0 * (x[(i, 0)] * 0.7).sin() * (x[(i, 1)] * 0.5).cos() + x[(i, 2)] * 0.01
    });
    let kernel = SquaredExponential::new(vec![0.25, 0.25, 200.0], 3.5)?;
    let options = GsgpOptions {
        grid: GridSettings {
            sizes: sizes.clone(),
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            prediction_tolerance: 1e-2,
            variance_tolerance: 1e-2,
            ..KrylovSettings::default()
        },
        ..GsgpOptions::default()
    };
    let t0 = Instant::now();
    let gsgp = Gsgp::fit(kernel, x.as_ref(), y.as_ref(), 50.0 * 50.0, &options)?;
    let fit = t0.elapsed().as_secs_f64();
    let m = gsgp.grid().num_points();
    let gram = gsgp.stats().gram();
    println!(
        "grid {sizes:?} (m = {m}), n = {n}: statistics and set-up {fit:.2} s; S stores {} values \
         ({:.0} MB); rayon threads {}",
        gram.values().len(),
        gram.storage_bytes() as f64 / 1e6,
        rayon::current_num_threads()
    );

    let system = gsgp.system()?;
    let v = Col::from_fn(m, |j| ((j as f64) * 0.37).sin());
    let (mut a, mut b) = (Col::<f64>::zeros(m), Col::<f64>::zeros(m));
    let t_s = median(reps, || system.apply_gram(v.as_ref(), a.as_mut()))?;
    let t_kg = median(reps, || system.apply_prior(v.as_ref(), a.as_mut()))?;
    let t_b = median(reps, || system.apply_b(v.as_ref(), a.as_mut(), b.as_mut()))?;
    std::hint::black_box((&a, &b));

    let t1 = Instant::now();
    let report = gsgp.mean_solve_report()?;
    let solve = t1.elapsed().as_secs_f64();
    let per_iter = solve / report.iterations.max(1) as f64;
    println!("| part | ms |");
    println!("|---|---:|");
    println!("| S product | {:.3} |", t_s * 1e3);
    println!("| K_G product | {:.3} |", t_kg * 1e3);
    println!("| both (apply_b: K_G v and S K_G v) | {:.3} |", t_b * 1e3);
    println!(
        "| first mean solve per iteration ({} iterations, {:.1} ms in all) | {:.3} |",
        report.iterations,
        solve * 1e3,
        per_iter * 1e3
    );
    Ok(())
}
