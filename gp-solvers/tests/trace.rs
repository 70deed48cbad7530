//! Hutchinson trace estimation: unbiasedness (statistically) and exactness with complete
//! probes, with and without preconditioner.

use crate::common;

use common::*;
use faer::Mat;
use gp_linalg::{DenseOperator, LinearOperator};
use gp_solvers::{
    hutchinson_trace, solve_with_probes, CgOptions, PivotedCholesky, PivotedCholeskyOptions,
    ProbeDistribution, ProbeOptions, Probes, SolverError,
};

fn trace(m: &Mat<f64>) -> f64 {
    (0..m.nrows()).map(|i| m[(i, i)]).sum()
}

/// `K + σ²I` for an SE kernel and `∂K/∂ log ℓ` (a symmetric, indefinite matrix).
fn kernel_and_derivative(n: usize) -> (Mat<f64>, Mat<f64>, Mat<f64>, f64) {
    use gp_kernels::{Kernel, SquaredExponential};
    let mut r = rng(9);
    let x = Mat::from_fn(n, 2, |_, _| 4.0 * rand::Rng::random::<f64>(&mut r));
    let k = SquaredExponential::new(vec![0.8, 1.2], 1.0).unwrap();
    let (kxx, grads) = k.matrix_and_grads(x.as_ref()).unwrap();
    let sigma2 = 0.05;
    (
        kxx.clone(),
        add_noise(&kxx, sigma2),
        grads[0].clone(),
        sigma2,
    )
}

fn opts(n: usize) -> CgOptions {
    CgOptions {
        tolerance: 1e-11,
        max_iterations: 2 * n,
        ..Default::default()
    }
}

#[test]
fn plain_trace_is_unbiased() {
    let n = 50;
    let m = gaussian(n, n, 1);
    let m = &m + m.transpose();
    let exact = trace(&m);
    for dist in [ProbeDistribution::Rademacher, ProbeDistribution::Gaussian] {
        let probes = Probes::generate(
            n,
            None,
            &ProbeOptions {
                count: 4000,
                distribution: dist,
                seed: 3,
            },
        )
        .unwrap();
        let est = hutchinson_trace(&DenseOperator::new(m.clone()), &probes).unwrap();
        assert!(
            (est.value - exact).abs() < 4.0 * est.std_error,
            "{dist:?}: {} vs {exact} ± {}",
            est.value,
            est.std_error
        );
    }
}

#[test]
fn inverse_trace_is_unbiased_without_and_with_preconditioner() {
    let n = 80;
    let (k, a, dk, sigma2) = kernel_and_derivative(n);
    let exact = trace(&dense_solve(&a, &dk));
    let op = DenseOperator::new(a);
    let y = gaussian(n, 1, 4);
    let derivative = DenseOperator::new(dk);
    // Rademacher without preconditioner: E[(A⁻¹z)ᵀ ∂A z].
    let probes = Probes::generate(
        n,
        None,
        &ProbeOptions {
            count: 3000,
            seed: 5,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(probes.distribution(), ProbeDistribution::Rademacher);
    let out = solve_with_probes(&op, y.as_ref(), None, probes, &opts(n)).unwrap();
    let plain = out.inverse_trace(&derivative).unwrap();
    assert!(
        (plain.value - exact).abs() < 4.0 * plain.std_error,
        "{} vs {exact} ± {}",
        plain.value,
        plain.std_error
    );
    // The target solve is there too.
    let x = dense_solve(&op.matrix().to_owned(), &y);
    assert!(max_abs_diff(out.target_solutions(), x.as_ref()) < 1e-7 * x.norm_max());

    // N(0, P) probes with the right factor P⁻¹z.
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
    let probes = Probes::generate(
        n,
        Some(&p),
        &ProbeOptions {
            count: 3000,
            seed: 6,
            ..Default::default()
        },
    )
    .unwrap();
    let out = solve_with_probes(&op, y.as_ref(), Some(&p), probes, &opts(n)).unwrap();
    let pre = out.inverse_trace(&derivative).unwrap();
    eprintln!(
        "exact {exact}; plain {} ± {}; preconditioned {} ± {}",
        plain.value, plain.std_error, pre.value, pre.std_error
    );
    assert!(
        (pre.value - exact).abs() < 4.0 * pre.std_error,
        "{} vs {exact} ± {}",
        pre.value,
        pre.std_error
    );
    // Using z instead of P⁻¹z as the right factor would be biased (a deliberate check that
    // the test can tell the two apart).
    let wrong = gp_solvers::hutchinson_from_products(
        out.probe_solutions(),
        (derivative.matrix() * out.probes.matrix()).as_ref(),
    )
    .unwrap();
    assert!((wrong.value - exact).abs() > 10.0 * wrong.std_error);
}

#[test]
fn inverse_trace_exact_with_complete_probes() {
    let n = 40;
    let (k, a, dk, sigma2) = kernel_and_derivative(n);
    let exact = trace(&dense_solve(&a, &dk));
    let p = PivotedCholesky::new(
        &k,
        &PivotedCholeskyOptions {
            max_rank: 4,
            ..Default::default()
        },
    )
    .unwrap()
    .preconditioner(sigma2)
    .unwrap();
    let (p_sqrt, _) = sqrt_and_inv_sqrt(&p.to_dense());
    let probes = Probes::from_matrix(&p_sqrt * (n as f64).sqrt(), Some(&p)).unwrap();
    let out = solve_with_probes(
        &DenseOperator::new(a),
        Mat::<f64>::zeros(n, 0).as_ref(),
        Some(&p),
        probes,
        &CgOptions {
            tolerance: 1e-13,
            max_iterations: 4 * n,
            reorthogonalize: true,
            ..Default::default()
        },
    )
    .unwrap();
    let est = out.inverse_trace(&DenseOperator::new(dk)).unwrap();
    assert!(
        (est.value - exact).abs() < 1e-8 * exact.abs().max(1.0),
        "{} vs {exact}",
        est.value
    );
}

#[test]
fn probe_errors() {
    let n = 10;
    let (k, _, _, sigma2) = kernel_and_derivative(n);
    let p = PivotedCholesky::new(&k, &PivotedCholeskyOptions::default())
        .unwrap()
        .preconditioner(sigma2)
        .unwrap();
    let rademacher = ProbeOptions {
        distribution: ProbeDistribution::Rademacher,
        ..Default::default()
    };
    assert!(matches!(
        Probes::generate(n, Some(&p), &rademacher),
        Err(SolverError::InvalidOptions { .. })
    ));
    assert!(Probes::generate(n + 1, Some(&p), &ProbeOptions::default()).is_err());
    // Same seed, same probes.
    let a = Probes::generate(n, Some(&p), &ProbeOptions::default()).unwrap();
    let b = Probes::generate(n, Some(&p), &ProbeOptions::default()).unwrap();
    assert_eq!(a.matrix(), b.matrix());
}
