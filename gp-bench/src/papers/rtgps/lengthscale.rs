//! Figure 2 (H9): truncated CG learns lengthscales that are too long, RFF too short. On the
//! reference code's toy (200 points on [−3, 3], targets from the GP prior at each true
//! lengthscale), every estimator trains all hyperparameters with Adam, and the learned
//! lengthscale is compared with Cholesky's on the same data: `log(mean_i ℓ̂_i / ℓ̂_Chol,i)`.

use gp_kernels::{Kernel, SquaredExponential};
use gp_models::objective::Estimator;
use serde_json::json;

use super::toy::{fig2_toy, fig2_true_lengthscales, PriorProblem};
use super::{adam_training, train_from_gpytorch_start, GPYTORCH_START};
use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize, Series,
    SeriesStyle,
};
use crate::table::Table;

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct LengthscaleBias;

struct Plan {
    /// Indices into the 11 true lengthscales.
    truths: &'static [usize],
    steps: usize,
    cg: &'static [usize],
    rff: &'static [usize],
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            truths: &[5],
            steps: 30,
            cg: &[4, 40],
            rff: &[50],
        },
        RunSize::Quick => Plan {
            truths: &[2, 5, 8],
            steps: 200,
            cg: &[4, 12, 40],
            rff: &[50, 400],
        },
        RunSize::Full => Plan {
            truths: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            steps: 500,
            cg: &[4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52],
            rff: &[50, 100, 200, 400, 700, 1000, 1500, 2000, 2750],
        },
    }
}

/// The learned lengthscale after training `estimator` on `problem`.
fn learned_lengthscale(
    problem: &PriorProblem,
    estimator: &Estimator,
    steps: usize,
    seed: u64,
) -> Result<f64, BenchError> {
    let init = GPYTORCH_START;
    let kernel = SquaredExponential::isotropic(1, 0.5, init)?;
    let mut options = adam_training(0.05, steps, None, seed);
    // The reference code's CG runs without preconditioner at tolerance 1e-50: exactly J
    // iterations.
    options.krylov.tolerance = 0.0;
    let out = train_from_gpytorch_start(
        &kernel,
        problem.x.as_ref(),
        problem.y.as_ref(),
        estimator,
        &options,
    )?;
    Ok(out.kernel.log_params()[0].exp())
}

impl Experiment for LengthscaleBias {
    fn name(&self) -> &'static str {
        "lengthscale"
    }

    fn title(&self) -> &'static str {
        "Figure 2: CG over-estimates the lengthscale, RFF under-estimates it (H9)"
    }

    fn paper_reference(&self) -> &'static str {
        "RTGPS §3, Fig. 2 (spec rtgps.md §5.7, §6 H9; the code's toy, pitfall 22)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "{} true lengthscale(s), Adam lr 0.05 for {} steps, CG J ∈ {:?}, RFF D ∈ {:?}",
            p.truths.len(),
            p.steps,
            p.cg,
            p.rff
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            RunSize::Quick => 15.0,
            RunSize::Full => 900.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let all = fig2_true_lengthscales();
        let problems = p
            .truths
            .iter()
            .map(|&i| fig2_toy(all[i], ctx.seed + i as u64))
            .collect::<Result<Vec<_>, _>>()?;
        ctx.progress
            .set_length((problems.len() * (1 + p.cg.len() + p.rff.len())) as u64);
        let mut chol = Vec::new();
        for (i, prob) in problems.iter().enumerate() {
            chol.push(learned_lengthscale(
                prob,
                &Estimator::Cholesky,
                p.steps,
                ctx.seed + i as u64,
            )?);
            ctx.progress.inc(1);
        }
        // log(mean_i ℓ̂_i / ℓ̂_Chol,i) per setting.
        let ratio_of = |estimator: &Estimator| -> Result<f64, BenchError> {
            let mut ratios = Vec::new();
            for (i, prob) in problems.iter().enumerate() {
                let l = learned_lengthscale(prob, estimator, p.steps, ctx.seed + 100 + i as u64)?;
                ratios.push(l / chol[i]);
                ctx.progress.inc(1);
            }
            Ok((ratios.iter().sum::<f64>() / ratios.len() as f64).ln())
        };
        let mut cg_points = Vec::new();
        for &j in p.cg {
            cg_points.push((j as f64, ratio_of(&Estimator::Cg { iterations: j })?));
        }
        let mut rff_points = Vec::new();
        for &d in p.rff {
            rff_points.push((d as f64, ratio_of(&Estimator::Rff { num_freqs: d })?));
        }
        let mut table = Table::new(["estimator", "log(mean ℓ̂ / ℓ̂_Cholesky)"]);
        for (j, v) in &cg_points {
            table.row([format!("CG({j})"), format!("{v:+.4}")]);
        }
        for (d, v) in &rff_points {
            table.row([format!("RFF({d})"), format!("{v:+.4}")]);
        }
        let first_cg = cg_points.first().map_or(f64::NAN, |p| p.1);
        let last_cg = cg_points.last().copied().unwrap_or((f64::NAN, f64::NAN));
        let first_rff = rff_points.first().map_or(f64::NAN, |p| p.1);
        let last_rff = rff_points.last().copied().unwrap_or((f64::NAN, f64::NAN));
        let mut checks = vec![
            Check::new(
                format!(
                    "H9: CG({}) learns longer lengthscales than Cholesky ({first_cg:+.4})",
                    p.cg[0]
                ),
                first_cg > 0.0,
            ),
            Check::new(
                format!(
                    "H9: RFF({}) learns shorter lengthscales than Cholesky ({first_rff:+.4})",
                    p.rff[0]
                ),
                first_rff < 0.0,
            ),
            Check::new(
                format!("H9: RFF({}) still shorter ({:+.4})", last_rff.0, last_rff.1),
                last_rff.1 < 0.0,
            ),
        ];
        if last_cg.0 >= 40.0 {
            checks.push(Check::new(
                format!(
                    "H9: CG({}) within 0.02 of Cholesky ({:+.4})",
                    last_cg.0, last_cg.1
                ),
                last_cg.1.abs() < 0.02,
            ));
        }
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: format!(
                    "Figure 2: learned over Cholesky-learned lengthscale, mean over true ℓ ∈ {:?}",
                    p.truths.iter().map(|&i| all[i]).collect::<Vec<_>>()
                ),
                table,
            }],
            notes: vec![
                "The reference code's toy: x = linspace(−3, 3, 200), y from the GP prior (s = 2, σ² = 0.01) at each true ℓ; all hyperparameters trained from ℓ = 0.5, s = σ² = softplus(0); CG without preconditioner for exactly J iterations; RFF frequencies redrawn every step. The ratio is to Cholesky's learned ℓ on the same data (the paper plots against the true ℓ).".into(),
            ],
            raw: json!({ "cg": cg_points, "rff": rff_points, "cholesky_lengthscales": chol }),
            curves: vec![Curve {
                file_stem: "fig2-lengthscale-bias".into(),
                title: "log(mean ℓ̂ / ℓ̂_Cholesky)".into(),
                x_label: "CG iterations J / RFF frequencies D".into(),
                y_label: "log ratio".into(),
                log_x: true,
                log_y: false,
                series: vec![
                    Series {
                        name: "CG".into(),
                        points: cg_points.clone(),
                        style: SeriesStyle::Line,
                    },
                    Series {
                        name: "RFF".into(),
                        points: rff_points.clone(),
                        style: SeriesStyle::Line,
                    },
                ],
            }],
            checks,
        })
    }
}
