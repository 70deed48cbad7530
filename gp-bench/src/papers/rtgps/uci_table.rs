//! Tables S1/S2 (one row per data set): training by Cholesky, CG(100) and RR-CG (λ = 0.05,
//! J_min = 80, `E[J] ≈ 99.5`) with the paper's protocol (ARD RBF, Adam with ×0.1 at
//! 50/70/90%), then test RMSE and NLL and the training time; H12 (RR-CG ≈ Cholesky) and
//! H13 (RR-CG costs ≤ 1.3× CG per step) as checks.

use gp_kernels::SquaredExponential;
use gp_models::objective::Estimator;
use gp_models::optim::MultiStepDecay;
use gp_models::ExactGp;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::data::{load_rtgps, RtgpsSplit};
use super::{adam_training, mean_work_per_step, train_from_gpytorch_start, GPYTORCH_START};
use crate::error::BenchError;
use crate::experiment::{Check, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize};
use crate::fold_cache::{FoldCache, FoldKey};
use crate::jobs::run_concurrently;
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

/// The fold cache's folder of this experiment.
const CACHE_EXPERIMENT: &str = "rtgps/uci-table";

/// Part of every cache key: bump it when a change of this experiment's code changes a
/// result, so outcomes recorded by the old code are trained again.
const CODE_VERSION: &str = "uci-table v1";

/// Seconds of each method's whole training at `p`'s size, in table order (Cholesky,
/// CG(100), RR-CG, then RFF when the plan has it): per step at pol's full size (n = 9600,
/// d = 26) on the 2-core reference machine, measured by `--example rtgps_step -- 9600 26 3
/// --cholesky` (Cholesky ≈ 11 s: the `n³` factorization and inverse; CG(100) ≈ 2.6 s and
/// RR-CG ≈ 2.8 s: about 100 products with 11 columns at 25 ms); RFF(700) ≈ 0.5 s is from its
/// flop count (the Gram of 9600 rows of at most 1400 features, ≤ 19 GFLOP), not measured.
/// Only the ratios matter below the full size.
fn method_seconds(p: &Plan) -> Vec<f64> {
    let steps = p.steps as f64;
    let mut seconds = vec![11.0 * steps, 2.6 * steps, 2.8 * steps];
    if let Some(rff) = p.rff_steps {
        seconds.push(0.5 * rff as f64);
    }
    seconds
}

/// The estimators in table order for a training set of `n` rows.
fn estimators_for(n: usize, p: &Plan) -> Result<Vec<Estimator>, BenchError> {
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
    Ok(estimators)
}

/// The sets of `planned` named in `wanted` (`--sets`), in `planned`'s order; all of them
/// when `wanted` is `None`.
///
/// Errors: [`BenchError::InvalidArgument`] for a name that is not one of the run's sets.
fn selected_sets(
    planned: &'static [&'static str],
    wanted: Option<&[String]>,
) -> Result<Vec<&'static str>, BenchError> {
    let Some(wanted) = wanted else {
        return Ok(planned.to_vec());
    };
    if let Some(bad) = wanted.iter().find(|w| !planned.contains(&w.as_str())) {
        return Err(BenchError::InvalidArgument {
            name: "--sets",
            reason: format!(
                "`{bad}` is not a data set of this run; its sets: {}",
                planned.join(", ")
            ),
        });
    }
    Ok(planned
        .iter()
        .copied()
        .filter(|p| wanted.iter().any(|w| w == p))
        .collect())
}

/// Every option that changes an outcome at `size` with `seed` (the split itself is checked
/// against the recorded one when loading).
fn cache_settings(size: RunSize, seed: u64) -> String {
    let p = plan(size);
    format!(
        "{}; RFF({RFF_FREQS}) steps {:?}; seed {seed}; {CODE_VERSION}",
        UciTable.describe_size(size),
        p.rff_steps
    )
}

/// The cache key of method `method` (table order) on `set`.
fn cache_key<'a>(set: &'a str, method: usize, settings: &str) -> FoldKey<'a> {
    FoldKey {
        experiment: CACHE_EXPERIMENT,
        dataset: set,
        fold: method,
        settings: settings.to_string(),
    }
}

