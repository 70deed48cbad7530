//! The CG and RR-CG training objectives against dense references (spec `rtgps.md` §6 H6),
//! the softplus parameterisation and the learning-rate schedule.

use faer::{Col, Mat};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::Cholesky;
use gp_models::objective::{
    cholesky_estimate, estimate, inverse_softplus, krylov_estimate, softplus, train_objective,
    DenseKernelCovariance, Estimator, KrylovCovariance, KrylovDepth, KrylovObjectiveOptions,
    ObjectiveTrainOptions, SoftplusParameterization,
};
use gp_models::optim::{AdamOptions, MultiStepDecay};
use gp_solvers::truncation::ExpDecay;
use gp_solvers::Probes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn problem(n: usize, seed: u64) -> (Mat<f64>, Col<f64>, SquaredExponential) {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| r.random::<f64>());
    let y = Col::from_fn(n, |i| {
        (4.0 * x[(i, 0)]).sin() * x[(i, 1)] + 0.1 * (r.random::<f64>() - 0.5)
    });
    (x, y, SquaredExponential::new(vec![0.4, 0.6], 1.3).unwrap())
}

/// `½ [αᵀ∂Kα − (1/t) Σ (K̂⁻¹zᵢ)ᵀ ∂K zᵢ]` from dense matrices, for Rademacher probes without
/// preconditioner (then P⁻¹z = z).
fn dense_hutchinson_gradient(
    kernel: &SquaredExponential,
    x: &Mat<f64>,
    y: &Col<f64>,
    sigma2: f64,
    z: &Mat<f64>,
) -> Vec<f64> {
    let (k, grads) = kernel.matrix_and_grads(x.as_ref()).unwrap();
    let n = x.nrows();
    let mut kh = k.clone();
    for i in 0..n {
        kh[(i, i)] += sigma2;
    }
    let ch = Cholesky::new(kh.as_ref()).unwrap();
    let alpha = ch.solve(y.as_mat()).unwrap();
    let kz = ch.solve(z.as_ref()).unwrap();
    let t = z.ncols() as f64;
    let mut g: Vec<f64> = grads
        .iter()
        .map(|dk| {
            let quad = (alpha.transpose() * dk * &alpha)[(0, 0)];
            let trace = (kz.transpose() * dk * z).diagonal().column_vector().sum() / t;
            0.5 * (quad - trace)
        })
        .collect();
    let quad = alpha.squared_norm_l2();
    let trace = (kz.transpose() * z).diagonal().column_vector().sum() / t;
    g.push(0.5 * sigma2 * (quad - trace));
    g
}

#[test]
fn converged_cg_gives_the_dense_hutchinson_gradient_and_the_exact_data_fit() {
    let (x, y, kernel) = problem(80, 1);
    let sigma2 = 0.05;
    let opts = KrylovObjectiveOptions::default();
    let cov = DenseKernelCovariance::new(&kernel, x.as_ref(), sigma2, &opts).unwrap();
    let mut r = ChaCha8Rng::seed_from_u64(2);
    let z = Mat::from_fn(80, 6, |_, _| if r.random::<bool>() { 1.0 } else { -1.0 });
    let probes = Probes::from_matrix(z.clone(), None).unwrap();
    let est = krylov_estimate(
        &cov,
        y.as_mat(),
        KrylovDepth::Fixed(80),
        &opts,
        Some(probes),
        &mut r,
    )
    .unwrap();
    let reference = dense_hutchinson_gradient(&kernel, &x, &y, sigma2, &z);
    for (a, b) in est.gradient.iter().zip(&reference) {
        assert!((a - b).abs() < 1e-7 * b.abs().max(1.0), "{a} vs {b}");
    }
    let exact = cholesky_estimate(&kernel, x.as_ref(), y.as_ref(), sigma2).unwrap();
    let fit = exact.data_fit.unwrap();
    assert!((est.data_fit.unwrap() - fit).abs() < 1e-8 * fit);
    assert_eq!(est.gradient.len(), kernel.n_params() + 1);
    // The exact gradient is the ExactGp gradient.
    assert_eq!(exact.gradient.len(), kernel.n_params() + 1);
}

