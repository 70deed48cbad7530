//! RR-CG training on structured operators (issue 15; the paper's 3DRoad row, spec
//! `rtgps.md` §5): GSGP's grid-space form of the SKI model (`train_objective_gsgp`, no step
//! cost depends on `n`) trained from GPyTorch's start, then the SKI operator
//! `W K_G Wᵀ + σ²I` (`train_objective_ski`) trained from GSGP's solution, as the paper trained
//! 3DRoad from the sgGP solution, with its learning rate 0.01 and its rank-5
//! pivoted-Cholesky preconditioner. Both by RR-CG with the paper's law (λ = 0.05,
//! `J_min` = 80, two draws) and 10 probes.
//!
//! Why SKI does not start from GPyTorch's start: trained that way (lr 0.1, 300 steps) it
//! ended at log p(y)/n = 0.843 where GSGP's end point has 0.877 under the SKI model itself,
//! with rank-5 preconditioning or without (two `--full` runs, 2026-11-27). Along that path
//! σ² falls to ~0.01 and the length scales shrink, `K̂` then needs thousands of CG
//! iterations, and RR-CG with `E[J] ≈ 100` almost never draws them: in practice it is
//! truncated CG there, with truncated CG's bias, although unbiased in expectation.
//!
//! 3DRoad itself is not in the data directory. `--full` trains a labelled synthetic 3-D
//! stand-in of the paper's training size, n = 278 319 (64% of 434 874), for the paper's 300
//! steps: the target is 300 RR-CG steps on the SKI operator in ≤ 15 min. `--quick`
//! runs a small version whose exact loss (dense Cholesky of the exact GP) is evaluated at
//! the start and the end.

use gp_kernels::SquaredExponential;
use gp_models::objective::{
    train_objective_gsgp, train_objective_ski, Estimator, ObjectiveTrainResult,
};
use gp_models::optim::MultiStepDecay;
use gp_models::{GpModel, Gsgp, GsgpOptions, PredictRequest, Ski, SkiOptions};
use serde_json::json;

use super::{adam_training, mean_work_per_step, GPYTORCH_START};
use crate::error::BenchError;
use crate::experiment::{Check, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize};
use crate::synthetic::smooth_regression;
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct StructuredTraining;

/// Sizes per run size.
struct Plan {
    n_train: usize,
    n_test: usize,
    /// Grid points per axis.
    grid: usize,
    steps: usize,
    /// Evaluate the exact loss at the start and the end (dense: small `n` only).
    exact_loss: bool,
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            n_train: 400,
            n_test: 100,
            grid: 8,
            steps: 4,
            exact_loss: true,
        },
        RunSize::Quick => Plan {
            n_train: 1500,
            n_test: 500,
            grid: 10,
            steps: 30,
            exact_loss: true,
        },
        RunSize::Full => Plan {
            n_train: THREE_D_ROAD_TRAIN,
            n_test: 20_000,
            grid: 32,
            steps: 300,
            exact_loss: false,
        },
    }
}

/// 3DRoad's training size in the paper's 64/16/20 split (spec `rtgps.md` §5.1).
const THREE_D_ROAD_TRAIN: usize = 278_319;
/// Noise variance of the stand-in.
const NOISE: f64 = 0.01;
/// Adam's learning rate of the GSGP training: twice the code's 0.05 (a faster schedule than
/// the paper's 0.01 over 300 steps, which started from the sgGP solution; GSGP starts from
/// GPyTorch's defaults, σ² ≈ 0.69, far from the stand-in's 0.01).
const LEARNING_RATE: f64 = 0.1;
/// Adam's learning rate of the SKI training from GSGP's solution: the paper's.
const SKI_LEARNING_RATE: f64 = 0.01;
/// Relative residual of the converged SKI log-likelihood evaluations at the start and the
/// end of the SKI training (`--full`, where Cholesky is out of reach).
const CONVERGED_TOLERANCE: f64 = 1e-5;
/// The target for 300 RR-CG steps on the SKI operator at n = 278K.
const SKI_TARGET_SECONDS: f64 = 900.0;
/// Iteration cap of the prediction's mean solve `K̂⁻¹y` (the models' `krylov.max_iterations`;
/// training's RR-CG depth comes from its own law). With σ² ≈ 0.01 at n = 278K, `K̂` is
/// ill-conditioned and the solve is not preconditioned: at plausible learned values it took
/// 500–2300 iterations to the default tolerance 1e-4 (4.8 ms each), and the first `--full`
/// run, with the default cap of 1000, stopped at a relative residual of 0.12.
const PREDICTION_MAX_ITERATIONS: usize = 20_000;

/// The SKI model's `log p(y)` from CG run to [`CONVERGED_TOLERANCE`] (SLQ, 10 probes, the
/// same probes at every evaluation).
struct Converged {
    lml: f64,
    std_error: f64,
    iterations: usize,
}

