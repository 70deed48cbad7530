//! Figs. 4 and S2, H11: training with random Fourier features. RFF(D) converges quickly to
//! a point worse than the exact optimum (its objective is biased); SS-RFF, unbiased, gets
//! to the optimum but needs far more steps (the paper: two to three orders of magnitude).
//! Run on H10's synthetic problem with the exact loss recorded along training.

use gp_kernels::SquaredExponential;
use gp_models::objective::rff::{SsRff, SsRffOptions};
use gp_models::objective::{Estimator, ObjectiveTrainOptions, ObjectiveTrainResult};
use serde_json::json;

use super::toy::{h10_problem, H10Config};
use super::{
    adam_training, exact_loss_series, exact_losses, train_from_gpytorch_start, GPYTORCH_START,
};
use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize,
};
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct SsRffTraining;

/// Sizes per run size.
struct Plan {
    n: usize,
    /// Adam steps of the Cholesky and RFF runs (enough for both to settle).
    steps: usize,
    /// Adam steps of the SS-RFF run: H11 asks whether it needs ≥ 10× RFF's steps, so at
    /// `--full` it runs past 10× RFF's plateau step (about 1 600 there); a run that has not
    /// arrived by then shows the claim as a lower bound.
    ss_steps: usize,
    exact_every: usize,
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            n: 100,
            steps: 40,
            ss_steps: 40,
            exact_every: 4,
        },
        RunSize::Quick => Plan {
            n: 200,
            steps: 300,
            ss_steps: 300,
            exact_every: 5,
        },
        RunSize::Full => Plan {
            n: 1000,
            steps: 3000,
            ss_steps: 20_000,
            exact_every: 10,
        },
    }
}

/// "Within" in H11: an exact loss `−log p / n` within this of a target.
const WITHIN: f64 = 0.01;

/// SS-RFF as in the spec's example `(100, 600, 10, 1)`: base 100 frequencies, step 10, 50
/// terms, `p(k) ∝ 1/k` (`E[D] ≈ 211`), with the exact objective as the top term so that the
/// estimator is unbiased for the exact loss (the top, 600 frequencies, is at least n/2
/// here, where an RFF matrix costs as much as the exact one).
fn ss_options() -> SsRffOptions {
    SsRffOptions {
        base_freqs: 100,
        step: 10,
        terms: 50,
        exponent: 1.0,
        top_exact: true,
    }
}

/// Recorded exact losses averaged over a trailing window of this many records: the
/// estimators' iterates jitter (fresh frequencies every step, as the reference code), so
/// plateaus and arrivals are judged on the running mean.
const SMOOTHING: usize = 10;

/// `(step, trailing mean of the exact loss)` at every recorded step.
fn smoothed_exact(run: &ObjectiveTrainResult<SquaredExponential>) -> Vec<(usize, f64)> {
    let points = exact_losses(&run.steps);
    (0..points.len())
        .map(|i| {
            let window = &points[i.saturating_sub(SMOOTHING - 1)..=i];
            let mean = window.iter().map(|p| p.1).sum::<f64>() / window.len() as f64;
            (points[i].0, mean)
        })
        .collect()
}

/// The first recorded step from which the smoothed exact loss stays within [`WITHIN`] of
/// `target` (`None`: not even at the last step).
fn settles_within(run: &ObjectiveTrainResult<SquaredExponential>, target: f64) -> Option<usize> {
    let mut first = None;
    for &(step, loss) in smoothed_exact(run).iter().rev() {
        if (loss - target).abs() <= WITHIN {
            first = Some(step);
        } else {
            break;
        }
    }
    first
}

/// The last smoothed exact loss.
fn final_exact(run: &ObjectiveTrainResult<SquaredExponential>) -> f64 {
    smoothed_exact(run).last().map_or(f64::NAN, |p| p.1)
}

