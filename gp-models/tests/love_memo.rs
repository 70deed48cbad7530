//! The LOVE cache a grid model's predictions build is kept between `predict` calls with the
//! same rank, and never outlives the hyperparameters it was built at.

use faer::Mat;
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::prelude::*;
use gp_models::VarianceSource;

use crate::common::toy_data;

fn love(rank: usize) -> PredictRequest {
    PredictRequest::variance(VarianceMethod::Love { rank })
}

#[test]
fn repeated_love_predictions_agree_and_follow_new_hyperparameters() {
    let (x, y) = toy_data(300, 1, 4.0, 3);
    let options = SkiOptions {
        grid: GridSettings {
            sizes: vec![60],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let kernel = SquaredExponential::new(vec![0.7], 1.0).unwrap();
    let ski = Ski::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.05, &options).unwrap();
    let gsgp_options = GsgpOptions {
        grid: options.grid.clone(),
        ..GsgpOptions::default()
    };
    let gsgp = Gsgp::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &gsgp_options).unwrap();
    let x_test = Mat::from_fn(9, 1, |i, _| 0.2 + 0.4 * i as f64);
    let x_more = Mat::from_fn(4, 1, |i, _| 0.5 + 0.7 * i as f64);
    check(&ski, &x_test, &x_more);
    check(&gsgp, &x_test, &x_more);
}

fn check<M: GpModel>(model: &M, x_test: &Mat<f64>, x_more: &Mat<f64>) {
    let first = model.predict(x_test.as_ref(), &love(20)).unwrap();
    // Other test points in between (the kept cache serves them), then the first again.
    let more = model.predict(x_more.as_ref(), &love(20)).unwrap();
    let again = model.predict(x_test.as_ref(), &love(20)).unwrap();
    assert_eq!(first.latent_variance, again.latent_variance);
    assert_eq!(first.variance_source, again.variance_source);
    // A different rank is a different cache.
    let other_rank = model.predict(x_test.as_ref(), &love(10)).unwrap();
    assert_eq!(
        other_rank.variance_source,
        Some(VarianceSource::Love { rank: 10 })
    );
    // Back to the first rank: the same answers as before.
    let more_again = model.predict(x_more.as_ref(), &love(20)).unwrap();
    assert_eq!(more.latent_variance, more_again.latent_variance);
    // A rebuilt model answers as a fresh one does, not from the old cache.
    let mut params = model.log_params();
    params[0] += 0.3;
    let moved = model.with_log_params(&params).unwrap();
    let fresh = model
        .with_log_params(&params)
        .unwrap()
        .predict(x_test.as_ref(), &love(20))
        .unwrap();
    let _ = moved.predict(x_more.as_ref(), &love(20)).unwrap();
    let after = moved.predict(x_test.as_ref(), &love(20)).unwrap();
    assert_eq!(after.latent_variance, fresh.latent_variance);
    assert_ne!(after.latent_variance, first.latent_variance);
}
