//! The exact GP checks its `n × n` matrices against a memory limit before allocating them.

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::prelude::*;

fn data(n: usize) -> (Mat<f64>, Col<f64>) {
    let x = Mat::from_fn(n, 1, |i, _| i as f64 / n as f64);
    let y = Col::from_fn(n, |i| (i as f64 / n as f64 * 6.0).sin());
    (x, y)
}

#[test]
fn a_fit_too_large_for_memory_is_a_typed_error_not_an_abort() {
    // 200 000 points: two 320 GB matrices. The default limit (MemAvailable) refuses them
    // before anything of size n × n exists.
    let (x, y) = data(200_000);
    let kernel = SquaredExponential::new(vec![0.1], 1.0).unwrap();
    let err = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.01).unwrap_err();
    match &err {
        ModelError::DenseTooLarge {
            n,
            matrices,
            estimated_bytes,
            ..
        } => {
            assert_eq!((*n, *matrices), (200_000, 2));
            assert_eq!(*estimated_bytes, 2 * 8 * 200_000u128 * 200_000);
        }
        other => panic!("{other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("GiB") || text.contains("TiB"), "{text}");
    assert!(text.contains("IterativeGp"), "{text}");
}

#[test]
fn the_limit_option_bounds_fit_and_training_separately() {
    let (x, y) = data(20);
    let kernel = SquaredExponential::new(vec![0.3], 1.0).unwrap();
    let fit = |limit: u64| {
        let options = FitOptions {
            memory_limit: Some(limit),
            ..FitOptions::default()
        };
        ExactGp::fit_with_options(kernel.clone(), x.as_ref(), y.as_ref(), 0.01, &options)
    };
    // A fit holds 2 matrices of 20 × 20 × 8 = 3200 bytes.
    assert!(matches!(
        fit(6399),
        Err(ModelError::DenseTooLarge { matrices: 2, .. })
    ));
    let model = fit(6400).unwrap();
    // Training needs three more; the first evaluation refuses them.
    let err = train(&model, &TrainOptions::default()).unwrap_err();
    assert!(
        matches!(err, ModelError::DenseTooLarge { matrices: 3, .. }),
        "{err:?}"
    );
    assert!(train(&fit(9600).unwrap(), &TrainOptions::default()).is_ok());
}
