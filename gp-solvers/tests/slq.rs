//! Stochastic Lanczos quadrature against exact log-determinants.

use crate::common;

use common::*;
use faer::Mat;
use gp_linalg::DenseOperator;
use gp_solvers::{
    slq_log_det_from_cg, solve_with_probes, CgOptions, PivotedCholesky, PivotedCholeskyOptions,
    ProbeDistribution, ProbeOptions, Probes, SlqScaling,
};

/// Every CG runs to the full Krylov depth, so the only error left is Monte Carlo.
fn full_depth(n: usize) -> CgOptions {
    CgOptions {
        tolerance: 1e-11,
        max_iterations: n,
        reorthogonalize: true,
        ..Default::default()
    }
}

fn test_matrix(n: usize) -> (Mat<f64>, Mat<f64>, f64) {
    let sigma2 = 0.05;
    let k = se_kernel(n, 1.0, 42);
    let a = add_noise(&k, sigma2);
    (k, a, sigma2)
}

#[test]
fn exact_with_complete_probes_and_full_lanczos() {
    // Probes √n·e_i (E over a uniformly chosen i of z zᵀ is I): the average over all n of
    // them is tr log A exactly, and n Lanczos steps make each quadrature exact.
    let n = 60;
    let a = with_spectrum(&log_spectrum(n, 1e3), 1);
    let exact = dense_log_det(&a);
    let z = Mat::<f64>::identity(n, n) * (n as f64).sqrt();
    let probes = Probes::from_matrix(z, None).unwrap();
    let out = solve_with_probes(
        &DenseOperator::new(a),
        Mat::<f64>::zeros(n, 0).as_ref(),
        None,
        probes,
        &CgOptions {
            tolerance: 0.0,
            ..full_depth(n)
        },
    )
    .unwrap();
    let est = out.log_det(SlqScaling::ProbeNorm).unwrap();
    assert!(
        (est.value - exact).abs() < 1e-10,
        "{} vs {exact}",
        est.value
    );
}

#[test]
fn preconditioned_exact_with_complete_probes() {
    // With P, probes √n·P^{1/2} e_i have E[zzᵀ] = P; log det P + mean of the whitened
    // quadratures is exact.
    let n = 50;
    let (k, a, sigma2) = test_matrix(n);
    let exact = dense_log_det(&a);
    let p = PivotedCholesky::new(
        &k,
        &PivotedCholeskyOptions {
            max_rank: 5,
            ..Default::default()
        },
    )
    .unwrap()
    .preconditioner(sigma2)
    .unwrap();
    let (p_sqrt, _) = sqrt_and_inv_sqrt(&gp_linalg::LinearOperator::to_dense(&p));
    let z = &p_sqrt * (n as f64).sqrt();
    let probes = Probes::from_matrix(z, Some(&p)).unwrap();
    let out = solve_with_probes(
        &DenseOperator::new(a),
        Mat::<f64>::zeros(n, 0).as_ref(),
        Some(&p),
        probes,
        &CgOptions {
            tolerance: 0.0,
            ..full_depth(n)
        },
    )
    .unwrap();
    let est = out.log_det(SlqScaling::ProbeNorm).unwrap();
    assert!((est.offset - gp_linalg::LowRankPlusDiagonal::log_det(&p)).abs() < 1e-12);
    assert!((est.value - exact).abs() < 1e-9, "{} vs {exact}", est.value);
}

/// RMS error of the means of disjoint groups of `t` per-probe terms.
fn rms_error(terms: &[f64], t: usize, exact: f64) -> f64 {
    let groups: Vec<f64> = terms
        .chunks_exact(t)
        .map(|g| g.iter().sum::<f64>() / t as f64 - exact)
        .collect();
    (groups.iter().map(|e| e * e).sum::<f64>() / groups.len() as f64).sqrt()
}

#[test]
fn error_shrinks_like_one_over_sqrt_probes() {
    let n = 100;
    let (_, a, _) = test_matrix(n);
    let exact = dense_log_det(&a);
    for dist in [ProbeDistribution::Rademacher, ProbeDistribution::Gaussian] {
        let probes = Probes::generate(
            n,
            None,
            &ProbeOptions {
                count: 2048,
                distribution: dist,
                seed: 2024,
            },
        )
        .unwrap();
        let out = solve_with_probes(
            &DenseOperator::new(a.clone()),
            Mat::<f64>::zeros(n, 0).as_ref(),
            None,
            probes,
            &full_depth(n),
        )
        .unwrap();
        let est = out.log_det(SlqScaling::ProbeNorm).unwrap();
        // All probes together: within 4 standard errors.
        assert!(
            (est.value - exact).abs() < 4.0 * est.std_error,
            "{dist:?}: {} vs {exact} (se {})",
            est.value,
            est.std_error
        );
        // Quadrupling the probes halves the RMS error (ratio 2 up to sampling noise).
        let errs: Vec<f64> = [4, 16, 64]
            .iter()
            .map(|&t| rms_error(&est.per_probe, t, exact))
            .collect();
        eprintln!(
            "{dist:?}: estimate {} ± {} (exact {exact}); RMS errors at t = 4, 16, 64: {errs:?}",
            est.value, est.std_error
        );
        for w in errs.windows(2) {
            let ratio = w[0] / w[1];
            assert!(
                (1.5..2.7).contains(&ratio),
                "{dist:?}: RMS errors {errs:?}, ratio {ratio}"
            );
        }
    }
}

