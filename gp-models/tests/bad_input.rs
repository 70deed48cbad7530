//! Bad inputs give typed errors, never panics.

use crate::common;

use common::toy_data;
use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::{ExactGp, ModelError};
use gp_models::{GpModel, PredictRequest};
use proptest::prelude::*;

fn se(d: usize) -> SquaredExponential {
    SquaredExponential::isotropic(d, 0.8, 1.0).unwrap()
}

#[test]
fn empty_data() {
    let x = Mat::<f64>::zeros(0, 2);
    let y = Col::<f64>::zeros(0);
    assert!(matches!(
        ExactGp::fit(se(2), x.as_ref(), y.as_ref(), 0.1),
        Err(ModelError::EmptyData { n: 0, d: 2, .. })
    ));
    let x = Mat::<f64>::zeros(3, 0);
    let y = Col::<f64>::zeros(3);
    assert!(matches!(
        ExactGp::fit(se(1), x.as_ref(), y.as_ref(), 0.1),
        Err(ModelError::EmptyData { n: 3, d: 0, .. })
    ));
}

#[test]
fn mismatched_lengths() {
    let (x, _) = toy_data(5, 2, 1.0, 0);
    let y = Col::<f64>::zeros(4);
    assert!(matches!(
        ExactGp::fit(se(2), x.as_ref(), y.as_ref(), 0.1),
        Err(ModelError::LengthMismatch {
            expected: 5,
            found: 4,
            ..
        })
    ));
    let y = Col::<f64>::zeros(5);
    assert!(matches!(
        ExactGp::fit(se(3), x.as_ref(), y.as_ref(), 0.1),
        Err(ModelError::KernelDim {
            kernel_dim: 3,
            data_dim: 2
        })
    ));
}

#[test]
fn non_finite_data() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let (mut x, y) = toy_data(5, 2, 1.0, 0);
        x[(3, 1)] = bad;
        assert!(matches!(
            ExactGp::fit(se(2), x.as_ref(), y.as_ref(), 0.1),
            Err(ModelError::NonFinite { row: 3, col: 1, .. })
        ));
        let (x, mut y) = toy_data(5, 2, 1.0, 0);
        y[2] = bad;
        assert!(matches!(
            ExactGp::fit(se(2), x.as_ref(), y.as_ref(), 0.1),
            Err(ModelError::NonFinite { row: 2, col: 0, .. })
        ));
    }
}

#[test]
fn bad_noise() {
    let (x, y) = toy_data(5, 2, 1.0, 0);
    for noise in [0.0, -1.0, f64::NAN, f64::INFINITY, -0.0] {
        assert!(matches!(
            ExactGp::fit(se(2), x.as_ref(), y.as_ref(), noise),
            Err(ModelError::InvalidNoise { .. })
        ));
    }
}

#[test]
fn wrong_test_columns() {
    let (x, y) = toy_data(5, 2, 1.0, 0);
    let gp = ExactGp::fit(se(2), x.as_ref(), y.as_ref(), 0.1).unwrap();
    let xt = Mat::<f64>::zeros(3, 3);
    assert!(matches!(
        gp.predict_mean(xt.as_ref()),
        Err(ModelError::TestDim {
            expected: 2,
            found: 3
        })
    ));
    assert!(gp.predict_latent_variance(xt.as_ref()).is_err());
    assert!(gp.predict_variance(xt.as_ref()).is_err());
    assert!(gp.predict(xt.as_ref(), &PredictRequest::default()).is_err());
    assert!(gp.predict_covariance(xt.as_ref()).is_err());
    let mut xt = Mat::<f64>::zeros(3, 2);
    xt[(1, 0)] = f64::NAN;
    assert!(matches!(
        gp.predict_covariance(xt.as_ref()),
        Err(ModelError::NonFinite { row: 1, col: 0, .. })
    ));
}

#[test]
fn indefinite_after_ladder_is_a_linalg_error() {
    // Duplicate points with a tiny noise and no jitter allowed still factor (σ² > 0), but a
    // huge variance over a tiny noise with a zero ladder breaks down numerically.
    let x = Mat::from_fn(40, 1, |i, _| (i % 2) as f64 * 1e-9);
    let y = Col::<f64>::zeros(40);
    let opts = gp_models::FitOptions {
        jitter: gp_linalg::JitterLadder::none(),
        ..Default::default()
    };
    let kernel = SquaredExponential::new(vec![1.0], 1e300).unwrap();
    let r = ExactGp::fit_with_options(kernel, x.as_ref(), y.as_ref(), 1e-300, &opts);
    assert!(
        matches!(
            r,
            Err(ModelError::Linalg(
                gp_linalg::LinalgError::NotPositiveDefinite { n: 40, .. }
            ))
        ),
        "{r:?}"
    );
}