fn mean_se(samples: &[Vec<f64>], k: usize) -> (f64, f64) {
    let m = samples.len() as f64;
    let mean = samples.iter().map(|s| s[k]).sum::<f64>() / m;
    let var = samples.iter().map(|s| (s[k] - mean).powi(2)).sum::<f64>() / (m - 1.0);
    (mean, (var / m).sqrt())
}

#[test]
fn h6_rr_cg_gradient_is_unbiased_and_truncated_cg_gradient_is_not() {
    let n = 150;
    let (x, y, kernel) = problem(n, 3);
    let sigma2 = 1e-2;
    let opts = KrylovObjectiveOptions {
        with_value: false,
        ..KrylovObjectiveOptions::default()
    };
    let cov = DenseKernelCovariance::new(&kernel, x.as_ref(), sigma2, &opts).unwrap();
    let exact = cholesky_estimate(&kernel, x.as_ref(), y.as_ref(), sigma2)
        .unwrap()
        .gradient;
    let law = ExpDecay::new(0.05, 10, n).unwrap();
    let mut r = ChaCha8Rng::seed_from_u64(4);
    let draws = 2000;
    let rr: Vec<Vec<f64>> = (0..draws)
        .map(|_| {
            let depth = KrylovDepth::Random {
                law: &law,
                draws: 2,
            };
            krylov_estimate(&cov, y.as_mat(), depth, &opts, None, &mut r)
                .unwrap()
                .gradient
        })
        .collect();
    let cg: Vec<Vec<f64>> = (0..draws)
        .map(|_| {
            krylov_estimate(&cov, y.as_mat(), KrylovDepth::Fixed(5), &opts, None, &mut r)
                .unwrap()
                .gradient
        })
        .collect();
    let mut cg_biased = false;
    for (k, &g) in exact.iter().enumerate() {
        let (mean, se) = mean_se(&rr, k);
        assert!(
            (mean - g).abs() < 4.0 * se,
            "RR-CG component {k}: {mean} vs {g} (SE {se})"
        );
        let (mean, se) = mean_se(&cg, k);
        cg_biased |= (mean - g).abs() > 6.0 * se;
    }
    assert!(cg_biased, "CG(5)'s gradient should be biased");
    let _ = cov.noise_variance();
}

#[test]
fn softplus_parameterisation_round_trips_and_chains_the_gradient() {
    for v in [1e-6, 0.01, 0.693, 5.0, 40.0] {
        assert!((softplus(inverse_softplus(v)) - v).abs() < 1e-12 * v.max(1.0));
    }
    assert!((softplus(0.0) - std::f64::consts::LN_2).abs() < 1e-15);
    assert!(softplus(800.0).is_finite() && softplus(-800.0) >= 0.0);
    let param = SoftplusParameterization::new(vec![0.0, 1e-4]).unwrap();
    let log = vec![0.3f64.ln(), 0.02f64.ln()];
    let raw = param.raw_params(&log).unwrap();
    let back = param.log_params(&raw);
    assert!((back[0] - log[0]).abs() < 1e-12 && (back[1] - log[1]).abs() < 1e-12);
    // d/dr of f(log θ(r)) with f = a·log θ₀ + b·log θ₁ by central differences.
    let (a, b) = (0.7, -1.3);
    let f = |r: &[f64]| {
        let l = param.log_params(r);
        a * l[0] + b * l[1]
    };
    let g = param.raw_gradient(&raw, &[a, b]);
    for i in 0..2 {
        let h = 1e-6;
        let mut rp = raw.clone();
        let mut rm = raw.clone();
        rp[i] += h;
        rm[i] -= h;
        let fd = (f(&rp) - f(&rm)) / (2.0 * h);
        assert!((fd - g[i]).abs() < 1e-7, "{fd} vs {}", g[i]);
    }
    assert!(param.raw_params(&[0.3f64.ln(), 1e-5f64.ln()]).is_err());
    assert!(SoftplusParameterization::new(vec![-1.0]).is_err());
}