#[test]
fn preconditioned_slq_is_unbiased_and_less_noisy() {
    let n = 100;
    let (k, a, sigma2) = test_matrix(n);
    let exact = dense_log_det(&a);
    let op = DenseOperator::new(a);
    let opts = ProbeOptions {
        count: 400,
        seed: 7,
        ..Default::default()
    };
    let plain = solve_with_probes(
        &op,
        Mat::<f64>::zeros(n, 0).as_ref(),
        None,
        Probes::generate(n, None, &opts).unwrap(),
        &full_depth(n),
    )
    .unwrap()
    .log_det(SlqScaling::ProbeNorm)
    .unwrap();
    let p = PivotedCholesky::new(
        &k,
        &PivotedCholeskyOptions {
            max_rank: 10,
            ..Default::default()
        },
    )
    .unwrap()
    .preconditioner(sigma2)
    .unwrap();
    let probes = Probes::generate(n, Some(&p), &opts).unwrap();
    assert_eq!(probes.distribution(), ProbeDistribution::Gaussian);
    let out = solve_with_probes(
        &op,
        Mat::<f64>::zeros(n, 0).as_ref(),
        Some(&p),
        probes,
        &full_depth(n),
    )
    .unwrap();
    let pre = out.log_det(SlqScaling::ProbeNorm).unwrap();
    assert!(
        (pre.value - exact).abs() < 4.0 * pre.std_error,
        "{} vs {exact} (se {})",
        pre.value,
        pre.std_error
    );
    eprintln!(
        "plain {} ± {}, preconditioned {} ± {}, exact {exact}",
        plain.value, plain.std_error, pre.value, pre.std_error
    );
    assert!(
        pre.std_error < plain.std_error,
        "{} vs {}",
        pre.std_error,
        plain.std_error
    );
    // GPyTorch's n-scaling is close (a ratio estimator).
    let dim = out.log_det(SlqScaling::Dimension).unwrap();
    assert!((dim.value - exact).abs() < 6.0 * pre.std_error.max(dim.std_error));
}

#[test]
fn dimension_scaling_equals_probe_norm_for_rademacher() {
    let n = 40;
    let (_, a, _) = test_matrix(n);
    let probes = Probes::generate(n, None, &ProbeOptions::default()).unwrap();
    let out = solve_with_probes(
        &DenseOperator::new(a),
        Mat::<f64>::zeros(n, 0).as_ref(),
        None,
        probes,
        &full_depth(n),
    )
    .unwrap();
    let a1 = slq_log_det_from_cg(out.probe_columns(), n, 0.0, SlqScaling::ProbeNorm).unwrap();
    let a2 = slq_log_det_from_cg(out.probe_columns(), n, 0.0, SlqScaling::Dimension).unwrap();
    assert!((a1.value - a2.value).abs() < 1e-12 * a1.value.abs());
}

#[test]
fn truncated_slq_overestimates_per_probe() {
    // Theorem 1 of the RTGPS paper: the depth-J quadrature of log is ≥ zᵀ log(A) z for
    // every start vector, and non-increasing in J.
    let n = 80;
    let (_, a, _) = test_matrix(n);
    let eig = gp_linalg::SymmetricEigen::new(a.as_ref()).unwrap();
    let log_a = {
        let v = &eig.vectors;
        let s = Mat::from_fn(n, n, |i, j| v[(i, j)] * eig.values[j].ln());
        &s * v.transpose()
    };
    let z = gaussian(n, 3, 5);
    let out = solve_with_probes(
        &DenseOperator::new(a),
        Mat::<f64>::zeros(n, 0).as_ref(),
        None,
        Probes::from_matrix(z.clone(), None).unwrap(),
        &full_depth(n),
    )
    .unwrap();
    for (i, col) in out.probe_columns().iter().enumerate() {
        let t = col.tridiagonal().unwrap();
        let zi = z.col(i);
        let exact = zi.transpose() * &log_a * zi;
        let mut previous = f64::INFINITY;
        for j in 1..=t.dim() {
            let v = col.rhs_precond_norm_sq * t.leading(j).log_quadrature().unwrap();
            assert!(
                v >= exact - 1e-9 * exact.abs().max(1.0),
                "depth {j}: {v} < {exact}"
            );
            assert!(v <= previous + 1e-9 * v.abs().max(1.0));
            previous = v;
        }
        assert!((previous - exact).abs() < 1e-8 * exact.abs().max(1.0));
    }
}
