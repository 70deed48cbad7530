//! The common model interface: the same generic code fits, predicts, evaluates and trains
//! every model, and each request is honoured (what is computed, how variances are
//! computed, which probes are used).

use std::ops::ControlFlow;

use faer::{Col, Mat, MatRef};
use gp_kernels::SquaredExponential;
use gp_models::grid::GridSettings;
use gp_models::prelude::*;
use gp_models::KrylovSettings;
use gp_models::{AdamOptions, ConvergenceReason, LbfgsOptions, VarianceSource};
use gp_solvers::{ProbeOptions, Probes};

/// 1-D data: 80 noisy samples of sin on [0, 6], and 7 test points inside the range.
fn data() -> (Mat<f64>, Col<f64>, Mat<f64>) {
    let n = 80;
    let x = Mat::from_fn(n, 1, |i, _| 6.0 * i as f64 / (n - 1) as f64);
    let y = Col::from_fn(n, |i| {
        let t = x[(i, 0)];
        t.sin() + 0.1 * ((i * 37 % 17) as f64 / 17.0 - 0.5)
    });
    let xt = Mat::from_fn(7, 1, |i, _| 0.4 + 0.8 * i as f64);
    (x, y, xt)
}

fn kernel() -> SquaredExponential {
    SquaredExponential::new(vec![0.8], 1.2).unwrap()
}

const NOISE: f64 = 0.01;

fn ski_options() -> SkiOptions {
    SkiOptions {
        grid: GridSettings {
            sizes: vec![200],
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            prediction_tolerance: 1e-10,
            variance_tolerance: 1e-10,
            ..KrylovSettings::default()
        },
        ..SkiOptions::default()
    }
}

/// What generic code can get from any model: the prediction with the default request,
/// the names of the hyperparameters and the LML estimate.
fn through_interface<M: GpModel>(
    model: &M,
    xt: MatRef<'_, f64>,
) -> (Prediction, Vec<String>, LmlEstimate) {
    let pred = model.predict(xt, &PredictRequest::default()).unwrap();
    let est = model.lml(&LmlRequest::value()).unwrap();
    (pred, model.param_names(), est)
}

#[test]
fn one_generic_function_serves_every_model() {
    let (x, y, xt) = data();
    let exact = ExactGp::fit(kernel(), x.as_ref(), y.as_ref(), NOISE).unwrap();
    let iterative = IterativeGp::fit_with_options(
        kernel(),
        x.as_ref(),
        y.as_ref(),
        NOISE,
        &IterativeOptions {
            krylov: KrylovSettings {
                prediction_tolerance: 1e-10,
                variance_tolerance: 1e-10,
                ..KrylovSettings::default()
            },
            ..IterativeOptions::default()
        },
    )
    .unwrap();
    let ski = Ski::fit(kernel(), x.as_ref(), y.as_ref(), NOISE, &ski_options()).unwrap();
    let gsgp = Gsgp::fit(
        kernel(),
        x.as_ref(),
        y.as_ref(),
        NOISE,
        &crate::gsgp_support::gsgp_options(&ski_options()),
    )
    .unwrap();

    let (p0, names0, e0) = through_interface(&exact, xt.as_ref());
    assert!(e0.is_exact());
    assert_eq!(e0.lml_std_error, 0.0);
    assert_eq!(e0.lml, exact.log_marginal_likelihood());
    assert_eq!(p0.variance_source, Some(VarianceSource::Cholesky));
    for (name, (pred, names, est)) in [
        ("IterativeGp", through_interface(&iterative, xt.as_ref())),
        ("Ski", through_interface(&ski, xt.as_ref())),
        ("Gsgp", through_interface(&gsgp, xt.as_ref())),
    ] {
        assert_eq!(names, names0, "{name}");
        assert!(!est.is_exact(), "{name}");
        // Six standard errors of the probe average, plus SKI's interpolation error.
        assert!(
            (est.lml - e0.lml).abs() < 6.0 * est.lml_std_error + 0.5,
            "{name}: {} vs exact {}",
            est,
            e0.lml
        );
        assert_eq!(pred.variance_source, Some(VarianceSource::Solves), "{name}");
        assert!(
            pred.mean_solve.as_ref().is_some_and(|s| s.converged),
            "{name}"
        );
        for i in 0..xt.nrows() {
            // The iterative GP is exact up to the CG tolerance; SKI's cubic interpolation
            // on a 200-point grid over [0, 6] is accurate to about 1e-4 here.
            assert!((pred.mean[i] - p0.mean[i]).abs() < 2e-3, "{name} mean {i}");
            assert!(
                (pred.latent_variance[i] - p0.latent_variance[i]).abs() < 2e-3,
                "{name} variance {i}"
            );
            assert_eq!(pred.variance[i], pred.latent_variance[i] + NOISE);
        }
    }
}

