//! `LaplaceGp`, the dense Laplace approximation as a `GpModel`: against `ExactGp` for a
//! Gaussian likelihood, against dense formulas and finite differences for Poisson and
//! Bernoulli, against the dense Newton reference and IterNCGP's posterior form, and
//! training through `train`.

use faer::{Col, Mat, MatRef};
use gp_kernels::{Kernel, Matern, MaternNu, SquaredExponential};
use gp_models::ncgp::{
    Bernoulli, DenseLaplace, LaplaceGp, LaplaceGpOptions, LaplaceLikelihood, LaplaceOptions,
    Poisson, Softmax,
};
use gp_models::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn inputs(n: usize, d: usize, seed: u64) -> Mat<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Mat::from_fn(n, d, |_, _| rng.random_range(0.0..3.0))
}

fn binary_labels(x: MatRef<'_, f64>) -> Col<f64> {
    Col::from_fn(x.nrows(), |i| {
        if (2.0 * x[(i, 0)]).sin() > 0.0 {
            1.0
        } else {
            0.0
        }
    })
}

fn counts(x: MatRef<'_, f64>, seed: u64) -> Col<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Col::from_fn(x.nrows(), |i| {
        let rate = (1.0 + x[(i, 0)].sin()).exp();
        // A Poisson draw by inversion.
        let (mut k, mut p, u) = (0u32, (-rate).exp(), rng.random::<f64>());
        let mut cdf = p;
        while u > cdf && k < 200 {
            k += 1;
            p *= rate / k as f64;
            cdf += p;
        }
        k as f64
    })
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

/// A Gaussian likelihood makes the Laplace approximation exact: evidence, gradient (kernel
/// and noise) and predictions equal `ExactGp`'s to rounding.
#[test]
fn gaussian_laplace_equals_exact_gp() {
    let x = inputs(40, 2, 1);
    let y = Col::from_fn(40, |i| (x[(i, 0)] * 1.3).sin() + 0.3 * x[(i, 1)]);
    let kernel = SquaredExponential::new(vec![0.8, 1.4], 1.5).unwrap();
    let noise = 0.05;
    let exact = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), noise).unwrap();
    let laplace = LaplaceGp::fit(
        kernel,
        x.as_ref(),
        y.as_ref(),
        Gaussian::new(noise).unwrap(),
        &LaplaceGpOptions::default(),
    )
    .unwrap();
    // Newton on a quadratic: one step to the mode, one to see it did not move.
    assert!(laplace.newton_steps() <= 2, "{}", laplace.newton_steps());
    let e = exact.lml(&LmlRequest::with_gradient()).unwrap();
    let l = laplace.lml(&LmlRequest::with_gradient()).unwrap();
    assert_eq!(laplace.param_names(), exact.param_names());
    assert!(rel_close(l.lml, e.lml, 1e-10), "{} vs {}", l.lml, e.lml);
    for (a, b) in l.grad.iter().zip(&e.grad) {
        assert!(rel_close(*a, *b, 1e-8), "gradient {a} vs {b}");
    }
    let xt = inputs(7, 2, 2);
    let pe = exact.predict_latent(
        xt.as_ref(),
        &PredictRequest::covariance(VarianceMethod::Auto),
    );
    let pl = laplace.predict_latent(
        xt.as_ref(),
        &PredictRequest::covariance(VarianceMethod::Auto),
    );
    let (pe, pl) = (pe.unwrap(), pl.unwrap());
    for j in 0..7 {
        assert!((pe.mean[j] - pl.mean[j]).abs() < 1e-9);
        let (ve, vl) = (
            pe.variance.as_ref().unwrap()[j],
            pl.variance.as_ref().unwrap()[j],
        );
        assert!((ve - vl).abs() < 1e-9, "variance {vl} vs {ve}");
        let (ce, cl) = (
            pe.covariance.as_ref().unwrap(),
            pl.covariance.as_ref().unwrap(),
        );
        for i in 0..7 {
            assert!((ce[(i, j)] - cl[(i, j)]).abs() < 1e-9);
        }
    }
}

