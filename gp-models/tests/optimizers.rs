//! L-BFGS and Adam on Rosenbrock and quadratics, failed evaluations, and the result record.

use gp_models::optim::{adam, lbfgs, AdamOptions, ConvergenceReason, LbfgsOptions};
use gp_models::{ModelError, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// The n-dimensional Rosenbrock function Σ 100 (xᵢ₊₁ − xᵢ²)² + (1 − xᵢ)².
fn rosenbrock(x: &[f64]) -> Result<(f64, Vec<f64>)> {
    let n = x.len();
    let mut f = 0.0;
    let mut g = vec![0.0; n];
    for i in 0..n - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = 1.0 - x[i];
        f += 100.0 * a * a + b * b;
        g[i] += -400.0 * a * x[i] - 2.0 * b;
        g[i + 1] += 200.0 * a;
    }
    Ok((f, g))
}

/// f(x) = ½ Σ cᵢ (xᵢ − i)² with condition number 10⁴.
fn quadratic(x: &[f64]) -> Result<(f64, Vec<f64>)> {
    let n = x.len();
    let c = |i: usize| 10f64.powf(4.0 * i as f64 / (n - 1) as f64);
    let f = x
        .iter()
        .enumerate()
        .map(|(i, v)| 0.5 * c(i) * (v - i as f64).powi(2))
        .sum();
    let g = x
        .iter()
        .enumerate()
        .map(|(i, v)| c(i) * (v - i as f64))
        .collect();
    Ok((f, g))
}

fn tight() -> LbfgsOptions {
    LbfgsOptions {
        gradient_tolerance: 1e-9,
        function_tolerance: 0.0,
        ..LbfgsOptions::default()
    }
}

#[test]
fn lbfgs_rosenbrock_2d() {
    let res = lbfgs(rosenbrock, &[-1.2, 1.0], &tight()).unwrap();
    assert_eq!(res.reason, ConvergenceReason::GradientTolerance);
    assert!(res.x.iter().all(|v| (v - 1.0).abs() < 1e-8), "{:?}", res.x);
    assert!(res.f < 1e-16);
    // Textbook L-BFGS needs ~35 iterations from the classic start.
    assert!(res.iterations < 80, "{} iterations", res.iterations);
    assert!(res.evaluations < 2 * res.iterations + 10);
    // The record: the start first, one point per iteration, values never increase.
    assert_eq!(res.trajectory.len(), res.iterations + 1);
    assert_eq!(res.trajectory[0].x, vec![-1.2, 1.0]);
    assert!((res.trajectory[0].f - 24.2).abs() < 1e-12);
    for w in res.trajectory.windows(2) {
        assert!(w[1].f <= w[0].f);
        assert!(w[1].evaluations > w[0].evaluations);
    }
    assert_eq!(res.trajectory.last().unwrap().x, res.x);
    assert_eq!(res.failed_evaluations, 0);
}

#[test]
fn lbfgs_rosenbrock_10d() {
    let x0: Vec<f64> = (0..10)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect();
    let res = lbfgs(rosenbrock, &x0, &tight()).unwrap();
    assert!(res.reason.is_converged());
    assert!(res.x.iter().all(|v| (v - 1.0).abs() < 1e-7), "{:?}", res.x);
}

#[test]
fn lbfgs_ill_conditioned_quadratic() {
    let res = lbfgs(quadratic, &[0.0; 20], &tight()).unwrap();
    assert_eq!(res.reason, ConvergenceReason::GradientTolerance);
    for (i, v) in res.x.iter().enumerate() {
        assert!((v - i as f64).abs() < 1e-8, "x[{i}] = {v}");
    }
}

#[test]
fn lbfgs_default_tolerances_converge_close_to_the_optimum() {
    let res = lbfgs(rosenbrock, &[-1.2, 1.0], &LbfgsOptions::default()).unwrap();
    assert!(res.reason.is_converged());
    assert!(res.x.iter().all(|v| (v - 1.0).abs() < 1e-4));
}

#[test]
fn lbfgs_memory_one_still_converges() {
    let opts = LbfgsOptions {
        memory: 1,
        ..tight()
    };
    let res = lbfgs(quadratic, &[0.0; 5], &opts).unwrap();
    assert!(res.reason.is_converged());
    assert!(res
        .x
        .iter()
        .enumerate()
        .all(|(i, v)| (v - i as f64).abs() < 1e-7));
}

/// `f(x) = (x − 5)² − 0.01 ln(2 − x)` on x < 2; an error for x ≥ 2 (like a Cholesky
/// failure at absurd hyperparameters). The quadratic part pulls towards 5, so quasi-Newton
/// steps leave the domain and must be shrunk.
fn fragile(x: &[f64]) -> Result<(f64, Vec<f64>)> {
    if x[0] >= 2.0 {
        return Err(ModelError::Optimizer {
            reason: "outside the domain".into(),
        });
    }
    let f = (x[0] - 5.0).powi(2) - 0.01 * (2.0 - x[0]).ln();
    let g = 2.0 * (x[0] - 5.0) + 0.01 / (2.0 - x[0]);
    Ok((f, vec![g]))
}