#[test]
fn requests_decide_what_is_computed() {
    let (x, y, xt) = data();
    let exact = ExactGp::fit(kernel(), x.as_ref(), y.as_ref(), NOISE).unwrap();
    let ski = Ski::fit(kernel(), x.as_ref(), y.as_ref(), NOISE, &ski_options()).unwrap();

    let mean_only = exact.predict(xt.as_ref(), &PredictRequest::mean()).unwrap();
    assert_eq!(mean_only.mean, exact.predict_mean(xt.as_ref()).unwrap());
    assert_eq!(mean_only.variance.nrows(), 0);
    assert!(!mean_only.has_variance() || xt.nrows() == 0);
    assert_eq!(mean_only.variance_source, None);

    let cov = exact
        .predict(
            xt.as_ref(),
            &PredictRequest::covariance(VarianceMethod::Exact),
        )
        .unwrap();
    let reference = exact.predict_covariance(xt.as_ref()).unwrap();
    assert_eq!(cov.latent_covariance.as_ref(), Some(&reference));
    for i in 0..xt.nrows() {
        assert!((cov.latent_variance[i] - reference[(i, i)]).abs() < 1e-12);
    }

    let ski_cov = ski
        .predict(
            xt.as_ref(),
            &PredictRequest::covariance(VarianceMethod::Exact),
        )
        .unwrap();
    let ski_ref = ski.predict_latent_covariance(xt.as_ref()).unwrap();
    assert_eq!(ski_cov.latent_covariance.as_ref(), Some(&ski_ref));

    // A LOVE request goes to models that have a cache, and is refused by ExactGp.
    assert!(matches!(
        exact.predict(
            xt.as_ref(),
            &PredictRequest::variance(VarianceMethod::Love { rank: 10 })
        ),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        ski.predict(
            xt.as_ref(),
            &PredictRequest::variance(VarianceMethod::Love { rank: 0 })
        ),
        Err(ModelError::InvalidOption { .. })
    ));
}

#[test]
fn love_variances_approach_the_exact_ones_with_the_rank() {
    let (x, y, xt) = data();
    let ski = Ski::fit(kernel(), x.as_ref(), y.as_ref(), NOISE, &ski_options()).unwrap();
    let gsgp = Gsgp::fit(
        kernel(),
        x.as_ref(),
        y.as_ref(),
        NOISE,
        &crate::gsgp_support::gsgp_options(&ski_options()),
    )
    .unwrap();
    let exact = ski
        .predict(
            xt.as_ref(),
            &PredictRequest::variance(VarianceMethod::Exact),
        )
        .unwrap();
    for (name, low, high) in [
        (
            "Ski",
            ski.predict(
                xt.as_ref(),
                &PredictRequest::variance(VarianceMethod::Love { rank: 5 }),
            ),
            ski.predict(
                xt.as_ref(),
                &PredictRequest::variance(VarianceMethod::Love { rank: 60 }),
            ),
        ),
        (
            "Gsgp",
            gsgp.predict(
                xt.as_ref(),
                &PredictRequest::variance(VarianceMethod::Love { rank: 5 }),
            ),
            gsgp.predict(
                xt.as_ref(),
                &PredictRequest::variance(VarianceMethod::Love { rank: 60 }),
            ),
        ),
    ] {
        let (low, high) = (low.unwrap(), high.unwrap());
        assert!(matches!(
            high.variance_source,
            Some(VarianceSource::Love { .. })
        ));
        let err = |p: &Prediction| {
            (0..xt.nrows())
                .map(|i| (p.latent_variance[i] - exact.latent_variance[i]).abs())
                .fold(0.0, f64::max)
        };
        // The low-rank term only subtracts explained variance: LOVE variances are upper
        // bounds that tighten as the rank grows; at rank 60 (of 80 points) the Krylov space
        // holds the smooth cross-covariances to within 1e-4 of the prior variance 1.2.
        assert!(err(&high) < 1e-4, "{name}: rank-60 error {}", err(&high));
        assert!(
            err(&high) <= err(&low),
            "{name}: {} vs {}",
            err(&high),
            err(&low)
        );
        for i in 0..xt.nrows() {
            assert_eq!(high.mean[i], exact.mean[i] + (high.mean[i] - exact.mean[i]));
            assert!(low.latent_variance[i] >= exact.latent_variance[i] - 1e-9);
        }
    }
}

