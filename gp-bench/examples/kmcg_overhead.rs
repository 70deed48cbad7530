//! KMCG's own work per step against the dense products it is built on (issue target: 100
//! steps at N = 10⁴ add ≤ 10% to the cost of the 100 products). Times, side by side in one
//! run, (1) 100 products `K s` alone, (2) FOM for 100 steps (products and its
//! re-orthogonalisation), (3) KMCG on FOM for 100 steps without test points (FOM, the
//! projected columns and the bordered factors) and (4) with 1000 test points (plus one
//! `k(X*, X) s` per step and the test-point updates), each the median of five repetitions.
//!
//! ```text
//! cargo run --release -p gp-bench --example kmcg_overhead -- 10000
//! ```

use std::time::Instant;

use faer::{Col, Mat};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{DenseOperator, LinearOperator};
use gp_models::kmcg::{dense_test_rows, KmcgBasis, KmcgRun};
use gp_solvers::{FomOptions, FomSolver};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(10_000), |s| s.parse())?;
    let (steps, n_test, reps) = (100, 1000, 5);
    let x = Mat::from_fn(n, 3, |i, j| ((i * (j + 3) * 7919) % 1000) as f64 / 100.0);
    let xs = Mat::from_fn(n_test, 3, |i, j| {
        ((i * (j + 5) * 104_729) % 1000) as f64 / 100.0
    });
    let kernel = SquaredExponential::new(vec![2.0, 2.0, 2.0], 1.0)?;
    let k = kernel.matrix(x.as_ref(), x.as_ref())?;
    let kxs = kernel.matrix(x.as_ref(), xs.as_ref())?;
    let y: Vec<f64> = (0..n)
        .map(|i| (x[(i, 0)]).sin() + 0.1 * x[(i, 1)])
        .collect();
    let op = DenseOperator::new(k);
    let (mut t_mv, mut t_fom, mut t_kmcg, mut t_bare) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let mut v = Col::from_fn(n, |i| y[i]);
        let mut out = Col::<f64>::zeros(n);
        let t = Instant::now();
        for _ in 0..steps {
            op.matvec(v.as_ref(), out.as_mut());
            let s = out.norm_l2();
            v.iter_mut().zip(out.iter()).for_each(|(a, b)| *a = b / s);
        }
        t_mv.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut fom = FomSolver::new(
            &op,
            Col::from_fn(n, |i| y[i]).as_ref(),
            &FomOptions {
                max_steps: steps,
                ..FomOptions::default()
            },
        )?;
        while fom.step()?.is_some() {}
        t_fom.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut bare = KmcgRun::new(
            &op,
            0.0,
            &y,
            0.01,
            &[],
            Box::new(|_: &[f64]| Vec::new()),
            KmcgBasis::Fom,
            steps,
        )?;
        while bare.step()?.is_some() {}
        t_bare.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let kss = vec![1.0; n_test];
        let mut run = KmcgRun::new(
            &op,
            0.0,
            &y,
            0.01,
            &kss,
            dense_test_rows(kxs.as_ref()),
            KmcgBasis::Fom,
            steps,
        )?;
        while run.step()?.is_some() {}
        t_kmcg.push(t.elapsed().as_secs_f64());
        assert_eq!(run.state().steps(), steps, "{:?}", run.status());
    }
    let (mv, fom, km, bare) = (median(t_mv), median(t_fom), median(t_kmcg), median(t_bare));
    println!("N = {n}, {steps} steps, {n_test} test points, median of {reps}:");
    println!("  {steps} products K s:            {:8.3} s", mv);
    println!(
        "  FOM ({steps} steps):             {:8.3} s  (+{:.1}% over the products)",
        fom,
        100.0 * (fom / mv - 1.0)
    );
    println!(
        "  KMCG on FOM, no test points:   {:8.3} s  (+{:.1}% over the products, +{:.1}% over FOM)",
        bare,
        100.0 * (bare / mv - 1.0),
        100.0 * (bare / fom - 1.0)
    );
    println!(
        "  KMCG on FOM, with test points: {:8.3} s  (+{:.1}% over the products, +{:.1}% over FOM)",
        km,
        100.0 * (km / mv - 1.0),
        100.0 * (km / fom - 1.0)
    );
    Ok(())
}