/// One trained model.
struct Run {
    label: &'static str,
    result: ObjectiveTrainResult<SquaredExponential>,
    rmse: f64,
    mean_work: f64,
    /// How the prediction's mean solve `K̂⁻¹y` ended.
    mean_solve: Option<gp_models::SolveReport>,
}

impl Run {
    fn seconds_per_step(&self) -> f64 {
        self.result.training_seconds / self.result.steps.len().saturating_sub(1).max(1) as f64
    }

    fn exact(&self, first: bool) -> Option<f64> {
        let mut with = self.result.steps.iter().filter_map(|s| s.exact_loss);
        if first {
            with.next()
        } else {
            with.next_back()
        }
    }
}

fn rmse(mean: faer::ColRef<'_, f64>, y: faer::ColRef<'_, f64>) -> f64 {
    let n = y.nrows().max(1) as f64;
    ((0..y.nrows())
        .map(|i| (mean[i] - y[i]).powi(2))
        .sum::<f64>()
        / n)
        .sqrt()
}

impl Experiment for StructuredTraining {
    fn name(&self) -> &'static str {
        "structured"
    }

    fn title(&self) -> &'static str {
        "RR-CG training on the SKI operator and on GSGP's grid-space form (3DRoad stand-in)"
    }

    fn paper_reference(&self) -> &'static str {
        "RTGPS §5 Tables S1/S2, 3DRoad row (spec rtgps.md §5); issue 15"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "synthetic 3-D stand-in (f = Σ sin(π(i+1)xᵢ)/√3 on [0, 1]³, σ² = {NOISE}), n = {} \
             training / {} test points, cubic grid {g}×{g}×{g}; RR-CG λ = 0.05, J_min = 80, two \
             draws, 10 probes, {} steps each, Adam ×0.1 at 50/70/90%: GSGP from GPyTorch's start \
             (lr {LEARNING_RATE}), then SKI from GSGP's solution (lr {SKI_LEARNING_RATE}, rank-5 \
             pivoted-Cholesky preconditioner from 2000 points)",
            p.n_train,
            p.n_test,
            p.steps,
            g = p.grid
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            RunSize::Quick => 5.0,
            // Measured by whole `--full` runs at n = 278 319 on a 32³ grid: SKI 2.9–3.4 s per
            // step with the rank-5 preconditioner applied inside CG's passes; GSGP 1.3–2.2 s
            // per step; two converged log-likelihoods and the mean solve (2026-11-27).
            RunSize::Full => 300.0 * (3.4 + 2.2) + 240.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let (x, y) = smooth_regression(p.n_train + p.n_test, 3, NOISE, ctx.seed ^ 0x3D);
        let (x_train, x_test) = (x.subrows(0, p.n_train), x.subrows(p.n_train, p.n_test));
        let (y_train, y_test) = (y.subrows(0, p.n_train), y.subrows(p.n_train, p.n_test));
        let kernel = SquaredExponential::isotropic(3, GPYTORCH_START, GPYTORCH_START)?;
        let noise = GPYTORCH_START + 1e-4;
        let mut ski_options = SkiOptions::default();
        ski_options.grid.sizes = vec![p.grid; 3];
        ski_options.krylov.max_iterations = PREDICTION_MAX_ITERATIONS;
        let gsgp_options = GsgpOptions::from_parts(
            ski_options.grid.clone(),
            ski_options.krylov,
            ski_options.estimator,
        );
        let rr = Estimator::rr_cg_exp_decay(0.05, 80, p.n_train)?;
        let training = |learning_rate: f64| gp_models::objective::ObjectiveTrainOptions {
            exact_loss_every: p.exact_loss.then_some(p.steps),
            ..adam_training(
                learning_rate,
                p.steps,
                Some(MultiStepDecay::paper_gp()),
                ctx.seed + 1,
            )
        };
        let go_on =
            &mut |_: &gp_models::objective::TrainingStep| std::ops::ControlFlow::Continue(());
        ctx.progress.set_length(2);

        let gsgp = Gsgp::fit(kernel.clone(), x_train, y_train, noise, &gsgp_options)?;
        let exact_data = p.exact_loss.then_some((x_train, y_train));
        let result = train_objective_gsgp(&gsgp, &rr, &training(LEARNING_RATE), exact_data, go_on)?;
        let trained = gsgp.with_log_params(&final_log_params(&result))?;
        let mean = trained.predict_mean(x_test)?;
        let gsgp_run = Run {
            label: "GSGP grid space (train_objective_gsgp), from GPyTorch's start",
            rmse: rmse(mean.as_ref(), y_test),
            mean_solve: Some(trained.mean_solve_report()?),
            mean_work: mean_work_per_step(&result.steps),
            result,
        };
        ctx.progress.inc(1);

        // The training points in grid-cell order (the stand-in is drawn in random order):
        // every W and Wᵀ pass then walks the grid in order, which took a step at n = 278K
        // from 5.1–5.5 s to 3.6–3.7 s (`ski_rtgps_step` example). The model and its loss do
        // not depend on the order of the points.
        let unordered = Ski::fit(kernel.clone(), x_train, y_train, noise, &ski_options)?;
        let order = gp_structured::cell_order(
            unordered.grid(),
            x_train,
            gp_structured::InterpolationOptions {
                scheme: ski_options.grid.scheme,
                out_of_grid: ski_options.grid.out_of_grid,
            },
        )?;
        drop(unordered);
        let x_ordered = gp_structured::permute_rows(x_train, &order)?;
        let y_ordered = faer::Col::from_fn(order.len(), |k| y_train[order[k]]);
        let ski = Ski::fit(
            kernel,
            x_ordered.as_ref(),
            y_ordered.as_ref(),
            noise,
            &ski_options,
        )?
        .with_log_params(&final_log_params(&gsgp_run.result))?;
        let result = train_objective_ski(&ski, &rr, &training(SKI_LEARNING_RATE), go_on)?;
        let trained = ski.with_log_params(&final_log_params(&result))?;
        // An unconverged mean solve is reported (table and check), not fatal: the training
        // record is what the run is for.
        let prediction =
            trained.predict(x_test, &PredictRequest::mean().accepting_unconverged())?;
        // Where Cholesky is out of reach, the SKI model's own log-likelihood at the start and
        // the end of its training, from converged solves with the same probes.
        let converged = if p.exact_loss {
            None
        } else {
            let at = |log_params: &[f64]| -> Result<Converged, BenchError> {
                let mut options = ski_options.clone();
                options.krylov.tolerance = CONVERGED_TOLERANCE;
                options.krylov.max_iterations = PREDICTION_MAX_ITERATIONS;
                let model = Ski::fit(
                    SquaredExponential::isotropic(3, GPYTORCH_START, GPYTORCH_START)?,
                    x_ordered.as_ref(),
                    y_ordered.as_ref(),
                    noise,
                    &options,
                )?
                .with_log_params(log_params)?;
                let e = model.lml_and_grad_estimate()?;
                Ok(Converged {
                    lml: e.lml,
                    std_error: e.lml_std_error,
                    iterations: e.solve.iterations,
                })
            };
            Some((at(&ski.log_params())?, at(&trained.log_params())?))
        };
        let ski_run = Run {
            label: "SKI operator (train_objective_ski), from GSGP's solution",
            rmse: rmse(prediction.mean.as_ref(), y_test),
            mean_solve: prediction.mean_solve,
            mean_work: mean_work_per_step(&result.steps),
            result,
        };
        ctx.progress.inc(1);

        let runs = [ski_run, gsgp_run];
        let mut table = Table::new([
            "model",
            "steps",
            "mean iterations / step",
            "time / step",
            "training time",
            "ℓ (per dimension)",
            "s",
            "σ²",
            "test RMSE",
            "prediction's mean solve",
            "exact −log p / n: start → end",
        ]);
        for run in &runs {
            let lp = final_log_params(&run.result);
            let value = |k: usize| lp.get(k).map_or(f64::NAN, |v| v.exp());
            table.row([
                run.label.to_string(),
                p.steps.to_string(),
                format!("{:.1}", run.mean_work),
                fmt_seconds(run.seconds_per_step()),
                fmt_seconds(run.result.training_seconds),
                format!("{:.4}, {:.4}, {:.4}", value(0), value(1), value(2)),
                format!("{:.4}", value(3)),
                format!("{:.3e}", value(4)),
                format!("{:.4}", run.rmse),
                run.mean_solve.as_ref().map_or("not reported".into(), |r| {
                    format!(
                        "{} iterations, rel. residual {:.1e}{}",
                        r.iterations,
                        r.max_relative_residual,
                        if r.converged { "" } else { ", NOT converged" }
                    )
                }),
                match (run.exact(true), run.exact(false)) {
                    (Some(a), Some(b)) => format!("{a:.4} → {b:.4}"),
                    _ => "not evaluated (n too large for Cholesky)".into(),
                },
            ]);
        }
        let noise_sd = NOISE.sqrt();
        let mut checks = Vec::new();
        for run in &runs {
            if let Some(report) = &run.mean_solve {
                checks.push(Check::new(
                    format!(
                        "{}: the prediction's mean solve converged ({} iterations, relative \
                         residual {:.1e})",
                        run.label, report.iterations, report.max_relative_residual
                    ),
                    report.converged,
                ));
            }
            checks.push(Check::new(
                format!(
                    "{}: test RMSE {:.4} within 1.5× the noise sd {noise_sd:.3} (the learned model \
                     explains the signal)",
                    run.label, run.rmse
                ),
                run.rmse <= 1.5 * noise_sd,
            ));
            if let (Some(a), Some(b)) = (run.exact(true), run.exact(false)) {
                checks.push(Check::new(
                    format!(
                        "{}: the exact loss falls along training ({a:.4} → {b:.4})",
                        run.label
                    ),
                    b < a,
                ));
            }
        }
        let n = p.n_train as f64;
        if let Some((start, end)) = &converged {
            checks.push(Check::new(
                format!(
                    "SKI training from GSGP's solution does not lower the SKI model's log p(y) \
                     beyond twice the SLQ standard errors: log p/n {:.4} ± {:.4} → {:.4} ± {:.4} \
                     (CG to {CONVERGED_TOLERANCE:.0e}, {} and {} iterations)",
                    start.lml / n,
                    start.std_error / n,
                    end.lml / n,
                    end.std_error / n,
                    start.iterations,
                    end.iterations
                ),
                end.lml >= start.lml - 2.0 * (start.std_error + end.std_error),
            ));
        }
        let ski_projected = runs[0].seconds_per_step() * 300.0;
        if ctx.size == RunSize::Full {
            checks.push(Check::new(
                format!(
                    "300 RR-CG steps on the SKI operator at n = {} in ≤ 15 min: {} ({} per step)",
                    p.n_train,
                    fmt_seconds(ski_projected),
                    fmt_seconds(runs[0].seconds_per_step())
                ),
                ski_projected <= SKI_TARGET_SECONDS,
            ));
        }
        let converged_json = converged.as_ref().map(|(start, end)| {
            json!({
                "tolerance": CONVERGED_TOLERANCE,
                "start": {"lml": start.lml, "std_error": start.std_error, "iterations": start.iterations},
                "end": {"lml": end.lml, "std_error": end.std_error, "iterations": end.iterations},
            })
        });
        let raw = json!({
            "ski_converged_lml": converged_json,
            "n_train": p.n_train,
            "n_test": p.n_test,
            "grid": [p.grid, p.grid, p.grid],
            "runs": runs.iter().map(|run| json!({
                "model": run.label,
                "test_rmse": run.rmse,
                "mean_iterations": run.mean_work,
                "training_seconds": run.result.training_seconds,
                "steps": run.result.steps.iter().map(|s| json!({
                    "step": s.step,
                    "log_params": s.log_params,
                    "exact_loss": s.exact_loss,
                    "iterations": s.work,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: format!(
                    "RR-CG training on structured operators, synthetic 3-D stand-in for 3DRoad \
                     (n = {} training points, {g}×{g}×{g} grid)",
                    p.n_train,
                    g = p.grid
                ),
                table,
            }],
            notes: vec![format!(
                "3DRoad is not in the data directory: the data are a labelled synthetic 3-D \
                 stand-in of the paper's training size at --full. SKI and GSGP are the same \
                 model (GSGP keeps WᵀW, Wᵀy, yᵀy instead of W and y). GSGP trains from \
                 GPyTorch's start; SKI then trains from GSGP's solution with the paper's lr \
                 0.01 and rank-5 pivoted-Cholesky preconditioner (from 2000 points), as the \
                 paper trained 3DRoad from the sgGP solution (with an exact GP on KeOps; it has \
                 no SKI row). Length scales at the end: SKI {}, GSGP {}; test RMSE {:.4} and \
                 {:.4}. The prediction's mean solve is not preconditioned. Trained from \
                 GPyTorch's start instead (lr 0.1, 300 steps, with or without the \
                 preconditioner), SKI ended at log p/n 0.843 where GSGP's solution has 0.877: \
                 along that path σ² and the length scales shrink until K̂ needs thousands of CG \
                 iterations, which RR-CG with E[J] ≈ 100 almost never draws, so in practice it \
                 is truncated CG there, with truncated CG's bias.",
                length_scales(&runs[0]),
                length_scales(&runs[1]),
                runs[0].rmse,
                runs[1].rmse
            )],
            raw,
            curves: Vec::new(),
            checks,
        })
    }
}

/// The learned length scales of a run, for the notes.
fn length_scales(run: &Run) -> String {
    let lp = final_log_params(&run.result);
    let ells: Vec<String> = lp
        .iter()
        .take(3)
        .map(|v| format!("{:.2}", v.exp()))
        .collect();
    ells.join("/")
}

fn final_log_params(result: &ObjectiveTrainResult<SquaredExponential>) -> Vec<f64> {
    result
        .steps
        .last()
        .map(|s| s.log_params.clone())
        .unwrap_or_default()
}
