//! The IterNCGP experiments (`binary`: Figs. 1, 4, E3, E10; `poisson`: Fig. 5, E1, E2) run
//! end to end at smoke sizes and produce their tables, checks, curves and raw figures. The
//! checks' outcomes are the experiments' results and are not asserted here, except the ones
//! that are identities (E3's no-recycling start, Fig. 4's monotonicity).

use gp_bench::data::{DataDir, DataDirOrigin};
use gp_bench::experiment::{Experiment, ExperimentOutput, RunContext, RunSize};
use gp_bench::papers::ncgp::binary::BinaryClassification;
use gp_bench::papers::ncgp::poisson::PoissonSchedules;

fn run(exp: &dyn Experiment) -> ExperimentOutput {
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
    exp.run(&ctx).expect("experiment runs")
}

#[test]
fn ncgp_registers_binary_and_poisson() {
    let paper = gp_bench::papers::find("ncgp").expect("ncgp");
    let names: Vec<&str> = paper.experiments.iter().map(|e| e.name()).collect();
    assert_eq!(names, ["binary", "poisson"]);
}

#[test]
fn binary_smoke_produces_tables_checks_and_a_curve() {
    let out = run(&BinaryClassification);
    assert_eq!(out.tables.len(), 3);
    assert!(out.tables.iter().all(|t| !t.table.is_empty()));
    // E3 (three variants), Fig. 4, E10 (recycling; the run without at the MAP).
    assert_eq!(out.checks.len(), 6, "{:?}", out.checks);
    let identity = |prefix: &str| {
        out.checks
            .iter()
            .find(|c| c.name.starts_with(prefix))
            .unwrap_or_else(|| panic!("no check {prefix}: {:?}", out.checks))
            .met
    };
    assert!(identity("E3: without recycling"));
    assert!(identity("Fig. 4"));
    assert_eq!(out.curves.len(), 1);
    assert_eq!(out.curves[0].series.len(), 3);
    assert!(out.curves[0].series.iter().all(|s| s.points.len() > 1));
    assert!(out.raw["fig4"]["step0_iterations"].as_u64().unwrap() > 0);
}

#[test]
fn poisson_smoke_produces_tables_checks_and_a_curve() {
    let out = run(&PoissonSchedules);
    assert_eq!(out.tables.len(), 1);
    // Two schedules and the exact Laplace row.
    assert_eq!(out.tables[0].table.len(), 3);
    // E1 (a), (b) at 25 and 50, (c), E2.
    assert_eq!(out.checks.len(), 5, "{:?}", out.checks);
    assert_eq!(out.curves.len(), 1);
    // Both schedules and the exact-LA line.
    assert_eq!(out.curves[0].series.len(), 3);
    let study = &out.raw["studies"][0];
    assert!(study["latent_max_f"].as_f64().unwrap() <= 2.5);
    assert_eq!(study["exact_laplace_test_nll"].as_array().unwrap().len(), 2);
}
