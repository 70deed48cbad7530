//! Tied and fixed hyperparameters in training ([`ParameterGroups`]): the reduced gradient
//! is the derivative of the exact loss along the tied directions, and training keeps tied
//! hyperparameters equal and fixed ones exactly at their start.

use std::ops::ControlFlow;

use faer::{Col, Mat};
use gp_kernels::{Kernel, SquaredExponential};
use gp_models::objective::{
    cholesky_estimate, train_objective, Estimator, ObjectiveTrainOptions, ParameterGroups,
    SoftplusParameterization,
};
use gp_models::optim::AdamOptions;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn problem(n: usize, d: usize, seed: u64) -> (Mat<f64>, Col<f64>) {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| r.random::<f64>());
    let y = Col::from_fn(n, |i| {
        (3.0 * x[(i, 0)]).sin() + x[(i, 1)] * x[(i, 2)] + 0.1 * (r.random::<f64>() - 0.5)
    });
    (x, y)
}

/// The exact loss `−log p / n` and its gradient with respect to the free variables, by
/// the same composition training uses (softplus, then the group reduction).
fn loss_and_reduced_gradient(
    groups: &ParameterGroups,
    param: &SoftplusParameterization,
    raw0: &[f64],
    z: &[f64],
    x: &Mat<f64>,
    y: &Col<f64>,
) -> (f64, Vec<f64>) {
    let d = x.ncols();
    let raw = groups.expand(z, raw0);
    let log = param.log_params(&raw);
    let mut k = SquaredExponential::isotropic(d, 1.0, 1.0).unwrap();
    k.set_log_params(&log[..=d]).unwrap();
    let e = cholesky_estimate(&k, x.as_ref(), y.as_ref(), log[d + 1].exp()).unwrap();
    let n = y.nrows() as f64;
    let log_grad: Vec<f64> = e.gradient.iter().map(|g| -g / n).collect();
    (
        -e.lml.unwrap() / n,
        groups.reduce(&param.raw_gradient(&raw, &log_grad)),
    )
}

#[test]
fn the_reduced_gradient_is_the_derivative_along_the_tied_directions() {
    let (x, y) = problem(50, 3, 1);
    let groups = ParameterGroups::isotropic(3, false);
    let param = SoftplusParameterization::gpytorch(4);
    let raw0 = vec![0.3, 0.3, 0.3, -0.4, -1.2];
    let z = groups.initial(&raw0).unwrap();
    assert_eq!(z.len(), 2);
    let (_, g) = loss_and_reduced_gradient(&groups, &param, &raw0, &z, &x, &y);
    for (v, &gv) in g.iter().enumerate() {
        let h = 1e-5;
        let mut up = z.clone();
        up[v] += h;
        let mut down = z.clone();
        down[v] -= h;
        let fd = (loss_and_reduced_gradient(&groups, &param, &raw0, &up, &x, &y).0
            - loss_and_reduced_gradient(&groups, &param, &raw0, &down, &x, &y).0)
            / (2.0 * h);
        // Central differences: error O(h²) ≈ 1e-10 on an O(1) loss, plus rounding ε/h.
        assert!(
            (fd - gv).abs() <= 1e-7 * (1.0 + gv.abs()),
            "variable {v}: {fd} vs {gv}"
        );
    }
}

#[test]
fn training_keeps_tied_length_scales_equal_and_the_fixed_outputscale_in_place() {
    let (x, y) = problem(60, 3, 2);
    let kernel = SquaredExponential::isotropic(3, 0.693, 0.62923026).unwrap();
    let options = ObjectiveTrainOptions {
        adam: AdamOptions {
            learning_rate: 0.05,
            iterations: 40,
            ..AdamOptions::default()
        },
        exact_loss_every: Some(40),
        groups: Some(ParameterGroups::isotropic(3, false)),
        ..ObjectiveTrainOptions::default()
    };
    let out = train_objective(
        &kernel,
        0.5,
        x.as_ref(),
        y.as_ref(),
        &Estimator::Cholesky,
        &options,
        &mut |_| ControlFlow::Continue(()),
    )
    .unwrap();
    let start_outputscale = kernel.log_params()[3];
    for s in &out.steps {
        assert!(s.log_params[..3].iter().all(|&l| l == s.log_params[0]));
        assert_eq!(s.log_params[3], start_outputscale, "step {}", s.step);
    }
    let first = out.steps[0].log_params.clone();
    let last = out.steps.last().unwrap();
    assert!(
        (last.log_params[0] - first[0]).abs() > 0.1,
        "the length scale moved"
    );
    assert!(
        (last.log_params[4] - first[4]).abs() > 0.1,
        "the noise moved"
    );
    assert!(last.exact_loss.unwrap() < out.steps[0].exact_loss.unwrap());
}

#[test]
fn a_map_of_the_wrong_length_or_an_untied_start_is_refused() {
    let (x, y) = problem(20, 3, 3);
    let run = |kernel: &SquaredExponential, groups: ParameterGroups| {
        train_objective(
            kernel,
            0.5,
            x.as_ref(),
            y.as_ref(),
            &Estimator::Cholesky,
            &ObjectiveTrainOptions {
                adam: AdamOptions {
                    iterations: 2,
                    ..AdamOptions::default()
                },
                groups: Some(groups),
                ..ObjectiveTrainOptions::default()
            },
            &mut |_| ControlFlow::Continue(()),
        )
    };
    let iso = SquaredExponential::isotropic(3, 0.7, 1.0).unwrap();
    assert!(run(&iso, ParameterGroups::isotropic(2, true)).is_err());
    let ard = SquaredExponential::new(vec![0.5, 0.7, 0.9], 1.0).unwrap();
    let err = run(&ard, ParameterGroups::isotropic(3, true)).unwrap_err();
    assert!(err.to_string().contains("must start equal"), "{err}");
}
