//! A prediction whose mean solve stops at its iteration cap fails by default, or comes with
//! its solve report when the caller accepts that.

use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::prelude::*;

use crate::common::toy_data;

fn capped() -> KrylovSettings {
    KrylovSettings {
        max_iterations: 2,
        prediction_tolerance: 1e-12,
        variance_tolerance: 1e-12,
        ..KrylovSettings::default()
    }
}

fn check<M: GpModel>(model: &M) {
    let (x_test, _) = toy_data(5, 1, 3.0, 9);
    let err = model
        .predict(x_test.as_ref(), &PredictRequest::mean())
        .unwrap_err();
    match &err {
        ModelError::NotConverged {
            iterations,
            relative_residual,
            ..
        } => {
            assert_eq!(*iterations, 2);
            assert!(*relative_residual > 1e-12);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("max_iterations"), "{err}");
    let accepted = model
        .predict(
            x_test.as_ref(),
            &PredictRequest::mean().accepting_unconverged(),
        )
        .unwrap();
    let report = accepted
        .mean_solve
        .expect("an iterative model reports its solve");
    assert!(!report.converged);
    assert_eq!(report.iterations, 2);
}

#[test]
fn unconverged_mean_solves_fail_unless_accepted() {
    let (x, y) = toy_data(120, 1, 3.0, 4);
    let kernel = SquaredExponential::new(vec![0.5], 1.0).unwrap();
    let ski = Ski::fit(
        kernel.clone(),
        x.as_ref(),
        y.as_ref(),
        1e-3,
        &SkiOptions {
            grid: GridSettings {
                sizes: vec![50],
                ..GridSettings::default()
            },
            krylov: capped(),
            ..SkiOptions::default()
        },
    )
    .unwrap();
    check(&ski);
    let iterative = IterativeGp::fit_with_options(
        kernel,
        x.as_ref(),
        y.as_ref(),
        1e-3,
        &IterativeOptions {
            krylov: capped(),
            preconditioner_rank: 0,
            ..IterativeOptions::default()
        },
    )
    .unwrap();
    check(&iterative);
}