#[test]
fn multistep_decay_matches_pytorch_milestones() {
    let d = MultiStepDecay::paper_gp();
    assert_eq!(d.multiplier(1, 100), 1.0);
    assert_eq!(d.multiplier(50, 100), 1.0);
    assert!((d.multiplier(51, 100) - 0.1).abs() < 1e-15);
    assert!((d.multiplier(71, 100) - 0.01).abs() < 1e-15);
    assert!((d.multiplier(91, 100) - 0.001).abs() < 1e-15);
}

#[test]
fn training_with_cholesky_lowers_the_exact_loss_and_records_every_step() {
    let (x, y, _) = problem(60, 5);
    let kernel = SquaredExponential::new(vec![0.693, 0.693], 0.693).unwrap();
    let options = ObjectiveTrainOptions {
        adam: AdamOptions {
            learning_rate: 0.05,
            iterations: 60,
            learning_rate_decay: Some(MultiStepDecay::paper_gp()),
            ..AdamOptions::default()
        },
        exact_loss_every: Some(1),
        ..ObjectiveTrainOptions::default()
    };
    let mut seen = 0;
    let out = train_objective(
        &kernel,
        0.6932,
        x.as_ref(),
        y.as_ref(),
        &Estimator::Cholesky,
        &options,
        &mut |_| {
            seen += 1;
            std::ops::ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert_eq!(seen, 60);
    assert_eq!(out.steps.len(), 61);
    let first = out.steps[0].exact_loss.unwrap();
    let last = out.steps[60].exact_loss.unwrap();
    assert!(last < first - 0.1, "{first} → {last}");
    // For Cholesky the estimated loss is the exact one.
    let s = &out.steps[30];
    assert!((s.estimated_loss.unwrap() - s.exact_loss.unwrap()).abs() < 1e-10);
    // The final model is the last step's.
    let mut last_log = out.kernel.log_params();
    last_log.push(out.noise_variance.ln());
    for (a, b) in last_log.iter().zip(&out.steps[60].log_params) {
        assert!((a - b).abs() < 1e-12);
    }
}

#[test]
fn estimator_errors_are_typed() {
    let (x, y, kernel) = problem(20, 6);
    let opts = KrylovObjectiveOptions::default();
    let mut r = ChaCha8Rng::seed_from_u64(7);
    let law = std::sync::Arc::new(ExpDecay::new(0.1, 1, 20).unwrap());
    let one_draw = Estimator::RrCg { law, draws: 1 };
    let err = estimate(
        &kernel,
        0.1,
        x.as_ref(),
        y.as_ref(),
        &one_draw,
        &opts,
        &mut r,
    )
    .unwrap_err();
    assert!(err.to_string().contains("two independent draws"), "{err}");
    let err = estimate(
        &kernel,
        -1.0,
        x.as_ref(),
        y.as_ref(),
        &Estimator::Cg { iterations: 5 },
        &opts,
        &mut r,
    )
    .unwrap_err();
    assert!(err.to_string().contains("noise"), "{err}");
    let short = Col::<f64>::zeros(19);
    assert!(estimate(
        &kernel,
        0.1,
        x.as_ref(),
        short.as_ref(),
        &Estimator::Cg { iterations: 5 },
        &opts,
        &mut r
    )
    .is_err());
}

#[test]
fn ski_covariance_reproduces_the_ski_models_own_gradient_and_trains() {
    use gp_models::objective::{train_objective_ski, SkiCovariance};
    use gp_models::{Ski, SkiOptions};
    let (x, y, kernel) = problem(200, 8);
    let mut options = SkiOptions::default();
    options.krylov.tolerance = 1e-12;
    options.krylov.max_iterations = 400;
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &options).unwrap();
    let mut r = ChaCha8Rng::seed_from_u64(9);
    let z = Mat::from_fn(200, 4, |_, _| if r.random::<bool>() { 1.0 } else { -1.0 });
    let theirs = ski
        .lml_and_grad_estimate_with_probes(Probes::from_matrix(z.clone(), None).unwrap())
        .unwrap();
    let cov = SkiCovariance::new(&ski).unwrap();
    let opts = KrylovObjectiveOptions {
        tolerance: 1e-12,
        ..KrylovObjectiveOptions::default()
    };
    let probes = Probes::from_matrix(z, None).unwrap();
    let ours = krylov_estimate(
        &cov,
        ski.train_y().as_mat(),
        KrylovDepth::Fixed(400),
        &opts,
        Some(probes),
        &mut r,
    )
    .unwrap();
    for (a, b) in ours.gradient.iter().zip(&theirs.grad) {
        assert!((a - b).abs() < 1e-6 * b.abs().max(1.0), "{a} vs {b}");
    }
    assert!((ours.lml.unwrap() - theirs.lml).abs() < 1e-6 * theirs.lml.abs());

    // A short RR-CG training on the SKI operator lowers the exact loss.
    let options = ObjectiveTrainOptions {
        adam: AdamOptions {
            learning_rate: 0.05,
            iterations: 30,
            ..AdamOptions::default()
        },
        exact_loss_every: Some(30),
        ..ObjectiveTrainOptions::default()
    };
    let rr = Estimator::rr_cg_exp_decay(0.1, 10, 200).unwrap();
    let out = train_objective_ski(&ski, &rr, &options, &mut |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    let (first, last) = (
        out.steps[0].exact_loss.unwrap(),
        out.steps[30].exact_loss.unwrap(),
    );
    assert!(last < first, "{first} → {last}");
    assert!(out.steps[1..].iter().all(|s| s.work >= 10));
    let chol = train_objective_ski(&ski, &Estimator::Cholesky, &options, &mut |_| {
        std::ops::ControlFlow::Continue(())
    });
    assert!(chol.unwrap_err().to_string().contains("CG or RR-CG"));
}

#[test]
fn the_squared_exponential_fast_contraction_equals_the_matrix_free_one() {
    let (x, _, kernel) = problem(300, 10);
    let opts = KrylovObjectiveOptions::default();
    let cov = DenseKernelCovariance::new(&kernel, x.as_ref(), 0.03, &opts).unwrap();
    let mut r = ChaCha8Rng::seed_from_u64(11);
    let l = Mat::from_fn(300, 5, |_, _| r.random::<f64>() - 0.5);
    let rm = Mat::from_fn(300, 5, |_, _| r.random::<f64>() - 0.5);
    let w = [1.0, -0.25, -0.25, 0.5, 2.0];
    let fast = cov
        .kernel_derivative_weighted(l.as_ref(), rm.as_ref(), &w)
        .unwrap();
    let q = cov
        .kernel_derivative_contractions(l.as_ref(), rm.as_ref())
        .unwrap();
    assert_eq!(fast.len(), 3);
    for k in 0..3 {
        let slow: f64 = (0..5).map(|c| w[c] * q[(k, c)]).sum();
        assert!(
            (fast[k] - slow).abs() < 1e-10 * slow.abs().max(1.0),
            "{k}: {} vs {slow}",
            fast[k]
        );
    }
}

#[test]
fn rff_estimators_through_the_common_interface() {
    use gp_models::objective::rff::SsRffOptions;
    let (x, y, kernel) = problem(60, 12);
    let opts = KrylovObjectiveOptions::default();
    let mut r = ChaCha8Rng::seed_from_u64(13);
    let rff = estimate(
        &kernel,
        0.1,
        x.as_ref(),
        y.as_ref(),
        &Estimator::Rff { num_freqs: 20 },
        &opts,
        &mut r,
    )
    .unwrap();
    assert_eq!(rff.gradient.len(), 4);
    assert_eq!(rff.work, 20);
    let ss = Estimator::SsRff(SsRffOptions {
        base_freqs: 5,
        step: 5,
        terms: 4,
        exponent: 1.0,
        top_exact: true,
    });
    let e = estimate(&kernel, 0.1, x.as_ref(), y.as_ref(), &ss, &opts, &mut r).unwrap();
    assert!(e.lml.unwrap().is_finite() && e.gradient.len() == 4);
    assert!(ss.label().starts_with("SS-RFF(E[D]="), "{}", ss.label());
    // A kernel without a spectral sampler is refused with a message.
    let product = gp_kernels::ProductKernel::uniform(
        gp_kernels::FactorKind::SquaredExponential,
        vec![0.5, 0.5],
        1.0,
    )
    .unwrap();
    let err = estimate(
        &product,
        0.1,
        x.as_ref(),
        y.as_ref(),
        &Estimator::Rff { num_freqs: 5 },
        &opts,
        &mut r,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("squared-exponential or Matérn"),
        "{err}"
    );
}

#[test]
fn symmetric_stored_products_equal_the_dense_product() {
    use gp_linalg::LinearOperator;
    use gp_models::objective::SymmetricStored;
    let mut r = ChaCha8Rng::seed_from_u64(14);
    for n in [1usize, 5, 257, 1030] {
        let g = Mat::from_fn(n, n, |_, _| r.random::<f64>() - 0.5);
        let a = &g + g.transpose();
        let op = SymmetricStored::new(a.clone());
        for m in [1usize, 11, 13, 25] {
            let x = Mat::from_fn(n, m, |_, _| r.random::<f64>() - 0.5);
            let mut out = Mat::<f64>::zeros(n, m);
            op.matmat(x.as_ref(), out.as_mut());
            let reference = &a * &x;
            let err = (&out - &reference).norm_max();
            assert!(err < 1e-12 * (n as f64).max(1.0), "n {n}, m {m}: {err}");
        }
        let v = Col::from_fn(n, |i| i as f64);
        let mut out = Col::<f64>::zeros(n);
        op.matvec(v.as_ref(), out.as_mut());
        assert!((&out - &a * &v).norm_max() < 1e-9 * (n as f64).max(1.0));
    }
}

/// The stored-symmetric product runs an AVX-512 or AVX2+FMA build where the CPU has it; the
/// baseline build (software `mul_add`) gives the same bits.
#[test]
fn symmetric_stored_dispatched_product_equals_the_baseline_build_bitwise() {
    use gp_linalg::simd::{set_max_simd_level, SimdLevel};
    use gp_linalg::LinearOperator;
    use gp_models::objective::SymmetricStored;
    let mut r = ChaCha8Rng::seed_from_u64(15);
    let n = 300;
    let g = Mat::from_fn(n, n, |_, _| r.random::<f64>() - 0.5);
    let op = SymmetricStored::new(&g + g.transpose());
    let x = Mat::from_fn(n, 11, |_, _| r.random::<f64>() - 0.5);
    let run = || {
        let mut out = Mat::<f64>::zeros(n, 11);
        op.matmat(x.as_ref(), out.as_mut());
        out
    };
    let dispatched = run();
    // The AVX2 build (three columns of A per call) and the baseline build, whatever the CPU's
    // highest level (AVX-512 takes eight columns per call).
    let previous = set_max_simd_level(SimdLevel::Avx2Fma);
    let avx2 = run();
    set_max_simd_level(SimdLevel::Baseline);
    let baseline = run();
    set_max_simd_level(previous);
    for j in 0..11 {
        for i in 0..n {
            assert_eq!(dispatched[(i, j)].to_bits(), baseline[(i, j)].to_bits());
            assert_eq!(avx2[(i, j)].to_bits(), baseline[(i, j)].to_bits());
        }
    }
}

/// The stored-symmetric product of a size with eight panel groups and three row chunks
/// equals the dense product, and gives the same bits on one thread as on the default pool
/// (its groups are fixed by `n`, not by the thread count).
#[test]
fn symmetric_stored_product_is_independent_of_the_thread_count() {
    use gp_linalg::LinearOperator;
    use gp_models::objective::SymmetricStored;
    let mut r = ChaCha8Rng::seed_from_u64(16);
    let n = 2100;
    let g = Mat::from_fn(n, n, |_, _| r.random::<f64>() - 0.5);
    let a = &g + g.transpose();
    let op = SymmetricStored::new(a.clone());
    let x = Mat::from_fn(n, 13, |_, _| r.random::<f64>() - 0.5);
    let run = || {
        let mut out = Mat::<f64>::zeros(n, 13);
        op.matmat(x.as_ref(), out.as_mut());
        out
    };
    let pooled = run();
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(run);
    // Two products at once: one uses the kept buffers, the other its own.
    let (first, second) = std::thread::scope(|sc| {
        let h1 = sc.spawn(run);
        let h2 = sc.spawn(run);
        (h1.join().unwrap(), h2.join().unwrap())
    });
    let reference = &a * &x;
    assert!((&pooled - &reference).norm_max() < 1e-11);
    assert_eq!(first, pooled);
    assert_eq!(second, pooled);
    for c in 0..13 {
        for i in 0..n {
            assert_eq!(
                pooled[(i, c)].to_bits(),
                single[(i, c)].to_bits(),
                "({i}, {c})"
            );
        }
    }
}

/// The panels built from the kernel hold `Kernel::matrix`'s entries bit for bit (for the
/// stationary and the product kernels), with `n` not a multiple of the panel width, and its
/// columns are the preconditioner's.
#[test]
fn symmetric_stored_from_a_kernel_holds_the_kernel_matrix_bitwise() {
    use gp_kernels::{FactorKind, Matern, MaternNu, ProductKernel};
    use gp_models::objective::SymmetricStored;
    use gp_solvers::ColumnAccess;
    let (x, _, se) = problem(37, 17);
    let matern = Matern::new(MaternNu::ThreeHalves, vec![0.7, 1.3], 0.8).unwrap();
    let product = ProductKernel::new(
        vec![
            FactorKind::Matern(MaternNu::Half),
            FactorKind::SquaredExponential,
        ],
        vec![0.9, 1.1],
        1.2,
    )
    .unwrap();
    let kernels: Vec<&dyn Kernel> = vec![&se, &matern, &product];
    let points = x.as_ref();
    for kernel in kernels {
        let stored = SymmetricStored::from_kernel(kernel, points).unwrap();
        let k = kernel.matrix(points, points).unwrap();
        let dense = gp_linalg::LinearOperator::to_dense(&stored);
        let mut col = Col::<f64>::zeros(37);
        for j in 0..37 {
            stored.column(j, col.as_mut());
            for i in 0..37 {
                assert_eq!(dense[(i, j)].to_bits(), k[(i, j)].to_bits());
                assert_eq!(col[i].to_bits(), k[(i, j)].to_bits());
            }
        }
        let diag = ColumnAccess::diagonal(&stored);
        assert!((0..37).all(|i| diag[i].to_bits() == k[(i, i)].to_bits()));
    }
}

#[test]
fn the_exact_loss_is_the_cholesky_estimate_value_per_point() {
    let (x, y, kernel) = problem(40, 9);
    let e = cholesky_estimate(&kernel, x.as_ref(), y.as_ref(), 0.05).unwrap();
    let loss = gp_models::objective::exact_loss(&kernel, x.as_ref(), y.as_ref(), 0.05).unwrap();
    assert_eq!(loss, -e.lml.unwrap() / 40.0);
}
