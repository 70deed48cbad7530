//! Tables S1/S2 (one row per data set): training by Cholesky, CG(100) and RR-CG (λ = 0.05,
//! J_min = 80, `E[J] ≈ 99.5`) with the paper's protocol (ARD RBF, Adam with ×0.1 at
//! 50/70/90%), then test RMSE and NLL and the training time; H12 (RR-CG ≈ Cholesky) and
//! H13 (RR-CG costs ≤ 1.3× CG per step) as checks.

use gp_kernels::SquaredExponential;
use gp_models::objective::Estimator;
use gp_models::optim::MultiStepDecay;
use gp_models::ExactGp;
use serde_json::json;

use super::data::{load_rtgps, RtgpsSplit};
use super::{adam_training, mean_work_per_step, train_from_gpytorch_start, GPYTORCH_START};
use crate::error::BenchError;
use crate::experiment::{Check, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize};
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct UciTable;

struct Plan {
    sets: &'static [&'static str],
    /// Rows kept before the split (`None`: the whole set).
    total: Option<usize>,
    steps: usize,
    learning_rate: f64,
    /// Adam steps of the RFF baseline (the paper: 500, with its own schedule); `None`: no
    /// RFF row (at `--quick`, where 60 steps leave every method short of its optimum, so
    /// the comparison means nothing, and RFF(700) would add 16 s to the main job).
    rff_steps: Option<usize>,
}

/// The RFF baseline's frequencies (the paper's §5 and `rff.sh`; App. E says 1000).
const RFF_FREQS: usize = 700;

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            sets: &["pol"],
            total: Some(300),
            steps: 10,
            learning_rate: 0.05,
            rff_steps: Some(10),
        },
        RunSize::Quick => Plan {
            sets: &["pol"],
            total: Some(1000),
            steps: 60,
            learning_rate: 0.05,
            rff_steps: None,
        },
        RunSize::Full => Plan {
            sets: &["pol", "elevators", "bike"],
            total: None,
            steps: 1500,
            learning_rate: 0.01,
            rff_steps: Some(500),
        },
    }
}

/// The paper's RMSE and NLL (Table S1: Cholesky, CG, RR-CG, RFF) per set.
fn paper_values(set: &str) -> Option<[(f64, f64); 4]> {
    match set {
        "pol" => Some([
            (0.112, -0.464),
            (0.119, -0.354),
            (0.112, -0.458),
            (0.106, -0.159),
        ]),
        "elevators" => Some([
            (0.360, 0.425),
            (0.360, 0.429),
            (0.360, 0.425),
            (0.365, 0.780),
        ]),
        "bike" => Some([
            (0.035, -0.984),
            (0.040, -0.971),
            (0.035, -0.982),
            (0.063, 0.099),
        ]),
        _ => None,
    }
}

struct Outcome {
    label: String,
    steps: usize,
    rmse: f64,
    nll: f64,
    seconds: f64,
    mean_iterations: f64,
}

fn run_method(
    split: &RtgpsSplit,
    estimator: &Estimator,
    p: &Plan,
    seed: u64,
) -> Result<Outcome, BenchError> {
    let d = split.d;
    let init = GPYTORCH_START;
    let kernel = SquaredExponential::new(vec![init; d], init)?;
    // The RFF baseline has its own schedule (spec §5.2): fewer steps, ×0.5 at 85/90/95%.
    let (steps, decay) = match estimator {
        Estimator::Rff { .. } => (p.rff_steps.unwrap_or(0), MultiStepDecay::paper_rff()),
        _ => (p.steps, MultiStepDecay::paper_gp()),
    };
    let options = adam_training(p.learning_rate, steps, Some(decay), seed);
    let out = train_from_gpytorch_start(
        &kernel,
        split.x_train.as_ref(),
        split.y_train.as_ref(),
        estimator,
        &options,
    )?;
    // Predictions by the exact GP at the learned hyperparameters.
    let gp = ExactGp::fit(
        out.kernel.clone(),
        split.x_train.as_ref(),
        split.y_train.as_ref(),
        out.noise_variance,
    )?;
    let mean = gp.predict_mean(split.x_test.as_ref())?;
    let var = gp.predict_variance(split.x_test.as_ref())?;
    let m = split.y_test.nrows() as f64;
    let (mut se, mut nll) = (0.0, 0.0);
    for i in 0..split.y_test.nrows() {
        let r = split.y_test[i] - mean[i];
        se += r * r;
        nll += 0.5 * (2.0 * std::f64::consts::PI * var[i]).ln() + 0.5 * r * r / var[i];
    }
    Ok(Outcome {
        label: estimator.label(),
        steps,
        rmse: (se / m).sqrt(),
        nll: nll / m,
        seconds: out.training_seconds,
        mean_iterations: mean_work_per_step(&out.steps),
    })
}

