//! GP-GRIEF Table 1 on the paper's own folds (the Yang et al. 2015 10-fold masks in
//! `uci/<name>/` of the data directory): GP-GRIEF-II, GP-GRIEF-I and, where the training
//! part is small enough, the exact GP, each against the paper's columns, with the spec's
//! criteria 16 (accuracy), 17 (GRIEF-I against the Yang column) and 18 (timing,
//! [`super::timing_criteria`]).
//!
//! The initialisation draws its subset from each fold's training part; the paper's reading,
//! the whole data set with the test rows, is the same run with another `Variant`
//! ([`super::table1_paper_init`]).
//!
//! Sizes: `--quick` runs four small sets on five folds with a short MALA chain (stated in
//! the heading and the notes); `--full` runs every set the collection holds on all ten
//! folds with the paper's 10 000 iterations. 3droad and electric are not in the collection
//! and are reported as missing.

use serde_json::json;

use super::grief_fold::{run_grief_fold, type_two_p, GriefFoldOptions, GriefFoldResult, InitRows};
use super::table1::{MeanStd, PaperRow, PAPER_TABLE};
use super::timing_criteria::{criterion_18_checks, SetTiming};
use crate::data::uci::{load_uci, UCI_FOLDS};
use crate::error::BenchError;
use crate::experiment::{
    selected_sets, Check, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize,
};
use crate::fold_cache::{FoldCache, FoldKey};
use crate::jobs::run_concurrently;
use crate::summary::mean_std;
use crate::table::{fmt_seconds, Table};
use gp_models::grief::dual::data_space_is_cheaper;
use gp_models::sampling::MalaOptions;

/// The experiment under our protocol: the initialisation sees the training part only.
#[derive(Debug, Clone, Copy, Default)]
pub struct Table1Folds;

/// What distinguishes the two Table 1 experiments: this one ([`Table1Folds`], the
/// initialisation on the training part) and [`super::table1_paper_init`] (the paper's
/// initialisation on the whole data set).
#[derive(Debug, Clone, Copy)]
pub(super) struct Variant {
    /// The experiment's name.
    pub name: &'static str,
    /// Its heading (without the sizes).
    pub title: &'static str,
    /// Its folder in a fold cache.
    pub cache_experiment: &'static str,
    /// The rows the initialisation may see.
    pub init_rows: InitRows,
    /// The sets of `--full`.
    pub full_sets: &'static [&'static str],
}

/// [`Table1Folds`]'s variant.
pub(super) const TEST_CLEAN: Variant = Variant {
    name: "table1-folds",
    title: "Table 1: GP-GRIEF-II, GP-GRIEF-I and the exact GP on the paper's folds",
    cache_experiment: CACHE_EXPERIMENT,
    init_rows: InitRows::TrainingPart,
    full_sets: ALL_SETS,
};

/// Per-size settings.
#[derive(Debug, Clone, Copy)]
struct Plan {
    sets: &'static [&'static str],
    folds: usize,
    max_iterations: usize,
    p_type_one: usize,
    mala: MalaOptions,
    init_restarts: usize,
}

/// The sets with `n < 2000`, criterion 17's sixteen, in the paper's order: the sets on which
/// the paper's initialisation subset is (nearly) the whole data set.
pub(super) const SMALL_SETS: &[&str] = &[
    "challenger",
    "fertility",
    "slump",
    "automobile",
    "servo",
    "cancer",
    "hardware",
    "yacht",
    "autompg",
    "housing",
    "forest",
    "stock",
    "energy",
    "concrete",
    "solar",
    "wine",
];

/// The small sets of `--quick` (the spec's tier (a), the fastest four).
const QUICK_SETS: &[&str] = &["challenger", "fertility", "slump", "servo"];

/// The experiment's folder in a fold cache.
const CACHE_EXPERIMENT: &str = "grief/table1-folds";