#[test]
fn lml_requests_choose_probes_and_gradient() {
    let (x, y, _) = data();
    let ski = Ski::fit(kernel(), x.as_ref(), y.as_ref(), NOISE, &ski_options()).unwrap();
    let a = ski.lml(&LmlRequest::seeded(false, 5)).unwrap();
    let b = ski.lml(&LmlRequest::seeded(false, 5)).unwrap();
    let c = ski.lml(&LmlRequest::seeded(false, 6)).unwrap();
    assert_eq!(a.lml, b.lml);
    assert_ne!(a.lml, c.lml);
    assert!(a.grad.is_empty());
    let g = ski.lml(&LmlRequest::seeded(true, 5)).unwrap();
    assert_eq!(g.lml, a.lml);
    assert_eq!(g.grad.len(), ski.param_names().len());
    assert_eq!(g.grad, ski.lml_and_grad_estimate_with_seed(5).unwrap().grad);

    let probes = Probes::generate(
        x.nrows(),
        None,
        &ProbeOptions {
            count: 4,
            seed: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let given = ski
        .lml(&LmlRequest {
            gradient: true,
            probes: ProbeSource::Given {
                log_det: probes.clone(),
                trace: None,
            },
        })
        .unwrap();
    assert_eq!(given.probes(), 4);
    assert_eq!(
        given.grad,
        ski.lml_and_grad_estimate_with_probes(probes.clone())
            .unwrap()
            .grad
    );

    // GSGP needs grid-space trace probes for a gradient; the iterative GP draws its own.
    let gsgp = Gsgp::fit(
        kernel(),
        x.as_ref(),
        y.as_ref(),
        NOISE,
        &crate::gsgp_support::gsgp_options(&ski_options()),
    )
    .unwrap();
    let r = gsgp.log_det_dim().unwrap();
    let gsgp_probes = Probes::generate(
        r,
        None,
        &ProbeOptions {
            count: 4,
            seed: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(matches!(
        gsgp.lml(&LmlRequest {
            gradient: true,
            probes: ProbeSource::Given {
                log_det: gsgp_probes.clone(),
                trace: None
            },
        }),
        Err(ModelError::InvalidOption { .. })
    ));
    let value = gsgp
        .lml(&LmlRequest {
            gradient: false,
            probes: ProbeSource::Given {
                log_det: gsgp_probes.clone(),
                trace: None,
            },
        })
        .unwrap();
    assert_eq!(
        value.lml,
        gsgp.lml_estimate_with_probes(gsgp_probes).unwrap().lml
    );
    let iterative = IterativeGp::fit(kernel(), x.as_ref(), y.as_ref(), NOISE).unwrap();
    assert!(matches!(
        iterative.lml(&LmlRequest {
            gradient: true,
            probes: ProbeSource::Given {
                log_det: probes,
                trace: None
            },
        }),
        Err(ModelError::InvalidOption { .. })
    ));
}

#[test]
fn exact_lml_request_matches_the_model() {
    let (x, y, _) = data();
    let exact = ExactGp::fit(kernel(), x.as_ref(), y.as_ref(), NOISE).unwrap();
    let est = exact.lml(&LmlRequest::with_gradient()).unwrap();
    let (lml, grad) = exact.lml_and_grad();
    assert_eq!(est.lml, lml);
    assert_eq!(est.grad, grad);
    assert!(est.grad_std_error.iter().all(|&s| s == 0.0));
    // lml = −½ data fit − ½ log det − (n/2) log 2π.
    let n = x.nrows() as f64;
    let recomposed =
        -0.5 * est.data_fit - 0.5 * est.log_det.value - 0.5 * n * (2.0 * std::f64::consts::PI).ln();
    assert!((recomposed - lml).abs() < 1e-9 * lml.abs().max(1.0));
    assert!(est.to_string().contains("(exact)"));
}

#[test]
fn the_observer_sees_every_step_and_can_stop_training() {
    let (x, y, _) = data();
    let gp = ExactGp::fit(
        SquaredExponential::new(vec![3.0], 0.3).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.5,
    )
    .unwrap();
    let options = TrainOptions {
        restarts: 2,
        ..TrainOptions::default()
    };
    let mut seen = Vec::new();
    let stopped = train_observed(&gp, &options, |p| {
        seen.push((p.run, p.point.iteration));
        if p.point.iteration == 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .unwrap();
    assert_eq!(seen, vec![(0, 1), (0, 2), (0, 3)]);
    assert_eq!(stopped.report.runs.len(), 1, "the restarts are skipped");
    let best = stopped.report.best().unwrap();
    assert_eq!(best.reason, ConvergenceReason::Stopped);
    assert_eq!(best.iterations, 3);
    // The model is rebuilt at the stopped point (log → natural → log: last-ulp round trip).
    for (p, q) in stopped.model.log_params().iter().zip(&best.x) {
        assert!((p - q).abs() <= 1e-14 * q.abs().max(1.0), "{p} vs {q}");
    }

    // Without an early stop the same run continues to the optimum, through the same steps.
    let full = train(&gp, &TrainOptions::default()).unwrap();
    let full_best = full.report.best().unwrap();
    assert!(full_best.reason.is_converged());
    assert_eq!(full_best.trajectory[..4], best.trajectory[..]);
}

#[test]
fn stochastic_models_train_with_adam_by_default_and_reproducibly() {
    let (x, y, _) = data();
    let ski = Ski::fit(
        SquaredExponential::new(vec![2.0], 0.5).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.3,
        &ski_options(),
    )
    .unwrap();
    let options = TrainOptions {
        optimizer: Optimizer::Adam(AdamOptions {
            learning_rate: 0.1,
            iterations: 15,
            ..AdamOptions::default()
        }),
        ..TrainOptions::default()
    };
    let a = train(&ski, &options).unwrap();
    let b = train(&ski, &options).unwrap();
    assert_eq!(a.report, b.report);
    assert!(matches!(a.report.optimizer, Optimizer::Adam(_)));
    assert_eq!(a.report.best().unwrap().iterations, 15);
    // Adam draws fresh probes at every evaluation: the first step's objective is the
    // estimate with seed `options.seed`, the second with `seed + 1`.
    let traj = &a.report.best().unwrap().trajectory;
    let first = ski.lml(&LmlRequest::seeded(true, 0)).unwrap();
    assert_eq!(traj[0].f, -first.lml);
    let auto = train(
        &ski,
        &TrainOptions {
            optimizer: Optimizer::Auto,
            ..TrainOptions::default()
        },
    );
    assert!(matches!(auto.unwrap().report.optimizer, Optimizer::Adam(_)));
    let exact = ExactGp::fit(kernel(), x.as_ref(), y.as_ref(), NOISE).unwrap();
    let lbfgs = train(&exact, &TrainOptions::default()).unwrap();
    assert_eq!(
        lbfgs.report.optimizer,
        Optimizer::Lbfgs(LbfgsOptions::default())
    );
}

#[test]
fn summaries_are_short_and_name_every_hyperparameter() {
    let (x, y, _) = data();
    let exact = ExactGp::fit(kernel(), x.as_ref(), y.as_ref(), NOISE).unwrap();
    let ski = Ski::fit(kernel(), x.as_ref(), y.as_ref(), NOISE, &ski_options()).unwrap();
    let trained = train(&exact, &TrainOptions::default()).unwrap();
    for text in [exact.to_string(), ski.to_string(), trained.to_string()] {
        assert!(text.len() < 2000, "{} characters:\n{text}", text.len());
        for name in exact.param_names() {
            assert!(text.contains(&name), "{name} missing from\n{text}");
        }
    }
    assert!(ski.to_string().contains("grid [200]"));
    assert!(trained.to_string().contains("L-BFGS"));
}
