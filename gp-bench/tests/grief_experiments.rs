//! The GP-GRIEF scaling (checks 9–12) and Fig. 2 (checks 13, 15) experiments run end to end
//! at smoke sizes and produce their tables, checks and figures. Timings are reported by the
//! experiments, never asserted here.

use gp_bench::data::{DataDir, DataDirOrigin};
use gp_bench::experiment::{Experiment, ExperimentOutput, RunContext, RunSize};
use gp_bench::papers::grief::fig1::Figure1;
use gp_bench::papers::grief::fig2::Figure2;
use gp_bench::papers::grief::scaling::Scaling;

fn run(exp: &dyn Experiment, size: RunSize) -> ExperimentOutput {
    let data_dir = DataDir {
        path: None,
        origin: DataDirOrigin::NotFound,
    };
    let progress = indicatif::ProgressBar::hidden();
    let ctx = RunContext {
        size,
        seed: 0,
        data_dir: &data_dir,
        progress: &progress,
        folds: None,
        sets: None,
        fold_cache: None,
        jobs: 1,
        large: false,
        seeds: 1,
    };
    let start = std::time::Instant::now();
    let out = exp.run(&ctx).expect("experiment runs");
    let elapsed = start.elapsed().as_secs_f64();
    if size != RunSize::Smoke {
        println!("## {} ({size}, {elapsed:.1} s)", exp.title_at(size));
        for t in &out.tables {
            println!("### {}\n{}", t.title, t.table);
        }
        for c in &out.checks {
            println!("- [{}] {}", if c.met { "x" } else { " " }, c.name);
        }
        for n in &out.notes {
            println!("* {n}");
        }
    }
    out
}

#[test]
fn grief_registers_scaling_and_fig2() {
    let paper = gp_bench::papers::find("grief").expect("grief");
    let names: Vec<&str> = paper.experiments.iter().map(|e| e.name()).collect();
    assert!(
        names.contains(&"scaling")
            && names.contains(&"fig2")
            && names.contains(&"fig1")
            && names.contains(&"table1-folds"),
        "{names:?}"
    );
}

#[test]
fn scaling_smoke_produces_tables_and_checks() {
    let out = run(&Scaling, RunSize::Smoke);
    assert!(out.tables.len() >= 6, "{}", out.tables.len());
    assert!(out.tables.iter().all(|t| !t.table.is_empty()));
    // Checks 9 (3), 10 (2), 11 (2), 12 (2).
    assert_eq!(out.checks.len(), 9);
    // Finiteness is not a timing: the pipeline values and the d = 100 Φ must be finite.
    let huge = &out.raw["huge_grids"];
    assert_eq!(huge["pipeline"]["finite"], true, "{huge}");
    assert_eq!(huge["huge"]["phi_finite"], true, "{huge}");
    assert!(huge["huge"]["log10_m"].as_f64().is_some_and(|v| v > 20.0));
    assert!(out.raw["lml"]["min_speedup"]
        .as_f64()
        .is_some_and(f64::is_finite));
}

#[test]
fn fig2_smoke_produces_tables_checks_and_figures() {
    let out = run(&Figure2, RunSize::Smoke);
    assert_eq!(out.tables.len(), 2);
    assert_eq!(out.curves.len(), 3);
    assert_eq!(out.checks.len(), 7);
    for method in out.raw["mean"].as_array().expect("mean") {
        for v in method.as_array().expect("per p") {
            for key in ["train", "joint"] {
                let e = v[key].as_f64().expect("error");
                assert!((0.0..=1.5).contains(&e), "{key}: {e}");
            }
        }
    }
    // Exactness with X ⊂ U and p = m is not a tolerance of the experiment's choosing.
    let exact = out.raw["convergence"]["exact_case_max_error"]
        .as_f64()
        .expect("exact");
    assert!(exact <= 1e-10, "{exact}");
    // More basis functions never make GRIEF's own train–train error worse.
    let grief: Vec<f64> = out.raw["mean"][0]
        .as_array()
        .expect("grief")
        .iter()
        .map(|v| v["train"].as_f64().expect("train"))
        .collect();
    assert!(grief.windows(2).all(|w| w[1] <= w[0] + 1e-12), "{grief:?}");
}

/// The quick sizes, with their tables printed: `cargo test --release -p gp-bench --test
/// integration grief_experiments_quick -- --ignored --nocapture`.
#[test]
#[ignore = "quick sizes; run in release to time them"]
fn grief_experiments_quick() {
    run(&Scaling, RunSize::Quick);
    run(&Figure2, RunSize::Quick);
}

