//! IterNCGP against dense references (spec `ncgp.md` §5.1: U1, U2, U6, U7, U9–U11, U13;
//! §5.2: E9, E10, E3's no-recycling start).

use std::ops::ControlFlow;

use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{Cholesky, CountingOperator, DenseOperator, LinearOperator, SymmetricEigen};
use gp_models::ncgp::{
    iterncgp, Bernoulli, DenseLaplace, InnerProgress, IterNcgpOptions, IterNcgpRun,
    LaplaceLikelihood, LaplaceOptions, NewtonForm, Poisson, SharedOutputs, Softmax,
};
use gp_models::{Gaussian, ModelError};
use gp_solvers::pls::{
    virtual_solver_run, PlsOptions, Policy, RecycleBuffers, RecycleOptions, ResidualPolicy,
    UnitVectorPolicy,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn rel(a: ColRef<'_, f64>, b: ColRef<'_, f64>) -> f64 {
    (a.to_owned() - b).norm_l2() / b.norm_l2().max(1e-300)
}

fn rbf(x: MatRef<'_, f64>, lengthscale: f64, outputscale: f64) -> Mat<f64> {
    let d = x.ncols();
    let kernel = SquaredExponential::new(vec![lengthscale; d], outputscale).unwrap();
    kernel.matrix(x, x).unwrap()
}

/// `K_x ⊗ I_C` densely in CN order.
fn kron_identity(kx: MatRef<'_, f64>, c: usize) -> Mat<f64> {
    let n = kx.nrows();
    Mat::from_fn(n * c, n * c, |a, b| {
        if a % c == b % c {
            kx[(a / c, b / c)]
        } else {
            0.0
        }
    })
}

fn never_stop(_: &InnerProgress<'_>) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

/// Options for exact inner solves by unit vectors (`j = N·C`, no recycling).
fn exact_unit_vector_options(nc: usize, steps: usize) -> IterNcgpOptions {
    IterNcgpOptions {
        max_inner: Some(nc),
        solver: PlsOptions {
            abs_tolerance: 0.0,
            rel_tolerance: 0.0,
            ..PlsOptions::default()
        },
        recycling: None,
        outer_tolerance: 0.0,
        max_outer: steps,
        ..IterNcgpOptions::default()
    }
}

fn run<L: LaplaceLikelihood>(
    k: &dyn LinearOperator,
    c: usize,
    y: ColRef<'_, f64>,
    lik: &L,
    policy: &mut dyn Policy,
    options: &IterNcgpOptions,
) -> IterNcgpRun {
    let shared = SharedOutputs::new(k, c).unwrap();
    let m = Col::zeros(k.nrows() * c);
    iterncgp(
        &shared,
        m.as_ref(),
        y,
        lik,
        policy,
        options,
        &mut never_stop,
    )
    .unwrap()
}

fn line_inputs(n: usize) -> Mat<f64> {
    Mat::from_fn(n, 1, |i, _| i as f64 / (n - 1) as f64)
}

/// U1 for one likelihood: IterNCGP with exact inner solves reproduces dense Newton's
/// iterates f_1..f_5, and the posterior mean at the training inputs is f_{i+1}.
fn check_newton_equals_regression<L: LaplaceLikelihood>(
    kx: Mat<f64>,
    y: Col<f64>,
    lik: &L,
    form: NewtonForm,
) {
    let c = lik.latent_outputs();
    let n = kx.nrows();
    let nc = n * c;
    let k = kron_identity(kx.as_ref(), c);
    let reference = DenseLaplace::fit(
        k.as_ref(),
        Col::zeros(nc).as_ref(),
        y.as_ref(),
        lik,
        &LaplaceOptions {
            tolerance: 0.0,
            max_steps: 5,
            form,
            ..LaplaceOptions::default()
        },
    )
    .unwrap();
    assert_eq!(reference.iterates.len(), 5);
    let kx_op = DenseOperator::new(kx.clone());
    for steps in 1..=5 {
        let out = run(
            &kx_op,
            c,
            y.as_ref(),
            lik,
            &mut UnitVectorPolicy::new(),
            &exact_unit_vector_options(nc, steps),
        );
        let e = rel(out.f.as_ref(), reference.iterates[steps - 1].as_ref());
        assert!(
            out.steps.iter().all(|s| s.inner_iterations == nc),
            "{}: an inner solve stopped early: {:?}",
            lik.name(),
            out.steps
        );
        assert!(
            e <= 1e-8,
            "{}: f_{steps} differs from dense Newton by {e:.2e}",
            lik.name()
        );
        // m_{i,*}(X) = f_{i+1}.
        let marg = out
            .posterior
            .predict(&kx_op, Col::from_fn(n, |i| kx[(i, i)]).as_ref(), None)
            .unwrap();
        let mean = Col::from_fn(nc, |j| marg.mean[(j / c, j % c)]);
        let e = rel(mean.as_ref(), out.f.as_ref());
        assert!(
            e <= 1e-10,
            "{}: posterior mean at X vs f: {e:.2e}",
            lik.name()
        );
    }
}

#[test]
fn u1_newton_equals_sequential_regression_poisson() {
    let x = line_inputs(30);
    let y = Col::from_fn(30, |i| (1.5 * (6.0 * x[(i, 0)]).sin()).exp().round());
    check_newton_equals_regression(
        rbf(x.as_ref(), 0.3, 1.0),
        y,
        &Poisson::new(),
        NewtonForm::True,
    );
}

#[test]
fn u1_newton_equals_sequential_regression_logistic() {
    let x = line_inputs(30);
    let y = Col::from_fn(30, |i| {
        if (5.0 * x[(i, 0)]).sin() + 0.3 * ((i * 7 % 5) as f64 - 2.0) > 0.0 {
            1.0
        } else {
            0.0
        }
    });
    check_newton_equals_regression(rbf(x.as_ref(), 0.3, 4.0), y, &Bernoulli, NewtonForm::True);
}

#[test]
fn u1_u11_softmax_pseudo_inverse_iterates_equal_true_newton_with_a_shared_kernel() {
    let x = line_inputs(20);
    let y = Col::from_fn(20, |i| ((3.0 * x[(i, 0)]) as usize % 3) as f64);
    let lik = Softmax::new(3).unwrap();
    // W† is noise-free along each point's class sum, where K̂ is K_x itself: a length
    // scale of twice the spacing keeps K_x well enough conditioned for N·C exact unit-vector
    // steps (at ℓ = 0.3 the partial Cholesky breaks down before j = N·C).
    let kx = rbf(x.as_ref(), 0.1, 2.0);
    // Against true Newton (W singular): U11, rel ≤ 1e-7; against the regression form: U1.
    check_newton_equals_regression(kx.clone(), y.clone(), &lik, NewtonForm::True);
    check_newton_equals_regression(kx.clone(), y.clone(), &lik, NewtonForm::Regression);
    // Per-point class sums of g stay zero.
    let kx = DenseOperator::new(kx);
    let out = run(
        &kx,
        3,
        y.as_ref(),
        &lik,
        &mut ResidualPolicy,
        &IterNcgpOptions::default(),
    );
    let worst = (0..20)
        .map(|p| (out.f[3 * p] + out.f[3 * p + 1] + out.f[3 * p + 2]).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-10, "class sum of g drifted to {worst:.2e}");
}

#[test]
fn u11_per_class_kernels_are_refused_by_the_regression_form() {
    let x = line_inputs(10);
    let y = Col::from_fn(10, |i| (i % 2) as f64);
    let lik = Softmax::new(2).unwrap();
    let (k0, k1) = (rbf(x.as_ref(), 0.2, 1.0), rbf(x.as_ref(), 0.5, 3.0));
    let k = Mat::from_fn(20, 20, |a, b| match (a % 2, b % 2) {
        (0, 0) => k0[(a / 2, b / 2)],
        (1, 1) => k1[(a / 2, b / 2)],
        _ => 0.0,
    });
    let m = Col::zeros(20);
    let regression = LaplaceOptions {
        form: NewtonForm::Regression,
        ..LaplaceOptions::default()
    };
    let err = DenseLaplace::fit(k.as_ref(), m.as_ref(), y.as_ref(), &lik, &regression).unwrap_err();
    assert!(
        matches!(err, ModelError::PseudoInverseInvalid { defect } if defect > 1e-3),
        "{err}"
    );
    // True Newton handles per-class kernels and reaches a stationary point.
    let fit = DenseLaplace::fit(
        k.as_ref(),
        m.as_ref(),
        y.as_ref(),
        &lik,
        &LaplaceOptions {
            tolerance: 1e-12,
            ..LaplaceOptions::default()
        },
    )
    .unwrap();
    assert!(fit.converged);
    // ∇Ψ = ∇ log p − K⁻¹ g = 0  ⇔  K ∇ log p = g.
    let grad = lik.gradient(fit.f.as_ref(), y.as_ref());
    let e = rel((&k * &grad).as_ref(), fit.f.as_ref());
    assert!(
        e < 1e-8,
        "true Newton's fixed point is not stationary: {e:.2e}"
    );
}

#[test]
fn u2_gaussian_reduces_to_itergp() {
    let x = line_inputs(25);
    let y = Col::from_fn(25, |i| (7.0 * x[(i, 0)]).sin());
    let noise = 0.05;
    let lik = Gaussian::new(noise).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let f0 = Col::from_fn(25, |_| rng.random::<f64>() * 4.0 - 2.0);
    let yhat = lik.pseudo_targets(f0.as_ref(), y.as_ref()).unwrap();
    assert!(rel(yhat.as_ref(), y.as_ref()) <= 1e-12);
    let kx = rbf(x.as_ref(), 0.2, 1.0);
    let op = DenseOperator::new(kx.clone());
    let one = run(
        &op,
        1,
        y.as_ref(),
        &lik,
        &mut UnitVectorPolicy::new(),
        &exact_unit_vector_options(25, 1),
    );
    let khat = &kx + Mat::<f64>::identity(25, 25) * noise;
    let exact = &kx
        * Cholesky::new(khat.as_ref())
            .unwrap()
            .solve_col(y.as_ref())
            .unwrap();
    assert!(rel(one.f.as_ref(), exact.as_ref()) <= 1e-10);
    let two = run(
        &op,
        1,
        y.as_ref(),
        &lik,
        &mut UnitVectorPolicy::new(),
        &exact_unit_vector_options(25, 2),
    );
    assert!(
        two.steps[1].relative_change <= 1e-10,
        "{}",
        two.steps[1].relative_change
    );
    // With a fixed policy, the inner iterates are those of one IterGP run on (y, σ²I).
    let cg = IterNcgpOptions {
        max_inner: Some(7),
        max_outer: 1,
        ..IterNcgpOptions::default()
    };
    let mut weights = Vec::new();
    let shared = SharedOutputs::new(&op, 1).unwrap();
    iterncgp(
        &shared,
        Col::zeros(25).as_ref(),
        y.as_ref(),
        &lik,
        &mut ResidualPolicy,
        &cg,
        &mut |p| {
            weights.push(p.weights.to_owned());
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    let winv = DenseOperator::new(Mat::<f64>::identity(25, 25) * noise);
    let mut solver = gp_solvers::pls::ProbabilisticSolver::new(
        &op,
        &winv,
        y.as_ref(),
        None,
        PlsOptions::default(),
    )
    .unwrap();
    for (j, w) in weights.iter().enumerate().skip(1) {
        solver.step(&mut ResidualPolicy).unwrap();
        assert!(
            rel(w.as_ref(), solver.solution()) <= 1e-12,
            "inner iterate {j}"
        );
    }
}

/// The exact Laplace variance at test points, `k(x,x) − k(x,X)(K + W⁻¹)⁻¹k(X,x)`, with the
/// computational part `k(x,X)(K̂⁻¹ − QQᵀ)k(X,x)`, for a C = 1 problem.
fn exact_and_computational(
    kx: &Mat<f64>,
    cross: &Mat<f64>,
    winv: &Mat<f64>,
    root: MatRef<'_, f64>,
    prior: f64,
) -> (Vec<f64>, Vec<f64>) {
    let khat = kx + winv;
    let chol = Cholesky::new(khat.as_ref()).unwrap();
    let kinv_kt = chol.solve(cross.transpose()).unwrap();
    let kq = cross * root;
    (0..cross.nrows())
        .map(|i| {
            let full: f64 = (0..kx.nrows())
                .map(|j| cross[(i, j)] * kinv_kt[(j, i)])
                .sum();
            let low: f64 = (0..root.ncols()).map(|b| kq[(i, b)].powi(2)).sum();
            (prior - full, full - low)
        })
        .unzip()
}

#[test]
fn u6_u7_variance_is_monotone_and_combines_mathematical_and_computational_parts() {
    let n = 30;
    let x = line_inputs(n);
    let y = Col::from_fn(n, |i| {
        if (6.0 * x[(i, 0)]).cos() > 0.0 {
            1.0
        } else {
            0.0
        }
    });
    let kernel = SquaredExponential::new(vec![0.2], 3.0).unwrap();
    let kx = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    let xt = Mat::from_fn(7, 1, |i, _| 0.07 + 0.13 * i as f64);
    let cross = kernel.matrix(xt.as_ref(), x.as_ref()).unwrap();
    let op = DenseOperator::new(kx.clone());
    let cross_op = DenseOperator::new(cross.clone());
    let shared = SharedOutputs::new(&op, 1).unwrap();
    let lik = Bernoulli;
    // Newton step 1 (i = 1) starts from f_1 of an exact first step; record every j.
    // Exact at j = N: unit vectors (a Cholesky); CG's C_N is not K̂⁻¹ in floating point
    // (its directions lose conjugacy), so it is checked for the other properties only.
    for (policy, exact_at_n) in [
        (&mut ResidualPolicy as &mut dyn Policy, false),
        (&mut UnitVectorPolicy::new(), true),
    ] {
        let options = IterNcgpOptions {
            max_inner: Some(n),
            solver: PlsOptions {
                abs_tolerance: 0.0,
                rel_tolerance: 0.0,
                ..PlsOptions::default()
            },
            recycling: None,
            outer_tolerance: 0.0,
            max_outer: 2,
            ..IterNcgpOptions::default()
        };
        let mut variances: Vec<Vec<f64>> = Vec::new();
        let mut checked = 0;
        let mut f_start = Col::zeros(n);
        let mut last_outer = 0;
        let mut f_prev_weights = Col::zeros(n);
        iterncgp(
            &shared,
            Col::zeros(n).as_ref(),
            y.as_ref(),
            &lik,
            policy,
            &options,
            &mut |p| {
                if p.outer != last_outer {
                    // f_1 = K v at the end of step 0.
                    f_start = &kx * &f_prev_weights;
                    last_outer = p.outer;
                    variances.clear();
                }
                f_prev_weights = p.weights.to_owned();
                if p.outer == 1 {
                    let marg = shared_predict(&cross_op, p, 3.0);
                    let winv = lik.inverse_curvature(f_start.as_ref()).unwrap();
                    let winv = winv.to_dense();
                    let (exact, comp) = exact_and_computational(&kx, &cross, &winv, p.root, 3.0);
                    for i in 0..7 {
                        // U7: combined = exact + computational, the latter ≥ 0.
                        assert!(
                            (marg[i] - exact[i] - comp[i]).abs() <= 1e-10,
                            "U7 at j = {}",
                            p.inner
                        );
                        assert!(comp[i] >= -1e-12, "computational variance {}", comp[i]);
                        // U6: never below the exact variance.
                        assert!(marg[i] >= exact[i] - 1e-10);
                        if exact_at_n && p.inner == n {
                            assert!(
                                (marg[i] - exact[i]).abs() <= 1e-10,
                                "not exact at j = N: {} vs {} (comp {})",
                                marg[i],
                                exact[i],
                                comp[i]
                            );
                        }
                    }
                    if let Some(prev) = variances.last() {
                        for i in 0..7 {
                            assert!(
                                marg[i] <= prev[i] + 1e-12,
                                "variance grew at j = {}",
                                p.inner
                            );
                        }
                    }
                    variances.push(marg);
                    checked += 1;
                }
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        assert_eq!(checked, n + 1);
    }
}

fn shared_predict(cross: &DenseOperator, p: &InnerProgress<'_>, prior: f64) -> Vec<f64> {
    let posterior =
        gp_models::ncgp::IterNcgpPosterior::new(p.weights.to_owned(), p.root.to_owned(), 1)
            .unwrap();
    let marg = posterior
        .predict(cross, Col::from_fn(cross.nrows(), |_| prior).as_ref(), None)
        .unwrap();
    (0..cross.nrows()).map(|i| marg.variance[(i, 0)]).collect()
}

#[test]
fn u9_trace_identity_for_eigenvector_actions() {
    let x = line_inputs(12);
    let kx = rbf(x.as_ref(), 0.25, 1.5);
    let eig = SymmetricEigen::new(kx.as_ref()).unwrap();
    // The four largest eigenvectors as actions (values ascending).
    let kept: Vec<usize> = (8..12).collect();
    let s = Mat::from_fn(12, 4, |i, j| eig.vectors[(i, kept[j])]);
    let t = &kx * &s;
    let zero = DenseOperator::new(Mat::zeros(12, 12));
    let rec = virtual_solver_run(
        RecycleBuffers::new(s, t).unwrap(),
        &zero,
        &RecycleOptions::default(),
    )
    .unwrap();
    let kq = &kx * &rec.root;
    let tr_k: f64 = (0..12).map(|i| kx[(i, i)]).sum();
    let tr_kck: f64 = (0..kq.nrows())
        .map(|i| (0..kq.ncols()).map(|b| kq[(i, b)].powi(2)).sum::<f64>())
        .sum();
    let dropped: f64 = (0..8).map(|l| eig.values[l]).sum();
    let lhs = tr_k - tr_kck;
    assert!(
        (lhs - dropped).abs() <= 1e-10 * dropped.abs().max(1e-300) + 1e-14,
        "{lhs} vs {dropped}"
    );
    let tr_m: f64 = kept.iter().map(|&l| eig.values[l]).sum();
    assert!((lhs - (tr_k - tr_m)).abs() <= 1e-10 * tr_k);
}

#[test]
fn u10_softmax_pseudo_inverse_is_the_moore_penrose_inverse() {
    let (n, c) = (6, 4);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let f = Col::from_fn(n * c, |_| rng.random::<f64>() * 6.0 - 3.0);
    let y = Col::from_fn(n, |i| (i % c) as f64);
    let lik = Softmax::new(c).unwrap();
    let w = lik.curvature_dense(f.as_ref());
    let winv = lik.inverse_curvature(f.as_ref()).unwrap().to_dense();
    // Dense pseudo-inverse from the eigendecomposition (rank N(C − 1)).
    let eig = SymmetricEigen::new(w.as_ref()).unwrap();
    let top = eig.values.iter().copied().fold(0.0, f64::max);
    let pinv = Mat::from_fn(n * c, n * c, |a, b| {
        (0..n * c)
            .filter(|&l| eig.values[l] > 1e-12 * top)
            .map(|l| eig.vectors[(a, l)] * eig.vectors[(b, l)] / eig.values[l])
            .sum::<f64>()
    });
    let scale = pinv.norm_l2();
    assert!((&winv - &pinv).norm_l2() <= 1e-10 * scale);
    for (name, lhs, rhs) in [
        ("W W† W = W", &w * &winv * &w, w.clone()),
        ("W† W W† = W†", &winv * &w * &winv, winv.clone()),
        (
            "(W W†)ᵀ = W W†",
            (&w * &winv).transpose().to_owned(),
            &w * &winv,
        ),
        (
            "(W† W)ᵀ = W† W",
            (&winv * &w).transpose().to_owned(),
            &winv * &w,
        ),
    ] {
        let e = (&lhs - &rhs).norm_l2() / rhs.norm_l2();
        assert!(e <= 1e-10, "{name}: {e:.2e}");
    }
    // Closed-form pseudo targets against f + W†∇.
    let closed = lik.pseudo_targets(f.as_ref(), y.as_ref()).unwrap();
    let direct = &f + &winv * lik.gradient(f.as_ref(), y.as_ref());
    assert!(rel(closed.as_ref(), direct.as_ref()) <= 1e-12);
}

/// The 2-D binary data of App. C.1: x₁ ~ U(−3, 5), x₂ ~ U(−4, 1), f ~ GP(0, s·RBF(1)),
/// y ~ Bernoulli(σ(f)).
fn binary_2d(n: usize, outputscale: f64, seed: u64) -> (Mat<f64>, Col<f64>, Mat<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, j| {
        if j == 0 {
            -3.0 + 8.0 * rng.random::<f64>()
        } else {
            -4.0 + 5.0 * rng.random::<f64>()
        }
    });
    let kx = rbf(x.as_ref(), 1.0, outputscale);
    let jittered = &kx + Mat::<f64>::identity(n, n) * (1e-8 * outputscale);
    let l = Cholesky::new(jittered.as_ref()).unwrap();
    let z = Col::from_fn(n, |_| {
        let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    });
    let f = l.factor() * &z;
    let y = Col::from_fn(n, |i| {
        let p = 1.0 / (1.0 + (-f[i]).exp());
        if rng.random::<f64>() < p {
            1.0
        } else {
            0.0
        }
    });
    (x, y, kx)
}

#[test]
fn u13_e10_recycled_cg_reaches_the_laplace_map_with_fewer_actions() {
    let (x, y, kx) = binary_2d(100, 20.0, 1);
    let lik = Bernoulli;
    let exact = DenseLaplace::fit(
        kx.as_ref(),
        Col::zeros(100).as_ref(),
        y.as_ref(),
        &lik,
        &LaplaceOptions {
            tolerance: 1e-6,
            ..LaplaceOptions::default()
        },
    )
    .unwrap();
    assert!(exact.converged);
    let op = DenseOperator::new(kx.clone());
    let tight = |recycling: Option<RecycleOptions>, tol: f64| IterNcgpOptions {
        solver: PlsOptions {
            abs_tolerance: tol,
            rel_tolerance: tol,
            ..PlsOptions::default()
        },
        recycling,
        outer_tolerance: 1e-6,
        ..IterNcgpOptions::default()
    };
    // U13: CG, recycling, R = ∞, inner tolerance 1e-10.
    let out = run(
        &op,
        1,
        y.as_ref(),
        &lik,
        &mut ResidualPolicy,
        &tight(Some(RecycleOptions::default()), 1e-10),
    );
    let e = rel(out.f.as_ref(), exact.f.as_ref());
    assert!(e <= 1e-6, "IterNCGP-CG vs the Laplace MAP: {e:.2e}");
    // The latent means at the end agree with the exact Laplace posterior at the mode; the
    // variances are never below it (C_j has the rank of the actions taken, not N: the
    // computational part stays ≥ 0 even when the solve has converged).
    let dense_post = exact
        .posterior_at_mode(kx.as_ref(), Col::zeros(100).as_ref(), y.as_ref(), &lik)
        .unwrap();
    let xt = Mat::from_fn(6, 2, |i, j| {
        if j == 0 {
            -2.5 + 1.3 * i as f64
        } else {
            -3.5 + 0.8 * i as f64
        }
    });
    let kernel = SquaredExponential::new(vec![1.0, 1.0], 20.0).unwrap();
    let cross = DenseOperator::new(kernel.matrix(xt.as_ref(), x.as_ref()).unwrap());
    let prior = Col::from_fn(6, |_| 20.0);
    let a = out.posterior.predict(&cross, prior.as_ref(), None).unwrap();
    let b = dense_post.predict(&cross, prior.as_ref(), None).unwrap();
    for i in 0..6 {
        assert!((a.mean[(i, 0)] - b.mean[(i, 0)]).abs() <= 1e-5 * (1.0 + b.mean[(i, 0)].abs()));
        assert!(
            a.variance[(i, 0)] >= b.variance[(i, 0)] - 1e-8,
            "{} < {}",
            a.variance[(i, 0)],
            b.variance[(i, 0)]
        );
        assert!(a.variance[(i, 0)] <= 20.0);
    }
    let (ours, theirs) = (out.steps.len() as i64, exact.iterates.len() as i64);
    assert!(
        (ours - theirs).abs() <= 1,
        "outer steps {ours} vs exact Newton {theirs}"
    );
    // E10: with tolerance 1e-5, recycling at most halves the new actions.
    let with = run(
        &op,
        1,
        y.as_ref(),
        &lik,
        &mut ResidualPolicy,
        &tight(Some(RecycleOptions::default()), 1e-5),
    );
    let without = run(
        &op,
        1,
        y.as_ref(),
        &lik,
        &mut ResidualPolicy,
        &tight(None, 1e-5),
    );
    assert!(
        2 * with.total_actions <= without.total_actions,
        "recycling took {} actions, no recycling {}",
        with.total_actions,
        without.total_actions
    );
    assert!(rel(with.f.as_ref(), without.f.as_ref()) <= 1e-5);
    assert!(rel(with.f.as_ref(), exact.f.as_ref()) <= 1e-5);
    let later: usize = with
        .steps
        .iter()
        .skip(1)
        .map(|s| s.inner_iterations)
        .max()
        .unwrap_or(0);
    assert!(
        later < with.steps[0].inner_iterations,
        "steps after the first should need fewer actions"
    );
}

#[test]
fn e3_without_recycling_every_step_starts_from_the_prior() {
    let (_, y, kx) = binary_2d(100, 20.0, 2);
    let op = DenseOperator::new(kx.clone());
    let shared = SharedOutputs::new(&op, 1).unwrap();
    let options = IterNcgpOptions {
        max_inner: Some(10),
        recycling: None,
        max_outer: 4,
        outer_tolerance: 0.0,
        ..IterNcgpOptions::default()
    };
    let mut starts = Vec::new();
    iterncgp(
        &shared,
        Col::zeros(100).as_ref(),
        y.as_ref(),
        &Bernoulli,
        &mut ResidualPolicy,
        &options,
        &mut |p| {
            if p.inner == 0 {
                // Train NLL of the prior predictive (mean 0): −log σ(0) = log 2 for every point.
                let nll: f64 = (0..100)
                    .map(|i| {
                        -Bernoulli.log_predictive(&[(&kx * p.weights)[i]], &[kx[(i, i)]], y[i])
                    })
                    .sum::<f64>()
                    / 100.0;
                starts.push(nll);
            }
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert_eq!(starts.len(), 4);
    for s in starts {
        assert!((s - std::f64::consts::LN_2).abs() <= 1e-15, "{s}");
    }
}

#[test]
fn e9_k_products_per_newton_step() {
    let (_, y, kx) = binary_2d(40, 10.0, 3);
    for (track_kq, recycling, expected) in [
        // No recycling: v₀ = 0 needs no product; j actions, j residuals, one K v: 2j + 1.
        (false, None, (|j| 2 * j + 1) as fn(usize) -> usize),
        // Recycled belief: one more product for the initial residual: 2j + 2.
        (false, Some(RecycleOptions::default()), |j: usize| 2 * j + 2),
        // Tracked K Q: j.
        (true, Some(RecycleOptions::default()), |j: usize| j),
    ] {
        let counting = CountingOperator::new(DenseOperator::new(kx.clone()));
        let options = IterNcgpOptions {
            max_inner: Some(5),
            solver: PlsOptions {
                track_kq,
                ..PlsOptions::default()
            },
            recycling,
            max_outer: 3,
            outer_tolerance: 0.0,
            ..IterNcgpOptions::default()
        };
        let out = run(
            &counting,
            1,
            y.as_ref(),
            &Bernoulli,
            &mut ResidualPolicy,
            &options,
        );
        let expected_total: usize = out
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if i == 0 && recycling.is_some() && !track_kq {
                    2 * s.inner_iterations + 1
                } else {
                    expected(s.inner_iterations)
                }
            })
            .sum();
        assert_eq!(
            counting.products(),
            expected_total,
            "track_kq {track_kq}, recycling {}",
            recycling.is_some()
        );
        assert_eq!(out.k_products, counting.products());
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let kx = DenseOperator::new(rbf(line_inputs(5).as_ref(), 0.3, 1.0));
    let shared = SharedOutputs::new(&kx, 1).unwrap();
    let m = Col::zeros(5);
    let opts = IterNcgpOptions::default();
    let bad_counts = Col::from_fn(5, |i| if i == 2 { 1.5 } else { 1.0 });
    let err = iterncgp(
        &shared,
        m.as_ref(),
        bad_counts.as_ref(),
        &Poisson::new(),
        &mut ResidualPolicy,
        &opts,
        &mut never_stop,
    )
    .unwrap_err();
    assert!(
        matches!(err, ModelError::InvalidTarget { index: 2, .. }),
        "{err}"
    );
    let bad_labels = Col::from_fn(5, |i| if i == 4 { 2.0 } else { 0.0 });
    let err = iterncgp(
        &shared,
        m.as_ref(),
        bad_labels.as_ref(),
        &Bernoulli,
        &mut ResidualPolicy,
        &opts,
        &mut never_stop,
    )
    .unwrap_err();
    assert!(
        matches!(err, ModelError::InvalidTarget { index: 4, .. }),
        "{err}"
    );
    // Softmax needs a prior with C outputs.
    let err = iterncgp(
        &shared,
        m.as_ref(),
        Col::zeros(5).as_ref(),
        &Softmax::new(3).unwrap(),
        &mut ResidualPolicy,
        &opts,
        &mut never_stop,
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::InvalidOption { .. }), "{err}");
    assert!(Softmax::new(1).is_err());
    assert!(SharedOutputs::new(&kx, 0).is_err());
    let short = Col::zeros(4);
    assert!(iterncgp(
        &shared,
        m.as_ref(),
        short.as_ref(),
        &Bernoulli,
        &mut ResidualPolicy,
        &opts,
        &mut never_stop
    )
    .is_err());
}

#[test]
fn ski_prior_runs_iterncgp_as_its_dense_matrix_does() {
    use gp_models::grid::GridSettings;
    use gp_models::ncgp::SkiPrior;
    use gp_models::SkiOptions;
    let n = 60;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let x = Mat::from_fn(n, 2, |_, _| rng.random::<f64>() * 4.0);
    let y = Col::from_fn(n, |i| {
        if (x[(i, 0)] - x[(i, 1)]).sin() > 0.0 {
            1.0
        } else {
            0.0
        }
    });
    let kernel = SquaredExponential::new(vec![1.0, 1.0], 4.0).unwrap();
    let options = SkiOptions {
        grid: GridSettings {
            sizes: vec![20, 20],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let prior = SkiPrior::new(&kernel, x.as_ref(), &options).unwrap();
    let op = prior.operator();
    let dense = op.to_dense();
    // The SKI matrix is close to the kernel's (cubic interpolation on a fine grid) …
    let exact = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    assert!((&dense - &exact).norm_l2() <= 1e-2 * exact.norm_l2());
    // … the cross operator at the training points is the same matrix, and the prior
    // variances are its diagonal.
    let cross = prior.cross(x.as_ref()).unwrap();
    assert!((cross.to_dense() - &dense).norm_l2() <= 1e-12 * dense.norm_l2());
    let diag = prior.prior_variances(x.as_ref()).unwrap();
    assert!(rel(diag.as_ref(), Col::from_fn(n, |i| dense[(i, i)]).as_ref()) <= 1e-12);
    // IterNCGP on the structured operator equals dense Newton on its matrix.
    let reference = DenseLaplace::fit(
        dense.as_ref(),
        Col::zeros(n).as_ref(),
        y.as_ref(),
        &Bernoulli,
        &LaplaceOptions {
            tolerance: 0.0,
            max_steps: 3,
            ..LaplaceOptions::default()
        },
    )
    .unwrap();
    let out = run(
        &op,
        1,
        y.as_ref(),
        &Bernoulli,
        &mut UnitVectorPolicy::new(),
        &exact_unit_vector_options(n, 3),
    );
    assert!(rel(out.f.as_ref(), reference.f.as_ref()) <= 1e-8);
    // Predictions through the SKI cross-covariance match the dense formulas.
    let xt = Mat::from_fn(5, 2, |i, j| 0.5 + 0.6 * i as f64 + 0.2 * j as f64);
    let cross_t = prior.cross(xt.as_ref()).unwrap();
    let prior_t = prior.prior_variances(xt.as_ref()).unwrap();
    let marg = out
        .posterior
        .predict(&cross_t, prior_t.as_ref(), None)
        .unwrap();
    let ct = cross_t.to_dense();
    let mean = &ct * out.posterior.weights();
    let ctq = &ct * out.posterior.root();
    for i in 0..5 {
        assert!((marg.mean[(i, 0)] - mean[i]).abs() <= 1e-10);
        let var = prior_t[i] - (0..ctq.ncols()).map(|b| ctq[(i, b)].powi(2)).sum::<f64>();
        assert!((marg.variance[(i, 0)] - var).abs() <= 1e-10);
        assert!(marg.variance[(i, 0)] > 0.0);
    }
}

/// A kernel that is not stationary (`(1 + x₀z₀)·SE`), for the refusal of the multilevel
/// grid kernel.
#[derive(Debug, Clone)]
struct ScaledByPosition(SquaredExponential);

impl Kernel for ScaledByPosition {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }
    fn param_names(&self) -> Vec<String> {
        self.0.param_names()
    }
    fn log_params(&self) -> Vec<f64> {
        self.0.log_params()
    }
    fn set_log_params(&mut self, p: &[f64]) -> gp_kernels::Result<()> {
        self.0.set_log_params(p)
    }
    fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        (1.0 + x[0] * z[0]) * self.0.eval(x, z)
    }
    fn eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> f64 {
        let s = 1.0 + x[0] * z[0];
        let v = self.0.eval_with_grad(x, z, grad);
        grad.iter_mut().for_each(|g| *g *= s);
        s * v
    }
}

/// An isotropic 3-D Matérn is not separable: the SKI prior's grid kernel is multilevel
/// Toeplitz, and `W K_G Wᵀ` equals the product of the dense pieces (W from the same grid,
/// `K_G` from the kernel at every pair of grid points), approximates the kernel matrix on
/// a fine grid, and a non-stationary kernel is refused.
#[test]
fn ski_prior_with_a_non_separable_kernel_uses_a_multilevel_grid_kernel() {
    use gp_kernels::{Matern, MaternNu};
    use gp_models::grid::GridSettings;
    use gp_models::ncgp::SkiPrior;
    use gp_models::SkiOptions;
    use gp_structured::{InterpolationOptions, InterpolationWeights};
    let n = 50;
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let x = Mat::from_fn(n, 3, |_, _| rng.random::<f64>() * 2.0);
    let kernel = Matern::isotropic(MaternNu::ThreeHalves, 3, 0.9, 1.3).unwrap();
    let options = |m: usize| SkiOptions {
        grid: GridSettings {
            sizes: vec![m; 3],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let prior = SkiPrior::new(&kernel, x.as_ref(), &options(8)).unwrap();
    assert!(prior.is_multilevel());
    let grid = prior.grid();
    let m = grid.num_points();
    let points = grid.points();
    let kg = Mat::from_fn(m, m, |a, b| {
        let pa: Vec<f64> = (0..3).map(|j| points[(a, j)]).collect();
        let pb: Vec<f64> = (0..3).map(|j| points[(b, j)]).collect();
        kernel.eval(&pa, &pb)
    });
    let w = InterpolationWeights::new(grid, x.as_ref(), InterpolationOptions::default())
        .unwrap()
        .to_dense();
    let want = &w * &kg * w.transpose();
    let got = prior.operator().to_dense();
    assert!(
        (&got - &want).norm_l2() <= 1e-12 * want.norm_l2(),
        "{:e}",
        (&got - &want).norm_l2() / want.norm_l2()
    );
    // Prior variances are the diagonal of the same matrix.
    let diag = prior.prior_variances(x.as_ref()).unwrap();
    assert!(rel(diag.as_ref(), Col::from_fn(n, |i| want[(i, i)]).as_ref()) <= 1e-12);
    // On a fine grid the SKI matrix approaches the kernel's.
    let fine = SkiPrior::new(&kernel, x.as_ref(), &options(40)).unwrap();
    let exact = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    let err = (fine.operator().to_dense() - &exact).norm_l2() / exact.norm_l2();
    assert!(err <= 1e-3, "{err:e}");
    // A kernel that is neither separable nor stationary is refused, not silently replaced.
    let bad = ScaledByPosition(SquaredExponential::new(vec![1.0, 1.0, 1.0], 1.0).unwrap());
    let err = SkiPrior::new(&bad, x.as_ref(), &options(8)).unwrap_err();
    assert!(matches!(err, ModelError::UnsupportedKernel { .. }), "{err}");
}
