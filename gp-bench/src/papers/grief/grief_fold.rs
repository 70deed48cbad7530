//! One fold of the GP-GRIEF Table 1 protocol (Evans & Nair 2018, §6; spec `grief.md` §3.3
//! with its decisions): standardize inputs and targets with the training part's
//! statistics; initialise the SE-ARD hyperparameters by an exact GP trained on at most 1000
//! points (a seeded subset, L-BFGS from the data-based start and a few seeded restarts
//! around it), drawn from the training part ([`InitRows::TrainingPart`], our protocol) or,
//! as the paper's sentence reads, from the whole data set, test rows included
//! ([`InitRows::WholeDataSet`]); then
//!
//! * the exact GP on the whole training part, trained from that initialisation (the Yang
//!   et al. column, where `n_train` is small enough);
//! * GP-GRIEF-II: `p = min(1000, 10^⌊log10 n⌋)` with `n` the full data set size, trained
//!   by L-BFGS over length scales, signal variance and noise from the initialisation, with
//!   the reference code's stop rules (`pgtol = 1e-5`, `factr = 1e7`) and SciPy's line
//!   search settings, in rounds with the selection of eigenfunctions frozen and re-selected
//!   between rounds (spec P3; [`train_reselecting`]);
//! * GP-GRIEF-I: `p = 1000`, length scales and signal variance fixed at the
//!   initialisation, weights and noise sampled by MALA;
//!
//! each scored by the test RMSE in original units. `p` is capped at the grid size (the
//! reference code's behaviour on columns with few distinct values).

use std::ops::ControlFlow;

use faer::{Col, Mat, MatRef};
use gp_kernels::SquaredExponential;
use gp_models::grief::{
    train_reselecting, Grief, GriefOptions, GriefSamplerOptions, ReselectingOutcome,
};
use gp_models::optim::LineSearchOptions;
use gp_models::sampling::MalaOptions;
use gp_models::{
    train, ExactGp, GpModel, LbfgsOptions, Optimizer, PredictRequest, TrainOptions, TrainReport,
    TrainStart,
};
use serde::{Deserialize, Serialize};

use crate::data::{permutation, Dataset, Standardizer};
use crate::error::BenchError;
use crate::timing::time_once;

/// Where the initialising exact GP draws its points from.
///
/// The paper: "we initialize the base kernel hyperparameters, θ, by maximizing the marginal
/// likelihood of an exact GP constructed on min(n, 1000) points randomly selected from the
/// dataset" (§6). Read literally, on every set with n ≤ 1000 that is the whole data set,
/// the fold's test rows included; GRIEF-I then keeps θ (and the noise prior's mode) at those
/// values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitRows {
    /// The fold's training part only (the default; no test row is seen before predicting).
    #[default]
    TrainingPart,
    /// Training and test rows of the fold together, as the paper's sentence reads: used to
    /// reproduce the paper's numbers and to measure what the test rows contribute.
    WholeDataSet,
}

/// Settings of [`run_grief_fold`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GriefFoldOptions {
    /// Full data set size `n` (for the GRIEF-II `p` rule).
    pub n_full: usize,
    /// Points of the initialising exact GP (the paper: 1000).
    pub init_points: usize,
    /// Random restarts of the initialising exact GP beyond the run from the data-based
    /// start (the spec's decision: 3).
    pub init_restarts: usize,
    /// L-BFGS iteration cap of every training run.
    pub max_iterations: usize,
    /// Largest training part for the exact-GP column (`None`: no exact GP).
    pub exact_max_train: Option<usize>,
    /// GP-GRIEF-I eigenfunctions (the paper: 1000).
    pub p_type_one: usize,
    /// GP-GRIEF-I sampler (the paper: 10 000 iterations, burn-in 1000, thin 50).
    pub mala: MalaOptions,
    /// Seed of the initialisation subset and the sampler.
    pub seed: u64,
    /// Which rows the initialising exact GP may see.
    pub init_rows: InitRows,
    /// Print every GP-GRIEF-II L-BFGS step (objective, largest gradient entry, evaluations,
    /// seconds) to standard error, for long folds.
    pub progress: bool,
}

/// One method's outcome on a fold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodResult {
    /// Test RMSE in original units.
    pub rmse: f64,
    /// Wall time (training and prediction), seconds.
    pub seconds: f64,
    /// Eigenfunctions used (GRIEF), 0 otherwise.
    pub p: usize,
    /// A one-line summary of how training or sampling ended.
    pub detail: String,
}

