//! The GP-GRIEF Table 1 fold runner: the `p` rule of GRIEF-II, and one fold of every method
//! at tiny settings (the real `challenger` fold when `GP_DATA_DIR` is set, a synthetic
//! problem otherwise) with finite, sensible test errors.

use faer::{Col, Mat};
use gp_bench::data::{DataOrigin, Dataset};
use gp_bench::papers::grief::grief_fold::{run_grief_fold, type_two_p, GriefFoldOptions, InitRows};
use gp_models::sampling::MalaOptions;

#[test]
fn type_two_p_follows_the_paper_column() {
    // Table 1's p (II) column: 10 for challenger (n = 23), 100 for n in 100..999, 1000
    // from concrete (n = 1030) on.
    for (n, p) in [
        (23, 10),
        (100, 100),
        (767, 100),
        (1030, 1000),
        (2_049_280, 1000),
        (9, 1),
    ] {
        assert_eq!(type_two_p(n), p, "n = {n}");
    }
}

fn synthetic(n: usize, seed: u64) -> Dataset {
    let x = Mat::from_fn(n, 3, |i, j| {
        ((i as u64 * (2 * j as u64 + 5) + seed) as f64 * 0.37).sin()
    });
    let y = Col::from_fn(n, |i| {
        3.0 + 2.0 * (x[(i, 0)] * 2.0).sin() + x[(i, 1)] * x[(i, 2)]
    });
    Dataset {
        name: "synthetic".into(),
        x,
        y,
        feature_names: vec!["x1".into(), "x2".into(), "x3".into()],
        target_name: "y".into(),
        origin: DataOrigin::Synthetic("a smooth 3-D function".into()),
    }
}

#[test]
fn one_fold_of_every_method_predicts_better_than_the_mean() {
    let (train, test, name) = match std::env::var_os("GP_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => {
            let data = gp_bench::data::load_uci("challenger", std::path::Path::new(&dir))
                .expect("challenger in the data directory");
            let (train, test) = data.fold(0).expect("fold 0");
            (train, test, "challenger fold 0")
        }
        None => {
            eprintln!("GP_DATA_DIR not set: the fold runner runs on a synthetic stand-in");
            (synthetic(120, 1), synthetic(30, 7), "synthetic")
        }
    };
    let options = GriefFoldOptions {
        n_full: train.len() + test.len(),
        init_points: 1000,
        init_restarts: 1,
        max_iterations: 30,
        exact_max_train: Some(5000),
        p_type_one: 50,
        mala: MalaOptions {
            iterations: 80,
            burn_in: 20,
            thin: 10,
            ..MalaOptions::default()
        },
        seed: 3,
        init_rows: InitRows::TrainingPart,
        progress: false,
    };
    let r = run_grief_fold(&train, &test, &options).expect("fold runs");
    let mean = train.y.iter().sum::<f64>() / train.len() as f64;
    let mean_rmse =
        (test.y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / test.len() as f64).sqrt();
    let exact = r
        .exact
        .as_ref()
        .expect("small training part gets the exact GP");
    for (method, rmse) in [
        ("exact", exact.rmse),
        ("GRIEF-II", r.type_two.rmse),
        ("GRIEF-I", r.type_one.rmse),
    ] {
        assert!(rmse.is_finite() && rmse > 0.0, "{name} {method}: {rmse}");
        if name == "synthetic" {
            assert!(
                rmse < 0.5 * mean_rmse,
                "{name} {method}: {rmse} vs mean {mean_rmse}"
            );
        }
    }
    assert!(r.type_two.p >= 1 && r.type_one.p >= 1 && r.log10_m > 0.0);
}