/// Every set of Table 1 the collection holds, in the paper's order.
const ALL_SETS: &[&str] = &[
    "challenger",
    "fertility",
    "slump",
    "automobile",
    "servo",
    "cancer",
    "hardware",
    "yacht",
    "autompg",
    "housing",
    "forest",
    "stock",
    "energy",
    "concrete",
    "solar",
    "wine",
    "skillcraft",
    "pumadyn",
    "elevators",
    "kin40k",
    "keggu",
];

/// Training parts up to this size also get the exact GP.
const EXACT_MAX_TRAIN: usize = 5000;

fn plan(size: RunSize, variant: &Variant) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            sets: &["challenger"],
            folds: 1,
            max_iterations: 20,
            p_type_one: 100,
            mala: MalaOptions {
                iterations: 60,
                burn_in: 20,
                thin: 10,
                ..MalaOptions::default()
            },
            init_restarts: 0,
        },
        RunSize::Quick => Plan {
            sets: QUICK_SETS,
            // Folds differ a lot (exact-GP RMSE on servo folds 1–4: 0.32, 0.47, 0.29, 0.26):
            // five folds, not two, to compare means with the paper's ten.
            folds: 5,
            max_iterations: 200,
            // p = 1000 on these sets (n ≤ 150, the data-space form) costs 0.1–2.4 ms per MALA
            // step, ≈ 45 s for the 20 quick folds at 2000 steps; 300 keeps the main job's
            // budget. Stated in the heading and the notes.
            p_type_one: 300,
            mala: MalaOptions {
                iterations: 2000,
                burn_in: 500,
                thin: 25,
                ..MalaOptions::default()
            },
            init_restarts: 0,
        },
        RunSize::Full => Plan {
            sets: variant.full_sets,
            folds: UCI_FOLDS,
            max_iterations: 1000,
            p_type_one: 1000,
            mala: MalaOptions::default(),
            init_restarts: 0,
        },
    }
}

fn paper_row(name: &str) -> Option<&'static PaperRow> {
    PAPER_TABLE.iter().find(|r| r.paper_name == name)
}

/// The estimated seconds of one `--full` fold of the set in `row`. Measured: the sets whose
/// training part runs GRIEF-I in the data space (n below about 0.53 p) take ≈ 40 s on
/// average (fertility fold 0: 8.8 s in all, housing's slowest folds several minutes); the
/// larger ones run 10 000 weight-space steps at p = 1000 (12–20 ms each) plus GRIEF-II
/// (elevators fold 0: 338 s in all, kin40k: 220 s), ≈ 300 s.
fn full_fold_seconds(row: &PaperRow) -> f64 {
    let n_train = row.n - row.n.div_ceil(UCI_FOLDS);
    if data_space_is_cheaper(n_train, plan(RunSize::Full, &TEST_CLEAN).p_type_one) {
        40.0
    } else {
        300.0
    }
}

/// The settings of fold `k` of the set in `row` under `plan` (the fold's seed is the run's
/// plus `k`), with the initialisation on `init_rows`.
fn fold_options(
    plan: &Plan,
    row: &PaperRow,
    seed: u64,
    k: usize,
    init_rows: InitRows,
) -> GriefFoldOptions {
    GriefFoldOptions {
        n_full: row.n,
        init_points: 1000,
        init_restarts: plan.init_restarts,
        max_iterations: plan.max_iterations,
        exact_max_train: Some(EXACT_MAX_TRAIN),
        p_type_one: plan.p_type_one,
        mala: plan.mala,
        seed: seed.wrapping_add(k as u64),
        init_rows,
        progress: false,
    }
}

/// The fold cache's key of fold `k` of the set stored in `folder`, run with `options`, in
/// the folder `experiment`.
fn fold_key<'a>(
    experiment: &'a str,
    folder: &'a str,
    k: usize,
    options: &GriefFoldOptions,
) -> FoldKey<'a> {
    FoldKey {
        experiment,
        dataset: folder,
        fold: k,
        settings: options.cache_settings(),
    }
}

