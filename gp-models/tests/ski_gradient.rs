//! The SKI gradient estimate against finite differences of the dense SKI log marginal
//! likelihood (same grid, same `W`), exactly with complete probes and within the reported
//! standard errors with random probes; and training.

use crate::ski_support;

use faer::{Col, Mat};
use gp_kernels::{FactorKind, Kernel, MaternNu, ProductKernel, SquaredExponential};
use gp_models::grid::GridSettings;
use gp_models::EstimatorSettings;
use gp_models::{AdamOptions, Optimizer, Ski, SkiOptions, TrainOptions};
use gp_solvers::Probes;
use ski_support::{data, dense_kg, dense_w, tight, DenseSki};

/// The dense SKI LML at log hyperparameters `p`, on the grid and `W` of `ski`.
fn dense_lml<K: Kernel + Clone>(ski: &Ski<K>, p: &[f64]) -> f64 {
    let mut kernel = ski.kernel().clone();
    let k = kernel.n_params();
    kernel.set_log_params(&p[..k]).unwrap();
    let w = dense_w(ski.interpolation());
    let kg = dense_kg(&kernel, ski.grid());
    let y: Col<f64> = ski.train_y().to_owned();
    DenseSki::from_parts(w, kg, p[k].exp(), y, ski.grid().clone()).lml()
}

fn finite_differences<K: Kernel + Clone>(ski: &Ski<K>) -> Vec<f64> {
    let p0 = ski.log_params();
    let h = 1e-5;
    (0..p0.len())
        .map(|i| {
            let (mut a, mut b) = (p0.clone(), p0.clone());
            a[i] += h;
            b[i] -= h;
            (dense_lml(ski, &a) - dense_lml(ski, &b)) / (2.0 * h)
        })
        .collect()
}

fn complete_probes(n: usize) -> Probes {
    let z = Mat::from_fn(n, n, |i, j| if i == j { (n as f64).sqrt() } else { 0.0 });
    Probes::from_matrix(z, None).unwrap()
}

#[test]
fn gradient_with_complete_probes_matches_finite_differences() {
    // d = 1 (SE) and d = 2 (product of Matérn-3/2 and SE factors).
    let (x1, y1) = data(60, 1, 3.0, 21);
    let se = SquaredExponential::new(vec![0.7], 1.2).unwrap();
    let ski1 = Ski::fit(se, x1.as_ref(), y1.as_ref(), 0.08, &tight(vec![30])).unwrap();
    let (x2, y2) = data(70, 2, 2.0, 22);
    let prod = ProductKernel::new(
        vec![
            FactorKind::Matern(MaternNu::ThreeHalves),
            FactorKind::SquaredExponential,
        ],
        vec![0.9, 0.6],
        0.8,
    )
    .unwrap();
    let ski2 = Ski::fit(prod, x2.as_ref(), y2.as_ref(), 0.1, &tight(vec![16, 14])).unwrap();

    let check = |est: &gp_models::LmlEstimate, fd: &[f64], names: Vec<String>| {
        assert_eq!(est.grad.len(), fd.len());
        for (i, (g, f)) in est.grad.iter().zip(fd).enumerate() {
            assert!(
                (g - f).abs() < 1e-5 * f.abs().max(1.0),
                "{}: estimate {g} vs finite difference {f}",
                names[i]
            );
        }
    };
    let est1 = ski1
        .lml_and_grad_estimate_with_probes(complete_probes(60))
        .unwrap();
    check(&est1, &finite_differences(&ski1), ski1.param_names());
    let est2 = ski2
        .lml_and_grad_estimate_with_probes(complete_probes(70))
        .unwrap();
    check(&est2, &finite_differences(&ski2), ski2.param_names());
}

#[test]
fn gradient_with_random_probes_is_within_its_standard_errors() {
    let (x, y) = data(150, 2, 2.0, 23);
    let kernel = SquaredExponential::new(vec![0.5, 0.8], 1.0).unwrap();
    let opts = SkiOptions {
        estimator: EstimatorSettings {
            probes: 40,
            ..(tight(vec![20, 20])).estimator
        },
        ..tight(vec![20, 20])
    };
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &opts).unwrap();
    let fd = finite_differences(&ski);
    let est = ski.lml_and_grad_estimate().unwrap();
    for (i, (g, f)) in est.grad.iter().zip(&fd).enumerate() {
        let se = est.grad_std_error[i];
        assert!(se.is_finite() && se > 0.0);
        assert!(
            (g - f).abs() < 4.0 * se + 1e-5 * f.abs().max(1.0),
            "parameter {i}: {g} ± {se} vs {f}"
        );
    }
    // The standard error says something: a different seed moves the estimate by about it.
    let other = ski.lml_and_grad_estimate_with_seed(99).unwrap();
    assert_ne!(other.grad, est.grad);
}

#[test]
fn training_increases_the_dense_ski_likelihood() {
    let (x, y) = data(200, 1, 5.0, 31);
    let kernel = SquaredExponential::new(vec![2.0], 0.3).unwrap();
    let opts = SkiOptions {
        grid: GridSettings {
            sizes: vec![60],
            ..GridSettings::default()
        },
        estimator: EstimatorSettings {
            probes: 10,
            ..EstimatorSettings::default()
        },
        ..SkiOptions::default()
    };
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.5, &opts).unwrap();
    let before = dense_lml(&ski, &ski.log_params());
    let train = TrainOptions {
        optimizer: Optimizer::Adam(AdamOptions {
            learning_rate: 0.1,
            iterations: 60,
            ..AdamOptions::default()
        }),
        ..TrainOptions::default()
    };
    let trained = gp_models::train(&ski, &train).unwrap();
    let p = trained.model.log_params();
    let after = dense_lml(&ski, &p);
    eprintln!("dense SKI LML {before} -> {after}, params {p:?}");
    assert!(after > before + 50.0, "{before} -> {after}");
    // The data: sin(2x) plus noise of variance 0.01: shorter length scale, smaller noise.
    assert!(p[0] < 2f64.ln() && p[2] < 0.5f64.ln());
    // The trained model still predicts (grid and W are kept).
    assert_eq!(trained.model.grid(), ski.grid());
}