/// A fold's result comes back from the fold cache bit for bit (the cache is what lets a
/// `--full` Table 1 of many hours continue after an interruption), and only under the
/// settings it was computed with.
#[test]
fn a_fold_result_round_trips_through_the_fold_cache() {
    use gp_bench::fold_cache::{FoldCache, FoldKey};
    let options = GriefFoldOptions {
        n_full: 150,
        init_points: 1000,
        init_restarts: 0,
        max_iterations: 10,
        exact_max_train: Some(5000),
        p_type_one: 20,
        mala: MalaOptions {
            iterations: 30,
            burn_in: 10,
            thin: 5,
            ..MalaOptions::default()
        },
        seed: 5,
        init_rows: InitRows::TrainingPart,
        progress: false,
    };
    let r = run_grief_fold(&synthetic(120, 1), &synthetic(30, 7), &options).expect("fold runs");
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = FoldCache::new(dir.path());
    let key = FoldKey {
        experiment: "grief/table1-folds",
        dataset: "synthetic",
        fold: 0,
        settings: options.cache_settings(),
    };
    cache.store(&key, &r).expect("stored");
    let (back, _) = cache
        .load::<gp_bench::papers::grief::grief_fold::GriefFoldResult>(&key)
        .expect("loaded");
    assert_eq!(back, r);
    // Another seed is another computation: its key differs, so the file is not used.
    let other = GriefFoldOptions { seed: 6, ..options };
    assert_ne!(other.cache_settings(), options.cache_settings());
    let stale = FoldKey {
        settings: other.cache_settings(),
        ..key
    };
    assert!(cache
        .load::<gp_bench::papers::grief::grief_fold::GriefFoldResult>(&stale)
        .is_none());
    // The progress flag only prints: it is not part of the key.
    let printing = GriefFoldOptions {
        progress: true,
        ..options
    };
    assert_eq!(printing.cache_settings(), options.cache_settings());
}

