//! The trainings behind Tables S1/S2: one per data set, seed and method, each kept in the fold
//! cache as it finishes (`--fold-cache`), so that the `--full` run (about 20 hours for one
//! seed on the 2-core reference machine) can be interrupted, continued and split over
//! processes (`--sets`, `--jobs`).

use gp_kernels::SquaredExponential;
use gp_models::objective::Estimator;
use gp_models::optim::MultiStepDecay;
use gp_models::ExactGp;
use serde::{Deserialize, Serialize};

use super::{plan, Plan, UciTable, RFF_FREQS};
use crate::error::BenchError;
use crate::experiment::{selected_sets, Experiment, RunContext, RunSize};
use crate::fold_cache::{FoldCache, FoldKey};
use crate::jobs::run_concurrently;
use crate::papers::rtgps::data::{load_rtgps, RtgpsSplit};
use crate::papers::rtgps::{
    adam_training, mean_work_per_step, train_from_gpytorch_start, GPYTORCH_START,
};

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
pub(super) fn method_seconds(p: &Plan) -> Vec<f64> {
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

/// The seeds of a run: `seed, seed + 1, …` (`count` of them, at least one).
pub(super) fn run_seeds(seed: u64, count: usize) -> Vec<u64> {
    (0..count.max(1) as u64).map(|k| seed + k).collect()
}

/// Every option that changes an outcome at `size` besides the data set and the seed (which
/// name the cache file; the split itself is checked against the recorded one on loading).
fn cache_settings(size: RunSize) -> String {
    let p = plan(size);
    format!(
        "{}; RFF({RFF_FREQS}) steps {:?}; {CODE_VERSION}",
        UciTable.describe_size(size),
        p.rff_steps
    )
}

/// The cache's name of a data set and seed: `<set>-seed<seed>` (each method is a "fold" of
/// it: `<set>-seed<seed>-fold<method index>.json`, Cholesky 0, CG 1, RR-CG 2, RFF 3).
fn case_name(set: &str, seed: u64) -> String {
    format!("{set}-seed{seed}")
}

/// The cache key of method `method` (table order) of the case `name`.
fn cache_key<'a>(name: &'a str, method: usize, settings: &str) -> FoldKey<'a> {
    FoldKey {
        experiment: CACHE_EXPERIMENT,
        dataset: name,
        fold: method,
        settings: settings.to_string(),
    }
}

/// The share of the size's whole estimate that is left for `sets` (`None`: all) over
/// `seeds`: the cost of the trainings `cache` does not hold, over that of one seed of every
/// planned set. A recorded outcome counts as done here even if it was trained on another
/// split (the real file against the stand-in): the run itself checks that and trains again.
pub(super) fn remaining_share(
    size: RunSize,
    sets: Option<&[String]>,
    cache: Option<&FoldCache>,
    seeds: &[u64],
) -> Option<f64> {
    let p = plan(size);
    let chosen = selected_sets(p.sets, sets).ok()?;
    let costs = method_seconds(&p);
    let one_seed = p.sets.len() as f64 * costs.iter().sum::<f64>();
    let settings = cache_settings(size);
    let mut missing = 0.0;
    for set in chosen {
        for &seed in seeds {
            let name = case_name(set, seed);
            for (m, cost) in costs.iter().enumerate() {
                let recorded = cache.is_some_and(|c| {
                    c.load::<serde_json::Value>(&cache_key(&name, m, &settings))
                        .is_some()
                });
                if !recorded {
                    missing += cost;
                }
            }
        }
    }
    (one_seed > 0.0).then(|| missing / one_seed)
}

/// One trained method on one data set and seed: what the table shows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Outcome {
    /// The split it was trained on ([`RtgpsSplit::identity`]): a cached outcome of another
    /// split (a stand-in against the real file) is trained again.
    pub split: String,
    pub label: String,
    pub steps: usize,
    pub rmse: f64,
    pub nll: f64,
    pub seconds: f64,
    pub mean_iterations: f64,
}

/// Trains `estimator` on `split` by the plan's protocol from GPyTorch's start and predicts
/// the test part with the exact GP at the learned hyperparameters.
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
        split: split.identity(),
        label: estimator.label(),
        steps,
        rmse: (se / m).sqrt(),
        nll: nll / m,
        seconds: out.training_seconds,
        mean_iterations: mean_work_per_step(&out.steps),
    })
}

/// A data set and seed: one split, trained by every method.
pub(super) struct Case {
    pub set: &'static str,
    pub seed: u64,
    pub split: RtgpsSplit,
    estimators: Vec<Estimator>,
    name: String,
}

/// What [`run_cases`] returns.
pub(super) struct CaseResults {
    /// The cases, set-major (every seed of the first set, then the next set).
    pub cases: Vec<Case>,
    /// `outcomes[c][m]`: method `m` of case `c` (`None`: not recorded and skipped by
    /// `--cached-only`).
    pub outcomes: Vec<Vec<Option<Outcome>>>,
    /// Methods per case.
    pub methods: usize,
    /// How many outcomes came from the fold cache.
    pub from_cache: usize,
}

/// Loads the splits of `sets` × `seeds` and trains every method on each, `ctx.jobs` at a
/// time, through the fold cache when there is one (each finished training is stored at once;
/// with `--cached-only` a training the cache lacks is skipped).
///
/// Errors: a split that cannot be loaded, an invalid estimator, the first failing training, a
/// cache write that fails.
pub(super) fn run_cases(
    ctx: &RunContext<'_>,
    p: &Plan,
    sets: &[&'static str],
    seeds: &[u64],
) -> Result<CaseResults, BenchError> {
    let mut cases = Vec::with_capacity(sets.len() * seeds.len());
    for &set in sets {
        for &seed in seeds {
            let split = load_rtgps(set, ctx.data_dir.path.as_deref(), seed, p.total)?;
            let estimators = estimators_for(split.x_train.nrows(), p)?;
            cases.push(Case {
                set,
                seed,
                split,
                estimators,
                name: case_name(set, seed),
            });
        }
    }
    let methods = method_seconds(p).len();
    let settings = cache_settings(ctx.size);
    let skip = ctx.fold_cache.is_some_and(|c| c.cached_only());
    ctx.progress.set_length((methods * cases.len()) as u64);
    let finished = run_concurrently(methods * cases.len(), ctx.jobs, |task| {
        let (case, m) = (&cases[task / methods], task % methods);
        let estimator = &case.estimators[m];
        let key = cache_key(&case.name, m, &settings);
        ctx.progress
            .set_message(format!("{} {}", case.name, estimator.label()));
        let recorded = ctx
            .fold_cache
            .and_then(|c| c.load::<Outcome>(&key))
            .map(|(o, _)| o)
            .filter(|o| o.split == case.split.identity());
        let outcome = match recorded {
            Some(o) => Ok((Some(o), true)),
            None if skip => Ok((None, false)),
            None => {
                run_method(&case.split, estimator, p, case.seed + 10 + m as u64).and_then(|o| {
                    if let Some(cache) = ctx.fold_cache {
                        cache.store(&key, &o)?;
                    }
                    Ok((Some(o), false))
                })
            }
        };
        ctx.progress.inc(1);
        outcome
    });
    let mut outcomes = vec![Vec::with_capacity(methods); cases.len()];
    let mut from_cache = 0;
    for (task, done) in finished.into_iter().enumerate() {
        let (o, cached) = done?;
        from_cache += usize::from(cached);
        outcomes[task / methods].push(o);
    }
    Ok(CaseResults {
        cases,
        outcomes,
        methods,
        from_cache,
    })
}