impl Experiment for SsRffTraining {
    fn name(&self) -> &'static str {
        "ss-rff-training"
    }

    fn title(&self) -> &'static str {
        "Training with RFF and SS-RFF: RFF plateaus above the exact optimum, SS-RFF reaches it slowly (Figs. 4, S2; H11)"
    }

    fn paper_reference(&self) -> &'static str {
        "RTGPS §5, Figs. 4 and S2 (spec rtgps.md §5.7, §6 H11)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "H10 synthetic problem, n = {}, d = 2, σ² = 1e-3; Adam lr 0.05 (constant), {} steps (SS-RFF: {}); exact loss every {} steps",
            p.n, p.steps, p.ss_steps, p.exact_every
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            RunSize::Quick => 8.0,
            // Measured 612 s (2026-11-27, at 0e3b825, about alone on the 2 cores): Cholesky
            // 43 s and RFF 32 s of training over 3000 steps, SS-RFF 517 s over 20 000, the
            // rest the exact losses recorded every 10 steps.
            RunSize::Full => 650.0,
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
        let ss = SsRff::new(ss_options())?;
        let expected = ss.expected_num_freqs();
        let rff_freqs = expected.round() as usize;
        let estimators = [
            Estimator::Cholesky,
            Estimator::Rff {
                num_freqs: rff_freqs,
            },
            Estimator::SsRff(ss_options()),
        ];
        ctx.progress.set_length(estimators.len() as u64);
        let kernel = SquaredExponential::isotropic(problem.d(), GPYTORCH_START, GPYTORCH_START)?;
        let mut runs = Vec::new();
        for (i, estimator) in estimators.iter().enumerate() {
            let steps = match estimator {
                Estimator::SsRff(_) => p.ss_steps,
                _ => p.steps,
            };
            // A constant rate: the schedule's ×0.1 steps would make every method look
            // settled at 50% of the run, whatever its estimator.
            let options = ObjectiveTrainOptions {
                exact_loss_every: Some(p.exact_every),
                ..adam_training(0.05, steps, None, ctx.seed + 1 + i as u64)
            };
            let result = train_from_gpytorch_start(
                &kernel,
                problem.x.as_ref(),
                problem.y.as_ref(),
                estimator,
                &options,
            )?;
            runs.push((estimator.label(), steps, result));
            ctx.progress.inc(1);
        }
        let optimum = final_exact(&runs[0].2);
        let rff_final = final_exact(&runs[1].2);
        let rff_plateau = settles_within(&runs[1].2, rff_final);
        let ss_reaches = settles_within(&runs[2].2, optimum);
        let mut table = Table::new([
            "method",
            "final exact −log p / n (mean of the last 10 records)",
            "minus Cholesky's",
            "settles within 0.01 of its final loss from step",
            "within 0.01 of Cholesky's optimum from step",
            "training time",
        ]);
        let step_cell = |s: Option<usize>, steps: usize| {
            s.map_or_else(|| format!("not by step {steps}"), |s| s.to_string())
        };
        for (label, steps, run) in &runs {
            let last = final_exact(run);
            table.row([
                label.clone(),
                format!("{last:.5}"),
                format!("{:+.5}", last - optimum),
                step_cell(settles_within(run, last), *steps),
                step_cell(settles_within(run, optimum), *steps),
                fmt_seconds(run.training_seconds),
            ]);
        }
        // SS-RFF's steps to the optimum over RFF's steps to its plateau; a run that never
        // gets there counts as reaching it after its last step (a lower bound).
        let ss_steps = ss_reaches.unwrap_or(p.ss_steps + 1).max(1);
        let rff_steps = rff_plateau.unwrap_or(p.steps).max(1);
        let ratio = ss_steps as f64 / rff_steps as f64;
        let checks = vec![
            Check::new(
                format!(
                    "H11: RFF({rff_freqs}) plateaus worse than the exact optimum (by \
                     {:+.5} > 0.01)",
                    rff_final - optimum
                ),
                rff_final - optimum > WITHIN,
            ),
            Check::new(
                format!(
                    "H11: SS-RFF (E[D] = {expected:.1}) needs ≥ 10× RFF's steps: within 0.01 of \
                     the optimum from step {} vs RFF's plateau from step {} (ratio {}{ratio:.1})",
                    step_cell(ss_reaches, p.ss_steps),
                    step_cell(rff_plateau, p.steps),
                    if ss_reaches.is_none() { "≥ " } else { "" }
                ),
                ratio >= 10.0,
            ),
        ];
        let series = runs
            .iter()
            .map(|(label, _, run)| exact_loss_series(label, &run.steps))
            .collect();
        let raw = json!({
            "problem": problem.description,
            "ss_rff": {"base": 100, "step": 10, "terms": 50, "top_exact": true, "expected_freqs": expected},
            "rff_freqs": rff_freqs,
            "runs": runs.iter().map(|(label, steps, run)| json!({
                "method": label,
                "steps": steps,
                "exact_loss": exact_losses(&run.steps),
                "final_log_params": run.steps.last().map(|s| s.log_params.clone()),
                "training_seconds": run.training_seconds,
            })).collect::<Vec<_>>(),
        });
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: format!(
                    "RFF({rff_freqs}) and SS-RFF (E[D] = {expected:.1}) against Cholesky ({})",
                    problem.description
                ),
                table,
            }],
            notes: vec![format!(
                "RFF uses D = E[D] of SS-RFF, fresh frequencies every step. SS-RFF: base 100 \
                 frequencies, step 10, 50 terms, p(k) ∝ 1/k, the top term exact (unbiased for \
                 the exact loss). All start from GPyTorch's defaults with every hyperparameter \
                 trained. \"From step s\": the first recorded step after which the running mean of \
                 the last {SMOOTHING} recorded exact losses stays within {WITHIN} of the \
                 target (the iterates jitter: fresh frequencies every step)."
            )],
            raw,
            curves: vec![Curve {
                file_stem: "ss-rff-training-exact-loss".into(),
                title: "Exact −log p / n along training: RFF and SS-RFF".into(),
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
