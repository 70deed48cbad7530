//! GP-GRIEF Table 1 on the paper's own folds (the Yang et al. 2015 10-fold masks in
//! `uci/<name>/` of the data directory): GP-GRIEF-II, GP-GRIEF-I and, where the training
//! part is small enough, the exact GP, each against the paper's columns, with the spec's
//! criteria 16 (accuracy), 17 (GRIEF-I against the Yang column) and 18 (timing,
//! [`super::timing_criteria`]).
//!
//! Sizes: `--quick` runs six small sets on two folds with a short MALA chain (stated in
//! the heading and the notes); `--full` runs every set the collection holds on all ten
//! folds with the paper's 10 000 iterations. 3droad and electric are not in the collection
//! and are reported as missing.

use serde_json::json;

use super::grief_fold::{run_grief_fold, type_two_p, GriefFoldOptions, GriefFoldResult};
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

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Table1Folds;

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

fn plan(size: RunSize) -> Plan {
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
            sets: ALL_SETS,
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
    if data_space_is_cheaper(n_train, plan(RunSize::Full).p_type_one) {
        40.0
    } else {
        300.0
    }
}

/// The settings of fold `k` of the set in `row` under `plan` (the fold's seed is the run's
/// plus `k`).
fn fold_options(plan: &Plan, row: &PaperRow, seed: u64, k: usize) -> GriefFoldOptions {
    GriefFoldOptions {
        n_full: row.n,
        init_points: 1000,
        init_restarts: plan.init_restarts,
        max_iterations: plan.max_iterations,
        exact_max_train: Some(EXACT_MAX_TRAIN),
        p_type_one: plan.p_type_one,
        mala: plan.mala,
        seed: seed.wrapping_add(k as u64),
        progress: false,
    }
}

/// The fold cache's key of fold `k` of the set stored in `folder`, run with `options`.
fn fold_key<'a>(folder: &'a str, k: usize, options: &GriefFoldOptions) -> FoldKey<'a> {
    FoldKey {
        experiment: CACHE_EXPERIMENT,
        dataset: folder,
        fold: k,
        settings: options.cache_settings(),
    }
}

impl Experiment for Table1Folds {
    fn name(&self) -> &'static str {
        "table1-folds"
    }

    fn title(&self) -> &'static str {
        "Table 1: GP-GRIEF-II, GP-GRIEF-I and the exact GP on the paper's folds"
    }

    fn title_at(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "Table 1: GP-GRIEF-II, GP-GRIEF-I and the exact GP on the paper's folds ({} set(s), GRIEF-I p = {} with MALA {} iterations)",
            p.sets.len(),
            p.p_type_one,
            p.mala.iterations
        )
    }

    fn paper_reference(&self) -> &'static str {
        "GP-GRIEF Table 1 (Evans & Nair 2018, §6; spec grief.md §3.3–3.4, §4.4 criteria 16–18)"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
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

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 3.0,
            RunSize::Quick => 40.0,
            RunSize::Full => {
                UCI_FOLDS as f64
                    * ALL_SETS
                        .iter()
                        .filter_map(|name| paper_row(name))
                        .map(full_fold_seconds)
                        .sum::<f64>()
            }
        }
    }

    fn estimate_seconds_with_folds(&self, size: RunSize, folds: Option<usize>) -> f64 {
        let all = plan(size).folds;
        let kept = folds.map_or(all, |k| k.min(all));
        self.estimate_seconds(size) * kept as f64 / all.max(1) as f64
    }

    /// Without a cache or `--sets`,
    /// [`estimate_seconds_with_folds`](Experiment::estimate_seconds_with_folds). Otherwise
    /// the per-fold costs of the estimate above (at `--full` by set, `full_fold_seconds`)
    /// summed over the folds of the selected sets that the cache does not hold.
    fn estimate_seconds_remaining(
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
        let p = plan(size);
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
                            let options = fold_options(&p, row, seed, k);
                            cache
                                .load::<GriefFoldResult>(&fold_key(folder, k, &options))
                                .is_none()
                        })
                    })
                    .count();
                per_fold * missing as f64
            })
            .sum()
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let sets = selected_sets(p.sets, ctx.sets)?;
        let mut notes = vec![
            "RMSE in original target units, mean ± std over the folds run (ddof = 0). Inputs and \
             targets are standardized with each training part's statistics. Tolerance (criterion \
             16): |ours − paper| ≤ max(paper std, 10% of the paper mean); a std printed as 0 \
             counts as one unit of the last printed digit."
                .to_string(),
            "Initialisation (the paper: exact-GP marginal likelihood on 1000 random points; the \
             rest is our decision): an SE-ARD exact GP on a seeded subset of at most 1000 \
             training points of the fold, one L-BFGS run from the data-based start, no restarts \
             (the spec suggests 3: on the paper's wine folds restarts find the degenerate optimum \
             of its duplicate rows, noise → 5e-6, test RMSE 0.52 instead of 0.41 on fold 1; on \
             yacht and servo every start reached the same optimum). Its time is \
             counted in every method's time, as the paper counts it."
                .to_string(),
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
        notes.push(
            "3droad and electric (houseelectric) are not in the data collection (too large for \
             its history): their rows are not run."
                .to_string(),
        );
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
            let options_of = |k: usize| fold_options(&p, row, ctx.seed, k);
            let key_of = |k: usize| fold_key(folder, k, &options_of(k));
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
                         16: at least 80%)"
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
                         sets run (criterion 17: at least 10 of 16, i.e. 62.5%)"
                    ),
                    beats_yang * 16 >= small_sets * 10,
                ),
            );
        }
        let timing_checks = criterion_18_checks(&timings);
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
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: "Test RMSE on the paper's folds (paper's numbers beside ours)".into(),
                table,
            }],
            notes,
            raw: json!({ "datasets": raw_sets }),
            curves: Vec::new(),
            checks,
        })
    }
}