/// The evidence against its definition evaluated densely with `K⁻¹` and `det(I + K W)`,
/// and the mode against the dense Newton reference.
fn check_against_dense<L: LaplaceLikelihood, K: Kernel + Clone>(
    kernel: K,
    x: MatRef<'_, f64>,
    y: &Col<f64>,
    likelihood: L,
    prior_mean: f64,
) {
    let options = LaplaceGpOptions {
        prior_mean,
        ..LaplaceGpOptions::default()
    };
    let gp = LaplaceGp::fit(kernel.clone(), x, y.as_ref(), likelihood.clone(), &options).unwrap();
    let n = y.nrows();
    let k = kernel.matrix(x, x).unwrap();
    let m = Col::from_fn(n, |_| prior_mean);
    let reference = DenseLaplace::fit(
        k.as_ref(),
        m.as_ref(),
        y.as_ref(),
        &likelihood,
        &LaplaceOptions {
            tolerance: 1e-12,
            step_control: gp_models::ncgp::StepControl::Backtracking { max_halvings: 30 },
            ..LaplaceOptions::default()
        },
    )
    .unwrap();
    let f = gp.mode().to_owned();
    let mode_err = (&f - &reference.f).norm_l2() / reference.f.norm_l2();
    assert!(
        mode_err < 1e-9,
        "mode differs from DenseLaplace by {mode_err:.2e}"
    );
    // log q = log p(y | f̂) − ½ gᵀK⁻¹g − ½ log det(I + K W), g = f̂ − m.
    let g = &f - &m;
    let kinv_g = gp_linalg::Cholesky::new(k.as_ref())
        .unwrap()
        .solve_col(g.as_ref())
        .unwrap();
    let w = likelihood.curvature_dense(f.as_ref());
    let iw = Mat::<f64>::identity(n, n) + &k * &w;
    // det(I + K W) by LU (no symmetric form: independent of the model's B).
    let log_det = iw.determinant().abs().ln();
    let direct = likelihood.log_likelihood(f.as_ref(), y.as_ref())
        - 0.5 * (g.transpose() * &kinv_g)
        - 0.5 * log_det;
    let lq = gp.lml(&LmlRequest::value()).unwrap().lml;
    assert!(rel_close(lq, direct, 1e-9), "log q {lq} vs dense {direct}");
    // Latent marginals against IterNCGP's posterior form at the same mode.
    let post = reference
        .posterior_at_mode(k.as_ref(), m.as_ref(), y.as_ref(), &likelihood)
        .unwrap();
    let xt = inputs(5, x.ncols(), 99);
    let cross = gp_kernels::KernelOperator::cross(kernel, xt.as_ref(), x).unwrap();
    let prior_var = Col::from_fn(5, |j| cross_diag(&gp, xt.as_ref(), j));
    let want = post.predict(&cross, prior_var.as_ref(), None).unwrap();
    let got = gp
        .predict_latent(xt.as_ref(), &PredictRequest::default())
        .unwrap();
    for j in 0..5 {
        assert!((got.mean[j] - prior_mean - want.mean[(j, 0)]).abs() < 1e-7);
        let v = got.variance.as_ref().unwrap()[j];
        assert!(
            (v - want.variance[(j, 0)]).abs() < 1e-7,
            "{v} vs {}",
            want.variance[(j, 0)]
        );
    }
}

fn cross_diag<K: Kernel + Clone, L: LaplaceLikelihood>(
    gp: &LaplaceGp<K, L>,
    xt: MatRef<'_, f64>,
    j: usize,
) -> f64 {
    gp.kernel().diag(xt).unwrap()[j]
}

#[test]
fn bernoulli_evidence_mode_and_marginals_match_dense_formulas() {
    let x = inputs(35, 1, 3);
    let y = binary_labels(x.as_ref());
    let kernel = SquaredExponential::new(vec![0.6], 3.0).unwrap();
    check_against_dense(kernel, x.as_ref(), &y, Bernoulli, 0.0);
}