/// Table 1 on the paper's folds with a fold cache and two jobs: a second run loads every
/// fold the first stored and reports the same numbers (needs the real folds: skipped, and
/// said, without `GP_DATA_DIR`).
#[test]
fn the_table_reuses_cached_folds() {
    use gp_bench::data::{DataDir, DataDirOrigin};
    use gp_bench::experiment::{Experiment, RunContext, RunSize};
    use gp_bench::fold_cache::FoldCache;
    use gp_bench::papers::grief::table1_folds::Table1Folds;
    let Some(path) = std::env::var_os("GP_DATA_DIR").filter(|v| !v.is_empty()) else {
        eprintln!("GP_DATA_DIR not set: the fold-cache run of Table 1 needs the real folds");
        return;
    };
    let data_dir = DataDir {
        path: Some(path.into()),
        origin: DataDirOrigin::Environment,
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = FoldCache::new(dir.path());
    let progress = indicatif::ProgressBar::hidden();
    let run = |cache: &FoldCache, jobs: usize| {
        Table1Folds
            .run(&RunContext {
                size: RunSize::Smoke,
                seed: 0,
                data_dir: &data_dir,
                progress: &progress,
                folds: Some(2),
                sets: None,
                fold_cache: Some(cache),
                jobs,
                large: false,
                seeds: 1,
            })
            .expect("table runs")
    };
    let first = run(&cache, 2);
    let second = run(&cache, 2);
    let loaded = |out: &gp_bench::experiment::ExperimentOutput| {
        out.notes
            .iter()
            .find(|n| n.starts_with("Fold cache"))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        loaded(&first).contains(": 0 of the folds"),
        "{}",
        loaded(&first)
    );
    assert!(
        loaded(&second).contains(": 2 of the folds"),
        "{}",
        loaded(&second)
    );
    assert_eq!(first.raw, second.raw);
    assert!(first.notes.iter().any(|n| n.contains("2 at a time")));
    // `--cached-only` reports the recorded folds and runs nothing: the same table from the
    // filled cache, no rows from an empty one.
    let recorded = run(&cache.clone().with_cached_only(true), 1);
    assert_eq!(recorded.raw, first.raw);
    let empty_dir = tempfile::tempdir().expect("temporary directory");
    let empty = run(&FoldCache::new(empty_dir.path()).with_cached_only(true), 1);
    assert_eq!(empty.raw["datasets"].as_array().map(Vec::len), Some(0));
    assert!(empty
        .notes
        .iter()
        .any(|n| n.contains("2 fold(s) not in the cache were skipped")));
    assert!(std::fs::read_dir(empty_dir.path())
        .expect("dir")
        .next()
        .is_none());
}

/// The fold-cache key of the test-clean protocol is the one written before `init_rows`
/// existed, so the recorded Table 1 folds stay valid (here: slump fold 3, as committed);
/// the paper's initialisation on the whole data set has a key of its own.
#[test]
fn the_test_clean_key_is_the_recorded_one_and_the_paper_init_key_differs() {
    let options = GriefFoldOptions {
        n_full: 103,
        init_points: 1000,
        init_restarts: 0,
        max_iterations: 1000,
        exact_max_train: Some(5000),
        p_type_one: 1000,
        mala: MalaOptions::default(),
        seed: 3,
        init_rows: InitRows::TrainingPart,
        progress: false,
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/fold-cache/grief/table1-folds/concreteslump-fold3.json");
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("recorded fold")).expect("json");
    assert_eq!(
        recorded["settings"].as_str(),
        Some(options.cache_settings().as_str())
    );
    let paper = GriefFoldOptions {
        init_rows: InitRows::WholeDataSet,
        ..options
    };
    assert_ne!(paper.cache_settings(), options.cache_settings());
    assert!(paper.cache_settings().contains("test rows included"));
}

/// With the paper's initialisation on the whole data set the fold also reports the exact
/// GP at the initialisation's hyperparameters, and the test rows move the initialisation,
/// hence the GRIEF-I prediction; the test-clean fold reports no such row.
#[test]
fn the_paper_initialisation_sees_the_test_rows() {
    let options = GriefFoldOptions {
        n_full: 99,
        init_points: 1000,
        init_restarts: 0,
        max_iterations: 30,
        exact_max_train: Some(5000),
        p_type_one: 30,
        mala: MalaOptions {
            iterations: 40,
            burn_in: 10,
            thin: 5,
            ..MalaOptions::default()
        },
        seed: 2,
        init_rows: InitRows::TrainingPart,
        progress: false,
    };
    let (train, test) = (synthetic(60, 1), synthetic(40, 7));
    let clean = run_grief_fold(&train, &test, &options).expect("fold runs");
    assert!(clean.exact_at_init.is_none());
    let paper = run_grief_fold(
        &train,
        &test,
        &GriefFoldOptions {
            init_rows: InitRows::WholeDataSet,
            ..options
        },
    )
    .expect("fold runs");
    let at_init = paper
        .exact_at_init
        .as_ref()
        .expect("the untrained exact GP");
    assert!(at_init.rmse.is_finite() && at_init.rmse > 0.0);
    assert_ne!(paper.type_one.rmse, clean.type_one.rmse);
    // Training and test sizes are those of the fold either way.
    assert_eq!((paper.n_train, paper.n_test), (clean.n_train, clean.n_test));
}

/// Table 1 under the paper's initialisation: its own cache folder, its criteria named by the
/// protocol, and the comparison table, whose test-clean columns come from the test-clean
/// runs of the same folds in the cache (needs the real folds: skipped, and said, without
/// `GP_DATA_DIR`).
#[test]
fn the_paper_init_table_sets_its_runs_beside_the_test_clean_ones() {
    use gp_bench::data::{DataDir, DataDirOrigin};
    use gp_bench::experiment::{Experiment, RunContext, RunSize};
    use gp_bench::fold_cache::FoldCache;
    use gp_bench::papers::grief::table1_folds::Table1Folds;
    use gp_bench::papers::grief::table1_paper_init::Table1PaperInit;
    let Some(path) = std::env::var_os("GP_DATA_DIR").filter(|v| !v.is_empty()) else {
        eprintln!("GP_DATA_DIR not set: the paper-initialisation Table 1 needs the real folds");
        return;
    };
    let data_dir = DataDir {
        path: Some(path.into()),
        origin: DataDirOrigin::Environment,
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = FoldCache::new(dir.path());
    let progress = indicatif::ProgressBar::hidden();
    let ctx = RunContext {
        size: RunSize::Smoke,
        seed: 0,
        data_dir: &data_dir,
        progress: &progress,
        folds: Some(1),
        sets: None,
        fold_cache: Some(&cache),
        jobs: 1,
        large: false,
        seeds: 1,
    };
    let comparison_cell = |out: &gp_bench::experiment::ExperimentOutput| {
        let table = &out.tables.get(1).expect("the comparison table").table;
        table.to_markdown()
    };
    // Without the test-clean folds in the cache the comparison says so.
    let alone = Table1PaperInit.run(&ctx).expect("table runs");
    assert!(comparison_cell(&alone).contains("not in the fold cache"));
    assert!(alone
        .checks
        .iter()
        .any(|c| c.name.contains("criterion 17") && c.name.contains("test rows included")));
    assert!(dir.path().join("grief/table1-paper-init").is_dir());
    // With them, it shows their numbers.
    let clean = Table1Folds.run(&ctx).expect("table runs");
    let beside = Table1PaperInit.run(&ctx).expect("table runs");
    assert!(!comparison_cell(&beside).contains("not in the fold cache"));
    let clean_one = clean.raw["datasets"][0]["ours"]["grief1"]
        .as_f64()
        .expect("GRIEF-I mean");
    assert!(
        comparison_cell(&beside).contains(&format!("{clean_one:.3}")),
        "{}",
        comparison_cell(&beside)
    );
    assert_eq!(clean.tables.len(), 1);
}
