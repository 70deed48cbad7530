//! Bad input gives typed errors, never a panic.

use crate::common;

use faer::Mat;
use gp_kernels::{
    ArdParams, FactorKind, Kernel, KernelError, KernelOperator, Matern, MaternNu, ProductKernel,
    RandomFourierFeatures, SquaredExponential,
};
use gp_linalg::LinalgError;
use proptest::prelude::*;

fn invalid_positive() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        -1e300..-1e-300f64,
    ]
}

fn valid_positive() -> impl Strategy<Value = f64> {
    1e-3..1e3f64
}

/// Log values that are not finite or whose exponential is 0 or ∞.
fn invalid_log() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        750.0..1e300f64,
        -1e300..-750.0f64,
    ]
}

fn kinds(d: usize) -> Vec<FactorKind> {
    (0..d)
        .map(|i| match i % 3 {
            0 => FactorKind::SquaredExponential,
            1 => FactorKind::Matern(MaternNu::Half),
            _ => FactorKind::Matern(MaternNu::FiveHalves),
        })
        .collect()
}

fn check_all_constructors(ls: Vec<f64>, var: f64) {
    let d = ls.len();
    assert!(SquaredExponential::new(ls.clone(), var).is_err());
    assert!(ArdParams::new(ls.clone(), var).is_err());
    for nu in [MaternNu::Half, MaternNu::ThreeHalves, MaternNu::FiveHalves] {
        assert!(Matern::new(nu, ls.clone(), var).is_err());
    }
    assert!(ProductKernel::new(kinds(d), ls.clone(), var).is_err());
    assert!(ProductKernel::uniform(FactorKind::SquaredExponential, ls, var).is_err());
}

proptest! {
    #[test]
    fn bad_lengthscale_is_an_error(
        mut ls in prop::collection::vec(valid_positive(), 1..5),
        bad in invalid_positive(),
        at in any::<prop::sample::Index>(),
        var in valid_positive(),
    ) {
        let i = at.index(ls.len());
        ls[i] = bad;
        check_all_constructors(ls.clone(), var);
        let err = SquaredExponential::new(ls, var).unwrap_err();
        let is_lengthscale = matches!(
            err,
            KernelError::InvalidHyperparameter { ref name, .. } if name == &format!("lengthscale_{i}")
        );
        prop_assert!(is_lengthscale);
        prop_assert!(SquaredExponential::isotropic(3, bad, var).is_err());
        prop_assert!(Matern::isotropic(MaternNu::Half, 3, bad, var).is_err());
    }

    #[test]
    fn bad_variance_is_an_error(
        ls in prop::collection::vec(valid_positive(), 1..5),
        bad in invalid_positive(),
    ) {
        check_all_constructors(ls.clone(), bad);
        let rff = RandomFourierFeatures::from_frequencies(Mat::from_fn(3, ls.len(), |i, _| i as f64), bad);
        prop_assert!(rff.is_err());
    }

    #[test]
    fn bad_noise_is_an_error(bad in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), -1e300..-1e-300f64]) {
        let k = SquaredExponential::new(vec![1.0], 1.0).unwrap();
        let x = Mat::from_fn(4, 1, |i, _| i as f64);
        prop_assert!(KernelOperator::new(&k, x.as_ref(), bad).is_err());
    }

    #[test]
    fn bad_log_params_are_errors_and_leave_the_kernel_unchanged(
        bad in invalid_log(),
        at in 0usize..3,
        valid in prop::collection::vec(-3.0..3.0f64, 3),
    ) {
        for (name, mut kernel) in common::all_kernels() {
            let before = kernel.log_params();
            let mut p = valid.clone();
            p[at] = bad;
            prop_assert!(kernel.set_log_params(&p).is_err(), "{}", name);
            prop_assert_eq!(kernel.log_params(), before.clone());
        }
    }

    #[test]
    fn wrong_param_count_is_an_error(len in 0usize..8) {
        prop_assume!(len != 3);
        for (_, mut kernel) in common::all_kernels() {
            let err = kernel.set_log_params(&vec![0.0; len]).unwrap_err();
            let is_count = matches!(err, KernelError::ParamCount { expected: 3, found, .. } if found == len);
            prop_assert!(is_count);
        }
    }

    #[test]
    fn bad_points_are_errors(
        ncols in 0usize..5,
        nrows in 1usize..6,
        bad in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
        at in any::<prop::sample::Index>(),
    ) {
        let good = Mat::from_fn(3, 2, |i, j| (i + j) as f64);
        for (_, kernel) in common::all_kernels() {
            let x = Mat::from_fn(nrows, ncols, |i, j| (i * j) as f64);
            if ncols != 2 {
                prop_assert!(kernel.matrix(x.as_ref(), good.as_ref()).is_err());
                prop_assert!(kernel.matrix(good.as_ref(), x.as_ref()).is_err());
                prop_assert!(kernel.diag(x.as_ref()).is_err());
                prop_assert!(kernel.matrix_and_grads(x.as_ref()).is_err());
                prop_assert!(KernelOperator::new(&kernel, x.as_ref(), 0.1).is_err());
                continue;
            }
            let mut x = x;
            let k = at.index(nrows * 2);
            x[(k / 2, k % 2)] = bad;
            let is_nonfinite = |r: Result<Mat<f64>, KernelError>| {
                matches!(r, Err(KernelError::Linalg(LinalgError::NonFinite { .. })))
            };
            prop_assert!(is_nonfinite(kernel.matrix(x.as_ref(), good.as_ref())));
            prop_assert!(is_nonfinite(kernel.matrix(good.as_ref(), x.as_ref())));
            prop_assert!(kernel.diag(x.as_ref()).is_err());
            prop_assert!(kernel.matrix_and_grads(x.as_ref()).is_err());
            prop_assert!(KernelOperator::new(&kernel, x.as_ref(), 0.1).is_err());
            prop_assert!(KernelOperator::cross(&kernel, good.as_ref(), x.as_ref()).is_err());
        }
    }
}

