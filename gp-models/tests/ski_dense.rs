//! The SKI model against the dense SKI computation: the operator against dense
//! `W K_G Wᵀ + σ²I`, and mean, variance, covariance and log marginal likelihood against
//! Cholesky of that same matrix, for d = 1 and d = 2.

use crate::ski_support;

use faer::{Col, Mat};
use gp_kernels::{FactorKind, MaternNu, ProductKernel, SquaredExponential};
use gp_linalg::LinearOperator;
use gp_models::EstimatorSettings;
use gp_models::{GpModel, PredictRequest};
use gp_models::{Ski, SkiOptions};
use gp_solvers::Probes;
use ski_support::{data, dense_kg, test_points, tight, DenseSki};

fn model_1d() -> Ski<SquaredExponential> {
    let (x, y) = data(150, 1, 4.0, 1);
    let kernel = SquaredExponential::new(vec![0.6], 1.3).unwrap();
    Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &tight(vec![40])).unwrap()
}

fn model_2d() -> Ski<SquaredExponential> {
    let (x, y) = data(200, 2, 2.0, 2);
    let kernel = SquaredExponential::new(vec![0.5, 0.7], 0.9).unwrap();
    Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &tight(vec![20, 25])).unwrap()
}

#[test]
fn grid_kernel_matches_dense_kernel_on_grid() {
    for ski in [model_1d(), model_2d()] {
        let dense = dense_kg(ski.kernel(), ski.grid());
        let kg = ski.grid_kernel().operator().to_dense();
        assert!((&kg - &dense).norm_max() < 1e-12, "K_G vs dense");
        let m = ski.grid().num_points();
        for (a, b) in [(0, 0), (1, m - 1), (m / 2, m / 3), (m - 1, 7)] {
            assert!((ski.grid_kernel().entry(a, b) - dense[(a, b)]).abs() < 1e-14);
        }
    }
}

#[test]
fn operator_matches_dense_ski_matrix() {
    for ski in [model_1d(), model_2d()] {
        let dense = DenseSki::new(&ski);
        let op = ski.operator();
        let n = ski.n_train();
        assert_eq!(op.shape(), (n, n));
        let v = Mat::from_fn(n, 3, |i, j| ((i * 7 + j * 13) % 11) as f64 - 5.0);
        let got = op.apply_block(v.as_ref()).unwrap();
        let want = &dense.khat * &v;
        let scale = want.norm_max();
        assert!((&got - &want).norm_max() < 1e-12 * scale, "block product");
        let got1 = op.apply(v.col(1)).unwrap();
        assert!(
            (&got1 - want.col(1)).norm_max() < 1e-12 * scale,
            "vector product"
        );
        // Every interior row of W sums to one (cubic, padded grid).
        let w = ski_support::dense_w(ski.interpolation());
        for i in 0..n {
            let s: f64 = (0..w.ncols()).map(|j| w[(i, j)]).sum();
            assert!((s - 1.0).abs() < 1e-12);
        }
    }
}

#[test]
fn mean_variance_and_covariance_match_dense_ski() {
    for (ski, hi) in [(model_1d(), 4.0), (model_2d(), 2.0)] {
        let d = ski.input_dim();
        let dense = DenseSki::new(&ski);
        let xt = test_points(25, d, 0.0, hi, 9);
        let mean = ski.predict_mean(xt.as_ref()).unwrap();
        let want = dense.mean(xt.as_ref());
        assert!(ski.alpha_report().unwrap().converged);
        // CG to a relative residual of 1e-11 with a condition number below 1e4.
        assert!(
            (&mean - &want).norm_max() < 1e-6 * want.norm_max().max(1.0),
            "mean"
        );
        // The grid cache: w*ᵀ a.
        assert_eq!(
            ski.grid_mean_cache().unwrap().nrows(),
            ski.grid().num_points()
        );
        let alpha = ski.alpha().unwrap();
        assert!((alpha - &dense.alpha).norm_max() < 1e-6 * dense.alpha.norm_max());

        let cov = dense.covariance(xt.as_ref());
        let var = ski.predict_latent_variance(xt.as_ref()).unwrap();
        for i in 0..25 {
            assert!((var[i] - cov[(i, i)].max(0.0)).abs() < 1e-7, "variance {i}");
        }
        let pred = ski
            .predict(xt.as_ref(), &PredictRequest::default())
            .unwrap();
        for i in 0..25 {
            assert!((pred.variance[i] - var[i] - 0.05).abs() < 1e-12);
        }
        let full = ski.predict_latent_covariance(xt.as_ref()).unwrap();
        assert!((&full - &cov).norm_max() < 1e-7, "covariance");
    }
}

#[test]
fn lml_with_complete_probes_is_exact() {
    for ski in [model_1d(), model_2d()] {
        let dense = DenseSki::new(&ski);
        let n = ski.n_train();
        // z_i = √n e_i: E-free, the traces and the quadrature are exact sums.
        let z = Mat::from_fn(n, n, |i, j| if i == j { (n as f64).sqrt() } else { 0.0 });
        let probes = Probes::from_matrix(z, None).unwrap();
        let est = ski.lml_and_grad_estimate_with_probes(probes).unwrap();
        assert!(est.solve.converged);
        let want = dense.lml();
        assert!(
            (est.lml - want).abs() < 1e-6 * want.abs().max(1.0),
            "lml {} vs dense {want}",
            est.lml
        );
        let fit = dense.y.transpose() * &dense.alpha;
        assert!((est.data_fit - fit).abs() < 1e-7 * fit.abs());
    }
}

#[test]
fn lml_with_random_probes_is_within_its_standard_error() {
    for ski in [model_1d(), model_2d()] {
        let dense = DenseSki::new(&ski);
        let opts = SkiOptions {
            estimator: EstimatorSettings {
                probes: 30,
                ..(ski.options().clone()).estimator
            },
            ..ski.options().clone()
        };
        let x = ski.train_x().to_owned();
        let y: Col<f64> = ski.train_y().to_owned();
        let model = Ski::fit(ski.kernel().clone(), x.as_ref(), y.as_ref(), 0.05, &opts).unwrap();
        let est = model.lml_estimate().unwrap();
        assert!(est.grad.is_empty());
        let want = dense.lml();
        assert!(est.lml_std_error > 0.0);
        assert!(
            (est.lml - want).abs() < 4.0 * est.lml_std_error + 1e-6,
            "lml {} ± {} vs dense {want}",
            est.lml,
            est.lml_std_error
        );
        // Same seed, same estimate.
        let again = model.lml_estimate().unwrap();
        assert_eq!(est.lml, again.lml);
    }
}

#[test]
fn product_kernel_with_matern_factors_matches_dense() {
    let (x, y) = data(120, 2, 2.0, 5);
    let kernel = ProductKernel::new(
        vec![
            FactorKind::Matern(MaternNu::FiveHalves),
            FactorKind::SquaredExponential,
        ],
        vec![0.8, 0.6],
        1.1,
    )
    .unwrap();
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.1, &tight(vec![18, 16])).unwrap();
    let dense = DenseSki::new(&ski);
    let xt = test_points(10, 2, 0.0, 2.0, 3);
    let mean = ski.predict_mean(xt.as_ref()).unwrap();
    let want = dense.mean(xt.as_ref());
    assert!((&mean - &want).norm_max() < 1e-6 * want.norm_max().max(1.0));
    let kg = ski.grid_kernel().operator().to_dense();
    assert!((&kg - &dense.kg).norm_max() < 1e-12);
}