impl Experiment for UciTable {
    fn name(&self) -> &'static str {
        "uci-table"
    }

    fn title(&self) -> &'static str {
        "Tables S1/S2: test RMSE, NLL and training time of Cholesky, CG(100), RR-CG and RFF(700) (H12, H13)"
    }

    fn paper_reference(&self) -> &'static str {
        "RTGPS App. E, Tables S1, S2 (spec rtgps.md §5.3–5.5, §6 H12, H13)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "{:?}{}, ARD RBF, Adam lr {} for {} steps (×0.1 at 50/70/90%), one seed",
            p.sets,
            p.total.map_or(String::new(), |t| format!(
                ", first {t} shuffled rows (a subset, labelled)"
            )),
            p.learning_rate,
            p.steps
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            RunSize::Quick => 20.0,
            // Three sets × (Cholesky ≈ 1 s, CG(100) ≈ 9 s, RR-CG ≈ 10 s per step) × 1500.
            RunSize::Full => 3.0 * 1500.0 * 20.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let mut table = Table::new([
            "data set",
            "method",
            "test RMSE (paper)",
            "test NLL (paper)",
            "training time",
            "time / step",
            "mean CG iterations / step",
        ]);
        let mut checks = Vec::new();
        let mut raw_rows = Vec::new();
        let methods = if p.rff_steps.is_some() { 4 } else { 3 };
        ctx.progress.set_length(methods * p.sets.len() as u64);
        for &set in p.sets {
            let split = load_rtgps(set, ctx.data_dir.path.as_deref(), ctx.seed, p.total)?;
            let n = split.x_train.nrows();
            let mut estimators = vec![
                Estimator::Cholesky,
                Estimator::Cg { iterations: 100 },
                Estimator::rr_cg_exp_decay(0.05, 80.min(n), n)?,
            ];
            if p.rff_steps.is_some() {
                estimators.push(Estimator::Rff {
                    num_freqs: RFF_FREQS,
                });
            }
            let paper = paper_values(set);
            let mut outcomes = Vec::new();
            for (i, e) in estimators.iter().enumerate() {
                outcomes.push(run_method(&split, e, &p, ctx.seed + 10 + i as u64)?);
                ctx.progress.inc(1);
            }
            for (i, o) in outcomes.iter().enumerate() {
                let (pr, pn) = paper.map_or((f64::NAN, f64::NAN), |v| v[i]);
                table.row([
                    split.describe(),
                    o.label.clone(),
                    format!("{:.4} ({pr:.3})", o.rmse),
                    format!("{:+.4} ({pn:+.3})", o.nll),
                    fmt_seconds(o.seconds),
                    fmt_seconds(o.seconds / o.steps.max(1) as f64),
                    format!("{:.1}", o.mean_iterations),
                ]);
                raw_rows.push(json!({
                    "set": set, "method": o.label, "rmse": o.rmse, "nll": o.nll,
                    "training_seconds": o.seconds, "mean_iterations": o.mean_iterations,
                    "paper_rmse": pr, "paper_nll": pn,
                }));
            }
            let (chol, cg, rr) = (&outcomes[0], &outcomes[1], &outcomes[2]);
            if let Some(rff) = outcomes.get(3) {
                checks.push(Check::new(
                    format!(
                        "Table S1 ({set}): RFF({RFF_FREQS})'s test NLL worse than Cholesky's, as \
                         in the paper ({:+.4} vs {:+.4})",
                        rff.nll, chol.nll
                    ),
                    rff.nll > chol.nll,
                ));
            }
            checks.push(Check::new(
                format!(
                    "H12 ({set}): RR-CG within 0.005 RMSE and 0.02 NLL of Cholesky (ΔRMSE {:+.4}, ΔNLL {:+.4})",
                    rr.rmse - chol.rmse,
                    rr.nll - chol.nll
                ),
                (rr.rmse - chol.rmse).abs() <= 0.005 && (rr.nll - chol.nll).abs() <= 0.02,
            ));
            let ratio =
                (rr.seconds / rr.steps.max(1) as f64) / (cg.seconds / cg.steps.max(1) as f64);
            checks.push(Check::new(
                format!(
                    "H13 ({set}): RR-CG/CG(100) time per step in [1.0, 1.3] (measured {ratio:.2}; iterations {:.1} vs {:.1})",
                    rr.mean_iterations, cg.mean_iterations
                ),
                (1.0..=1.3).contains(&ratio),
            ));
        }
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: "Tables S1/S2: test metrics (standardised units) and training time".into(),
                table,
            }],
            notes: vec![
                "Predictions are the exact GP's at the learned hyperparameters (the paper predicts with CG up to 1000 iterations and rank-100 LOVE, which approximate them). NLL = mean of −log N(y* | μ*, σ*² + σ²). CG and RR-CG: 10 probes, rank-5 pivoted-Cholesky preconditioner when n ≥ 2000, columns stop at relative residual 1e-10. Paper values: Table S1, mean of 3 seeds.".into(),
                match p.rff_steps {
                    Some(steps) => format!("RFF({RFF_FREQS}): fresh frequencies every step, Adam with the paper's RFF schedule (×0.5 at 85/90/95%, {steps} steps at this size; the paper: 500 at lr 0.01), predictions by the exact GP at the RFF-learned hyperparameters as the reference code does."),
                    None => format!("No RFF({RFF_FREQS}) row at this size: after the short schedule no method is near its optimum, so RFF's bias would not show; it runs at --full."),
                },
                "At --quick the row is a labelled subset with a shorter schedule: the paper's numbers are for the full training sets and 1500 steps at lr 0.01.".into(),
            ],
            raw: json!({ "rows": raw_rows }),
            curves: Vec::new(),
            checks,
        })
    }
}
