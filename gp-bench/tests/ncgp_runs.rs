//! The IterNCGP experiments of this session run end to end at smoke size and judge their
//! checks from their numbers: `gmm` (E4–E7), `ski-binary` (SKI agrees with the dense
//! kernel), and `mnist` says when it has no data.

use gp_bench::data::{DataDir, DataDirOrigin};
use gp_bench::experiment::{ExperimentOutput, RunContext, RunSize};

/// Runs the `ncgp` experiment `name` at smoke size without a data directory.
fn run_smoke(name: &str) -> ExperimentOutput {
    let paper = gp_bench::papers::find("ncgp").expect("ncgp");
    let exp = paper
        .experiments
        .iter()
        .find(|e| e.name() == name)
        .unwrap_or_else(|| panic!("{name} registered"));
    let data_dir = DataDir {
        path: None,
        origin: DataDirOrigin::NotFound,
    };
    let progress = indicatif::ProgressBar::hidden();
    let ctx = RunContext {
        size: RunSize::Smoke,
        seed: 0,
        data_dir: &data_dir,
        progress: &progress,
        folds: None,
    };
    exp.run(&ctx).unwrap_or_else(|e| panic!("{name} runs: {e}"))
}

#[test]
fn gmm_smoke_produces_a_table_checks_and_a_curve() {
    let out = run_smoke("gmm");
    assert_eq!(out.tables.len(), 1);
    // Two IterNCGP variants and two SoD sizes.
    assert_eq!(out.tables[0].table.len(), 4);
    assert_eq!(out.checks.len(), 6);
    assert_eq!(out.curves.len(), 1);
    // The memory arithmetic (E7 / U15) does not depend on the size.
    assert!(out.checks.last().is_some_and(|c| c.met), "{:?}", out.checks);
    for m in out.raw["methods"].as_array().expect("methods") {
        for r in m["runs"].as_array().expect("runs") {
            let acc = r["accuracy"].as_f64().expect("accuracy");
            assert!(acc > 0.3 && acc <= 1.0, "{m}");
        }
    }
}

#[test]
fn ski_binary_smoke_agrees_with_the_dense_kernel() {
    let out = run_smoke("ski-binary");
    assert_eq!(out.checks.len(), 3);
    let dp = out.raw["ski_vs_dense_max_dp"].as_f64().expect("max dp");
    assert!(dp <= 0.01, "{dp}");
    assert!(out.checks[0].met);
    let acc = out.raw["ski"]["accuracy"].as_f64().expect("accuracy");
    let oracle = out.raw["oracle"]["accuracy"].as_f64().expect("oracle");
    assert!(
        acc > 0.8 && acc <= oracle + 0.05,
        "{acc} vs oracle {oracle}"
    );
}

#[test]
fn mnist_without_data_says_it_skipped() {
    let out = run_smoke("mnist");
    assert!(out.checks.is_empty());
    assert!(
        out.notes.iter().any(|n| n.starts_with("Skipped")),
        "{:?}",
        out.notes
    );
}
