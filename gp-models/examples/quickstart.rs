//! The README's fit/train/predict example: `cargo run --release -p gp-models --example quickstart`.

use gp_kernels::SquaredExponential;
use gp_models::faer::{Col, Mat};
use gp_models::prelude::*;

fn main() -> Result<(), ModelError> {
    // 100 noisy observations of sin(x) on [0, 10].
    let x = Mat::from_fn(100, 1, |i, _| i as f64 * 0.1);
    let y = Col::from_fn(100, |i| {
        (i as f64 * 0.1).sin() + 0.05 * ((i * 7 % 11) as f64 - 5.0) / 5.0
    });
    let kernel = SquaredExponential::new(vec![0.5], 1.0)?;
    let model = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.1)?; // or Ski, Gsgp, IterativeGp
    let trained = train(&model, &TrainOptions::default())?; // L-BFGS on the exact LML
    println!("{trained}"); // a short summary
    let x_test = Mat::from_fn(3, 1, |i, _| 2.0 + 3.0 * i as f64);
    let p = trained
        .model
        .predict(x_test.as_ref(), &PredictRequest::default())?;
    println!("mean {:?}, variance {:?}", p.mean, p.variance);
    Ok(())
}
