//! The trainings behind Tables S1/S2: one per data set, seed and method, each kept in the fold
//! cache as it finishes (`--fold-cache`), so that the `--full` run (about 20 hours for one
//! seed on the 2-core reference machine) can be interrupted, continued and split over
//! processes (`--sets`, `--jobs`).

use gp_kernels::SquaredExponential;
use gp_models::objective::{Checkpointing, Estimator, TrainingCheckpoint};
use gp_models::optim::MultiStepDecay;
use gp_models::ExactGp;
use serde::{Deserialize, Serialize};

use super::hosts::{HostLog, HostStretch};
use super::{plan, Plan, UciTable, RFF_FREQS};
use crate::error::BenchError;
use crate::experiment::{selected_sets, Experiment, RunContext, RunSize};
use crate::fold_cache::{FoldCache, FoldKey};
use crate::jobs::run_concurrently;
use crate::papers::rtgps::data::{load_rtgps, RtgpsSplit};
use crate::papers::rtgps::{
    adam_training, mean_work_per_step, train_from_gpytorch_start_checkpointed, GPYTORCH_START,
};
use crate::report::machine::cpu_description;

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
            let partial = partial_name(&name);
            for (m, cost) in costs.iter().enumerate() {
                let recorded = cache.is_some_and(|c| {
                    c.load::<serde_json::Value>(&cache_key(&name, m, &settings))
                        .is_some()
                });
                if !recorded {
                    let done =
                        cache.map_or(0.0, |c| done_share(c, &cache_key(&partial, m, &settings)));
                    missing += cost * (1.0 - done);
                }
            }
        }
    }
    (one_seed > 0.0).then(|| missing / one_seed)
}

/// The share of its steps that the training in progress at `key` has taken (0 without one).
fn done_share(cache: &FoldCache, key: &FoldKey<'_>) -> f64 {
    cache
        .load::<PartialTraining>(key)
        .map_or(0.0, |(partial, _)| {
            (partial.checkpoint.adam.iteration as f64 / partial.steps.max(1) as f64).min(1.0)
        })
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
    /// The steps and seconds taken on each CPU (a training can span sessions on different
    /// machines); empty in outcomes recorded before hosts were.
    #[serde(default)]
    pub hosts: Vec<HostStretch>,
}

/// Wall seconds between two checkpoints of a training in progress (a Cholesky training at
/// pol's size takes about 11 s per step, so an interrupted run loses at most a few steps).
const CHECKPOINT_SECONDS: f64 = 120.0;

/// A training in progress, kept in the fold cache beside the finished ones (as
/// `<set>-seed<seed>-partial-fold<method>.json`) until it finishes.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PartialTraining {
    /// The split it is trained on ([`RtgpsSplit::identity`]): one of another split is not
    /// resumed.
    split: String,
    /// The training's whole step count (for the estimate of what is left).
    steps: usize,
    checkpoint: TrainingCheckpoint,
    /// The steps and seconds so far on each CPU (missing in checkpoints written before hosts
    /// were recorded: those steps count as "not recorded").
    #[serde(default)]
    hosts: Vec<HostStretch>,
}

/// Where a training keeps its checkpoints: the cache and the key of its partial file.
struct CheckpointSlot<'a> {
    cache: &'a FoldCache,
    key: FoldKey<'a>,
    /// Wall seconds between checkpoints ([`CHECKPOINT_SECONDS`] outside tests).
    every_seconds: f64,
}

/// The cache's name of the trainings in progress of a case (`<case>-partial`).
fn partial_name(case: &str) -> String {
    format!("{case}-partial")
}