#[test]
fn structural_errors() {
    assert!(matches!(
        SquaredExponential::new(vec![], 1.0),
        Err(KernelError::InvalidArgument { .. })
    ));
    assert!(Matern::new(MaternNu::Half, vec![], 1.0).is_err());
    assert!(matches!(
        ProductKernel::new(vec![FactorKind::SquaredExponential], vec![1.0, 2.0], 1.0),
        Err(KernelError::InvalidArgument { name: "kinds", .. })
    ));
    assert!(SquaredExponential::isotropic(0, 1.0, 1.0).is_err());
    let k = SquaredExponential::new(vec![1.0, 1.0], 1.0).unwrap();
    let x = Mat::<f64>::zeros(4, 3);
    let err = k.matrix(x.as_ref(), x.as_ref()).unwrap_err();
    assert!(matches!(
        err,
        KernelError::InputDim {
            expected: 2,
            found: 3,
            ..
        }
    ));
    assert!(err.to_string().contains("2-dimensional"));
}

#[test]
fn deserialized_kernels_are_checked_like_constructed_ones() {
    use gp_kernels::{Matern, SquaredExponential};
    let se = SquaredExponential::new(vec![0.5, 2.0], 1.5).unwrap();
    let text = serde_json::to_string(&se).unwrap();
    let back: SquaredExponential = serde_json::from_str(&text).unwrap();
    assert_eq!(back, se);
    for (from, to) in [("0.5", "-0.5"), ("1.5", "0.0"), ("2.0", "1e-320")] {
        let bad = text.replacen(from, to, 1);
        assert_ne!(bad, text, "the edit must hit the file");
        let err = serde_json::from_str::<SquaredExponential>(&bad).unwrap_err();
        assert!(err.to_string().contains("must"), "{err}");
    }
    let empty = text.replacen("[0.5,2.0]", "[]", 1);
    assert!(serde_json::from_str::<SquaredExponential>(&empty).is_err());
    let m = Matern::new(gp_kernels::MaternNu::ThreeHalves, vec![1.0], 1.0).unwrap();
    let text = serde_json::to_string(&m)
        .unwrap()
        .replacen("1.0", "-1.0", 1);
    assert!(serde_json::from_str::<Matern>(&text).is_err(), "{text}");
}
