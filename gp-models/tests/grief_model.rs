//! The GP-GRIEF model against dense references: the log marginal likelihood and the
//! predictions of the weight-space form equal the function-space ones with the GRIEF
//! kernel `K̃ = s_f² ΦΦᵀ`; the gradient (length scales through the basis, signal variance,
//! noise) matches finite differences; GRIEF-I with tight priors reduces to GRIEF.

use faer::linalg::solvers::Solve;
use faer::{Col, Mat, Side};
use gp_kernels::SquaredExponential;
use gp_models::grief::{GridOptions, Grief, GriefOptions, GriefSamplerOptions};
use gp_models::prelude::*;
use gp_models::sampling::MalaOptions;

fn data(n: usize) -> (Mat<f64>, Col<f64>) {
    let x = Mat::from_fn(n, 2, |i, j| ((i * (2 * j + 3)) as f64 * 0.611).sin() * 1.5);
    let y = Col::from_fn(n, |i| {
        (x[(i, 0)] * 1.3).sin() + 0.4 * x[(i, 1)] * x[(i, 1)] - 0.2
    });
    (x, y)
}

fn model(n: usize, p: usize) -> Grief {
    let (x, y) = data(n);
    let options = GriefOptions {
        p,
        grid: GridOptions {
            points_per_axis: 6,
            ..GridOptions::default()
        },
        block_rows: 7,
        ..GriefOptions::default()
    };
    Grief::fit(
        SquaredExponential::new(vec![0.8, 1.3], 1.7).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.05,
        &options,
    )
    .unwrap()
}

/// The dense GRIEF kernel `s_f² Φ(A) Φ(B)ᵀ`.
fn grief_kernel(m: &Grief, a: faer::MatRef<'_, f64>, b: faer::MatRef<'_, f64>) -> Mat<f64> {
    let pa = m.basis().phi_block(a).unwrap();
    let pb = m.basis().phi_block(b).unwrap();
    let sf2 = m.kernel().params().variance();
    Mat::from_fn(a.nrows(), b.nrows(), |i, j| {
        sf2 * (0..pa.ncols())
            .map(|k| pa[(i, k)] * pb[(j, k)])
            .sum::<f64>()
    })
}

fn dense_lml(m: &Grief) -> f64 {
    let x = m.train_x();
    let y = m.train_y();
    let n = x.nrows();
    let mut k = grief_kernel(m, x, x);
    for i in 0..n {
        k[(i, i)] += m.noise_variance();
    }
    let llt = k.llt(Side::Lower).unwrap();
    let alpha = llt.solve(y.as_mat().to_owned());
    let logdet: f64 = (0..n).map(|i| 2.0 * llt.L()[(i, i)].ln()).sum();
    let fit: f64 = (0..n).map(|i| y[i] * alpha[(i, 0)]).sum();
    -0.5 * fit - 0.5 * logdet - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
}

#[test]
fn lml_equals_the_dense_grief_kernel_for_p_below_and_above_n() {
    for (n, p) in [(40, 12), (20, 30)] {
        let m = model(n, p);
        assert_eq!(m.eigenfunctions(), p);
        let lml = m.lml(&LmlRequest::value()).unwrap().lml;
        let dense = dense_lml(&m);
        assert!(
            (lml - dense).abs() < 1e-9 * (1.0 + dense.abs()),
            "n {n} p {p}: {lml} vs {dense}"
        );
    }
}

