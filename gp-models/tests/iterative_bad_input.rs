//! Bad inputs to the iterative exact GP give typed errors, never panics.

use crate::common;

use common::toy_data;
use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::{EstimatorSettings, KrylovSettings};
use gp_models::{GpModel, PredictRequest};
use gp_models::{IterativeGp, IterativeOptions, KernelColumns, ModelError};
use proptest::prelude::*;

fn se(d: usize) -> SquaredExponential {
    SquaredExponential::isotropic(d, 0.8, 1.0).unwrap()
}

fn fit(
    x: &Mat<f64>,
    y: &Col<f64>,
    kernel: SquaredExponential,
    noise: f64,
) -> Result<IterativeGp<SquaredExponential>, ModelError> {
    IterativeGp::fit(kernel, x.as_ref(), y.as_ref(), noise)
}

#[test]
fn empty_and_mismatched_data() {
    let x = Mat::<f64>::zeros(0, 2);
    let y = Col::<f64>::zeros(0);
    assert!(matches!(
        fit(&x, &y, se(2), 0.1),
        Err(ModelError::EmptyData { n: 0, d: 2, .. })
    ));
    let (x, _) = toy_data(5, 2, 1.0, 0);
    assert!(matches!(
        fit(&x, &Col::zeros(4), se(2), 0.1),
        Err(ModelError::LengthMismatch {
            expected: 5,
            found: 4,
            ..
        })
    ));
    assert!(matches!(
        fit(&x, &Col::zeros(5), se(3), 0.1),
        Err(ModelError::KernelDim {
            kernel_dim: 3,
            data_dim: 2
        })
    ));
}

#[test]
fn non_finite_data_and_bad_noise() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let (mut x, y) = toy_data(5, 2, 1.0, 0);
        x[(3, 1)] = bad;
        assert!(matches!(
            fit(&x, &y, se(2), 0.1),
            Err(ModelError::NonFinite { row: 3, col: 1, .. })
        ));
        let (x, mut y) = toy_data(5, 2, 1.0, 0);
        y[2] = bad;
        assert!(matches!(
            fit(&x, &y, se(2), 0.1),
            Err(ModelError::NonFinite { row: 2, .. })
        ));
        assert!(matches!(
            fit(&x, &toy_data(5, 2, 1.0, 0).1, se(2), bad),
            Err(ModelError::InvalidNoise { .. })
        ));
    }
    let (x, y) = toy_data(5, 2, 1.0, 0);
    for noise in [0.0, -1.0] {
        assert!(matches!(
            fit(&x, &y, se(2), noise),
            Err(ModelError::InvalidNoise { .. })
        ));
    }
}

#[test]
fn invalid_options() {
    let (x, y) = toy_data(20, 2, 1.0, 0);
    let bad = [
        IterativeOptions {
            estimator: EstimatorSettings {
                probes: 0,
                ..EstimatorSettings::default()
            },
            ..Default::default()
        },
        IterativeOptions {
            krylov: KrylovSettings {
                tolerance: -1.0,
                ..KrylovSettings::default()
            },
            ..Default::default()
        },
        IterativeOptions {
            krylov: KrylovSettings {
                tolerance: f64::NAN,
                ..KrylovSettings::default()
            },
            ..Default::default()
        },
        IterativeOptions {
            krylov: KrylovSettings {
                prediction_tolerance: f64::INFINITY,
                variance_tolerance: f64::INFINITY,
                ..KrylovSettings::default()
            },
            ..Default::default()
        },
        IterativeOptions {
            krylov: KrylovSettings {
                max_iterations: 0,
                ..KrylovSettings::default()
            },
            ..Default::default()
        },
        IterativeOptions {
            max_lanczos_iterations: Some(0),
            ..Default::default()
        },
    ];
    for opts in bad {
        let res = IterativeGp::fit_with_options(se(2), x.as_ref(), y.as_ref(), 0.1, &opts);
        assert!(
            matches!(res, Err(ModelError::InvalidOption { .. })),
            "{opts:?} accepted"
        );
    }
    let gp = fit(&x, &y, se(2), 0.1).unwrap();
    let opts = IterativeOptions {
        estimator: EstimatorSettings {
            probes: 0,
            ..EstimatorSettings::default()
        },
        ..Default::default()
    };
    assert!(matches!(
        gp.with_options(&opts),
        Err(ModelError::InvalidOption { .. })
    ));
}

