//! H10, H13 and the exact-loss curves of Figs. 3, 5 and S3: training by Cholesky, truncated
//! CG and RR-CG on an ill-conditioned synthetic problem, the exact loss `−log p / n`
//! evaluated at every recorded step. RR-CG should reach the Cholesky optimum, CG(J) should
//! not (its data fit is under- and its complexity over-estimated: it under-fits).

use gp_kernels::SquaredExponential;
use gp_models::objective::{
    train_objective, Estimator, ObjectiveTrainOptions, ObjectiveTrainResult,
};
use gp_models::optim::MultiStepDecay;
use serde_json::json;

use super::toy::{h10_problem, H10Config, PriorProblem};
use super::{
    adam_training, exact_loss_series, last_exact_loss, mean_work_per_step,
    train_from_gpytorch_start, GPYTORCH_START,
};
use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize,
};
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrainingComparison;

/// Sizes per run size.
struct Plan {
    n: usize,
    steps: usize,
    exact_every: usize,
    /// Steps of the H13 timing at `E[J] ≈ 100` (CG(100) against RR-CG with J_min = 80).
    h13_steps: usize,
    /// Round-robin rounds of the two H13 trainings; each keeps its fastest round.
    h13_rounds: usize,
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            n: 150,
            steps: 40,
            exact_every: 10,
            h13_steps: 3,
            h13_rounds: 1,
        },
        RunSize::Quick => Plan {
            n: 400,
            steps: 300,
            exact_every: 10,
            h13_steps: 20,
            h13_rounds: 3,
        },
        RunSize::Full => Plan {
            n: 1000,
            steps: 500,
            exact_every: 5,
            h13_steps: 50,
            h13_rounds: 3,
        },
    }
}

/// CG's iterations and RR-CG's law (λ = 0.05, J_min = 1: `E[J] = 20.5`), spec H10.
const CG_ITERATIONS: usize = 20;
const RR_LAMBDA: f64 = 0.05;
const RR_J_MIN: usize = 1;

struct Run {
    label: String,
    result: ObjectiveTrainResult<SquaredExponential>,
    mean_work: f64,
}

/// Where training starts: GPyTorch's defaults, or given hyperparameters.
enum Start<'a> {
    Gpytorch,
    At(&'a SquaredExponential, f64),
}

fn train(
    problem: &PriorProblem,
    estimator: &Estimator,
    start: Start<'_>,
    steps: usize,
    exact_loss_every: Option<usize>,
    seed: u64,
) -> Result<Run, BenchError> {
    let options = ObjectiveTrainOptions {
        exact_loss_every,
        ..adam_training(0.05, steps, Some(MultiStepDecay::paper_gp()), seed)
    };
    let (x, y) = (problem.x.as_ref(), problem.y.as_ref());
    let result = match start {
        // GPyTorch's start: raw parameters 0, i.e. ℓ = s = softplus(0), σ² = softplus(0) + 1e-4.
        Start::Gpytorch => {
            let kernel =
                SquaredExponential::isotropic(problem.d(), GPYTORCH_START, GPYTORCH_START)?;
            train_from_gpytorch_start(&kernel, x, y, estimator, &options)?
        }
        Start::At(kernel, noise) => {
            train_objective(kernel, noise, x, y, estimator, &options, &mut |_| {
                std::ops::ControlFlow::Continue(())
            })?
        }
    };
    let mean_work = mean_work_per_step(&result.steps);
    Ok(Run {
        label: estimator.label(),
        result,
        mean_work,
    })
}

/// Trains with each estimator `rounds` times in round-robin order (every estimator once per
/// round) and keeps each one's fastest run. A training is seeded, so its rounds do the same
/// work; interruptions of the shared machine only add time, and round-robin order spreads a
/// slow spell over both estimators instead of deciding their ratio (two single 20-step runs
/// of ~15 ms steps read 0.97 and 1.33 for a ratio whose work alone is 1.08).
fn fastest_of_rounds(
    estimators: &[Estimator],
    rounds: usize,
    mut train_one: impl FnMut(&Estimator, usize) -> Result<Run, BenchError>,
) -> Result<Vec<Run>, BenchError> {
    let mut best: Vec<Run> = estimators
        .iter()
        .enumerate()
        .map(|(i, e)| train_one(e, i))
        .collect::<Result<_, _>>()?;
    for _ in 1..rounds {
        for (i, e) in estimators.iter().enumerate() {
            let run = train_one(e, i)?;
            if run.result.training_seconds < best[i].result.training_seconds {
                best[i] = run;
            }
        }
    }
    Ok(best)
}

