//! KMCG on the paper's 1000 × 1000 grid (N = 10⁶) for many steps, timed: the Lanczos basis
//! with full re-orthogonalisation (`N × P` numbers), Kronecker products, the mean at the
//! 100 test points after every step, and `ε_f` against the exact posterior.
//!
//! ```text
//! cargo run --release -p gp-bench --example kmcg_grid_steps -- 500
//! ```
//!
//! Arguments: the number of steps (default 500), the grid side (default 1000) and the
//! threads of the dense products (default 1, the workspace's `Par::Seq`; 2 runs the
//! Kronecker factors' products and the passes over `Q` on rayon).

use std::sync::Arc;
use std::time::Instant;

use faer::{Col, ColRef};
use gp_bench::papers::kmcg::grid_reference::GridReference;
use gp_bench::papers::kmcg::hyper::GRID_HYPER;
use gp_bench::papers::kmcg::metrics::eps_f;
use gp_bench::synthetic::grid::{kmcg_grid, KmcgGridOptions};
use gp_linalg::LinearOperator;
use gp_models::kmcg::{KmcgBasis, KmcgRun};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let steps: usize = args.next().map_or(Ok(500), |s| s.parse())?;
    let side: usize = args.next().map_or(Ok(1000), |s| s.parse())?;
    let threads: usize = args.next().map_or(Ok(1), |s| s.parse())?;
    if threads > 1 {
        gp_linalg::set_parallelism(faer::Par::rayon(threads));
    }
    let t0 = Instant::now();
    let grid = kmcg_grid(&KmcgGridOptions {
        sizes: vec![side, side],
        ..KmcgGridOptions::default()
    })?;
    let reference = GridReference::new(&grid, &GRID_HYPER)?;
    println!(
        "grid {side}² (N = {}), data and exact reference: {:.1} s",
        side * side,
        t0.elapsed().as_secs_f64()
    );
    let op: Arc<dyn LinearOperator> = Arc::new(reference.operator()?);
    let y: Vec<f64> = grid.y.iter().copied().collect();
    let kss = vec![GRID_HYPER.signal_variance; grid.x_test.nrows()];
    let rows = Box::new(|s: &[f64]| {
        reference
            .cross_dot(ColRef::from_slice(s))
            .map(|c| c.iter().copied().collect())
            .unwrap_or_default()
    });
    let mut run = KmcgRun::new(
        op.as_ref(),
        0.0,
        &y,
        GRID_HYPER.noise_variance,
        &kss,
        rows,
        KmcgBasis::Lanczos,
        steps,
    )?;
    let start = Instant::now();
    let mut last = 0.0;
    while let Some(step) = run.step()? {
        let p = step.steps;
        if p == 1 || p % 50 == 0 || p == steps {
            let mean = Col::from_fn(kss.len(), |i| run.state().mean()[i]);
            let e = eps_f(&reference.exact().mean, &mean)?;
            let t = start.elapsed().as_secs_f64();
            println!(
                "P = {p:4}: ε_f {e:.3e}, {t:7.1} s cumulative ({:.0} ms/step since the last line)",
                1e3 * (t - last) / 50f64.min(p as f64)
            );
            last = t;
        }
    }
    println!(
        "stopped after {} steps: {:?}; {:.1} s of KMCG",
        run.state().steps(),
        run.status(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
