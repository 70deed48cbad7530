//! The matrix-free kernel operator against the dense `K + σ²I`.

use crate::common;

use faer::{Col, Mat};
use gp_kernels::{Kernel, KernelError, KernelOperator, SquaredExponential};
use gp_linalg::{LinalgError, LinearOperator};

/// Points spanning several row tiles (128) and column tiles (128), with a ragged last tile.
fn pts(n: usize) -> Mat<f64> {
    Mat::from_fn(n, 2, |i, j| {
        ((i * (2 + j)) as f64 * 0.271_828).fract() * 4.0
    })
}

#[test]
fn square_operator_matches_dense() {
    let x = pts(300);
    let noise = 0.37;
    for (name, kernel) in common::all_kernels() {
        let mut dense = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
        for i in 0..x.nrows() {
            dense[(i, i)] += noise;
        }
        let op = KernelOperator::new(&kernel, x.as_ref(), noise).unwrap();
        assert_eq!(op.shape(), (300, 300));
        let scale = dense.norm_max() * x.nrows() as f64;
        // Single vector.
        let v = Col::from_fn(300, |i| ((i as f64) * 0.7).sin());
        let y = op.apply(v.as_ref()).unwrap();
        assert!(
            (&y - &dense * &v).norm_max() <= 1e-13 * scale,
            "{name}: apply"
        );
        // Blocks of 1, 3 and 16 right-hand sides.
        for r in [1, 3, 16] {
            let b = Mat::from_fn(300, r, |i, j| ((i * (j + 1)) as f64 * 0.31).cos());
            let got = op.apply_block(b.as_ref()).unwrap();
            let want = &dense * &b;
            assert!(
                (&got - &want).norm_max() <= 1e-13 * scale,
                "{name}: apply_block r = {r}"
            );
        }
        // Diagonal.
        let d = op.diagonal().unwrap();
        for i in 0..x.nrows() {
            assert!(
                (d[i] - dense[(i, i)]).abs() <= 1e-15 * dense[(i, i)],
                "{name}: diagonal"
            );
        }
    }
}

#[test]
fn cross_operator_matches_dense() {
    let x = pts(150);
    let z = Mat::from_fn(140, 2, |i, j| ((i * (5 + j)) as f64 * 0.1234).fract() * 4.0);
    for (name, kernel) in common::all_kernels() {
        let dense = kernel.matrix(x.as_ref(), z.as_ref()).unwrap();
        let op = KernelOperator::cross(&kernel, x.as_ref(), z.as_ref()).unwrap();
        assert_eq!(op.shape(), (150, 140));
        assert!(op.diagonal().is_none());
        let b = Mat::from_fn(140, 3, |i, j| (i as f64 - j as f64 * 10.0) / 50.0);
        let got = op.apply_block(b.as_ref()).unwrap();
        assert!((&got - &dense * &b).norm_max() <= 1e-12, "{name}");
    }
}

#[test]
fn shape_errors_are_typed() {
    let kernel = SquaredExponential::new(vec![1.0, 1.0], 1.0).unwrap();
    let x = pts(10);
    let op = KernelOperator::new(kernel, x.as_ref(), 0.0).unwrap();
    let bad = Col::<f64>::zeros(9);
    assert!(matches!(
        op.apply(bad.as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    let bad = Mat::<f64>::zeros(11, 2);
    assert!(matches!(
        op.apply_block(bad.as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    let mut out = Col::<f64>::zeros(3);
    assert!(op
        .apply_into(Col::<f64>::zeros(10).as_ref(), out.as_mut())
        .is_err());
    // Zero columns is fine.
    assert_eq!(
        op.apply_block(Mat::<f64>::zeros(10, 0).as_ref())
            .unwrap()
            .ncols(),
        0
    );
}

#[test]
fn constructor_errors_are_typed() {
    let kernel = SquaredExponential::new(vec![1.0, 1.0], 1.0).unwrap();
    let x = pts(10);
    for noise in [-1e-3, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            KernelOperator::new(&kernel, x.as_ref(), noise),
            Err(KernelError::InvalidHyperparameter { .. })
        ));
    }
    let x3 = Mat::<f64>::zeros(10, 3);
    assert!(matches!(
        KernelOperator::new(&kernel, x3.as_ref(), 0.1),
        Err(KernelError::InputDim {
            expected: 2,
            found: 3,
            ..
        })
    ));
    let empty = Mat::<f64>::zeros(0, 2);
    assert!(matches!(
        KernelOperator::new(&kernel, empty.as_ref(), 0.1),
        Err(KernelError::InvalidArgument { .. })
    ));
    let mut nan = pts(10);
    nan[(4, 1)] = f64::NAN;
    assert!(matches!(
        KernelOperator::new(&kernel, nan.as_ref(), 0.1),
        Err(KernelError::Linalg(LinalgError::NonFinite {
            row: 4,
            col: 1,
            ..
        }))
    ));
    assert!(KernelOperator::cross(&kernel, x.as_ref(), nan.as_ref()).is_err());
    assert!(KernelOperator::cross(&kernel, x.as_ref(), empty.as_ref()).is_err());
    assert!(KernelOperator::cross(&kernel, x3.as_ref(), x.as_ref()).is_err());
}

#[test]
fn operator_is_usable_as_trait_object() {
    let kernel: Box<dyn Kernel> = Box::new(SquaredExponential::new(vec![0.5, 0.5], 2.0).unwrap());
    let x = pts(5);
    let op: Box<dyn LinearOperator> =
        Box::new(KernelOperator::new(kernel, x.as_ref(), 0.5).unwrap());
    let dense = op.to_dense();
    assert!((dense[(2, 2)] - 2.5).abs() < 1e-15);
}