/// Training time per Adam step (the start is not a step).
fn seconds_per_step(run: &Run) -> f64 {
    run.result.training_seconds / run.result.steps.len().saturating_sub(1).max(1) as f64
}

/// The last recorded exact loss.
fn final_exact(run: &Run) -> f64 {
    last_exact_loss(&run.result.steps)
}

fn final_log_params(run: &Run) -> Vec<f64> {
    run.result
        .steps
        .last()
        .map(|s| s.log_params.clone())
        .unwrap_or_default()
}

impl Experiment for TrainingComparison {
    fn name(&self) -> &'static str {
        "training"
    }

    fn title(&self) -> &'static str {
        "Training with Cholesky, CG(20) and RR-CG (E[J] = 20.5): the exact loss along training (Figs. 3, 5, S3; H10, H13)"
    }

    fn paper_reference(&self) -> &'static str {
        "RTGPS §5, Figs. 3, 5, S3 (spec rtgps.md §6 H10, H13)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "H10 synthetic problem, n = {}, d = 2, σ² = 1e-3; Adam lr 0.05 (×0.1 at 50/70/90%), {} steps; exact loss every {} steps",
            p.n, p.steps, p.exact_every
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            RunSize::Quick => 15.0,
            RunSize::Full => 150.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let problem = h10_problem(
            &H10Config {
                n: p.n,
                ..H10Config::default()
            },
            ctx.seed,
        )?;
        let estimators = [
            Estimator::Cholesky,
            Estimator::Cg {
                iterations: CG_ITERATIONS,
            },
            Estimator::rr_cg_exp_decay(RR_LAMBDA, RR_J_MIN, p.n)?,
        ];
        ctx.progress.set_length(estimators.len() as u64);
        let mut runs = Vec::new();
        for (i, e) in estimators.iter().enumerate() {
            runs.push(train(
                &problem,
                e,
                Start::Gpytorch,
                p.steps,
                Some(p.exact_every),
                ctx.seed + 1 + i as u64,
            )?);
            ctx.progress.inc(1);
        }
        // H13 at the paper's depth: CG(100) against RR-CG with λ = 0.05, J_min = 80
        // (E[J] = 99.5, E[max(J₁, J₂)] ≈ 109.5), started at Cholesky's optimum (σ² ≈ 1e-3),
        // where CG without preconditioner does not reach the 1e-10 tolerance within 100
        // iterations, so both run their full depth (from GPyTorch's start, σ² ≈ 0.69, the
        // early steps converge in about 40).
        let (opt_kernel, opt_noise) = (&runs[0].result.kernel, runs[0].result.noise_variance);
        let deep = [
            Estimator::Cg { iterations: 100 },
            Estimator::rr_cg_exp_decay(RR_LAMBDA, 80.min(p.n), p.n)?,
        ];
        let deep_runs = fastest_of_rounds(&deep, p.h13_rounds, |e, i| {
            train(
                &problem,
                e,
                Start::At(opt_kernel, opt_noise),
                p.h13_steps,
                None,
                ctx.seed + 11 + i as u64,
            )
        })?;
        let d = problem.d();
        let chol = final_exact(&runs[0]);
        let chol_params = final_log_params(&runs[0]);
        let mut deep_table = Table::new([
            "method",
            "steps",
            "mean iterations / step",
            "time / step (fastest round)",
        ]);
        for run in &deep_runs {
            deep_table.row([
                run.label.clone(),
                p.h13_steps.to_string(),
                format!("{:.1}", run.mean_work),
                fmt_seconds(seconds_per_step(run)),
            ]);
        }
        let mut table = Table::new([
            "method",
            "final exact −log p / n",
            "minus Cholesky's",
            "ℓ (per dimension)",
            "s",
            "σ²",
            "mean iterations / step",
            "training time",
            "time / step",
        ]);
        for run in &runs {
            let lp = final_log_params(run);
            let loss = final_exact(run);
            table.row([
                run.label.clone(),
                format!("{loss:.5}"),
                format!("{:+.5}", loss - chol),
                lp[..d]
                    .iter()
                    .map(|l| format!("{:.4}", l.exp()))
                    .collect::<Vec<_>>()
                    .join(", "),
                format!("{:.4}", lp[d].exp()),
                format!("{:.3e}", lp[d + 1].exp()),
                format!("{:.1}", run.mean_work),
                fmt_seconds(run.result.training_seconds),
                fmt_seconds(seconds_per_step(run)),
            ]);
        }
        let (cg, rr) = (&runs[1], &runs[2]);
        let (cg_gap, rr_gap) = (final_exact(cg) - chol, final_exact(rr) - chol);
        let rr_params = final_log_params(rr);
        let max_param_gap = rr_params
            .iter()
            .zip(&chol_params)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        // At E[J] ≈ J = 20 RR-CG's step costs its E[max(J₁, J₂)] iterations (at most; columns
        // that converge stop; 27.3 in the quick run) against CG's 20: a work ratio of 1.36 alone,
        // so H13's [1.0, 1.3] (stated at E[J] = 100) is not this setting's claim; reported
        // as a note.
        let cost_ratio = seconds_per_step(rr) / seconds_per_step(cg);
        let (deep_cg, deep_rr) = (&deep_runs[0], &deep_runs[1]);
        let deep_ratio = seconds_per_step(deep_rr) / seconds_per_step(deep_cg);
        let checks = vec![
            Check::new(
                format!(
                    "H13: RR-CG (E[J] = 99.5) / CG(100) time per step in [1.0, 1.3]: \
                     {deep_ratio:.2} ({:.1} vs {:.1} iterations per step; the paper: 1.09–1.18, \
                     E[max(J₁, J₂)] = 109.5 iterations)",
                    deep_rr.mean_work, deep_cg.mean_work
                ),
                (1.0..=1.3).contains(&deep_ratio),
            ),
            Check::new(
                format!("H10: RR-CG's final exact loss within 0.01 of Cholesky's (gap {rr_gap:+.5})"),
                rr_gap.abs() < 0.01,
            ),
            Check::new(
                format!(
                    "H10: CG(20) ends further from the Cholesky optimum than RR-CG (CG {cg_gap:+.5}, RR-CG {rr_gap:+.5})"
                ),
                cg_gap > rr_gap,
            ),
            Check::new(
                format!(
                    "H10: RR-CG's learned log-hyperparameters within 0.1 of Cholesky's (largest gap {max_param_gap:.3})"
                ),
                max_param_gap < 0.1,
            ),
        ];
        let series = runs
            .iter()
            .map(|run| exact_loss_series(&run.label, &run.result.steps))
            .collect();
        let raw = json!({
            "problem": problem.description,
            "runs": runs.iter().map(|run| json!({
                "method": run.label,
                "steps": run.result.steps.iter().map(|s| json!({
                    "step": s.step,
                    "log_params": s.log_params,
                    "exact_loss": s.exact_loss,
                    "estimated_loss": s.estimated_loss,
                    "iterations": s.work,
                })).collect::<Vec<_>>(),
                "training_seconds": run.result.training_seconds,
            })).collect::<Vec<_>>(),
        });
        Ok(ExperimentOutput {
            tables: vec![
                NamedTable {
                    title: format!(
                        "Training to the exact optimum ({}): final exact loss and hyperparameters",
                        problem.description
                    ),
                    table,
                },
                NamedTable {
                    title: "H13 at the paper's depth: time per training step of CG(100) and RR-CG (E[J] = 99.5), from Cholesky's optimum".into(),
                    table: deep_table,
                },
            ],
            notes: vec![
                "The exact loss is evaluated by Cholesky at the hyperparameters recorded after each step (its time is not in the training time). RR-CG: λ = 0.05, J_min = 1, J_max = n, two draws per step; CG and RR-CG without preconditioner (n < 2000, GPyTorch's rule).".into(),
                format!(
                    "RR-CG (E[J] = 20.5) / CG(20) time per step: {cost_ratio:.2} ({:.1} vs {:.1} iterations per step, a work ratio of {:.2}). Not a check: H13's [1.0, 1.3] is stated at E[J] = 100, where E[max(J₁, J₂)] = 109.5 is 1.1× J; at J_min = 1 the maximum of the two draws alone is the work ratio above.",
                    rr.mean_work, cg.mean_work, rr.mean_work / cg.mean_work
                ),
                format!(
                    "H13 at the paper's depth: each of the two trainings ran {} times in round-robin order; the table and the check use each one's fastest run (seeded, so every run does the same work).",
                    p.h13_rounds
                ),
            ],
            raw,
            curves: vec![Curve {
                file_stem: "training-exact-loss".into(),
                title: "Exact −log p / n along training".into(),
                x_label: "Adam step".into(),
                y_label: "exact −log p / n".into(),
                log_x: false,
                log_y: false,
                series,
            }],
            checks,
        })
    }
}