#[test]
fn gradient_matches_finite_differences_of_the_rebuilt_model() {
    let m = model(40, 12);
    let est = m.lml(&LmlRequest::with_gradient()).unwrap();
    let p0 = m.log_params();
    let h = 1e-5;
    for k in 0..p0.len() {
        let at = |delta: f64| {
            let mut q = p0.clone();
            q[k] += delta;
            m.with_log_params(&q)
                .unwrap()
                .lml(&LmlRequest::value())
                .unwrap()
                .lml
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        let g = est.grad[k];
        assert!(
            (g - fd).abs() <= 1e-5 * fd.abs().max(1.0),
            "{}: analytic {g} vs finite difference {fd}",
            m.param_names()[k]
        );
    }
}

#[test]
fn predictions_equal_the_function_space_formulas() {
    let m = model(40, 12);
    let x = m.train_x();
    let y = m.train_y();
    let (xt, _) = data(9);
    let n = x.nrows();
    let mut k = grief_kernel(&m, x, x);
    for i in 0..n {
        k[(i, i)] += m.noise_variance();
    }
    let ks = grief_kernel(&m, xt.as_ref(), x);
    let kss = grief_kernel(&m, xt.as_ref(), xt.as_ref());
    let llt = k.llt(Side::Lower).unwrap();
    let alpha = llt.solve(y.as_mat().to_owned());
    let v = llt.solve(ks.transpose().to_owned());
    let pred = m
        .predict_latent(xt.as_ref(), &PredictRequest::default())
        .unwrap();
    let var = pred.variance.unwrap();
    for i in 0..xt.nrows() {
        let mean: f64 = (0..n).map(|j| ks[(i, j)] * alpha[(j, 0)]).sum();
        let quad: f64 = (0..n).map(|j| ks[(i, j)] * v[(j, i)]).sum();
        assert!(
            (pred.mean[i] - mean).abs() < 1e-9,
            "{} vs {mean}",
            pred.mean[i]
        );
        assert!(
            (var[i] - (kss[(i, i)] - quad)).abs() < 1e-9,
            "{} vs {}",
            var[i],
            kss[(i, i)] - quad
        );
    }
}

#[test]
fn training_raises_the_log_marginal_likelihood() {
    let m = model(60, 20);
    let before = m.lml(&LmlRequest::value()).unwrap().lml;
    let trained = train(&m, &TrainOptions::default()).unwrap();
    let after = trained.model.lml(&LmlRequest::value()).unwrap().lml;
    assert!(
        after > before + 1.0,
        "{before} → {after}\n{}",
        trained.report
    );
}

#[test]
fn type_one_with_tight_priors_reduces_to_the_grief_model() {
    let m = model(40, 10);
    let options = GriefSamplerOptions {
        mala: MalaOptions {
            iterations: 400,
            burn_in: 100,
            thin: 10,
            seed: 3,
            ..MalaOptions::default()
        },
        weight_prior_variance: 1e-10,
        noise_prior_variance: 1e-14,
        ..GriefSamplerOptions::default()
    };
    let post = m.sample_weights(&options).unwrap();
    assert_eq!(post.run.samples.len(), 30);
    let again = m.sample_weights(&options).unwrap();
    assert_eq!(post.run.samples, again.run.samples, "seeded runs repeat");
    let (xt, _) = data(7);
    let (mean, var_f, var_y) = post.predict(xt.as_ref()).unwrap();
    let pred = m
        .predict_latent(xt.as_ref(), &PredictRequest::default())
        .unwrap();
    let var = pred.variance.unwrap();
    for i in 0..7 {
        assert!(
            (mean[i] - pred.mean[i]).abs() < 1e-3,
            "{} vs {}",
            mean[i],
            pred.mean[i]
        );
        assert!((var_f[i] - var[i]).abs() < 1e-3 * (1.0 + var[i]));
        assert!((var_y[i] - var_f[i] - m.noise_variance()).abs() < 1e-6);
    }
}

#[test]
fn type_one_with_the_paper_priors_moves_the_weights() {
    let m = model(40, 10);
    let options = GriefSamplerOptions {
        mala: MalaOptions {
            iterations: 600,
            burn_in: 200,
            thin: 20,
            seed: 1,
            ..MalaOptions::default()
        },
        ..GriefSamplerOptions::default()
    };
    let post = m.sample_weights(&options).unwrap();
    assert!(
        post.run.acceptance_rate > 0.2,
        "{}",
        post.run.acceptance_rate
    );
    let (w, noise) = post.mean_weights();
    assert!(w.iter().any(|v| (v - 1.0).abs() > 0.1), "{w:?}");
    assert!(noise > 0.0 && noise.is_finite());
}

#[test]
fn bad_input_is_a_typed_error() {
    let (x, y) = data(30);
    let kernel = SquaredExponential::new(vec![1.0, 1.0], 1.0).unwrap();
    // A 6 × 6 grid has 36 points: p = 50 is more than it has.
    let options = GriefOptions {
        p: 50,
        grid: GridOptions {
            points_per_axis: 6,
            ..GridOptions::default()
        },
        ..GriefOptions::default()
    };
    let err = Grief::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.1, &options).unwrap_err();
    assert!(matches!(err, ModelError::InvalidOption { .. }), "{err}");
    let capped = Grief::fit(
        kernel.clone(),
        x.as_ref(),
        y.as_ref(),
        0.1,
        &GriefOptions {
            cap_to_grid: true,
            ..options
        },
    )
    .unwrap();
    assert_eq!(capped.eigenfunctions(), 36);
    let mut bad = x.clone();
    bad[(3, 1)] = f64::NAN;
    assert!(matches!(
        Grief::fit(
            kernel.clone(),
            bad.as_ref(),
            y.as_ref(),
            0.1,
            &GriefOptions::default()
        ),
        Err(ModelError::NonFinite { .. })
    ));
    assert!(matches!(
        Grief::fit(
            kernel.clone(),
            x.as_ref(),
            y.as_ref(),
            0.0,
            &GriefOptions::default()
        ),
        Err(ModelError::InvalidNoise { .. })
    ));
    let zero_p = GriefOptions {
        p: 0,
        ..GriefOptions::default()
    };
    assert!(matches!(
        Grief::fit(kernel, x.as_ref(), y.as_ref(), 0.1, &zero_p),
        Err(ModelError::InvalidOption { .. })
    ));
}