/// Trains `estimator` on `split` by the plan's protocol from GPyTorch's start and predicts
/// the test part with the exact GP at the learned hyperparameters. With a `slot`, the
/// training continues from the checkpoint there (if it was made on this split) and writes a
/// new one every `slot.every_seconds`; the caller removes it once the outcome is stored.
fn run_method(
    split: &RtgpsSplit,
    estimator: &Estimator,
    p: &Plan,
    seed: u64,
    slot: Option<&CheckpointSlot<'_>>,
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
    let identity = split.identity();
    let resumed = slot
        .and_then(|s| s.cache.load::<PartialTraining>(&s.key))
        .map(|(partial, _)| partial)
        .filter(|partial| partial.split == identity);
    let log = match &resumed {
        Some(p) => HostLog::resume(
            p.hosts.clone(),
            (p.checkpoint.adam.iteration, p.checkpoint.training_seconds),
            cpu_description(),
        ),
        None => HostLog::resume(Vec::new(), (0, 0.0), cpu_description()),
    };
    let resume = resumed.map(|partial| partial.checkpoint);
    let mut save = |checkpoint: &TrainingCheckpoint| -> gp_models::Result<()> {
        if let Some(s) = slot {
            let partial = PartialTraining {
                split: identity.clone(),
                steps,
                checkpoint: checkpoint.clone(),
                hosts: log.upto((checkpoint.adam.iteration, checkpoint.training_seconds)),
            };
            // A checkpoint that cannot be written costs only the time since the last one:
            // the training goes on, and says so.
            if let Err(e) = s.cache.store(&s.key, &partial) {
                eprintln!("warning: checkpoint not written: {e}");
            }
        }
        Ok(())
    };
    let out = train_from_gpytorch_start_checkpointed(
        &kernel,
        split.x_train.as_ref(),
        split.y_train.as_ref(),
        estimator,
        &options,
        &mut Checkpointing {
            resume,
            every_seconds: slot.map_or(f64::INFINITY, |s| s.every_seconds),
            save: slot.is_some().then_some(&mut save),
        },
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
        hosts: log.upto((steps, out.training_seconds)),
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
    /// The skipped trainings (`--cached-only`) that have a checkpoint, e.g.
    /// `pol-seed0 Cholesky: step 63 of 1500, 618 s so far`.
    pub in_progress: Vec<String>,
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
            Some(o) => Ok((Some(o), true, None)),
            None if skip => {
                let progress = ctx.fold_cache.and_then(|cache| {
                    let partial = partial_name(&case.name);
                    let (p, _) = cache
                        .load::<PartialTraining>(&cache_key(&partial, m, &settings))
                        .filter(|(p, _)| p.split == case.split.identity())?;
                    let at = (p.checkpoint.adam.iteration, p.checkpoint.training_seconds);
                    Some(format!(
                        "{} {}: step {} of {}, {:.0} s so far ({})",
                        case.name,
                        estimator.label(),
                        p.checkpoint.adam.iteration,
                        p.steps,
                        p.checkpoint.training_seconds,
                        super::hosts::describe(&super::hosts::covering(p.hosts.clone(), at))
                    ))
                });
                Ok((None, false, progress))
            }
            None => {
                let partial = partial_name(&case.name);
                let slot = ctx.fold_cache.map(|cache| CheckpointSlot {
                    cache,
                    key: cache_key(&partial, m, &settings),
                    every_seconds: CHECKPOINT_SECONDS,
                });
                run_method(
                    &case.split,
                    estimator,
                    p,
                    case.seed + 10 + m as u64,
                    slot.as_ref(),
                )
                .and_then(|o| {
                    if let Some(s) = &slot {
                        s.cache.store(&key, &o)?;
                        s.cache.remove(&s.key)?;
                    }
                    Ok((Some(o), false, None))
                })
            }
        };
        ctx.progress.inc(1);
        outcome
    });
    let mut outcomes = vec![Vec::with_capacity(methods); cases.len()];
    let mut from_cache = 0;
    let mut in_progress = Vec::new();
    for (task, done) in finished.into_iter().enumerate() {
        let (o, cached, progress) = done?;
        from_cache += usize::from(cached);
        outcomes[task / methods].push(o);
        in_progress.extend(progress);
    }
    Ok(CaseResults {
        cases,
        outcomes,
        methods,
        from_cache,
        in_progress,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in split of the smoke size (no data directory) and the smoke plan.
    fn smoke(seed: u64) -> (RtgpsSplit, Plan) {
        let p = plan(RunSize::Smoke);
        let split = load_rtgps("pol", None, seed, p.total).expect("stand-in split");
        (split, p)
    }

    #[test]
    fn a_training_resumes_from_its_checkpoint_is_reported_and_ignores_another_splits() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = FoldCache::new(dir.path());
        let settings = cache_settings(RunSize::Smoke);
        let partial = partial_name("pol-seed0");
        let (split, p) = smoke(0);
        let estimator = Estimator::rr_cg_exp_decay(0.05, 5, split.x_train.nrows()).unwrap();
        let slot = CheckpointSlot {
            cache: &cache,
            key: cache_key(&partial, 2, &settings),
            every_seconds: 0.0,
        };
        let fresh = run_method(&split, &estimator, &p, 12, None).unwrap();
        // With a checkpoint after every step, the file holds the last step's.
        let first = run_method(&split, &estimator, &p, 12, Some(&slot)).unwrap();
        let (saved, _) = cache.load::<PartialTraining>(&slot.key).unwrap();
        assert_eq!(saved.checkpoint.adam.iteration, p.steps);
        assert_eq!(done_share(&cache, &slot.key), 1.0);
        // Resumed from it, no step is taken again and the outcome is the same.
        let resumed = run_method(&split, &estimator, &p, 12, Some(&slot)).unwrap();
        for o in [&first, &resumed] {
            assert_eq!(o.rmse.to_bits(), fresh.rmse.to_bits());
            assert_eq!(o.nll.to_bits(), fresh.nll.to_bits());
            assert_eq!(o.mean_iterations, fresh.mean_iterations);
        }
        assert!(resumed.seconds >= saved.checkpoint.training_seconds);
        // Every step is on this CPU, in the checkpoint and in both outcomes.
        let here = vec![super::super::hosts::HostStretch {
            host: cpu_description(),
            steps: p.steps,
            seconds: saved.checkpoint.training_seconds,
        }];
        assert_eq!(saved.hosts, here);
        assert_eq!(first.hosts[0].steps, p.steps);
        assert_eq!(resumed.hosts, here);
        assert!(resumed.seconds < saved.checkpoint.training_seconds + 1.0);
        // A --cached-only run names the training in progress, and the estimate counts its
        // steps as done.
        let only = FoldCache::new(dir.path()).with_cached_only(true);
        let data_dir = crate::data::DataDir {
            path: None,
            origin: crate::data::DataDirOrigin::NotFound,
        };
        let progress = indicatif::ProgressBar::hidden();
        let ctx = RunContext {
            size: RunSize::Smoke,
            seed: 0,
            data_dir: &data_dir,
            progress: &progress,
            folds: None,
            sets: None,
            fold_cache: Some(&only),
            jobs: 1,
            large: false,
            seeds: 1,
        };
        let results = run_cases(&ctx, &p, &["pol"], &[0]).unwrap();
        assert!(results.outcomes[0].iter().all(Option::is_none));
        assert_eq!(results.in_progress.len(), 1, "{:?}", results.in_progress);
        assert!(
            results.in_progress[0].starts_with("pol-seed0 RR-CG")
                && results.in_progress[0].contains(&format!("step {0} of {0}", p.steps)),
            "{:?}",
            results.in_progress
        );
        let costs = method_seconds(&p);
        let left = remaining_share(RunSize::Smoke, None, Some(&cache), &[0]).unwrap();
        let all: f64 = costs.iter().sum();
        assert!((left - (all - costs[2]) / all).abs() < 1e-12, "{left}");
        // Another split does not take up this split's checkpoint.
        let (other, _) = smoke(1);
        let other_fresh = run_method(&other, &estimator, &p, 12, None).unwrap();
        let other_slotted = run_method(&other, &estimator, &p, 12, Some(&slot)).unwrap();
        assert_eq!(other_slotted.rmse.to_bits(), other_fresh.rmse.to_bits());
        assert_ne!(other_fresh.rmse.to_bits(), fresh.rmse.to_bits());
        cache.remove(&slot.key).unwrap();
        assert!(cache.load::<PartialTraining>(&slot.key).is_none());
        assert_eq!(done_share(&cache, &slot.key), 0.0);
        cache.remove(&slot.key).unwrap();
    }
}