impl Experiment for Table1Folds {
    fn name(&self) -> &'static str {
        TEST_CLEAN.name
    }

    fn title(&self) -> &'static str {
        TEST_CLEAN.title
    }

    fn title_at(&self, size: RunSize) -> String {
        TEST_CLEAN.title_at(size)
    }

    fn paper_reference(&self) -> &'static str {
        "GP-GRIEF Table 1 (Evans & Nair 2018, §6; spec grief.md §3.3–3.4, §4.4 criteria 16–18)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        TEST_CLEAN.describe_size(size)
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        TEST_CLEAN.estimate_seconds(size)
    }

    fn estimate_seconds_with_folds(&self, size: RunSize, folds: Option<usize>) -> f64 {
        TEST_CLEAN.estimate_seconds_with_folds(size, folds)
    }

    fn estimate_seconds_remaining(
        &self,
        size: RunSize,
        folds: Option<usize>,
        sets: Option<&[String]>,
        fold_cache: Option<&FoldCache>,
        seed: u64,
        seeds: usize,
    ) -> f64 {
        TEST_CLEAN.estimate_seconds_remaining(size, folds, sets, fold_cache, seed, seeds)
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        TEST_CLEAN.run(ctx)
    }
}

/// The mean GRIEF-I and exact-GP test RMSE of the test-clean runs ([`TEST_CLEAN`]) of the
/// folds `fold_ids` of the set in `row`, under the same plan and seed, when the cache holds
/// every one of them (the exact GP's mean only if every fold has it).
fn test_clean_means(
    cache: &FoldCache,
    plan: &Plan,
    row: &PaperRow,
    folder: &str,
    seed: u64,
    fold_ids: &[usize],
) -> Option<(f64, Option<f64>)> {
    let results = fold_ids
        .iter()
        .map(|&k| {
            let options = fold_options(plan, row, seed, k, TEST_CLEAN.init_rows);
            cache
                .load::<GriefFoldResult>(&fold_key(
                    TEST_CLEAN.cache_experiment,
                    folder,
                    k,
                    &options,
                ))
                .map(|(r, _)| r)
        })
        .collect::<Option<Vec<_>>>()?;
    if results.is_empty() {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let one: Vec<f64> = results.iter().map(|r| r.type_one.rmse).collect();
    let exact: Option<Vec<f64>> = results
        .iter()
        .map(|r| r.exact.as_ref().map(|e| e.rmse))
        .collect();
    Some((mean(&one), exact.map(|e| mean(&e))))
}

impl Variant {
    /// The report's note on the initialisation.
    fn init_note(&self) -> String {
        let ours = "an SE-ARD exact GP on a seeded subset of at most 1000 points, one L-BFGS run \
                    from the data-based start, no restarts (the spec suggests 3: on the paper's \
                    wine folds restarts find the degenerate optimum of its duplicate rows, noise → \
                    5e-6, test RMSE 0.52 instead of 0.41 on fold 1; on yacht and servo every start \
                    reached the same optimum). Its time is counted in every method's time, as the \
                    paper counts it.";
        match self.init_rows {
            InitRows::TrainingPart => format!(
                "Initialisation (the paper: \"an exact GP constructed on min(n, 1000) points \
                 randomly selected from the dataset\"; the rest is our decision): the subset is \
                 drawn from the fold's training part only, {ours} Read literally, the paper's \
                 sentence draws it from the whole data set, test rows included: \
                 table1-paper-init runs that reading."
            ),
            InitRows::WholeDataSet => format!(
                "Initialisation as the paper's sentence reads (\"an exact GP constructed on \
                 min(n, 1000) points randomly selected from the dataset\", §6): the subset is \
                 drawn from the whole data set, the fold's training and test rows together, so \
                 on every set with n ≤ 1000 it is all of it, test rows included (concrete, \
                 solar, wine: 1000 of 1030, 1066, 1599 rows). Then, as in table1-folds, the exact \
                 GP and GRIEF-II train on the training part from it and GRIEF-I keeps its θ and \
                 takes its noise as the prior's mode; {ours} The row \"exact GP at the \
                 initialisation's θ\" conditions on the training part with those \
                 hyperparameters, untrained: what the test rows do to a plain GP."
            ),
        }
    }

    /// The report's note on the sets left out.
    fn sets_note(&self) -> String {
        match self.init_rows {
            InitRows::TrainingPart => "3droad and electric (houseelectric) are not in the data \
                                       collection (too large for its history): their rows are \
                                       not run."
                .to_string(),
            InitRows::WholeDataSet => "Only the sets with n < 2000 (criterion 17's sixteen) run \
                                       here. On the larger ones a 1000-point subset is at most \
                                       30% of the data, about 100 of its rows a fold's test rows; \
                                       they run under the test-clean protocol only \
                                       (table1-folds)."
                .to_string(),
        }
    }

    /// The protocol, for the names of the checks.
    fn protocol_label(&self) -> &'static str {
        match self.init_rows {
            InitRows::TrainingPart => {
                "test-clean protocol, the initialisation on the training part; \
                 table1-paper-init judges the paper's reading"
            }
            InitRows::WholeDataSet => {
                "the paper's initialisation on the whole data set, test rows included"
            }
        }
    }

    pub(super) fn title_at(&self, size: RunSize) -> String {
        let p = plan(size, self);
        format!(
            "{} ({} set(s), GRIEF-I p = {} with MALA {} iterations)",
            self.title,
            p.sets.len(),
            p.p_type_one,
            p.mala.iterations
        )
    }

    pub(super) fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size, self);
        format!(
            "{} on the first {} of the {UCI_FOLDS} Yang et al. folds (or --folds K); L-BFGS ≤ {} iterations; GRIEF-I p = {} with MALA {} iterations, burn-in {}, every {}th kept",
            p.sets.join(", "),
            p.folds,
            p.max_iterations,
            p.p_type_one,
            p.mala.iterations,
            p.mala.burn_in,
            p.mala.thin
        )
    }

    pub(super) fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 3.0,
            RunSize::Quick => 40.0,
            RunSize::Full => {
                UCI_FOLDS as f64
                    * self
                        .full_sets
                        .iter()
                        .filter_map(|name| paper_row(name))
                        .map(full_fold_seconds)
                        .sum::<f64>()
            }
        }
    }

    pub(super) fn estimate_seconds_with_folds(&self, size: RunSize, folds: Option<usize>) -> f64 {
        let all = plan(size, self).folds;
        let kept = folds.map_or(all, |k| k.min(all));
        self.estimate_seconds(size) * kept as f64 / all.max(1) as f64
    }

    /// Without a cache or `--sets`,
    /// [`estimate_seconds_with_folds`](Self::estimate_seconds_with_folds). Otherwise
    /// the per-fold costs of the estimate above (at `--full` by set, `full_fold_seconds`)
    /// summed over the folds of the selected sets that the cache does not hold.
    pub(super) fn estimate_seconds_remaining(
        &self,
        size: RunSize,
        folds: Option<usize>,
        sets: Option<&[String]>,
        fold_cache: Option<&FoldCache>,
        seed: u64,
        _seeds: usize,
    ) -> f64 {
        if fold_cache.is_none() && sets.is_none() {
            return self.estimate_seconds_with_folds(size, folds);
        }
        let p = plan(size, self);
        let kept = folds.map_or(p.folds, |k| k.min(p.folds));
        let per_fold_quick = self.estimate_seconds(size) / (p.sets.len() * p.folds).max(1) as f64;
        p.sets
            .iter()
            .filter(|name| sets.is_none_or(|s| s.iter().any(|v| v == *name)))
            .filter_map(|name| paper_row(name))
            .map(|row| {
                let per_fold = match size {
                    RunSize::Full => full_fold_seconds(row),
                    _ => per_fold_quick,
                };
                let missing = (0..kept)
                    .filter(|&k| {
                        let Some(cache) = fold_cache else {
                            return true;
                        };
                        row.uci.is_none_or(|folder| {
                            let options = fold_options(&p, row, seed, k, self.init_rows);
                            cache
                                .load::<GriefFoldResult>(&fold_key(
                                    self.cache_experiment,
                                    folder,
                                    k,
                                    &options,
                                ))
                                .is_none()
                        })
                    })
                    .count();
                per_fold * missing as f64
            })
            .sum()
    }

    pub(super) fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size, self);
        let sets = selected_sets(p.sets, ctx.sets)?;
        let mut notes = vec![
            "RMSE in original target units, mean ± std over the folds run (ddof = 0). Inputs and \
             targets are standardized with each training part's statistics. Tolerance (criterion \
             16): |ours − paper| ≤ max(paper std, 10% of the paper mean); a std printed as 0 \
             counts as one unit of the last printed digit."
                .to_string(),
            self.init_note(),
            "p is capped at the grid size m (columns with few distinct values get fewer grid \
             points, as in the reference code); the dataset column gives the m actually used."
                .to_string(),
            "GRIEF-II: L-BFGS with the reference code's SciPy settings (factr = 1e7, pgtol = \
             1e-5, line search ftol 1e-3, gtol 0.9, xtol 0.1, 20 evaluations) on the analytic \
             gradient, with the selection of eigenfunctions frozen during a round and re-selected \
             after it (spec P3, our decision): a round continues from the re-selection only if it \
             raises the marginal likelihood, else the round's selection is kept (\"kept frozen\" \
             in the last column). Re-selecting at every trial point makes the objective jump and \
             stalled the line searches (kin40k: > 37 min per fold); frozen, kin40k fold 1 takes \
             16 evaluations. GRIEF-I evaluates each MALA step in the data space when n < 0.53 p \
             (exact, the cheaper form) and in the weight space otherwise."
                .to_string(),
        ];
        if p.mala.iterations < MalaOptions::default().iterations || p.p_type_one < 1000 {
            notes.push(format!(
                "GRIEF-I here runs p = {} eigenfunctions and a short chain ({} iterations, burn-in \
                 {}, every {}th kept), not the paper's p = 1000 and 10 000 / 1000 / 50: its numbers \
                 are those of a smaller model and a shorter sampler.",
                p.p_type_one, p.mala.iterations, p.mala.burn_in, p.mala.thin
            ));
        }
        notes.push(self.sets_note());
        let Some(dir) = ctx.data_dir.path.as_deref() else {
            notes.push(
                "No data directory: the paper's folds are real data only, so nothing ran (set \
                 GP_DATA_DIR or --data-dir to the shared datasets folder)."
                    .to_string(),
            );
            return Ok(ExperimentOutput {
                tables: Vec::new(),
                notes,
                raw: json!({ "datasets": [] }),
                curves: Vec::new(),
                checks: Vec::new(),
            });
        };
        let folds = ctx.folds.map_or(p.folds, |k| k.clamp(1, UCI_FOLDS));
        notes.push(format!(
            "Folds run: the first {folds} of the {UCI_FOLDS} Yang et al. folds of each set."
        ));
        if ctx.sets.is_some() {
            notes.push(format!("Sets run (--sets): {}.", sets.join(", ")));
        }
        ctx.progress.set_length((sets.len() * folds) as u64);
        let (mut cached_folds, mut total_folds, mut skipped_folds) = (0usize, 0usize, 0usize);
        let mut cached_from = Vec::<u64>::new();
        let mut table = Table::new([
            "dataset",
            "method",
            "test RMSE, ours",
            "test RMSE, paper",
            "within tolerance?",
            "p",
            "time per fold (ours / paper)",
            "fold 1",
        ]);
        let mut comparison = Table::new([
            "dataset",
            "Yang et al. (exact GP)",
            "GRIEF-I, paper",
            "GRIEF-I, ours (paper's initialisation)",
            "GRIEF-I, ours (test-clean, table1-folds)",
            "exact GP at the initialisation's θ",
            "exact GP, test-clean (table1-folds)",
        ]);
        let mut raw_sets = Vec::new();
        let (mut entries, mut within) = (0usize, 0usize);
        let (mut small_sets, mut beats_yang) = (0usize, 0usize);
        let mut checks = Vec::new();
        let mut timings = Vec::new();
        for &name in &sets {
            let Some(row) = paper_row(name) else {
                continue;
            };
            let Some(folder) = row.uci else {
                continue;
            };
            let data = match load_uci(folder, dir) {
                Ok(d) => d,
                Err(e) => {
                    notes.push(format!("`{name}`: not run ({e})."));
                    continue;
                }
            };
            let fold_data = (0..folds)
                .map(|k| data.fold(k))
                .collect::<Result<Vec<_>, _>>()?;
            let options_of = |k: usize| fold_options(&p, row, ctx.seed, k, self.init_rows);
            let key_of = |k: usize| fold_key(self.cache_experiment, folder, k, &options_of(k));
            ctx.progress
                .set_message(format!("{name} (n = {}, d = {})", row.n, row.d));
            let outcomes = run_concurrently(folds, ctx.jobs, |k| {
                let cached = ctx
                    .fold_cache
                    .and_then(|c| c.load::<GriefFoldResult>(&key_of(k)));
                let skip = ctx.fold_cache.is_some_and(|c| c.cached_only());
                let outcome = match cached {
                    Some((result, provenance)) => Ok(Some((result, Some(provenance)))),
                    None if skip => Ok(None),
                    None => {
                        let (train_part, test_part) = &fold_data[k];
                        run_grief_fold(train_part, test_part, &options_of(k)).and_then(|r| {
                            if let Some(cache) = ctx.fold_cache {
                                cache.store(&key_of(k), &r)?;
                            }
                            Ok(Some((r, None)))
                        })
                    }
                };
                ctx.progress.inc(1);
                outcome
            });
            let mut results: Vec<GriefFoldResult> = Vec::with_capacity(folds);
            // The fold number of each result (folds missing from a `--cached-only` cache
            // leave gaps).
            let mut fold_ids: Vec<usize> = Vec::with_capacity(folds);
            for (k, outcome) in outcomes.into_iter().enumerate() {
                let Some((result, provenance)) = outcome? else {
                    skipped_folds += 1;
                    continue;
                };
                if let Some(provenance) = provenance {
                    cached_folds += 1;
                    cached_from.push(provenance.written_unix);
                }
                total_folds += 1;
                fold_ids.push(k);
                results.push(result);
            }
            let Some(first) = results.first() else {
                continue;
            };
            let label = format!(
                "{name} (n = {}, d = {}, m = 10^{:.1}{})",
                row.n,
                row.d,
                first.log10_m,
                if results.len() < folds {
                    format!("; {} of {folds} folds", results.len())
                } else {
                    String::new()
                }
            );
            let summarize = |pick: &dyn Fn(&GriefFoldResult) -> Option<(f64, f64)>| {
                let v: Vec<(f64, f64)> = results.iter().filter_map(pick).collect();
                let (mean, std) = mean_std(&v.iter().map(|t| t.0).collect::<Vec<_>>());
                let secs = v.iter().map(|t| t.1).sum::<f64>() / v.len().max(1) as f64;
                (mean, std, secs, v.len())
            };
            let mut method_row = |method: &str,
                                  paper: MeanStd,
                                  hours: Option<f64>,
                                  p_used: String,
                                  detail: String,
                                  stats: (f64, f64, f64, usize)| {
                let (mean, std, secs, count) = stats;
                if count == 0 {
                    return None;
                }
                let ok = paper.within_printed_tolerance(mean, row.digits);
                table.row([
                    label.clone(),
                    method.to_string(),
                    format!("{:.*} ± {:.*}", row.digits, mean, row.digits, std),
                    paper.format(row.digits),
                    if ok {
                        "yes".to_string()
                    } else {
                        format!("no (Δ = {:+.*})", row.digits, mean - paper.mean)
                    },
                    p_used,
                    format!(
                        "{} / {}",
                        fmt_seconds(secs),
                        hours.map_or_else(|| "n/a".to_string(), |h| format!("{h} h"))
                    ),
                    detail,
                ]);
                Some((mean, ok))
            };
            let stats_two = summarize(&|r| Some((r.type_two.rmse, r.type_two.seconds)));
            let stats_one = summarize(&|r| Some((r.type_one.rmse, r.type_one.seconds)));
            timings.push(SetTiming {
                name,
                n: row.n,
                seconds_two: stats_two.2,
                seconds_one: stats_one.2,
                hours_two: row.hours2,
                hours_one: row.hours1,
                weight_space: SetTiming::weight_space_for(first.n_train, first.type_one.p),
            });
            let two = method_row(
                "GP-GRIEF-II",
                row.grief2,
                Some(row.hours2),
                format!("{} (rule: {})", first.type_two.p, type_two_p(row.n)),
                first.type_two.detail.clone(),
                stats_two,
            );
            let one = method_row(
                "GP-GRIEF-I",
                row.grief1,
                Some(row.hours1),
                first.type_one.p.to_string(),
                first.type_one.detail.clone(),
                stats_one,
            );
            let exact = method_row(
                "exact GP (Yang et al. column)",
                row.yang,
                None,
                String::new(),
                first
                    .exact
                    .as_ref()
                    .map_or_else(String::new, |e| e.detail.clone()),
                summarize(&|r| r.exact.as_ref().map(|e| (e.rmse, e.seconds))),
            );
            let at_init = method_row(
                "exact GP at the initialisation's θ, not trained (against the Yang column)",
                row.yang,
                None,
                String::new(),
                String::new(),
                summarize(&|r| r.exact_at_init.as_ref().map(|e| (e.rmse, e.seconds))),
            );
            if self.init_rows == InitRows::WholeDataSet {
                let clean = ctx
                    .fold_cache
                    .and_then(|c| test_clean_means(c, &p, row, folder, ctx.seed, &fold_ids));
                comparison.row([
                    name.to_string(),
                    row.yang.format(row.digits),
                    row.grief1.format(row.digits),
                    one.map_or_else(String::new, |t| format!("{:.*}", row.digits, t.0)),
                    clean.map_or_else(
                        || "not in the fold cache".to_string(),
                        |c| format!("{:.*}", row.digits, c.0),
                    ),
                    at_init.map_or_else(String::new, |t| format!("{:.*}", row.digits, t.0)),
                    clean
                        .and_then(|c| c.1)
                        .map_or_else(String::new, |v| format!("{:.*}", row.digits, v)),
                ]);
            }
            for (_, ok) in [two, one].into_iter().flatten() {
                entries += 1;
                within += usize::from(ok);
            }
            if row.n < 2000 {
                if let Some((mean_one, _)) = one {
                    small_sets += 1;
                    beats_yang += usize::from(mean_one < row.yang.mean);
                }
            }
            if name == "kin40k" {
                for (method, r) in [("GP-GRIEF-II", two), ("GP-GRIEF-I", one)] {
                    if let Some((mean, _)) = r {
                        checks.push(Check::new(
                            format!("kin40k {method}: RMSE {mean:.3} ≤ 0.22 (criterion 17)"),
                            mean <= 0.22,
                        ));
                    }
                }
            }
            if name == "cancer" {
                let ok = two.is_some_and(|t| t.1) || one.is_some_and(|t| t.1);
                checks.push(Check::new(
                    format!(
                        "cancer runs on its nominal 10^33 grid (m used 10^{:.1}) within tolerance of \
                         27.843 (II) or 30.568 (I) (criterion 17)",
                        first.log10_m
                    ),
                    ok,
                ));
            }
            raw_sets.push(json!({
                "dataset": name,
                "folder": folder,
                "paper": {
                    "grief2": [row.grief2.mean, row.grief2.std],
                    "grief1": [row.grief1.mean, row.grief1.std],
                    "yang": [row.yang.mean, row.yang.std],
                },
                "ours": {
                    "grief2": two.map(|t| t.0),
                    "grief1": one.map(|t| t.0),
                    "exact": exact.map(|t| t.0),
                    "exact_at_init": at_init.map(|t| t.0),
                },
                "folds": fold_ids.iter().zip(&results).map(|(k, r)| json!({
                    "fold": k,
                    "n_train": r.n_train,
                    "n_test": r.n_test,
                    "log10_m": r.log10_m,
                    "init_seconds": r.init_seconds,
                    "grief2": { "rmse": r.type_two.rmse, "seconds": r.type_two.seconds, "p": r.type_two.p, "detail": r.type_two.detail },
                    "grief1": { "rmse": r.type_one.rmse, "seconds": r.type_one.seconds, "p": r.type_one.p, "detail": r.type_one.detail },
                    "exact": r.exact.as_ref().map(|e| json!({ "rmse": e.rmse, "seconds": e.seconds, "detail": e.detail })),
                    "exact_at_init": r.exact_at_init.as_ref().map(|e| json!({ "rmse": e.rmse, "seconds": e.seconds })),
                })).collect::<Vec<_>>(),
            }));
        }
        if ctx.jobs > 1 && cached_folds < total_folds {
            notes.push(format!(
                "Folds ran {} at a time, each with sequential dense linear algebra (`--jobs {}`): \
                 the times per fold are wall times under that load.",
                ctx.jobs, ctx.jobs
            ));
        }
        if let Some(cache) = ctx.fold_cache {
            let span = match (cached_from.iter().min(), cached_from.iter().max()) {
                (Some(first), Some(last)) => format!(
                    ", written between Unix times {first} and {last} by the same settings and \
                     fold-protocol version"
                ),
                _ => String::new(),
            };
            let others = if cache.cached_only() {
                "none ran now"
            } else {
                "the others ran now and were stored"
            };
            notes.push(format!(
                "Fold cache `{}`: {cached_folds} of the folds above were loaded from it{span}; \
                 {others}. Their times are those of the run that computed them.",
                cache.dir().display()
            ));
            if cache.cached_only() {
                notes.push(format!(
                    "`--cached-only`: {skipped_folds} fold(s) not in the cache were skipped, not \
                     run; a set's row averages the folds it has (the dataset column says how \
                     many), and sets with none are left out. The criteria below are judged on \
                     the rows shown."
                ));
            }
        }
        if entries > 0 {
            checks.insert(
                0,
                Check::new(
                    format!(
                        "GRIEF entries within the paper's tolerance: {within} of {entries} (criterion \
                         16: at least 80%; {})",
                        self.protocol_label()
                    ),
                    within * 5 >= entries * 4,
                ),
            );
        }
        if small_sets > 0 {
            checks.insert(
                1.min(checks.len()),
                Check::new(
                    format!(
                        "GRIEF-I beats the Yang et al. column on {beats_yang} of {small_sets} small \
                         sets run (criterion 17: at least 10 of 16, i.e. 62.5%; {})",
                        self.protocol_label()
                    ),
                    beats_yang * 16 >= small_sets * 10,
                ),
            );
        }
        // Criterion 18 compares times across every set, so only the run over all of them
        // (the test-clean protocol) judges it.
        let timing_checks = match self.init_rows {
            InitRows::TrainingPart => criterion_18_checks(&timings),
            InitRows::WholeDataSet => Vec::new(),
        };
        if !timing_checks.is_empty() {
            notes.push(
                "Criterion 18 (timing) is judged on the mean wall time per fold of the rows shown; \
                 with --fold-cache these are the times recorded, possibly on other hosts and under \
                 other loads (gp-bench/results/README.md says which). Its third part, GRIEF-I \
                 faster than GRIEF-II on electric, cannot be judged: electric is not in the data \
                 collection."
                    .into(),
            );
        }
        checks.extend(timing_checks);
        let mut tables = vec![NamedTable {
            title: "Test RMSE on the paper's folds (paper's numbers beside ours)".into(),
            table,
        }];
        if self.init_rows == InitRows::WholeDataSet {
            tables.push(NamedTable {
                title: "What the initialisation's view of the test rows contributes (mean test \
                        RMSE; the test-clean columns come from the fold cache's table1-folds runs \
                        of the same folds and seed)"
                    .into(),
                table: comparison,
            });
        }
        Ok(ExperimentOutput {
            tables,
            notes,
            raw: json!({ "datasets": raw_sets }),
            curves: Vec::new(),
            checks,
        })
    }
}