/// The outcome of one fold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GriefFoldResult {
    /// Training and test points.
    pub n_train: usize,
    /// Test points.
    pub n_test: usize,
    /// `log10` of the grid size `m` actually used (columns with few distinct values get
    /// fewer points).
    pub log10_m: f64,
    /// The initialisation's time (seconds), counted in both GRIEF times as the paper does.
    pub init_seconds: f64,
    /// The exact GP, when run.
    pub exact: Option<MethodResult>,
    /// The exact GP conditioned on the training part at the initialisation's hyperparameters,
    /// without training: with [`InitRows::WholeDataSet`] only, where it shows what the test
    /// rows seen by the initialisation do to a plain GP (`None` otherwise and in files
    /// written before the field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_at_init: Option<MethodResult>,
    /// GP-GRIEF-II.
    pub type_two: MethodResult,
    /// GP-GRIEF-I.
    pub type_one: MethodResult,
}

/// Version of [`run_grief_fold`]'s results, part of every fold-cache key
/// ([`GriefFoldOptions::cache_settings`]): bump it when a change to the protocol or to the
/// models it calls changes a fold's numbers, so cached folds of the old code are not
/// reused.
pub const GRIEF_FOLD_VERSION: u32 = 1;

impl GriefFoldOptions {
    /// Every setting that changes a fold's result, with [`GRIEF_FOLD_VERSION`], as the key
    /// of the fold cache (`progress` only prints, so it is left out). With the default
    /// [`InitRows::TrainingPart`] the key is the one written before `init_rows` existed, so
    /// the recorded folds stay valid; [`InitRows::WholeDataSet`] appends its own clause.
    pub fn cache_settings(&self) -> String {
        let init = match self.init_rows {
            InitRows::TrainingPart => "",
            InitRows::WholeDataSet => "; init rows: whole data set (test rows included)",
        };
        format!(
            "grief-fold v{GRIEF_FOLD_VERSION}; {:?}{init}",
            KeyFields(self)
        )
    }
}

/// The fields of [`GriefFoldOptions`] that were in the cache key before `init_rows` was
/// added, printed as `GriefFoldOptions { .. }` exactly as the derived `Debug` printed them.
struct KeyFields<'a>(&'a GriefFoldOptions);

impl std::fmt::Debug for KeyFields<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = self.0;
        f.debug_struct("GriefFoldOptions")
            .field("n_full", &o.n_full)
            .field("init_points", &o.init_points)
            .field("init_restarts", &o.init_restarts)
            .field("max_iterations", &o.max_iterations)
            .field("exact_max_train", &o.exact_max_train)
            .field("p_type_one", &o.p_type_one)
            .field("mala", &o.mala)
            .field("seed", &o.seed)
            .field("progress", &false)
            .finish()
    }
}

/// The GRIEF-II rule `p = min(1000, 10^⌊log10 n⌋)` on the full data set size.
pub fn type_two_p(n_full: usize) -> usize {
    let mut p = 1usize;
    while p * 10 <= n_full && p < 1000 {
        p *= 10;
    }
    p
}

fn rmse(st: &Standardizer, mean: &Col<f64>, y: &Col<f64>) -> f64 {
    let m = st.inverse_y(mean.as_ref());
    let n = y.nrows();
    ((0..n).map(|i| (y[i] - m[i]).powi(2)).sum::<f64>() / n.max(1) as f64).sqrt()
}

fn lbfgs(max_iterations: usize, start: TrainStart) -> TrainOptions {
    TrainOptions {
        optimizer: Optimizer::Lbfgs(LbfgsOptions {
            max_iterations,
            ..LbfgsOptions::default()
        }),
        start,
        ..TrainOptions::default()
    }
}

/// The reference code's relative-decrease stop of GP-GRIEF-II: SciPy `fmin_l_bfgs_b` with
/// `factr = 1e7` stops when `(f_k − f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) ≤ factr · ε`
/// (spec `grief.md` §1.8, §5.2), with `ε = 2.22e-16` as SciPy takes it.
pub const REFERENCE_FUNCTION_TOLERANCE: f64 = 1e7 * f64::EPSILON;

/// Rounds of GP-GRIEF-II training with the selection of eigenfunctions frozen, re-selected
/// between rounds ([`train_reselecting`], our decision for spec P3).
pub const SELECTION_ROUNDS: usize = 5;

/// L-BFGS as the reference code runs it for GP-GRIEF-II: `pgtol = 1e-5` (our default
/// gradient tolerance), `factr = 1e7` ([`REFERENCE_FUNCTION_TOLERANCE`]), the iteration cap,
/// and SciPy's L-BFGS-B line search settings (`ftol = 1e-3`, `gtol = 0.9`, `xtol = 0.1`,
/// `maxls = 20`), whose relative bracket tolerance keeps the searches short where the
/// objective jumps (a change of the top-`p` selection, spec P3).
fn reference_lbfgs(max_iterations: usize) -> TrainOptions {
    TrainOptions {
        optimizer: Optimizer::Lbfgs(LbfgsOptions {
            max_iterations,
            function_tolerance: REFERENCE_FUNCTION_TOLERANCE,
            line_search: LineSearchOptions {
                c1: 1e-3,
                c2: 0.9,
                max_evaluations: 20,
                bracket_tolerance: 0.1,
                ..LineSearchOptions::default()
            },
            ..LbfgsOptions::default()
        }),
        start: TrainStart::Model,
        ..TrainOptions::default()
    }
}

