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

#[test]
fn default_variance_solves_are_tight_enough_for_cancelling_variances() {
    // Dense 1-D data: the posterior variance is ~1e-3 of the prior, so the subtracted term
    // k*ᵀK̂⁻¹k* cancels to three digits and a loose solve shows in the variance.
    let n = 3000;
    let x = faer::Mat::from_fn(n, 1, |i, _| i as f64 / n as f64);
    let y = faer::Col::from_fn(n, |i| (6.0 * i as f64 / n as f64).sin());
    let kernel = SquaredExponential::new(vec![0.1], 1.0).unwrap();
    let fit = |variance_tolerance: f64| {
        Ski::fit(
            kernel.clone(),
            x.as_ref(),
            y.as_ref(),
            1e-2,
            &SkiOptions {
                grid: GridSettings {
                    sizes: vec![200],
                    ..GridSettings::default()
                },
                krylov: KrylovSettings {
                    variance_tolerance,
                    ..KrylovSettings::default()
                },
                ..SkiOptions::default()
            },
        )
        .unwrap()
    };
    let x_test = faer::Mat::from_fn(7, 1, |i, _| 0.05 + 0.15 * i as f64);
    let exact = PredictRequest::variance(VarianceMethod::Exact);
    let reference = fit(1e-13).predict(x_test.as_ref(), &exact).unwrap();
    let default = fit(KrylovSettings::default().variance_tolerance)
        .predict(x_test.as_ref(), &exact)
        .unwrap();
    let loose = fit(1e-4).predict(x_test.as_ref(), &exact).unwrap();
    let worst = |p: &Prediction| {
        (0..7)
            .map(|i| {
                (p.latent_variance[i] - reference.latent_variance[i]).abs()
                    / reference.latent_variance[i]
            })
            .fold(0.0, f64::max)
    };
    assert!(worst(&default) < 1e-4, "default: {:e}", worst(&default));
    // The mean's tolerance would not do for variances.
    assert!(worst(&loose) > 1e-3, "loose: {:e}", worst(&loose));
}