/// Fig. 1 at smoke size: one table with both models, a per-seed figure and check 14, with
/// finite RMSEs well below the function's own scale.
#[test]
fn fig1_smoke_compares_grief_with_the_exact_gp() {
    let out = run(&Figure1, RunSize::Smoke);
    assert_eq!(out.tables.len(), 1);
    assert_eq!(out.curves.len(), 1);
    assert_eq!(out.checks.len(), 1);
    let mean = &out.raw["mean"];
    for key in ["exact", "grief"] {
        let v = mean[key].as_f64().expect("number");
        assert!(v.is_finite() && v > 0.0 && v < 1.0, "{key}: {v}");
    }
}

/// `--folds K` scales the Table 1 estimate (the first K of the ten folds), and only that
/// experiment's; the other experiments' estimates do not depend on it.
#[test]
fn the_table_estimate_follows_the_folds_kept() {
    use gp_bench::papers::grief::table1_folds::Table1Folds;
    let table = Table1Folds;
    let all = table.estimate_seconds(RunSize::Full);
    assert_eq!(table.estimate_seconds_with_folds(RunSize::Full, None), all);
    let one = table.estimate_seconds_with_folds(RunSize::Full, Some(1));
    assert!((one - all / 10.0).abs() < 1e-9 * all, "{one} vs {all}");
    assert_eq!(
        table.estimate_seconds_with_folds(RunSize::Full, Some(50)),
        all
    );
    let fig2 = Figure2;
    assert_eq!(
        fig2.estimate_seconds_with_folds(RunSize::Full, Some(1)),
        fig2.estimate_seconds(RunSize::Full)
    );
}

/// With a fold cache the Table 1 estimate counts only the folds the cache does not hold: an
/// empty cache changes nothing, and the recorded folds committed in `results/fold-cache`
/// take their share off. (Should this fail after `GRIEF_FOLD_VERSION` changed, the committed
/// folds no longer match the code: run them again or remove them.)
#[test]
fn the_table_estimate_leaves_out_recorded_folds() {
    use gp_bench::fold_cache::FoldCache;
    use gp_bench::papers::grief::table1_folds::Table1Folds;
    let table = Table1Folds;
    let all = table.estimate_seconds(RunSize::Full);
    let empty = std::env::temp_dir().join(format!("gp-bench-empty-cache-{}", std::process::id()));
    let none = FoldCache::new(&empty);
    assert_eq!(
        table.estimate_seconds_remaining(RunSize::Full, None, None, Some(&none), 0, 1),
        all
    );
    assert_eq!(
        table.estimate_seconds_remaining(RunSize::Full, Some(1), None, Some(&none), 0, 1),
        table.estimate_seconds_with_folds(RunSize::Full, Some(1))
    );
    let recorded =
        FoldCache::new(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/fold-cache"));
    let left = table.estimate_seconds_remaining(RunSize::Full, None, None, Some(&recorded), 0, 1);
    assert!(left < all, "{left} of {all}");
    // Another seed's folds are not the recorded ones.
    assert_eq!(
        table.estimate_seconds_remaining(RunSize::Full, None, None, Some(&recorded), 1, 1),
        all
    );
}

/// `--sets` keeps the named sets only, in the estimate (kin40k alone: its ten folds at the
/// weight-space per-fold cost, or one with `--folds 1`) and in the run (an unknown name is a
/// typed error naming the run's sets, raised before any data is read).
#[test]
fn the_table_runs_and_estimates_the_sets_asked_for() {
    use gp_bench::papers::grief::table1_folds::Table1Folds;
    let table = Table1Folds;
    let kin40k = ["kin40k".to_string()];
    let ten = table.estimate_seconds_remaining(RunSize::Full, None, Some(&kin40k), None, 0, 1);
    let one = table.estimate_seconds_remaining(RunSize::Full, Some(1), Some(&kin40k), None, 0, 1);
    assert!(
        ten > 0.0 && (ten - 10.0 * one).abs() < 1e-9 * ten,
        "{ten} vs {one}"
    );
    let all = table.estimate_seconds(RunSize::Full);
    assert!(ten < all / 10.0, "kin40k's {ten} s of the table's {all} s");
    let both = ["kin40k".to_string(), "keggu".to_string()];
    let two = table.estimate_seconds_remaining(RunSize::Full, None, Some(&both), None, 0, 1);
    assert!(two > ten, "{two} vs {ten}");

    let data_dir = DataDir {
        path: None,
        origin: DataDirOrigin::NotFound,
    };
    let progress = indicatif::ProgressBar::hidden();
    let unknown = ["kin40".to_string()];
    let ctx = RunContext {
        size: RunSize::Full,
        seed: 0,
        data_dir: &data_dir,
        progress: &progress,
        folds: None,
        sets: Some(&unknown),
        fold_cache: None,
        jobs: 1,
        large: false,
        seeds: 1,
    };
    let err = table.run(&ctx).expect_err("an unknown set is refused");
    let msg = err.to_string();
    assert!(
        msg.contains("--sets") && msg.contains("kin40") && msg.contains("keggu"),
        "{msg}"
    );
}