/// "`k` its, why it stopped" for the best run of a training report.
fn stop_summary(report: &TrainReport) -> String {
    report.best().map_or_else(String::new, |b| {
        format!("{} its, {}", b.iterations, b.reason)
    })
}

fn rows(x: MatRef<'_, f64>, idx: &[usize]) -> Mat<f64> {
    Mat::from_fn(idx.len(), x.ncols(), |i, j| x[(idx[i], j)])
}

/// The rows the initialisation draws its subset from, in the training part's standardized
/// units: the training rows, followed by the test rows for [`InitRows::WholeDataSet`].
fn init_pool(
    init_rows: InitRows,
    x: &Mat<f64>,
    y: &Col<f64>,
    x_test: &Mat<f64>,
    y_test: &Col<f64>,
) -> (Mat<f64>, Col<f64>) {
    match init_rows {
        InitRows::TrainingPart => (x.clone(), y.clone()),
        InitRows::WholeDataSet => {
            let n = x.nrows();
            (
                Mat::from_fn(n + x_test.nrows(), x.ncols(), |i, j| {
                    if i < n {
                        x[(i, j)]
                    } else {
                        x_test[(i - n, j)]
                    }
                }),
                Col::from_fn(
                    n + y_test.nrows(),
                    |i| {
                        if i < n {
                            y[i]
                        } else {
                            y_test[i - n]
                        }
                    },
                ),
            )
        }
    }
}

