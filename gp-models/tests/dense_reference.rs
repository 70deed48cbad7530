//! Predictions and the log marginal likelihood against an independent dense computation
//! (naive Cholesky and substitutions written in `common`), to 1e-10 relative.

use crate::common;

use common::*;
use faer::Mat;
use gp_kernels::SquaredExponential;
use gp_models::{ExactGp, FitOptions};
use gp_models::{GpModel, PredictRequest};

const LS: [f64; 2] = [0.7, 1.3];
const VAR: f64 = 1.7;
const NOISE: f64 = 0.05;

struct Reference {
    mean: Vec<f64>,
    latent_var: Vec<f64>,
    cov: Dense,
    lml: f64,
}

fn reference(x: &[Vec<f64>], y: &[f64], xt: &[Vec<f64>], mean_const: f64) -> Reference {
    let n = x.len();
    let mut a = se_matrix(x, x, &LS, VAR);
    for (i, row) in a.iter_mut().enumerate() {
        row[i] += NOISE;
    }
    let l = naive_cholesky(&a);
    let yc: Vec<f64> = y.iter().map(|v| v - mean_const).collect();
    let alpha = spd_solve(&l, &yc);
    let log_det: f64 = 2.0 * (0..n).map(|i| l[i][i].ln()).sum::<f64>();
    let lml = -0.5 * dot(&yc, &alpha)
        - 0.5 * log_det
        - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
    let kxs = se_matrix(xt, x, &LS, VAR); // m × n
    let mean = kxs.iter().map(|k| mean_const + dot(k, &alpha)).collect();
    let v: Vec<Vec<f64>> = kxs.iter().map(|k| forward(&l, k)).collect(); // rows: L⁻¹ k*
    let kss = se_matrix(xt, xt, &LS, VAR);
    let m = xt.len();
    let cov: Dense = (0..m)
        .map(|i| (0..m).map(|j| kss[i][j] - dot(&v[i], &v[j])).collect())
        .collect();
    let latent_var = (0..m).map(|i| cov[i][i]).collect();
    Reference {
        mean,
        latent_var,
        cov,
        lml,
    }
}

fn check(constant_mean: bool) {
    let (x, mut y) = toy_data(48, 2, 4.0, 11);
    if constant_mean {
        for i in 0..y.nrows() {
            y[i] += 3.0;
        }
    }
    let (xt, _) = toy_data(17, 2, 5.0, 12);
    let kernel = SquaredExponential::new(LS.to_vec(), VAR).unwrap();
    let opts = FitOptions {
        constant_mean,
        ..FitOptions::default()
    };
    let gp = ExactGp::fit_with_options(kernel, x.as_ref(), y.as_ref(), NOISE, &opts).unwrap();
    assert_eq!(gp.jitter(), 0.0);
    let yv = col_vec(&y);
    let mean_const = if constant_mean {
        yv.iter().sum::<f64>() / yv.len() as f64
    } else {
        0.0
    };
    assert!((gp.prior_mean() - mean_const).abs() < 1e-14);
    let r = reference(&rows(&x), &yv, &rows(&xt), mean_const);

    let mean = col_vec(&gp.predict_mean(xt.as_ref()).unwrap());
    assert_close(&mean, &r.mean, 1e-10, 1e-300, "mean");
    // Variances are compared relative to the prior variance: the latent variance near the
    // data is a small difference of O(VAR) numbers, and that is its natural scale.
    let lv = col_vec(&gp.predict_latent_variance(xt.as_ref()).unwrap());
    assert_close(&lv, &r.latent_var, 1e-10, VAR, "latent variance");
    let pv = col_vec(&gp.predict_variance(xt.as_ref()).unwrap());
    let ref_pv: Vec<f64> = r.latent_var.iter().map(|v| v + NOISE).collect();
    assert_close(&pv, &ref_pv, 1e-10, VAR, "predictive variance");

    let pred = gp.predict(xt.as_ref(), &PredictRequest::default()).unwrap();
    assert_eq!(col_vec(&pred.mean), mean);
    assert_eq!(col_vec(&pred.latent_variance), lv);
    assert_eq!(col_vec(&pred.variance), pv);

    let cov = gp.predict_covariance(xt.as_ref()).unwrap();
    let m = xt.nrows();
    for i in 0..m {
        let row: Vec<f64> = (0..m).map(|j| cov[(i, j)]).collect();
        assert_close(&row, &r.cov[i], 1e-10, VAR, "covariance row");
        for j in 0..m {
            assert_eq!(cov[(i, j)], cov[(j, i)], "covariance must be symmetric");
        }
        assert!((cov[(i, i)] - lv[i]).abs() <= 1e-12 * VAR);
    }

    let lml = gp.log_marginal_likelihood();
    assert!(
        (lml - r.lml).abs() <= 1e-10 * r.lml.abs(),
        "lml {lml} vs reference {}",
        r.lml
    );
    let (lml2, _) = gp.lml_and_grad();
    assert_eq!(lml, lml2);
}

#[test]
fn zero_mean_matches_dense_reference() {
    check(false);
}

#[test]
fn constant_mean_matches_dense_reference() {
    check(true);
}

#[test]
fn predictions_span_several_blocks() {
    // More test points than one prediction block: the blocked path must agree with a
    // single-point prediction at every row.
    let (x, y) = toy_data(30, 1, 3.0, 5);
    let gp = ExactGp::fit(
        SquaredExponential::new(vec![0.5], 1.0).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.01,
    )
    .unwrap();
    let m = gp_models::exact::PREDICT_BLOCK + 7;
    let xt = Mat::from_fn(m, 1, |i, _| i as f64 * 3.0 / m as f64);
    let pred = gp.predict(xt.as_ref(), &PredictRequest::default()).unwrap();
    for i in [
        0,
        1,
        gp_models::exact::PREDICT_BLOCK - 1,
        gp_models::exact::PREDICT_BLOCK,
        m - 1,
    ] {
        let one = gp
            .predict(xt.as_ref().subrows(i, 1), &PredictRequest::default())
            .unwrap();
        assert!((one.mean[0] - pred.mean[i]).abs() < 1e-12);
        assert!((one.latent_variance[0] - pred.latent_variance[i]).abs() < 1e-12);
    }
}

#[test]
fn empty_test_matrix_gives_empty_predictions() {
    let (x, y) = toy_data(10, 2, 3.0, 5);
    let gp = ExactGp::fit(
        SquaredExponential::new(vec![0.5, 0.5], 1.0).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.01,
    )
    .unwrap();
    let xt = Mat::<f64>::zeros(0, 2);
    assert_eq!(gp.predict_mean(xt.as_ref()).unwrap().nrows(), 0);
    assert_eq!(gp.predict_covariance(xt.as_ref()).unwrap().nrows(), 0);
}
