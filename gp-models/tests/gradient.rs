//! The gradient of the log marginal likelihood: against central finite differences for
//! every log hyperparameter (ARD length scales, variance, noise), and against the dense
//! formula ½ tr((ααᵀ − A⁻¹) ∂A/∂θ) built from `Kernel::matrix_and_grads` and a naive inverse.

use crate::common;

use common::*;
use faer::Col;
use gp_kernels::{Kernel, SquaredExponential};
use gp_models::{ExactGp, FitOptions};

fn model(d: usize, constant_mean: bool) -> ExactGp<SquaredExponential> {
    let (x, y) = toy_data(40, d, 3.0, 3 + d as u64);
    let ls: Vec<f64> = (0..d).map(|j| 0.6 + 0.4 * j as f64).collect();
    let kernel = SquaredExponential::new(ls, 1.3).unwrap();
    let opts = FitOptions {
        constant_mean,
        ..FitOptions::default()
    };
    ExactGp::fit_with_options(kernel, x.as_ref(), y.as_ref(), 0.07, &opts).unwrap()
}

fn check_finite_differences(gp: &ExactGp<SquaredExponential>) {
    let (_, grad) = gp.lml_and_grad();
    let p = gp.log_params();
    assert_eq!(grad.len(), p.len());
    assert_eq!(gp.param_names().len(), p.len());
    assert_eq!(gp.param_names().last().unwrap(), "log_noise_variance");
    // Central differences: truncation error O(h²) ≈ 1e-10 relative, round-off
    // ε·|lml|/h ≈ 1e-16·50/1e-5 ≈ 5e-10, both far below the 1e-6 tolerance.
    let h = 1e-5;
    let scale = grad.iter().fold(0.0_f64, |m, g| m.max(g.abs()));
    for k in 0..p.len() {
        let mut plus = p.clone();
        plus[k] += h;
        let mut minus = p.clone();
        minus[k] -= h;
        let fp = gp.with_log_params(&plus).unwrap().log_marginal_likelihood();
        let fm = gp
            .with_log_params(&minus)
            .unwrap()
            .log_marginal_likelihood();
        let fd = (fp - fm) / (2.0 * h);
        assert!(
            (fd - grad[k]).abs() <= 1e-6 * grad[k].abs().max(1e-3 * scale),
            "{}: analytic {} vs finite difference {fd}",
            gp.param_names()[k],
            grad[k]
        );
    }
}

#[test]
fn gradient_matches_finite_differences_ard_2d() {
    check_finite_differences(&model(2, false));
}

#[test]
fn gradient_matches_finite_differences_ard_3d_constant_mean() {
    check_finite_differences(&model(3, true));
}

#[test]
fn gradient_matches_dense_trace_formula() {
    let gp = model(3, false);
    let (_, grad) = gp.lml_and_grad();
    let n = gp.n_train();
    let (k, dks) = gp.kernel().matrix_and_grads(gp.train_x()).unwrap();
    let mut a: Dense = (0..n)
        .map(|i| (0..n).map(|j| k[(i, j)]).collect())
        .collect();
    for (i, row) in a.iter_mut().enumerate() {
        row[i] += gp.noise_variance();
    }
    let l = naive_cholesky(&a);
    let y = col_vec(&Col::from_fn(n, |i| gp.train_y()[i]));
    let alpha = spd_solve(&l, &y);
    let inv = spd_inverse(&l);
    let w = |i: usize, j: usize| alpha[i] * alpha[j] - inv[i][j];
    let mut reference: Vec<f64> = dks
        .iter()
        .map(|dk| {
            let mut s = 0.0;
            for i in 0..n {
                for j in 0..n {
                    s += w(i, j) * dk[(i, j)];
                }
            }
            0.5 * s
        })
        .collect();
    reference.push(0.5 * gp.noise_variance() * (0..n).map(|i| w(i, i)).sum::<f64>());
    assert_close(&grad, &reference, 1e-10, 1e-300, "gradient");
}

#[test]
fn log_params_round_trip() {
    let gp = model(2, false);
    let p = gp.log_params();
    let again = gp.with_log_params(&p).unwrap();
    assert_eq!(
        again.log_marginal_likelihood(),
        gp.log_marginal_likelihood()
    );
    assert!(gp.with_log_params(&p[1..]).is_err());
    let mut bad = p.clone();
    bad[0] = f64::NAN;
    assert!(gp.with_log_params(&bad).is_err());
    let mut bad = p;
    *bad.last_mut().unwrap() = 1e6; // exp overflows: infinite noise
    assert!(matches!(
        gp.with_log_params(&bad),
        Err(gp_models::ModelError::InvalidNoise { .. })
    ));
}