#[test]
fn bad_hyperparameters_and_test_points() {
    let (x, y) = toy_data(20, 2, 1.0, 0);
    let gp = fit(&x, &y, se(2), 0.1).unwrap();
    assert!(matches!(
        gp.with_log_params(&[0.0, 0.0]),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        gp.with_log_params(&[0.0, f64::NAN, 0.0, 0.0]),
        Err(ModelError::Kernel(_))
    ));
    assert!(matches!(
        gp.with_log_params(&[0.0, 0.0, 0.0, f64::NEG_INFINITY]),
        Err(ModelError::InvalidNoise { .. })
    ));
    assert!(matches!(
        gp.with_kernel_and_noise(se(3), 0.1),
        Err(ModelError::KernelDim { .. })
    ));
    let wrong = Mat::<f64>::zeros(3, 3);
    assert!(matches!(
        gp.predict_mean(wrong.as_ref()),
        Err(ModelError::TestDim {
            expected: 2,
            found: 3
        })
    ));
    assert!(matches!(
        gp.predict_variance(wrong.as_ref()),
        Err(ModelError::TestDim { .. })
    ));
    let mut nan = Mat::<f64>::zeros(3, 2);
    nan[(1, 0)] = f64::NAN;
    assert!(matches!(
        gp.predict(nan.as_ref(), &PredictRequest::default()),
        Err(ModelError::NonFinite { row: 1, col: 0, .. })
    ));
    // Empty test sets are fine.
    let empty = Mat::<f64>::zeros(0, 2);
    assert_eq!(
        gp.predict(empty.as_ref(), &PredictRequest::default())
            .unwrap()
            .mean
            .nrows(),
        0
    );
    // The column adapter checks its points too.
    let k = se(2);
    assert!(matches!(
        KernelColumns::new(&k, wrong.as_ref()),
        Err(ModelError::KernelDim { .. })
    ));
    assert!(matches!(
        KernelColumns::new(&k, nan.as_ref()),
        Err(ModelError::NonFinite { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Arbitrary (possibly non-finite) data never panics: either a typed error or a
    /// finite estimate.
    #[test]
    fn arbitrary_inputs_never_panic(
        n in 1usize..12,
        entries in proptest::collection::vec(
            prop_oneof![
                8 => -5.0f64..5.0,
                1 => Just(f64::NAN),
                1 => Just(f64::INFINITY),
            ],
            36,
        ),
        noise in prop_oneof![Just(-1.0), Just(0.0), 1e-6f64..1.0],
        probes in 0usize..4,
    ) {
        let x = Mat::from_fn(n, 2, |i, j| entries[(2 * i + j) % entries.len()]);
        let y = Col::from_fn(n, |i| entries[(i + 24) % entries.len()]);
        let opts = IterativeOptions {
            estimator: EstimatorSettings { probes, ..EstimatorSettings::default() },
            ..Default::default()
        };
        if let Ok(gp) = IterativeGp::fit_with_options(se(2), x.as_ref(), y.as_ref(), noise, &opts) {
            if let Ok(est) = gp.lml_and_grad_estimate() {
                prop_assert!(est.lml.is_finite());
            }
            let _ = gp.predict(x.as_ref(), &PredictRequest::default());
        }
    }

    /// Finite but nasty data (duplicated points, tiny noise, huge values): a typed error or
    /// finite results, never a panic.
    #[test]
    fn degenerate_systems_never_panic(
        n in 1usize..40,
        scale in prop_oneof![Just(1e-8), Just(1.0), Just(1e6)],
        noise in prop_oneof![Just(1e-300), Just(1e-12), 1e-6f64..1.0],
        rank in prop_oneof![Just(0usize), Just(15)],
        duplicate in any::<bool>(),
    ) {
        let x = Mat::from_fn(n, 2, |i, j| {
            let i = if duplicate { i % 3 } else { i };
            ((i * 7 + j * 3) % 11) as f64 * 0.1
        });
        let y = Col::from_fn(n, |i| scale * ((i as f64) * 0.7).sin());
        let opts = IterativeOptions { preconditioner_rank: rank, ..Default::default() };
        let gp = IterativeGp::fit_with_options(se(2), x.as_ref(), y.as_ref(), noise, &opts)
            .unwrap();
        if let Ok(est) = gp.lml_and_grad_estimate() {
            prop_assert!(!est.lml.is_nan());
        }
        if let Ok(p) = gp.predict(x.as_ref(), &PredictRequest::default()) {
            prop_assert!(p.mean.iter().all(|v| !v.is_nan()));
        }
    }
}