#[test]
fn lbfgs_shrinks_the_step_after_failed_evaluations() {
    // The minimizer solves 2(x − 5)(2 − x) + 0.01 = 0, i.e. 2x² − 14x + 19.99 = 0, below 2.
    let xstar = (14.0 - (196.0f64 - 8.0 * 19.99).sqrt()) / 4.0;
    let res = lbfgs(fragile, &[0.0], &tight()).unwrap();
    assert!(res.reason.is_converged(), "{:?}", res.reason);
    assert!(res.failed_evaluations > 0);
    assert!((res.x[0] - xstar).abs() < 1e-8, "{} vs {xstar}", res.x[0]);
}

#[test]
fn non_finite_values_are_failures_too() {
    let f = |x: &[f64]| -> Result<(f64, Vec<f64>)> {
        if x[0] > 3.0 {
            Ok((f64::NAN, vec![f64::NAN]))
        } else {
            Ok(((x[0] - 2.5).powi(2), vec![2.0 * (x[0] - 2.5)]))
        }
    };
    let res = lbfgs(f, &[-100.0], &tight()).unwrap();
    assert!(res.reason.is_converged());
    assert!((res.x[0] - 2.5).abs() < 1e-8);
}

#[test]
fn failure_at_the_start_is_an_error() {
    let err = lbfgs(fragile, &[3.0], &LbfgsOptions::default()).unwrap_err();
    assert!(matches!(err, ModelError::Optimizer { .. }));
    let err = lbfgs(
        |_: &[f64]| Ok((f64::INFINITY, vec![0.0])),
        &[0.0],
        &LbfgsOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::Optimizer { .. }));
    let err = lbfgs(rosenbrock, &[f64::NAN, 1.0], &LbfgsOptions::default()).unwrap_err();
    assert!(matches!(err, ModelError::NonFinite { .. }));
    let err = lbfgs(rosenbrock, &[], &LbfgsOptions::default()).unwrap_err();
    assert!(matches!(err, ModelError::Optimizer { .. }));
}

#[test]
fn wrong_gradient_length_is_an_error() {
    let err = lbfgs(
        |x: &[f64]| Ok((x[0] * x[0], vec![0.0, 0.0])),
        &[1.0],
        &LbfgsOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::Optimizer { .. }));
}

#[test]
fn invalid_options_are_rejected() {
    let bad = [
        LbfgsOptions {
            memory: 0,
            ..LbfgsOptions::default()
        },
        LbfgsOptions {
            gradient_tolerance: f64::NAN,
            ..LbfgsOptions::default()
        },
        LbfgsOptions {
            line_search: gp_models::optim::LineSearchOptions {
                c2: 1e-5,
                ..Default::default()
            },
            ..LbfgsOptions::default()
        },
    ];
    for o in bad {
        assert!(matches!(
            lbfgs(rosenbrock, &[0.0, 0.0], &o),
            Err(ModelError::InvalidOption { .. })
        ));
    }
}

/// A sum of kinks `Σ |xᵢ − i| + 0.01 (xᵢ − i)²`: the derivative jumps at the minimum, so
/// the curvature condition cannot hold near it and the zoom runs until its bracket is
/// narrow. SciPy's relative bracket tolerance (0.1) ends those searches early and still
/// reaches the minimum; the default (1e-14) spends its whole budget on them.
fn kinked(x: &[f64]) -> Result<(f64, Vec<f64>)> {
    let mut f = 0.0;
    let mut g = vec![0.0; x.len()];
    for (i, v) in x.iter().enumerate() {
        let t = v - i as f64;
        f += t.abs() + 0.01 * t * t;
        g[i] = t.signum() + 0.02 * t;
    }
    Ok((f, g))
}

#[test]
fn a_relative_bracket_tolerance_shortens_searches_at_kinks() {
    let run = |bracket_tolerance: f64| {
        let options = LbfgsOptions {
            max_iterations: 40,
            line_search: gp_models::optim::LineSearchOptions {
                bracket_tolerance,
                ..Default::default()
            },
            ..LbfgsOptions::default()
        };
        lbfgs(kinked, &[0.3, -0.4, 2.7], &options).unwrap()
    };
    let (loose, strict) = (run(0.1), run(1e-14));
    let (f_loose, f_strict) = (kinked(&loose.x).unwrap().0, kinked(&strict.x).unwrap().0);
    let f0 = kinked(&[0.3, -0.4, 2.7]).unwrap().0;
    assert!(f_loose < 0.05 * f0, "0.1: f = {f_loose} from {f0}");
    assert!(
        loose.evaluations < strict.evaluations,
        "evaluations: {} with 0.1, {} with 1e-14",
        loose.evaluations,
        strict.evaluations
    );
    assert!(f_strict < 0.05 * f0, "1e-14: f = {f_strict} from {f0}");
}

