//! Error messages say what a model's user can change, in plain words.

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::prelude::*;

#[test]
fn outside_grid_advice_names_the_model_options() {
    let x = Mat::from_fn(30, 1, |i, _| i as f64 / 10.0);
    let y = Col::from_fn(30, |i| (i as f64 / 10.0).sin());
    let options = SkiOptions {
        grid: GridSettings {
            sizes: vec![40],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let kernel = SquaredExponential::new(vec![0.5], 1.0).unwrap();
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.01, &options).unwrap();
    let far = Mat::from_fn(1, 1, |_, _| 50.0);
    let err = ski.predict_mean(far.as_ref()).unwrap_err();
    assert!(matches!(err, ModelError::OutsideGrid { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.starts_with("the test points: point 0"), "{text}");
    assert!(
        text.contains("grid.padding") && text.contains("grid.bounds"),
        "{text}"
    );
    assert!(text.contains("OutOfGrid::Clamp"), "{text}");
    assert!(!text.contains("RegularGrid::from_data"), "{text}");
}

#[test]
fn non_finite_input_message_reads_as_a_sentence() {
    let x = Mat::from_fn(5, 1, |i, _| i as f64);
    let y = Col::from_fn(5, |i| i as f64);
    let kernel = SquaredExponential::new(vec![1.0], 1.0).unwrap();
    let gp = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.1).unwrap();
    let bad = Mat::from_fn(2, 1, |i, _| if i == 1 { f64::NAN } else { 0.0 });
    let text = gp.predict_mean(bad.as_ref()).unwrap_err().to_string();
    assert!(
        text.starts_with("the test points: non-finite value (NaN) at row 1, column 0"),
        "{text}"
    );
}