/// Runs the protocol on one train/test split.
///
/// Errors: a model that cannot be fitted or trained, or data the models refuse.
pub fn run_grief_fold(
    train_part: &Dataset,
    test_part: &Dataset,
    options: &GriefFoldOptions,
) -> Result<GriefFoldResult, BenchError> {
    let st = Standardizer::fit(train_part.x.as_ref(), train_part.y.as_ref())?;
    let x = st.transform_x(train_part.x.as_ref())?;
    let y = st.transform_y(train_part.y.as_ref());
    let x_test = st.transform_x(test_part.x.as_ref())?;
    let (n, d) = (x.nrows(), x.ncols());

    // Initialisation: an exact GP on at most `init_points` points of the rows it may see
    // (training rows first, then the test rows when the whole data set is allowed; all in
    // the training part's standardized units).
    let (init_seconds, init) = time_once(|| -> Result<ExactGp<SquaredExponential>, BenchError> {
        let y_test = st.transform_y(test_part.y.as_ref());
        let (pool_x, pool_y) = init_pool(options.init_rows, &x, &y, &x_test, &y_test);
        let n_pool = pool_x.nrows();
        let take = options.init_points.min(n_pool);
        let mut subset = permutation(n_pool, options.seed ^ 0x1417)[..take].to_vec();
        subset.sort_unstable();
        let xs = rows(pool_x.as_ref(), &subset);
        let ys = Col::from_fn(take, |i| pool_y[subset[i]]);
        let gp = ExactGp::fit(
            SquaredExponential::new(vec![1.0; d], 1.0)?,
            xs.as_ref(),
            ys.as_ref(),
            0.1,
        )?;
        let train_options = TrainOptions {
            restarts: options.init_restarts,
            seed: options.seed,
            ..lbfgs(options.max_iterations, TrainStart::Data)
        };
        Ok(train(&gp, &train_options)?.model)
    });
    let init = init?;
    let kernel = init.kernel().clone();
    let noise = init.noise_variance();

    let exact = match options.exact_max_train {
        Some(limit) if n <= limit => {
            let (seconds, out) = time_once(|| -> Result<_, BenchError> {
                let gp = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), noise)?;
                let trained = train(&gp, &lbfgs(options.max_iterations, TrainStart::Model))?;
                let pred = trained
                    .model
                    .predict(x_test.as_ref(), &PredictRequest::mean())?;
                let reason = stop_summary(&trained.report);
                Ok((pred.mean, reason))
            });
            let (mean, detail) = out?;
            Some(MethodResult {
                rmse: rmse(&st, &mean, &test_part.y),
                seconds: seconds + init_seconds,
                p: 0,
                detail,
            })
        }
        _ => None,
    };

    let exact_at_init = match options.init_rows {
        InitRows::TrainingPart => None,
        InitRows::WholeDataSet => {
            let (seconds, out) = time_once(|| -> Result<_, BenchError> {
                let gp = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), noise)?;
                Ok(gp.predict(x_test.as_ref(), &PredictRequest::mean())?.mean)
            });
            Some(MethodResult {
                rmse: rmse(&st, &out?, &test_part.y),
                seconds: seconds + init_seconds,
                p: 0,
                detail: "hyperparameters of the initialisation, not trained".into(),
            })
        }
    };

    let grid_options = GriefOptions {
        p: type_two_p(options.n_full),
        cap_to_grid: true,
        ..GriefOptions::default()
    };
    let (seconds_two, out) = time_once(|| -> Result<_, BenchError> {
        let model = Grief::fit(kernel.clone(), x.as_ref(), y.as_ref(), noise, &grid_options)?;
        let log10_m = model.basis().log_grid_size() / std::f64::consts::LN_10;
        let started = std::time::Instant::now();
        let (trained, report) = train_reselecting(
            &model,
            &reference_lbfgs(options.max_iterations),
            SELECTION_ROUNDS,
            |round, step| {
                if options.progress {
                    eprintln!(
                        "GP-GRIEF-II round {round}, step {}: −LML {:.6}, max |∇| {:.2e}, {} \
                         evaluations, {:.1} s",
                        step.point.iteration,
                        step.point.f,
                        step.point.grad_norm,
                        step.point.evaluations,
                        started.elapsed().as_secs_f64()
                    );
                }
                ControlFlow::Continue(())
            },
        )?;
        let pred = trained.predict(x_test.as_ref(), &PredictRequest::mean())?;
        let iterations: usize = report
            .rounds
            .iter()
            .filter_map(|r| r.best().map(|b| b.iterations))
            .sum();
        let detail = format!(
            "{iterations} its in {} round(s), selection {}; last round: {}",
            report.rounds.len(),
            match report.outcome {
                ReselectingOutcome::Settled => "settled",
                ReselectingOutcome::KeptFrozen => "kept frozen",
                ReselectingOutcome::RoundsExhausted => "still changing",
                ReselectingOutcome::Stopped => "stopped",
            },
            report.rounds.last().map_or_else(String::new, stop_summary)
        );
        Ok((pred.mean, trained.eigenfunctions(), log10_m, detail))
    });
    let (mean_two, p_two, log10_m, detail_two) = out?;

    let (seconds_one, out) = time_once(|| -> Result<_, BenchError> {
        let model = Grief::fit(
            kernel.clone(),
            x.as_ref(),
            y.as_ref(),
            noise,
            &GriefOptions {
                p: options.p_type_one,
                ..grid_options
            },
        )?;
        let posterior = model.sample_weights(&GriefSamplerOptions {
            mala: MalaOptions {
                seed: options.seed,
                ..options.mala
            },
            ..GriefSamplerOptions::default()
        })?;
        let (mean, _, _) = posterior.predict(x_test.as_ref())?;
        let detail = format!(
            "{} samples, acceptance {:.2}",
            posterior.run.samples.len(),
            posterior.run.acceptance_rate
        );
        Ok((mean, model.eigenfunctions(), detail))
    });
    let (mean_one, p_one, detail_one) = out?;

    Ok(GriefFoldResult {
        n_train: n,
        n_test: x_test.nrows(),
        log10_m,
        init_seconds,
        exact,
        exact_at_init,
        type_two: MethodResult {
            rmse: rmse(&st, &mean_two, &test_part.y),
            seconds: seconds_two + init_seconds,
            p: p_two,
            detail: detail_two,
        },
        type_one: MethodResult {
            rmse: rmse(&st, &mean_one, &test_part.y),
            seconds: seconds_one + init_seconds,
            p: p_one,
            detail: detail_one,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_initialisation_pool_holds_the_test_rows_only_when_asked() {
        let x = Mat::from_fn(3, 2, |i, j| (i * 2 + j) as f64);
        let y = Col::from_fn(3, |i| i as f64);
        let xt = Mat::from_fn(2, 2, |i, j| 100.0 + (i * 2 + j) as f64);
        let yt = Col::from_fn(2, |i| 100.0 + i as f64);
        let (px, py) = init_pool(InitRows::TrainingPart, &x, &y, &xt, &yt);
        assert_eq!((px, py), (x.clone(), y.clone()));
        let (px, py) = init_pool(InitRows::WholeDataSet, &x, &y, &xt, &yt);
        assert_eq!((px.nrows(), py.nrows()), (5, 5));
        for i in 0..5 {
            let (want_x, want_y) = if i < 3 {
                (x.row(i).to_owned(), y[i])
            } else {
                (xt.row(i - 3).to_owned(), yt[i - 3])
            };
            assert_eq!(px.row(i).to_owned(), want_x);
            assert_eq!(py[i], want_y);
        }
    }
}
