//! What one GP-GRIEF-I sampler step costs: one evaluation of the log marginal likelihood
//! and its `p + 1` gradients, in the weight-space form ([`WoodburyFit`], `2p³/3` flops) and
//! the data-space form ([`DualFit`], `2n²p + 2n³/3`), on one thread and on all of them, with
//! the rate each reaches and the 10 000-step time it implies (issue 12's GRIEF-I target:
//! ≤ 120 s per fold).
//!
//! ```text
//! cargo run --release -p gp-bench --example grief_step_cost -- 456 1000 30
//! ```
//!
//! Arguments: `n` (default 456, a housing fold), `p` (default 1000, the paper's) and the
//! number of timed steps (default 30). The basis is random (the cost does not depend on
//! its values); each step refits at new weights, as the sampler does.

use std::time::Instant;

use faer::{Col, Mat, Par};
use gp_models::grief::dual::{data_space_flops, weight_space_flops};
use gp_models::grief::{DualFit, GriefStats, WoodburyFit};
use rand::{Rng, SeedableRng};

/// Seconds per step of `step`, the median over `reps` timed calls after one warm-up call.
fn per_step(
    reps: usize,
    mut step: impl FnMut(usize) -> Result<(), Box<dyn std::error::Error>>,
) -> Result<f64, Box<dyn std::error::Error>> {
    step(0)?;
    let mut times = Vec::with_capacity(reps);
    for r in 1..=reps {
        let t = Instant::now();
        step(r)?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(456), |s| s.parse())?;
    let p: usize = args.next().map_or(Ok(1000), |s| s.parse())?;
    let reps: usize = args.next().map_or(Ok(30), |s| s.parse())?;
    let reps = reps.max(1);
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let phi = Mat::<f64>::from_fn(n, p, |_, _| rng.random::<f64>() - 0.5);
    let y = Col::<f64>::from_fn(n, |_| rng.random::<f64>() - 0.5);
    let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref())?;
    // Weights of the sampler's scale, changed at every step.
    let weights = |r: usize| -> Vec<f64> {
        (0..p)
            .map(|j| 1.0 + 0.001 * ((j + r) % 97) as f64)
            .collect()
    };
    let threads = rayon::current_num_threads();
    println!(
        "n = {n}, p = {p}: weight space {:.2} Gflop, data space {:.2} Gflop per step",
        weight_space_flops(p) / 1e9,
        data_space_flops(n, p) / 1e9
    );
    println!(
        "{:<13} {:<10} {:>10} {:>9} {:>14}",
        "form", "threads", "ms/step", "Gflop/s", "10 000 steps"
    );
    for (label, par) in [("1", Par::Seq), ("all", Par::rayon(threads))] {
        let mut fit = Some(WoodburyFit::with_parallelism(
            &stats,
            &weights(0),
            0.1,
            par,
        )?);
        let weight = per_step(reps, |r| {
            if let Some(f) = fit.take() {
                let f = f.refit(&weights(r), 0.1)?;
                std::hint::black_box(f.lml_and_gradients());
                fit = Some(f);
            }
            Ok(())
        })?;
        let mut fit = Some(DualFit::with_parallelism(
            phi.as_ref(),
            y.as_ref(),
            &weights(0),
            0.1,
            par,
        )?);
        let data = per_step(reps, |r| {
            if let Some(f) = fit.take() {
                let f = f.refit(&weights(r), 0.1)?;
                std::hint::black_box(f.lml_and_gradients());
                fit = Some(f);
            }
            Ok(())
        })?;
        for (form, seconds, flops) in [
            ("weight space", weight, weight_space_flops(p)),
            ("data space", data, data_space_flops(n, p)),
        ] {
            println!(
                "{form:<13} {label:<10} {:>10.2} {:>9.1} {:>12.0} s",
                seconds * 1e3,
                flops / seconds / 1e9,
                seconds * 1e4
            );
        }
    }
    Ok(())
}
