//! `SoftmaxLaplaceGp`, the dense multi-class Laplace approximation as a `GpModel`: the mode
//! against the dense Newton reference, the evidence, its gradient and the latent posterior
//! against dense `nC × nC` formulas and finite differences, training through `train`, and
//! typed errors.

use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::{Col, Mat, MatRef};
use gp_kernels::{Kernel, Matern, MaternNu, SquaredExponential};
use gp_models::ncgp::{
    DenseLaplace, LaplaceLikelihood, LaplaceOptions, Softmax, SoftmaxGpOptions, SoftmaxLaplaceGp,
};
use gp_models::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CLASSES: usize = 3;

fn inputs(n: usize, d: usize, seed: u64) -> Mat<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Mat::from_fn(n, d, |_, _| rng.random_range(0.0..3.0))
}

/// Three classes by angle around the centre, with a few labels flipped so that the mode is
/// finite and not near-separable.
fn labels(x: MatRef<'_, f64>, seed: u64) -> Col<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Col::from_fn(x.nrows(), |i| {
        let angle = (x[(i, 1)] - 1.5).atan2(x[(i, 0)] - 1.5) + std::f64::consts::PI;
        let class = ((angle / (2.0 * std::f64::consts::PI / 3.0)) as usize).min(2);
        if rng.random::<f64>() < 0.1 {
            ((class + 1) % CLASSES) as f64
        } else {
            class as f64
        }
    })
}

/// `K ⊗ I_C` in the point-major layout (`i·C + c`).
fn kron_identity(k: MatRef<'_, f64>, c: usize) -> Mat<f64> {
    let n = k.nrows();
    Mat::from_fn(n * c, n * c, |p, q| {
        if p % c == q % c {
            k[(p / c, q / c)]
        } else {
            0.0
        }
    })
}

/// The mode as one point-major column.
fn stacked(m: MatRef<'_, f64>) -> Col<f64> {
    let c = m.ncols();
    Col::from_fn(m.nrows() * c, |p| m[(p / c, p % c)])
}

fn fit(
    kernel: SquaredExponential,
    x: MatRef<'_, f64>,
    y: &Col<f64>,
) -> SoftmaxLaplaceGp<SquaredExponential> {
    SoftmaxLaplaceGp::fit(
        kernel,
        x,
        y.as_ref(),
        Softmax::new(CLASSES).unwrap(),
        &SoftmaxGpOptions::default(),
    )
    .unwrap()
}

fn data() -> (Mat<f64>, Col<f64>, SquaredExponential) {
    let x = inputs(36, 2, 3);
    let y = labels(x.as_ref(), 4);
    (x, y, SquaredExponential::new(vec![0.9, 1.2], 2.5).unwrap())
}

/// `log |det A|` by LU (the product of `U`'s diagonal).
fn log_abs_det(a: MatRef<'_, f64>) -> f64 {
    let lu = a.partial_piv_lu();
    let u = lu.U();
    (0..a.nrows()).map(|i| u[(i, i)].abs().ln()).sum()
}

/// The mode equals the dense Newton reference on `K ⊗ I_C` (R&W's algorithm is only a
/// cheaper way to take the same Newton steps).
#[test]
fn mode_equals_dense_newton() {
    let (x, y, kernel) = data();
    let gp = fit(kernel.clone(), x.as_ref(), &y);
    let k = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    let kbar = kron_identity(k.as_ref(), CLASSES);
    let softmax = Softmax::new(CLASSES).unwrap();
    let dense = DenseLaplace::fit(
        kbar.as_ref(),
        Col::zeros(kbar.nrows()).as_ref(),
        y.as_ref(),
        &softmax,
        &LaplaceOptions {
            tolerance: 1e-13,
            ..LaplaceOptions::default()
        },
    )
    .unwrap();
    let ours = stacked(gp.mode());
    let err = (&ours - &dense.f).norm_l2() / dense.f.norm_l2();
    assert!(err < 1e-9, "mode differs from dense Newton by {err:.3e}");
    assert!(gp.newton_steps() < 30);
    // At the mode a_c = y_c − π_c, i.e. f̂ = K̄ ∇log p(y | f̂).
    let grad = softmax.gradient(ours.as_ref(), y.as_ref());
    let fixed_point = &kbar * &grad;
    assert!((&fixed_point - &ours).norm_l2() < 1e-8 * ours.norm_l2());
}

