//! IterNCGP on a SKI prior (`ski-binary`) runs end to end at smoke size (SKI agrees with the
//! dense kernel), and the MNIST experiment says when it has no data.

use gp_bench::data::{DataDir, DataDirOrigin};
use gp_bench::experiment::{RunContext, RunSize};

#[test]
fn ski_binary_smoke_agrees_with_the_dense_kernel() {
    let paper = gp_bench::papers::find("ncgp").expect("ncgp");
    let exp = paper
        .experiments
        .iter()
        .find(|e| e.name() == "ski-binary")
        .expect("ski-binary registered");
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
    let out = exp.run(&ctx).expect("ski-binary runs");
    assert_eq!(out.checks.len(), 3);
    // SKI against the dense kernel: the same test probabilities.
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
    let paper = gp_bench::papers::find("ncgp").expect("ncgp");
    let exp = paper
        .experiments
        .iter()
        .find(|e| e.name() == "mnist")
        .expect("mnist registered");
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
    let out = exp.run(&ctx).expect("a missing data set is not an error");
    assert!(out.checks.is_empty());
    assert!(
        out.notes.iter().any(|n| n.starts_with("Skipped")),
        "{:?}",
        out.notes
    );
}