#[test]
fn poisson_evidence_mode_and_marginals_match_dense_formulas() {
    let x = inputs(30, 2, 4);
    let y = counts(x.as_ref(), 5);
    let kernel = Matern::new(MaternNu::FiveHalves, vec![1.0, 1.5], 1.0).unwrap();
    check_against_dense(kernel, x.as_ref(), &y, Poisson::new(), 0.5);
}

/// The analytic gradient (explicit and implicit terms) against central differences of the
/// evidence, each hyperparameter perturbed by ±1e-5 with the mode found again.
fn check_gradient<K: Kernel + Clone + Send + Sync, L: LaplaceLikelihood>(gp: &LaplaceGp<K, L>) {
    let est = gp.lml(&LmlRequest::with_gradient()).unwrap();
    let p = gp.log_params();
    let h = 1e-5;
    for i in 0..p.len() {
        let mut up = p.clone();
        up[i] += h;
        let mut down = p.clone();
        down[i] -= h;
        let fu = gp
            .with_log_params(&up)
            .unwrap()
            .lml(&LmlRequest::value())
            .unwrap()
            .lml;
        let fd = gp
            .with_log_params(&down)
            .unwrap()
            .lml(&LmlRequest::value())
            .unwrap()
            .lml;
        let fdiff = (fu - fd) / (2.0 * h);
        assert!(
            (est.grad[i] - fdiff).abs() <= 1e-6 * (1.0 + fdiff.abs()),
            "{}: analytic {} vs finite difference {}",
            gp.param_names()[i],
            est.grad[i],
            fdiff
        );
    }
}

#[test]
fn bernoulli_gradient_matches_finite_differences() {
    let x = inputs(40, 2, 6);
    let y = binary_labels(x.as_ref());
    let kernel = SquaredExponential::new(vec![0.7, 2.0], 4.0).unwrap();
    let gp = LaplaceGp::fit(
        kernel,
        x.as_ref(),
        y.as_ref(),
        Bernoulli,
        &Default::default(),
    );
    check_gradient(&gp.unwrap());
}

#[test]
fn poisson_gradient_matches_finite_differences() {
    let x = inputs(40, 1, 7);
    let y = counts(x.as_ref(), 8);
    let kernel = Matern::new(MaternNu::ThreeHalves, vec![0.9], 1.2).unwrap();
    let gp = LaplaceGp::fit(
        kernel,
        x.as_ref(),
        y.as_ref(),
        Poisson::new(),
        &Default::default(),
    );
    check_gradient(&gp.unwrap());
}

#[test]
fn gaussian_noise_gradient_matches_finite_differences() {
    let x = inputs(25, 1, 9);
    let y = Col::from_fn(25, |i| x[(i, 0)].cos());
    let kernel = SquaredExponential::new(vec![0.9], 1.0).unwrap();
    let lik = Gaussian::new(0.1).unwrap();
    let gp = LaplaceGp::fit(kernel, x.as_ref(), y.as_ref(), lik, &Default::default());
    check_gradient(&gp.unwrap());
}

/// Large counts from `f = 0`: the undamped step overshoots (spec §7.1); backtracking
/// finds the mode, and it is the dense reference's.
#[test]
fn poisson_large_counts_converge_with_backtracking() {
    let x = inputs(30, 1, 10);
    let y = Col::from_fn(30, |i| (200.0 + 100.0 * x[(i, 0)].sin()).round());
    let kernel = SquaredExponential::new(vec![1.0], 2.0).unwrap();
    check_against_dense(kernel, x.as_ref(), &y, Poisson::new(), 0.0);
}