/// The evaluation cap holds even when a line search fails and the retry along steepest
/// descent follows (each attempt gets what is left of the budget): on the kinked function,
/// whose searches run out of budget near the minimum, no cap is ever exceeded.
#[test]
fn the_evaluation_cap_holds_through_failed_line_searches() {
    let mut retried = false;
    for cap in 1..=150 {
        let mut calls = 0;
        let counted = |x: &[f64]| {
            calls += 1;
            kinked(x)
        };
        let options = LbfgsOptions {
            max_evaluations: cap,
            max_iterations: 1000,
            line_search: gp_models::optim::LineSearchOptions {
                bracket_tolerance: 1e-14,
                max_evaluations: 12,
                ..Default::default()
            },
            ..LbfgsOptions::default()
        };
        let res = lbfgs(counted, &[0.3, -0.4, 2.7], &options).unwrap();
        assert!(
            calls <= cap && res.evaluations <= cap,
            "cap {cap}: {calls} calls, {} evaluations reported ({:?})",
            res.evaluations,
            res.reason
        );
        retried |= res.reason == ConvergenceReason::LineSearchFailed;
    }
    assert!(retried, "some run should end in a failed search");
}

#[test]
fn iteration_limit_is_reported() {
    let opts = LbfgsOptions {
        max_iterations: 3,
        ..tight()
    };
    let res = lbfgs(rosenbrock, &[-1.2, 1.0], &opts).unwrap();
    assert_eq!(res.reason, ConvergenceReason::MaxIterations);
    assert_eq!(res.iterations, 3);
    assert_eq!(res.trajectory.len(), 4);
}

#[test]
fn adam_quadratic() {
    let opts = AdamOptions {
        learning_rate: 0.1,
        iterations: 3000,
        ..AdamOptions::default()
    };
    let res = adam(quadratic, &[0.0; 4], &opts).unwrap();
    assert_eq!(res.reason, ConvergenceReason::MaxIterations);
    assert_eq!(res.iterations, 3000);
    assert_eq!(res.trajectory.len(), 3001);
    for (i, v) in res.x.iter().enumerate() {
        assert!((v - i as f64).abs() < 1e-2, "x[{i}] = {v}");
    }
}

#[test]
fn adam_rosenbrock() {
    let opts = AdamOptions {
        learning_rate: 0.02,
        iterations: 20000,
        gradient_tolerance: 1e-6,
        ..AdamOptions::default()
    };
    let res = adam(rosenbrock, &[-1.2, 1.0], &opts).unwrap();
    assert!(res.x.iter().all(|v| (v - 1.0).abs() < 1e-2), "{:?}", res.x);
}

#[test]
fn adam_stochastic_gradients_are_reproducible() {
    let run = |seed: u64| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let noise = Normal::new(0.0, 0.5).unwrap();
        let objective = move |x: &[f64]| -> Result<(f64, Vec<f64>)> {
            let g: Vec<f64> = x
                .iter()
                .map(|v| 2.0 * (v - 1.0) + noise.sample(&mut rng))
                .collect();
            Ok((x.iter().map(|v| (v - 1.0).powi(2)).sum(), g))
        };
        let opts = AdamOptions {
            learning_rate: 0.01,
            iterations: 2000,
            ..AdamOptions::default()
        };
        adam(objective, &[5.0, -3.0], &opts).unwrap()
    };
    let a = run(1);
    assert!(a.x.iter().all(|v| (v - 1.0).abs() < 0.1), "{:?}", a.x);
    assert_eq!(a, run(1));
}

#[test]
fn adam_halves_steps_after_failures_and_errors_at_bad_start() {
    let opts = AdamOptions {
        learning_rate: 0.5,
        iterations: 400,
        ..AdamOptions::default()
    };
    let res = adam(fragile, &[0.0], &opts).unwrap();
    assert!(res.x[0] < 2.0);
    assert!(res.failed_evaluations > 0);
    assert!(adam(fragile, &[2.5], &opts).is_err());
    assert!(matches!(
        adam(
            rosenbrock,
            &[0.0, 0.0],
            &AdamOptions {
                beta1: 1.0,
                ..AdamOptions::default()
            }
        ),
        Err(ModelError::InvalidOption { .. })
    ));
}

/// A small change of a large objective is not convergence: with a constant of 1e6 the
/// relative decrease per iteration is below SciPy's `factr · ε` from the first step, yet
/// the gradient (2e-3 at the start) is far from zero. The default stops on the gradient.
#[test]
fn lbfgs_default_stops_on_the_gradient_not_on_a_small_function_change() {
    let objective = |x: &[f64]| Ok((1e6 + 1e-3 * (x[0] - 1.0).powi(2), vec![2e-3 * (x[0] - 1.0)]));
    let res = lbfgs(objective, &[0.0], &LbfgsOptions::default()).unwrap();
    assert_eq!(res.reason, ConvergenceReason::GradientTolerance, "{res:?}");
    assert!((res.x[0] - 1.0).abs() < 1e-2, "{:?}", res.x);
    // SciPy's function test, asked for explicitly, stops early (and says so).
    let scipy = LbfgsOptions {
        function_tolerance: 1e7 * f64::EPSILON,
        ..LbfgsOptions::default()
    };
    let res = lbfgs(objective, &[0.0], &scipy).unwrap();
    assert_eq!(res.reason, ConvergenceReason::FunctionTolerance);
}