/// With the selection frozen, new length scales keep the multi-indices (so the objective is
/// smooth) and the gradient is that of the frozen objective, by finite differences of
/// `with_log_params` on the frozen model. At the starting point a frozen model is the model.
#[test]
fn frozen_selection_keeps_the_indices_and_its_gradient_matches_finite_differences() {
    let m = model(40, 12);
    let frozen = m.with_selection_frozen();
    assert!(frozen.selection_frozen() && !m.selection_frozen());
    let p0 = m.log_params();
    let same = frozen.with_log_params(&p0).unwrap();
    assert_eq!(same.basis().indices(), m.basis().indices());
    assert_eq!(same.stats(), m.stats());
    // Far enough that the top-p selection changes, near enough to stay well posed.
    let mut moved = p0.clone();
    moved[0] += 1.2;
    moved[1] -= 0.9;
    let kept = frozen.with_log_params(&moved).unwrap();
    let redone = m.with_log_params(&moved).unwrap();
    assert_eq!(kept.basis().indices(), m.basis().indices());
    assert!(kept.selection_frozen() && !redone.selection_frozen());
    assert_ne!(
        redone.basis().indices(),
        m.basis().indices(),
        "the step should change the top-p selection for this test to mean something"
    );
    assert_eq!(
        kept.reselected().unwrap().basis().indices(),
        redone.basis().indices()
    );
    let est = kept.lml(&LmlRequest::with_gradient()).unwrap();
    let h = 1e-5;
    for k in 0..moved.len() {
        let at = |delta: f64| {
            let mut q = moved.clone();
            q[k] += delta;
            kept.with_log_params(&q)
                .unwrap()
                .lml(&LmlRequest::value())
                .unwrap()
                .lml
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        let g = est.grad[k];
        assert!(
            (g - fd).abs() <= 1e-5 * fd.abs().max(1.0),
            "{}: analytic {g} vs finite difference {fd}",
            kept.param_names()[k]
        );
    }
}

/// Training by rounds (frozen selection, re-selection between rounds) raises the log
/// marginal likelihood and returns the better of the last optimum and its re-selection.
#[test]
fn training_by_rounds_raises_the_likelihood_and_returns_a_reselected_model() {
    use gp_models::grief::{train_reselecting, ReselectingOutcome};
    use std::ops::ControlFlow;
    let m = model(60, 20);
    let before = m.lml(&LmlRequest::value()).unwrap().lml;
    let mut seen = Vec::new();
    let (trained, report) = train_reselecting(&m, &TrainOptions::default(), 6, |round, _| {
        seen.push(round);
        ControlFlow::Continue(())
    })
    .unwrap();
    let after = trained.lml(&LmlRequest::value()).unwrap().lml;
    assert!(after > before + 1.0, "{before} → {after}");
    assert!(!report.rounds.is_empty() && report.rounds.len() <= 6);
    assert_eq!(seen.last().copied(), Some(report.rounds.len() - 1));
    // The returned model is the better of the last round's optimum and its re-selection.
    let reselected = trained.reselected().unwrap();
    let lml_reselected = reselected.lml(&LmlRequest::value()).unwrap().lml;
    match report.outcome {
        ReselectingOutcome::Settled => {
            assert!(!trained.selection_frozen());
            assert_eq!(reselected.basis().indices(), trained.basis().indices());
        }
        ReselectingOutcome::KeptFrozen => {
            assert!(trained.selection_frozen());
            assert!(lml_reselected <= after);
        }
        ReselectingOutcome::RoundsExhausted => assert!(!trained.selection_frozen()),
        ReselectingOutcome::Stopped => panic!("nothing stopped training"),
    }
    assert!(matches!(
        train_reselecting(&m, &TrainOptions::default(), 0, |_, _| {
            ControlFlow::Continue(())
        }),
        Err(ModelError::InvalidOption { .. })
    ));
}