/// The evidence equals its definition evaluated densely:
/// `log p(y | f̂) − ½ f̂ᵀK̄⁻¹f̂ − ½ log det(I + K̄W)` with `W` the dense softmax curvature.
#[test]
fn evidence_equals_dense_definition() {
    let (x, y, kernel) = data();
    let gp = fit(kernel.clone(), x.as_ref(), &y);
    let k = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    let kbar = kron_identity(k.as_ref(), CLASSES);
    let softmax = Softmax::new(CLASSES).unwrap();
    let f = stacked(gp.mode());
    let w = softmax.curvature_dense(f.as_ref());
    let nc = f.nrows();
    let a = Mat::<f64>::identity(nc, nc) + &kbar * &w;
    let quad: f64 = f.transpose() * kbar.partial_piv_lu().solve(f.as_mat()).col(0);
    let dense =
        softmax.log_likelihood(f.as_ref(), y.as_ref()) - 0.5 * quad - 0.5 * log_abs_det(a.as_ref());
    let ours = gp.lml(&LmlRequest::value()).unwrap().lml;
    assert!(
        (ours - dense).abs() < 1e-8 * (1.0 + dense.abs()),
        "{ours} vs {dense}"
    );
}

/// The analytic gradient (explicit and implicit terms) against central differences of the
/// evidence, for an SE-ARD and a Matérn kernel. Each evidence is at a mode found to 1e-10,
/// so differences at h = 1e-5 are good to about 1e-7.
#[test]
fn gradient_matches_finite_differences() {
    let (x, y, se) = data();
    let matern = Matern::new(MaternNu::FiveHalves, vec![1.1, 0.8], 1.7).unwrap();
    check_gradient(fit(se, x.as_ref(), &y));
    let gp = SoftmaxLaplaceGp::fit(
        matern,
        x.as_ref(),
        y.as_ref(),
        Softmax::new(CLASSES).unwrap(),
        &SoftmaxGpOptions::default(),
    )
    .unwrap();
    check_gradient(gp);
}

