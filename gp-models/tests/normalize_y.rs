//! `NormalizedY` (scikit-learn's `normalize_y`): a model of `z = (y − ȳ)/s` with kernel `k`
//! and noise `σ²` is the GP on `y` with prior mean `ȳ`, kernel `s²k` and noise `s²σ²`. The
//! reference is that GP fitted directly by `ExactGp` (constant mean = the sample mean).

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::data::NormalizedY;
use gp_models::prelude::*;

fn data() -> (Mat<f64>, Col<f64>) {
    let x = Mat::from_fn(30, 1, |i, _| i as f64 * 0.3);
    let y = Col::from_fn(30, |i| {
        let t = i as f64 * 0.3;
        500.0 + 40.0 * t.sin() + 3.0 * ((i * 7 % 11) as f64 - 5.0) / 5.0
    });
    (x, y)
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

#[test]
fn normalized_model_is_the_scaled_gp_on_the_original_targets() {
    let (x, y) = data();
    let (ell, sf2, noise) = (0.8, 1.3, 0.02);
    let model = NormalizedY::fit(y.as_ref(), |z| {
        ExactGp::fit(
            SquaredExponential::new(vec![ell], sf2)?,
            x.as_ref(),
            z,
            noise,
        )
    })
    .unwrap();
    let (m, s) = (model.y_mean(), model.y_std());
    let mean = y.iter().sum::<f64>() / 30.0;
    let sd = (y.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 30.0).sqrt();
    assert!(rel(m, mean) < 1e-15 && rel(s, sd) < 1e-15);

    let reference = ExactGp::fit_with_options(
        SquaredExponential::new(vec![ell], s * s * sf2).unwrap(),
        x.as_ref(),
        y.as_ref(),
        s * s * noise,
        &FitOptions {
            constant_mean: true,
            ..FitOptions::default()
        },
    )
    .unwrap();

    let x_test = Mat::from_fn(7, 1, |i, _| 0.4 + 1.3 * i as f64);
    let request = PredictRequest::covariance(VarianceMethod::Exact);
    let a = model.predict(x_test.as_ref(), &request).unwrap();
    let b = reference.predict(x_test.as_ref(), &request).unwrap();
    for i in 0..7 {
        assert!(rel(a.mean[i], b.mean[i]) < 1e-12, "mean {i}");
        assert!(
            rel(a.latent_variance[i], b.latent_variance[i]) < 1e-9,
            "latent variance {i}"
        );
        assert!(rel(a.variance[i], b.variance[i]) < 1e-11, "variance {i}");
    }
    let (ca, cb) = (a.latent_covariance.unwrap(), b.latent_covariance.unwrap());
    let cov_err = (&ca - &cb).norm_max() / cb.norm_max();
    assert!(cov_err < 1e-10, "covariance {cov_err:e}");
    // The latent path maps the same way.
    let la = model.predict_latent(x_test.as_ref(), &request).unwrap();
    assert!((&la.mean - &a.mean).norm_max() < 1e-9);

    // The evidence of y itself, and the same gradient (d/d log(s²a) = d/d log a).
    let ea = model.lml(&LmlRequest::with_gradient()).unwrap();
    let eb = reference.lml(&LmlRequest::with_gradient()).unwrap();
    assert!(rel(ea.lml, eb.lml) < 1e-11, "{} vs {}", ea.lml, eb.lml);
    assert!(rel(ea.log_det.value, eb.log_det.value) < 1e-11);
    for (ga, gb) in ea.grad.iter().zip(&eb.grad) {
        assert!((ga - gb).abs() < 1e-9 * (1.0 + gb.abs()), "{ga} vs {gb}");
    }
    // The inner model's evidence is that of the normalized targets (scikit-learn's value).
    let inner = model.inner().lml(&LmlRequest::value()).unwrap();
    assert!(rel(inner.lml - 30.0 * s.ln(), ea.lml) < 1e-12);
}

#[test]
fn training_through_the_wrapper_finds_the_inner_optimum() {
    // The objectives differ by a constant, so L-BFGS takes the same steps up to the rounding
    // of the line search's comparisons, which the constant shifts.
    let (x, y) = data();
    let model = NormalizedY::fit(y.as_ref(), |z| {
        ExactGp::fit(SquaredExponential::new(vec![1.0], 1.0)?, x.as_ref(), z, 0.1)
    })
    .unwrap();
    let options = TrainOptions::default();
    let wrapped = train(&model, &options).unwrap();
    let inner = train(model.inner(), &options).unwrap();
    for (a, b) in wrapped
        .model
        .log_params()
        .iter()
        .zip(inner.model.log_params())
    {
        assert!((a - b).abs() < 1e-9 * (1.0 + b.abs()), "{a} vs {b}");
    }
    assert_eq!(wrapped.model.y_mean(), model.y_mean());
    let text = wrapped.to_string();
    assert!(text.contains("targets normalized"), "{text}");
}

#[test]
fn normalized_ski_predicts_in_original_units() {
    let (x, y) = data();
    let options = SkiOptions {
        grid: GridSettings {
            sizes: vec![80],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let kernel = SquaredExponential::new(vec![0.8], 1.0).unwrap();
    let model = NormalizedY::fit(y.as_ref(), |z| {
        Ski::fit(kernel.clone(), x.as_ref(), z, 0.02, &options)
    })
    .unwrap();
    let inner = Ski::fit(kernel, x.as_ref(), model.inner().train_y(), 0.02, &options).unwrap();
    let a = model
        .predict(x.as_ref(), &PredictRequest::default())
        .unwrap();
    let b = inner
        .predict(x.as_ref(), &PredictRequest::default())
        .unwrap();
    let s = model.y_std();
    let s2 = s * s;
    for i in 0..30 {
        assert_eq!(a.mean[i], model.y_mean() + s * b.mean[i]);
        assert_eq!(a.variance[i], b.variance[i] * s2);
    }
    // Fitted in original units, the mean follows the data.
    let worst = (0..30)
        .map(|i| (a.mean[i] - y[i]).abs())
        .fold(0.0, f64::max);
    assert!(worst < 5.0, "{worst}");
}

#[test]
fn bad_targets_are_typed_errors() {
    let x = Mat::<f64>::zeros(0, 1);
    let empty = Col::<f64>::zeros(0);
    let fit = |z: faer::ColRef<'_, f64>| {
        ExactGp::fit(SquaredExponential::new(vec![1.0], 1.0)?, x.as_ref(), z, 0.1)
    };
    assert!(matches!(
        NormalizedY::fit(empty.as_ref(), fit),
        Err(ModelError::EmptyData { .. })
    ));
    let nan = Col::from_fn(3, |i| if i == 1 { f64::NAN } else { 1.0 });
    let x3 = Mat::from_fn(3, 1, |i, _| i as f64);
    let err = NormalizedY::fit(nan.as_ref(), |z| {
        ExactGp::fit(
            SquaredExponential::new(vec![1.0], 1.0)?,
            x3.as_ref(),
            z,
            0.1,
        )
    })
    .unwrap_err();
    assert!(matches!(err, ModelError::NonFinite { .. }), "{err:?}");
    // A fit that returns a model of other data is refused.
    let y4 = Col::from_fn(4, |i| i as f64);
    let err = NormalizedY::fit(y4.as_ref(), |_| {
        ExactGp::fit(
            SquaredExponential::new(vec![1.0], 1.0)?,
            x3.as_ref(),
            Col::from_fn(3, |i| i as f64).as_ref(),
            0.1,
        )
    })
    .unwrap_err();
    assert!(matches!(err, ModelError::LengthMismatch { .. }), "{err:?}");
}