/// One way to spoil otherwise valid training data.
#[derive(Debug, Clone)]
enum Spoil {
    NoRows,
    NoCols,
    YLength(usize),
    X(usize, usize, f64),
    Y(usize, f64),
    Noise(f64),
    KernelDim(usize),
}

fn bad_value() -> impl Strategy<Value = f64> {
    prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)]
}

fn spoil() -> impl Strategy<Value = Spoil> {
    prop_oneof![
        Just(Spoil::NoRows),
        Just(Spoil::NoCols),
        (0usize..20).prop_map(Spoil::YLength),
        (0usize..100, 0usize..10, bad_value()).prop_map(|(i, j, v)| Spoil::X(i, j, v)),
        (0usize..100, bad_value()).prop_map(|(i, v)| Spoil::Y(i, v)),
        prop_oneof![
            bad_value(),
            Just(0.0),
            Just(-0.0),
            (-1e10f64..0.0).prop_map(|v| v)
        ]
        .prop_map(Spoil::Noise),
        (1usize..6).prop_map(Spoil::KernelDim),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn fit_rejects_spoiled_data(
        n in 1usize..12,
        d in 1usize..4,
        seed in 0u64..1000,
        noise in 1e-3f64..1.0,
        how in spoil(),
    ) {
        let (x, y) = toy_data(n, d, 2.0, seed);
        let mut x = x;
        let mut y = y;
        let mut noise = noise;
        let mut kd = d;
        let mut valid = true;
        match how {
            Spoil::NoRows => { x = Mat::zeros(0, d); y = Col::zeros(0); valid = false; }
            Spoil::NoCols => { x = Mat::zeros(n, 0); kd = 1; valid = false; }
            Spoil::YLength(m) => { if m != n { y = Col::zeros(m); valid = false; } }
            Spoil::X(i, j, v) => { x[(i % n, j % d)] = v; valid = false; }
            Spoil::Y(i, v) => { y[i % n] = v; valid = false; }
            Spoil::Noise(v) => { noise = v; valid = false; }
            Spoil::KernelDim(k) => { if k != d { kd = k; valid = false; } }
        }
        let r = ExactGp::fit(se(kd), x.as_ref(), y.as_ref(), noise);
        prop_assert_eq!(r.is_ok(), valid, "{:?}", r.err());
    }

    #[test]
    fn predictions_reject_bad_test_points(
        m in 0usize..6,
        cols in 0usize..5,
        entry in (0usize..6, 0usize..5, prop_oneof![bad_value(), -1e3f64..1e3]),
    ) {
        let (x, y) = toy_data(8, 2, 2.0, 1);
        let gp = ExactGp::fit(se(2), x.as_ref(), y.as_ref(), 0.1).unwrap();
        let mut xt = Mat::<f64>::zeros(m, cols);
        if m > 0 && cols > 0 {
            xt[(entry.0 % m, entry.1 % cols)] = entry.2;
        }
        let valid = cols == 2 && (m == 0 || entry.2.is_finite());
        prop_assert_eq!(gp.predict_mean(xt.as_ref()).is_ok(), valid);
        prop_assert_eq!(gp.predict_latent_variance(xt.as_ref()).is_ok(), valid);
        prop_assert_eq!(gp.predict_variance(xt.as_ref()).is_ok(), valid);
        prop_assert_eq!(gp.predict(xt.as_ref(), &PredictRequest::default()).is_ok(), valid);
        prop_assert_eq!(gp.predict_covariance(xt.as_ref()).is_ok(), valid);
        if valid {
            let v = gp.predict_variance(xt.as_ref()).unwrap();
            prop_assert!((0..m).all(|i| v[i] >= 0.1 && v[i].is_finite()));
        }
    }

    #[test]
    fn arbitrary_log_params_never_panic(p in proptest::collection::vec(-800.0f64..800.0, 0..6)) {
        let (x, y) = toy_data(8, 2, 2.0, 1);
        let gp = ExactGp::fit(se(2), x.as_ref(), y.as_ref(), 0.1).unwrap();
        // Either a refitted model or a typed error, never a panic.
        if let Ok(m) = gp.with_log_params(&p) {
            prop_assert!(m.log_marginal_likelihood().is_finite());
        }
    }
}