fn check_gradient<K: Kernel + Clone + Send + Sync>(gp: SoftmaxLaplaceGp<K>) {
    let est = gp.lml(&LmlRequest::with_gradient()).unwrap();
    let theta = gp.log_params();
    assert_eq!(est.grad.len(), theta.len());
    let h = 1e-5;
    for (j, g) in est.grad.iter().enumerate() {
        let at = |delta: f64| {
            let mut t = theta.clone();
            t[j] += delta;
            gp.with_log_params(&t)
                .unwrap()
                .lml(&LmlRequest::value())
                .unwrap()
                .lml
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!(
            (g - fd).abs() < 1e-6 * (1.0 + fd.abs()),
            "{}: analytic {g:.9} vs central difference {fd:.9}",
            gp.param_names()[j]
        );
    }
}

/// The latent marginals at test points equal the dense Laplace posterior
/// `μ_* = Q_*ᵀ ∇log p(y | f̂)`, `Σ_* = k_** I − Q_*ᵀ W (I + K̄W)⁻¹ Q_*` (R&W eq. 3.43), and
/// the class probabilities are a distribution per point.
#[test]
fn latent_marginals_equal_dense_posterior() {
    let (x, y, kernel) = data();
    let gp = fit(kernel.clone(), x.as_ref(), &y);
    let x_test = inputs(7, 2, 9);
    let (mean, variance) = gp.latent_marginals(x_test.as_ref(), true).unwrap();
    let variance = variance.unwrap();
    let k = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    let kbar = kron_identity(k.as_ref(), CLASSES);
    let softmax = Softmax::new(CLASSES).unwrap();
    let f = stacked(gp.mode());
    let w = softmax.curvature_dense(f.as_ref());
    let nc = f.nrows();
    let grad = softmax.gradient(f.as_ref(), y.as_ref());
    // R = W (I + K̄W)⁻¹.
    let a = Mat::<f64>::identity(nc, nc) + &kbar * &w;
    let r = &w * a.partial_piv_lu().inverse();
    let cross = kernel.matrix(x.as_ref(), x_test.as_ref()).unwrap();
    let prior = kernel.diag(x_test.as_ref()).unwrap();
    for j in 0..x_test.nrows() {
        // Q_* = k_* ⊗ I_C (nC × C), point-major rows.
        let kx = cross.col(j);
        let q = Mat::from_fn(nc, CLASSES, |p, c| {
            if p % CLASSES == c {
                kx[p / CLASSES]
            } else {
                0.0
            }
        });
        let mu = q.transpose() * &grad;
        let cov = -(q.transpose() * &r * &q);
        for c in 0..CLASSES {
            assert!((mean[(j, c)] - mu[c]).abs() < 1e-9 * (1.0 + mu[c].abs()));
            let v = prior[j] + cov[(c, c)];
            assert!(
                (variance[(j, c)] - v).abs() < 1e-9,
                "variance {} vs {v}",
                variance[(j, c)]
            );
        }
    }
    let p = gp.predict_proba(x_test.as_ref()).unwrap();
    for j in 0..p.nrows() {
        let total: f64 = (0..CLASSES).map(|c| p[(j, c)]).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }
    // The GpModel layout: point-major, as the Softmax likelihood's latents.
    let latent = gp
        .predict_latent(
            x_test.as_ref(),
            &PredictRequest::variance(VarianceMethod::Exact),
        )
        .unwrap();
    assert_eq!(latent.mean.nrows(), x_test.nrows() * CLASSES);
    assert_eq!(latent.mean[CLASSES + 2], mean[(1, 2)]);
}

/// Training through `train` (L-BFGS on the exact Laplace evidence) raises log q and
/// shrinks the gradient; the trained model classifies the training points better than
/// chance.
#[test]
fn trains_through_the_model_interface() {
    let (x, y, _) = data();
    let start = SquaredExponential::new(vec![3.0, 3.0], 0.5).unwrap();
    let gp = fit(start, x.as_ref(), &y);
    let before = gp.lml(&LmlRequest::with_gradient()).unwrap();
    let trained = train(&gp, &TrainOptions::default()).unwrap().model;
    let after = trained.lml(&LmlRequest::with_gradient()).unwrap();
    assert!(
        after.lml > before.lml + 1.0,
        "{} → {}",
        before.lml,
        after.lml
    );
    let norm = |g: &[f64]| g.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(norm(&after.grad) < 0.01 * norm(&before.grad));
    let p = trained.predict_proba(x.as_ref()).unwrap();
    let correct = (0..x.nrows())
        .filter(|&i| {
            let best = (0..CLASSES)
                .max_by(|&a, &b| p[(i, a)].total_cmp(&p[(i, b)]))
                .unwrap_or(0);
            best == y[i] as usize
        })
        .count();
    assert!(
        correct as f64 > 0.7 * x.nrows() as f64,
        "{correct} of {}",
        x.nrows()
    );
}

/// Bad input gets typed errors.
#[test]
fn bad_input_gets_typed_errors() {
    let (x, y, kernel) = data();
    let softmax = Softmax::new(CLASSES).unwrap();
    let mut bad = y.clone();
    bad[0] = 3.0;
    let err = SoftmaxLaplaceGp::fit(
        kernel.clone(),
        x.as_ref(),
        bad.as_ref(),
        softmax,
        &SoftmaxGpOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::InvalidTarget { .. }), "{err}");
    let err = SoftmaxLaplaceGp::fit(
        kernel.clone(),
        x.as_ref(),
        y.as_ref(),
        softmax,
        &SoftmaxGpOptions {
            tolerance: 0.0,
            ..SoftmaxGpOptions::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::InvalidOption { .. }), "{err}");
    let err = SoftmaxLaplaceGp::fit(
        kernel.clone(),
        x.as_ref(),
        y.subrows(0, 10),
        softmax,
        &SoftmaxGpOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::LengthMismatch { .. }), "{err}");
    let gp = fit(kernel, x.as_ref(), &y);
    let err = gp
        .predict_latent(
            x.as_ref(),
            &PredictRequest::covariance(VarianceMethod::Exact),
        )
        .unwrap_err();
    assert!(matches!(err, ModelError::InvalidOption { .. }), "{err}");
    let err = gp
        .latent_marginals(Mat::<f64>::zeros(2, 3).as_ref(), false)
        .unwrap_err();
    assert!(matches!(err, ModelError::TestDim { .. }), "{err}");
}
