//! Where EFCG's extra iterations over plain CG come from, on GSGP Figure 3's sine data: the
//! residual norm of every iteration of CG on `K̃ = W K_G Wᵀ + σ²I` (SKI's operator), and of
//! EFCG and FCG on the same system in factorized form, each beside the true residual
//! `‖y − K̃ x_j‖ / ‖y‖` of its iterate (expanded with `W` and multiplied by SKI's `K̃`).
//!
//! ```text
//! cargo run --release -p gp-bench --example efcg_residual_paths -- 1000000 1000000 2
//! ```
//!
//! Arguments: `n` (default 10⁵), `m` (default `n`) and the data seed (default 0).
//!
//! What it showed (issue 16): the recursive residuals of EFCG and FCG equal their true
//! residuals to the printed digits at every iteration (no drift of the `Âp̂`, `Sp̂`, `gᵀp̂`
//! recurrences), while the residual norms of all three oscillate by up to 10³ between
//! iterations and part from CG's after about ten steps. FCG, which forms both products
//! afresh every iteration, takes as many iterations as EFCG or more; so the extra
//! iterations are the finite-precision path of CG in the factorized representation, not a
//! drift that residual replacement could remove.

use std::error::Error;

use faer::reborrow::ReborrowMut;
use faer::{ColMut, ColRef};
use gp_bench::papers::gsgp::common::SINE;
use gp_bench::synthetic::sine::gsgp_sine;
use gp_linalg::transpose::TransposeOperator;
use gp_linalg::{LinearOperator, SparseOperator};
use gp_models::grid::{GridKernel, GridSettings};
use gp_models::{EstimatorSettings, KrylovSettings, Ski, SkiOptions};
use gp_solvers::factorized::{
    efcg, fcg, FactorizedCgOptions, FactorizedCgResult, FactorizedVector, OperatorSystem,
    StartVector,
};
use gp_solvers::{cg, CgOptions};

/// `K_G` of a fitted SKI model as an operator (its Kronecker product of Toeplitz factors).
struct GridPrior<'a>(&'a GridKernel);

impl LinearOperator for GridPrior<'_> {
    fn nrows(&self) -> usize {
        self.0.num_points()
    }
    fn ncols(&self) -> usize {
        self.0.num_points()
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        self.0.operator().matvec(x, out.rb_mut());
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(100_000), |s| s.parse())?;
    let m: usize = args.next().map_or(Ok(n), |s| s.parse())?;
    let seed: u64 = args.next().map_or(Ok(0), |s| s.parse())?;
    let tolerance = 1e-5;
    let data = gsgp_sine(n, seed)?;
    let options = SkiOptions {
        grid: GridSettings {
            sizes: vec![m],
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            prediction_tolerance: tolerance,
            max_iterations: 1000,
            ..KrylovSettings::default()
        },
        estimator: EstimatorSettings::default(),
        // Plain CG, the SKI baseline of the GSGP paper.
        preconditioner_rank: 0,
    };
    let ski = Ski::fit(
        SINE.kernel()?,
        data.x.as_ref(),
        data.y.as_ref(),
        SINE.noise_variance(),
        &options,
    )?;
    let op = ski.operator();
    let y = data.y.as_ref();
    let y_norm = y.norm_l2();
    let cg_options = CgOptions {
        tolerance,
        max_iterations: 1000,
        ..CgOptions::default()
    };
    let plain = cg(&op, y.as_mat(), None, &cg_options)?;
    let plain_norms = &plain.columns[0].record.residual_norms;

    // The factorized system of the same K̃: W from SKI's weights, S = WᵀW, K_G.
    let w_csr = ski.interpolation().to_csr()?;
    let s = SparseOperator::new((&w_csr.transpose_view() * &w_csr).to_csr())?;
    let w = SparseOperator::new(w_csr)?;
    let prior = GridPrior(ski.grid_kernel());
    let system = OperatorSystem::new(&prior, &s, SINE.noise_variance())?;
    let start = StartVector::new(w.apply_transpose(y)?, y.squared_norm_l2())?;
    let factorized_options = FactorizedCgOptions {
        tolerance,
        record_iterates: true,
        ..FactorizedCgOptions::default()
    };
    let runs = [
        ("EFCG", efcg(&system, &start, &factorized_options)?),
        ("FCG", fcg(&system, &start, &factorized_options)?),
    ];
    println!(
        "n = {n}, m = {}, seed {seed}: CG {} iterations, EFCG {}, FCG {}",
        ski.grid().num_points(),
        plain.iterations,
        runs[0].1.iterations,
        runs[1].1.iterations
    );
    let true_residual = |v: &FactorizedVector| -> Result<f64, Box<dyn Error>> {
        let x = v.expand(&w, y)?;
        Ok((y - op.apply(x.as_ref())?).norm_l2() / y_norm)
    };
    let column = |res: &FactorizedCgResult, j: usize| -> Result<String, Box<dyn Error>> {
        match res.iterates.as_deref().and_then(|its| its.get(j - 1)) {
            Some(it) => Ok(format!(
                "{:>10.3e} {:>10.3e}",
                res.record.residual_norms[j],
                true_residual(it)?
            )),
            None => Ok(format!("{:>10} {:>10}", "-", "-")),
        }
    };
    println!(
        "{:>4} {:>10} | {:>10} {:>10} | {:>10} {:>10}",
        "j", "CG", "EFCG", "(true)", "FCG", "(true)"
    );
    let last = plain
        .iterations
        .max(runs[0].1.iterations)
        .max(runs[1].1.iterations);
    for j in 1..=last {
        let c = plain_norms
            .get(j)
            .map_or_else(|| "-".to_string(), |v| format!("{v:.3e}"));
        println!(
            "{j:>4} {c:>10} | {} | {}",
            column(&runs[0].1, j)?,
            column(&runs[1].1, j)?
        );
    }
    Ok(())
}