/// One trained method on one set: what the table shows, kept in the fold cache as
/// `<set>-fold<method index>` (Cholesky 0, CG 1, RR-CG 2, RFF 3).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Outcome {
    /// The split it was trained on ([`super::data::RtgpsSplit::describe`]): a cached outcome
    /// of another split (a stand-in against the real file) is run again.
    split: String,
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
        split: split.describe(),
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
            RunSize::Full => {
                let p = plan(size);
                p.sets.len() as f64 * method_seconds(&p).iter().sum::<f64>()
            }
        }
    }

    fn estimate_seconds_remaining(
        &self,
        size: RunSize,
        _folds: Option<usize>,
        sets: Option<&[String]>,
        fold_cache: Option<&FoldCache>,
        seed: u64,
    ) -> f64 {
        let p = plan(size);
        let Ok(chosen) = selected_sets(p.sets, sets) else {
            return self.estimate_seconds(size);
        };
        let costs = method_seconds(&p);
        let total = p.sets.len() as f64 * costs.iter().sum::<f64>();
        let settings = cache_settings(size, seed);
        // A recorded outcome counts as done here even if it was trained on another split
        // (the real file against the stand-in): the run itself checks that and trains again.
        let missing: f64 = chosen
            .iter()
            .flat_map(|&set| costs.iter().enumerate().map(move |(m, c)| (set, m, c)))
            .filter(|&(set, m, _)| {
                fold_cache.is_none_or(|c| {
                    c.load::<serde_json::Value>(&cache_key(set, m, &settings))
                        .is_none()
                })
            })
            .map(|(_, _, c)| c)
            .sum();
        if total > 0.0 {
            self.estimate_seconds(size) * missing / total
        } else {
            self.estimate_seconds(size)
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let sets = selected_sets(p.sets, ctx.sets)?;
        let splits = sets
            .iter()
            .map(|set| load_rtgps(set, ctx.data_dir.path.as_deref(), ctx.seed, p.total))
            .collect::<Result<Vec<_>, _>>()?;
        let estimators = splits
            .iter()
            .map(|split| estimators_for(split.x_train.nrows(), &p))
            .collect::<Result<Vec<_>, _>>()?;
        let methods = method_seconds(&p).len();
        let settings = cache_settings(ctx.size, ctx.seed);
        let skip = ctx.fold_cache.is_some_and(|c| c.cached_only());
        ctx.progress.set_length((methods * sets.len()) as u64);
        // One task per (set, method), in table order; each finished one is stored at once,
        // so an interrupted `--full` run (hours per set) keeps what it finished.
        let outcomes = run_concurrently(methods * sets.len(), ctx.jobs, |task| {
            let (s, m) = (task / methods, task % methods);
            let (split, estimator) = (&splits[s], &estimators[s][m]);
            let key = cache_key(sets[s], m, &settings);
            ctx.progress
                .set_message(format!("{} {}", sets[s], estimator.label()));
            let recorded = ctx
                .fold_cache
                .and_then(|c| c.load::<Outcome>(&key))
                .map(|(o, _)| o)
                .filter(|o| o.split == split.describe());
            let outcome = match recorded {
                Some(o) => Ok((Some(o), true)),
                None if skip => Ok((None, false)),
                None => run_method(split, estimator, &p, ctx.seed + 10 + m as u64).and_then(|o| {
                    if let Some(cache) = ctx.fold_cache {
                        cache.store(&key, &o)?;
                    }
                    Ok((Some(o), false))
                }),
            };
            ctx.progress.inc(1);
            outcome
        });
        let mut results = Vec::with_capacity(outcomes.len());
        let mut from_cache = 0;
        for outcome in outcomes {
            let (o, cached) = outcome?;
            from_cache += usize::from(cached);
            results.push(o);
        }
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
        let mut incomplete = Vec::new();
        for (s, (&set, split)) in sets.iter().zip(&splits).enumerate() {
            let Some(outcomes) = results[s * methods..(s + 1) * methods]
                .iter()
                .cloned()
                .collect::<Option<Vec<Outcome>>>()
            else {
                incomplete.push(set);
                continue;
            };
            let paper = paper_values(set);
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
        let mut notes = vec![
                "Predictions are the exact GP's at the learned hyperparameters (the paper predicts with CG up to 1000 iterations and rank-100 LOVE, which approximate them). NLL = mean of −log N(y* | μ*, σ*² + σ²). CG and RR-CG: 10 probes, rank-5 pivoted-Cholesky preconditioner when n ≥ 2000, columns stop at relative residual 1e-10. Paper values: Table S1, mean of 3 seeds.".into(),
                match p.rff_steps {
                    Some(steps) => format!("RFF({RFF_FREQS}): fresh frequencies every step, Adam with the paper's RFF schedule (×0.5 at 85/90/95%, {steps} steps at this size; the paper: 500 at lr 0.01), predictions by the exact GP at the RFF-learned hyperparameters as the reference code does."),
                    None => format!("No RFF({RFF_FREQS}) row at this size: after the short schedule no method is near its optimum, so RFF's bias would not show; it runs at --full."),
                },
                "At --quick the row is a labelled subset with a shorter schedule: the paper's numbers are for the full training sets and 1500 steps at lr 0.01.".into(),
            ];
        if let Some(cache) = ctx.fold_cache {
            let recorded = results.iter().filter(|o| o.is_some()).count();
            notes.push(format!(
                "Fold cache `{}`: {from_cache} of {} trainings (data set × method) from recorded results, {} run now, {} not recorded and skipped (--cached-only). Recorded times are those of the run that recorded them.",
                cache.dir().display(),
                results.len(),
                recorded - from_cache,
                results.len() - recorded,
            ));
        }
        if !incomplete.is_empty() {
            notes.push(format!(
                "Left out (not every method recorded, so neither rows nor checks): {}.",
                incomplete.join(", ")
            ));
        }
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: "Tables S1/S2: test metrics (standardised units) and training time".into(),
                table,
            }],
            notes,
            raw: json!({ "rows": raw_rows }),
            curves: Vec::new(),
            checks,
        })
    }
}
