//! The IterNCGP Gaussian-mixture experiment (checks E4–E7) runs end to end at smoke size and
//! judges its checks from its numbers.

use gp_bench::data::{DataDir, DataDirOrigin};
use gp_bench::experiment::{RunContext, RunSize};

#[test]
fn gmm_smoke_produces_a_table_checks_and_a_curve() {
    let paper = gp_bench::papers::find("ncgp").expect("ncgp");
    let exp = paper
        .experiments
        .iter()
        .find(|e| e.name() == "gmm")
        .expect("gmm registered");
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
    let out = exp.run(&ctx).expect("gmm runs");
    assert_eq!(out.tables.len(), 1);
    // Two IterNCGP variants and two SoD sizes.
    assert_eq!(out.tables[0].table.len(), 4);
    assert_eq!(out.checks.len(), 6);
    assert_eq!(out.curves.len(), 1);
    // The memory arithmetic (E7 / U15) does not depend on the size.
    assert!(out.checks.last().is_some_and(|c| c.met), "{:?}", out.checks);
    let methods = out.raw["methods"].as_array().expect("methods");
    for m in methods {
        for r in m["runs"].as_array().expect("runs") {
            let acc = r["accuracy"].as_f64().expect("accuracy");
            assert!(acc > 0.3 && acc <= 1.0, "{m}");
        }
    }
}
