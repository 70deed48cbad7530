//! Training recovers the hyperparameters of data drawn from a known GP.

use faer::{Col, Mat};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::Cholesky;
use gp_models::{train, ExactGp, TrainOptions, TrainStart};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

const TRUE_LS: [f64; 2] = [1.0, 0.6];
const TRUE_VAR: f64 = 1.5;
const TRUE_NOISE: f64 = 0.1;

/// n points uniform in [0, 6]², y ~ N(0, K + σ²I) drawn via a Cholesky factor.
fn draw(n: usize, seed: u64) -> (Mat<f64>, Col<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.random::<f64>() * 6.0);
    let kernel = SquaredExponential::new(TRUE_LS.to_vec(), TRUE_VAR).unwrap();
    let mut k = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    for i in 0..n {
        k[(i, i)] += TRUE_NOISE;
    }
    let chol = Cholesky::new(k.as_ref()).unwrap();
    let z = Mat::from_fn(n, 1, |_, _| rng.sample::<f64, _>(StandardNormal));
    let mut y = Mat::<f64>::zeros(n, 1);
    faer::linalg::matmul::matmul(
        y.as_mut(),
        faer::Accum::Replace,
        chol.factor(),
        z.as_ref(),
        1.0,
        faer::Par::Seq,
    );
    (x, Col::from_fn(n, |i| y[(i, 0)]))
}

#[test]
fn optimization_recovers_known_hyperparameters() {
    let (x, y) = draw(500, 2024);
    // Start far from the truth: length scales ×3 and ×5, variance ÷5, noise ×10.
    let start = SquaredExponential::new(vec![3.0, 3.0], 0.3).unwrap();
    let gp = ExactGp::fit(start, x.as_ref(), y.as_ref(), 1.0).unwrap();
    let trained = train(
        &gp,
        &TrainOptions {
            restarts: 2,
            seed: 7,
            ..TrainOptions::default()
        },
    )
    .unwrap();
    let model = &trained.model;
    let report = &trained.report;
    assert_eq!(report.runs.len(), 3);
    assert_eq!(report.param_names, model.param_names());
    let best = report.best().unwrap();
    assert!(best.reason.is_converged(), "{:?}", best.reason);
    for run in &report.runs {
        if let Ok(r) = &run.outcome {
            assert!(r.f >= best.f);
            assert_eq!(r.trajectory[0].x, run.start);
        }
    }
    // The reported optimum is the refitted model's.
    assert!((model.log_marginal_likelihood() + best.f).abs() < 1e-9 * best.f.abs());

    // Exact check that cannot be fooled by sampling error: the maximum likelihood is at least
    // the likelihood at the true hyperparameters.
    let truth = gp
        .with_kernel_and_noise(
            SquaredExponential::new(TRUE_LS.to_vec(), TRUE_VAR).unwrap(),
            TRUE_NOISE,
        )
        .unwrap();
    assert!(model.log_marginal_likelihood() >= truth.log_marginal_likelihood());

    // At the optimum the gradient vanishes: L-BFGS stops at |g|∞ ≤ 1e-5 or when the
    // relative change of the NLML (≈ 400 here) falls below 2.2e-9, i.e. ~1e-6 absolute,
    // which on this problem leaves |g|∞ ≈ 1e-4; 1e-3 leaves room for platform round-off.
    let (_, grad) = model.lml_and_grad();
    let gmax = grad.iter().fold(0.0_f64, |m, g| m.max(g.abs()));
    eprintln!(
        "|g|∞ = {gmax:e} after {} iterations, {} evaluations ({:?})",
        best.iterations, best.evaluations, best.reason
    );
    assert!(gmax < 1e-3, "gradient at the optimum {grad:?}");

    // Sampling error of the MLE from one draw of 500 points: the noise variance is
    // estimated from ~500 residuals, relative sd ≈ √(2/500) ≈ 6% (plus the effect of the
    // other parameters), so ±30% is a 4-5 σ band. Length scales of a smooth SE draw on a
    // [0,6]² domain spanning 6-10 length scales are estimated to ~10%: ±30%. The output
    // variance is only weakly identified from a single draw on a bounded domain (its
    // sampling sd is ~1/√(number of independent patches) ≈ 15-25%): within a factor 2.
    let p = model.log_params();
    let ls0 = p[0].exp();
    let ls1 = p[1].exp();
    let var = p[2].exp();
    let noise = p[3].exp();
    eprintln!("learned ℓ = ({ls0}, {ls1}), σ_f² = {var}, σ² = {noise}");
    assert!((ls0 / TRUE_LS[0] - 1.0).abs() < 0.3, "ℓ₀ = {ls0}");
    assert!((ls1 / TRUE_LS[1] - 1.0).abs() < 0.3, "ℓ₁ = {ls1}");
    assert!(var / TRUE_VAR > 0.5 && var / TRUE_VAR < 2.0, "σ_f² = {var}");
    assert!((noise / TRUE_NOISE - 1.0).abs() < 0.3, "σ² = {noise}");
}

#[test]
fn restarts_are_reproducible_from_the_seed() {
    let (x, y) = draw(60, 3);
    let gp = ExactGp::fit(
        SquaredExponential::new(vec![2.0, 2.0], 1.0).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.5,
    )
    .unwrap();
    let opts = TrainOptions {
        restarts: 3,
        seed: 42,
        start: TrainStart::Model,
        ..TrainOptions::default()
    };
    let a = train(&gp, &opts).unwrap();
    let b = train(&gp, &opts).unwrap();
    assert_eq!(a.report, b.report);
    let c = train(&gp, &TrainOptions { seed: 43, ..opts }).unwrap();
    assert_ne!(a.report.runs[1].start, c.report.runs[1].start);
    // Restart starts are perturbations of the initial point; the first run starts there.
    assert_eq!(a.report.runs[0].start, gp.log_params());
}

#[test]
fn train_function_fits_then_optimizes() {
    let (x, y) = draw(50, 4);
    let gp = ExactGp::fit_with_options(
        SquaredExponential::new(vec![2.0, 2.0], 1.0).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.5,
        &gp_models::FitOptions::default(),
    )
    .unwrap();
    let trained = train(&gp, &TrainOptions::default()).unwrap();
    assert_eq!(trained.report.runs.len(), 1);
    assert!(trained.report.best().is_some());
}
