//! GP-GRIEF Fig. 1 (spec `grief.md` §3.1, check 14): a 2-D toy problem where a GRIEF model
//! with only `p = 4` eigenfunctions on a 5 × 5 grid predicts about as well as the exact GP
//! with the same hyperparameters.
//!
//! Setup (the paper gives only the function; the rest is the spec's decisions): targets
//! `f(x) = sin x₁ sin x₂` at `n = 10` inputs uniform on `[−3, 3]²` with Gaussian noise of
//! standard deviation `√0.1`; an SE-ARD exact GP trained by maximum likelihood (L-BFGS from
//! the data-based start); GRIEF with `p = 4` on a 5 × 5 grid over the training range, trained
//! by maximum likelihood from the exact GP's hyperparameters (GP-GRIEF-II); both scored by the RMSE against the noise-free `f` on a 30 × 30 test
//! grid over `[−3, 3]²`, averaged over seeds. The paper's own figure reports test RMSEs of
//! 0.47 (GRIEF) and 0.34 (an exact GP) for one draw, quoted beside ours.

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::grief::{GridOptions, Grief, GriefOptions};
use gp_models::{train, ExactGp, GpModel, PredictRequest, TrainOptions, TrainStart};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde_json::json;

use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize, Series,
    SeriesStyle,
};
use crate::table::Table;

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Figure1;

/// Training points.
const N: usize = 10;
/// Test grid points per axis.
const TEST_SIDE: usize = 30;
/// GRIEF within this factor of the exact GP's mean RMSE (check 14, ◇ 10%).
const SLACK: f64 = 1.10;

fn seeds(size: RunSize) -> usize {
    match size {
        RunSize::Smoke => 3,
        RunSize::Quick | RunSize::Full => 20,
    }
}

fn f(x1: f64, x2: f64) -> f64 {
    x1.sin() * x2.sin()
}

/// `(exact RMSE, GRIEF RMSE)` for one seed.
fn one_seed(seed: u64) -> Result<(f64, f64), BenchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(N, 2, |_, _| rng.random_range(-3.0..3.0));
    let noise_sd = 0.1f64.sqrt();
    let y = Col::from_fn(N, |i| {
        let e: f64 = rng.sample(StandardNormal);
        f(x[(i, 0)], x[(i, 1)]) + noise_sd * e
    });
    let gp = ExactGp::fit(
        SquaredExponential::new(vec![1.0, 1.0], 1.0)?,
        x.as_ref(),
        y.as_ref(),
        0.1,
    )?;
    let exact = train(&gp, &TrainOptions::default())?.model;
    let grief = Grief::fit(
        exact.kernel().clone(),
        x.as_ref(),
        y.as_ref(),
        exact.noise_variance(),
        &GriefOptions {
            p: 4,
            grid: GridOptions {
                points_per_axis: 5,
                ..GridOptions::default()
            },
            ..GriefOptions::default()
        },
    )?;
    let step = 6.0 / (TEST_SIDE - 1) as f64;
    let xt = Mat::from_fn(TEST_SIDE * TEST_SIDE, 2, |i, j| {
        let k = if j == 0 { i / TEST_SIDE } else { i % TEST_SIDE };
        -3.0 + step * k as f64
    });
    let truth = Col::from_fn(xt.nrows(), |i| f(xt[(i, 0)], xt[(i, 1)]));
    let rmse = |mean: &Col<f64>| {
        ((0..truth.nrows())
            .map(|i| (mean[i] - truth[i]).powi(2))
            .sum::<f64>()
            / truth.nrows() as f64)
            .sqrt()
    };
    let e = exact.predict(xt.as_ref(), &PredictRequest::mean())?.mean;
    let grief = train(
        &grief,
        &TrainOptions {
            start: TrainStart::Model,
            ..TrainOptions::default()
        },
    )?
    .model;
    let g = grief.predict(xt.as_ref(), &PredictRequest::mean())?.mean;
    Ok((rmse(&e), rmse(&g)))
}

impl Experiment for Figure1 {
    fn name(&self) -> &'static str {
        "fig1"
    }

    fn title(&self) -> &'static str {
        "Figure 1: 2-D toy problem, GRIEF with p = 4 on a 5 × 5 grid against the exact GP"
    }

    fn paper_reference(&self) -> &'static str {
        "GP-GRIEF Fig. 1 (Evans & Nair 2018, §4; spec grief.md §3.1, check 14)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        format!(
            "n = {N} training points, {TEST_SIDE} × {TEST_SIDE} test grid, {} seeds",
            seeds(size)
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        0.05 * seeds(size) as f64
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let k = seeds(ctx.size);
        ctx.progress.set_length(k as u64);
        let mut per_seed = Vec::with_capacity(k);
        for s in 0..k {
            per_seed.push(one_seed(ctx.seed.wrapping_add(s as u64))?);
            ctx.progress.inc(1);
        }
        let mean = |pick: fn(&(f64, f64)) -> f64| per_seed.iter().map(pick).sum::<f64>() / k as f64;
        let (exact, grief) = (mean(|t| t.0), mean(|t| t.1));
        let mut table = Table::new([
            "model",
            "test RMSE vs f, ours (mean over seeds)",
            "paper (one draw)",
        ]);
        table
            .row([
                "exact GP (SE-ARD, ML)".to_string(),
                format!("{exact:.3}"),
                "0.34".to_string(),
            ])
            .row([
                "GRIEF-II, p = 4, 5 × 5 grid (trained from the exact GP's hyperparameters)"
                    .to_string(),
                format!("{grief:.3}"),
                "0.47".to_string(),
            ]);
        let curve = Curve {
            file_stem: "fig1-rmse-per-seed".into(),
            title: "Fig. 1 toy problem: test RMSE against the noise-free function, per seed".into(),
            x_label: "seed".into(),
            y_label: "test RMSE".into(),
            log_x: false,
            log_y: false,
            series: vec![
                Series {
                    name: "exact GP".into(),
                    points: per_seed
                        .iter()
                        .enumerate()
                        .map(|(i, t)| (i as f64, t.0))
                        .collect(),
                    style: SeriesStyle::Line,
                },
                Series {
                    name: "GRIEF (p = 4)".into(),
                    points: per_seed
                        .iter()
                        .enumerate()
                        .map(|(i, t)| (i as f64, t.1))
                        .collect(),
                    style: SeriesStyle::Line,
                },
            ],
        };
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: "Test RMSE (mean over seeds; the paper's one draw beside)".into(),
                table,
            }],
            notes: vec![
                "The paper states only the function and the two RMSEs of its figure; inputs \
                 uniform on [−3, 3]², noise sd √0.1, the test grid and the seeds are the spec's \
                 decisions, so the paper's numbers are context, not a target. The check is the \
                 spec's: GRIEF within 10% of the exact GP's mean RMSE. With the exact GP's \
                 hyperparameters and no training of its own, GRIEF's mean RMSE was 0.645 against \
                 0.418 (20 seeds): the 4-function basis needs its own length scales."
                    .into(),
            ],
            raw: json!({
                "per_seed": per_seed.iter().map(|t| json!({ "exact": t.0, "grief": t.1 })).collect::<Vec<_>>(),
                "mean": { "exact": exact, "grief": grief },
            }),
            curves: vec![curve],
            checks: vec![Check::new(
                format!(
                    "14: GRIEF (p = 4) test RMSE {grief:.3} within 10% of the exact GP's {exact:.3} \
                     (mean over {k} seeds)"
                ),
                grief <= SLACK * exact,
            )],
        })
    }
}