/// Training by `train` (L-BFGS, since the evidence is deterministic) raises the evidence
/// and moves the length scale off a poor start.
#[test]
fn laplace_gp_trains_through_train() {
    let x = inputs(60, 1, 11);
    let y = binary_labels(x.as_ref());
    let kernel = SquaredExponential::new(vec![5.0], 1.0).unwrap();
    let gp = LaplaceGp::fit(
        kernel,
        x.as_ref(),
        y.as_ref(),
        Bernoulli,
        &Default::default(),
    )
    .unwrap();
    assert!(gp.has_exact_lml());
    let before = gp.lml(&LmlRequest::value()).unwrap().lml;
    let trained = train(&gp, &TrainOptions::default()).unwrap().model;
    let after = trained.lml(&LmlRequest::with_gradient()).unwrap();
    assert!(after.lml > before + 1.0, "{before} → {}", after.lml);
    // At the optimum the gradient is small against its start.
    let g0 = gp.lml(&LmlRequest::with_gradient()).unwrap().grad;
    let norm = |g: &[f64]| g.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(norm(&after.grad) < 1e-2 * norm(&g0), "{:?}", after.grad);
    // The labels flip every π/2 in x: the learned length scale is well below the start.
    assert!(
        trained.log_params()[0] < 5f64.ln() - 1.0,
        "{:?}",
        trained.log_params()
    );
    assert!(format!("{trained}").starts_with("LaplaceGp: n = 60, d = 1, Bernoulli likelihood"));
}

#[test]
fn laplace_gp_refuses_bad_input() {
    let x = inputs(10, 1, 12);
    let y = binary_labels(x.as_ref());
    let kernel = SquaredExponential::new(vec![1.0], 1.0).unwrap();
    let opts = LaplaceGpOptions::default();
    // Softmax couples the classes.
    let err = LaplaceGp::fit(
        kernel.clone(),
        x.as_ref(),
        y.as_ref(),
        Softmax::new(3).unwrap(),
        &opts,
    )
    .unwrap_err();
    assert!(err.to_string().contains("softmax"), "{err}");
    // A label 2 for a binary likelihood.
    let mut bad = y.clone();
    bad[4] = 2.0;
    let err = LaplaceGp::fit(kernel.clone(), x.as_ref(), bad.as_ref(), Bernoulli, &opts);
    assert!(matches!(
        err,
        Err(ModelError::InvalidTarget { index: 4, .. })
    ));
    // Wrong number of targets, wrong kernel dimension, non-finite inputs.
    let short = Col::<f64>::zeros(9);
    let err = LaplaceGp::fit(kernel.clone(), x.as_ref(), short.as_ref(), Bernoulli, &opts);
    assert!(matches!(err, Err(ModelError::LengthMismatch { .. })));
    let k2 = SquaredExponential::new(vec![1.0, 1.0], 1.0).unwrap();
    let err = LaplaceGp::fit(k2, x.as_ref(), y.as_ref(), Bernoulli, &opts);
    assert!(matches!(err, Err(ModelError::KernelDim { .. })));
    let mut xn = x.clone();
    xn[(3, 0)] = f64::NAN;
    let err = LaplaceGp::fit(kernel.clone(), xn.as_ref(), y.as_ref(), Bernoulli, &opts);
    assert!(matches!(err, Err(ModelError::NonFinite { .. })));
    // A step budget too small for the tolerance.
    let one_step = LaplaceGpOptions {
        max_steps: 1,
        ..opts
    };
    let err = LaplaceGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), Bernoulli, &one_step);
    assert!(
        matches!(err, Err(ModelError::ModeNotFound { steps: 1, .. })),
        "{err:?}"
    );
    let bad_tol = LaplaceGpOptions {
        tolerance: 0.0,
        ..opts
    };
    let err = LaplaceGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), Bernoulli, &bad_tol);
    assert!(matches!(err, Err(ModelError::InvalidOption { .. })));
    // Wrong parameter count, test points of the wrong dimension, a LOVE request.
    let gp = LaplaceGp::fit(kernel, x.as_ref(), y.as_ref(), Bernoulli, &opts).unwrap();
    assert!(matches!(
        gp.with_log_params(&[0.0]),
        Err(ModelError::LengthMismatch { .. })
    ));
    let xt = Mat::<f64>::zeros(2, 3);
    assert!(matches!(
        gp.predict_latent(xt.as_ref(), &PredictRequest::default()),
        Err(ModelError::TestDim { .. })
    ));
    let love = PredictRequest::variance(VarianceMethod::Love { rank: 5 });
    assert!(gp.predict_latent(x.as_ref(), &love).is_err());
}
