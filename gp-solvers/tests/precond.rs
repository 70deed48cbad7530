//! Pivoted Cholesky and the preconditioner `L Lᵀ + σ²I` against dense references.

use crate::common;

use common::*;
use faer::Mat;
use gp_linalg::{DenseOperator, LinalgError, LinearOperator};
use gp_solvers::{
    cg, pivoted_cholesky_preconditioner, CgOptions, PivotedCholesky, PivotedCholeskyOptions,
    Preconditioner, SolverError,
};

fn rank(k: usize) -> PivotedCholeskyOptions {
    PivotedCholeskyOptions {
        max_rank: k,
        ..Default::default()
    }
}

#[test]
fn recovers_a_low_rank_matrix_and_stops() {
    let n = 40;
    let u = gaussian(n, 3, 1);
    let k = &u * u.transpose();
    let pc = PivotedCholesky::new(&k, &rank(10)).unwrap();
    assert_eq!(pc.rank(), 3);
    let l = pc.factor();
    assert!(max_abs_diff((l * l.transpose()).as_ref(), k.as_ref()) < 1e-10);
}

#[test]
fn matches_the_dense_definition() {
    let n = 100;
    let k = se_kernel(n, 0.7, 2);
    let pc = PivotedCholesky::new(&k, &rank(12)).unwrap();
    let l = pc.factor();
    let resid = &k - l * l.transpose();
    // The residual vanishes on the pivot rows and columns; its trace is recorded and
    // non-increasing; the first pivot is the largest diagonal entry.
    for &p in pc.pivots() {
        assert!(resid.row(p).norm_max() < 1e-12);
    }
    let traces = pc.residual_traces();
    assert_eq!(traces.len(), 13);
    for w in traces.windows(2) {
        assert!(w[1] <= w[0] + 1e-12);
    }
    let last = traces[12];
    let tr: f64 = (0..n).map(|i| resid[(i, i)]).sum();
    assert!((tr - last).abs() < 1e-10 * n as f64);
    // Residual is positive semi-definite (Schur complement).
    let eig = gp_linalg::SymmetricEigen::new(resid.as_ref()).unwrap();
    assert!(eig.values[0] > -1e-10);
    // Each pivot is the arg-max of the residual diagonal at its step.
    let mut l_m = Mat::<f64>::zeros(n, 0);
    for (m, &p) in pc.pivots().iter().enumerate() {
        let r = &k - &l_m * l_m.transpose();
        let best = (0..n).map(|i| r[(i, i)]).fold(f64::MIN, f64::max);
        assert!((r[(p, p)] - best).abs() < 1e-12, "step {m}");
        l_m = l.subcols(0, m + 1).to_owned();
    }
}

#[test]
fn relative_tolerance_stops_early() {
    let n = 100;
    let k = se_kernel(n, 2.0, 3);
    let opts = PivotedCholeskyOptions {
        max_rank: 50,
        relative_tolerance: 1e-3,
    };
    let pc = PivotedCholesky::new(&k, &opts).unwrap();
    assert!(pc.rank() < 50);
    let traces = pc.residual_traces();
    assert!(*traces.last().unwrap() <= 1e-3 * traces[0]);
    assert!(traces[traces.len() - 2] > 1e-3 * traces[0]);
}

#[test]
fn preconditioner_solve_logdet_and_sampling() {
    let n = 12;
    let k = se_kernel(n, 1.0, 4);
    let sigma2 = 0.1;
    let p = pivoted_cholesky_preconditioner(&k, sigma2, &rank(4)).unwrap();
    let pd = p.to_dense();
    let l = p.factor();
    let expected = l * l.transpose() + Mat::<f64>::identity(n, n) * sigma2;
    assert!(max_abs_diff(pd.as_ref(), expected.as_ref()) < 1e-14);
    let b = gaussian(n, 3, 5);
    let x = Preconditioner::solve_block(&p, b.as_ref()).unwrap();
    assert!(max_abs_diff(x.as_ref(), dense_solve(&pd, &b).as_ref()) < 1e-10);
    assert!((Preconditioner::log_det(&p).unwrap() - dense_log_det(&pd)).abs() < 1e-10);
    // Empirical covariance of N(0, P) samples.
    let count = 40000;
    let mut r = rng(6);
    let z = p.sample(&mut r, count).unwrap();
    let cov = &z * z.transpose() * (1.0 / count as f64);
    // Entry-wise standard error ≈ √((P_ii P_jj + P_ij²)/count) ≤ √(2/count)·max P_ii.
    let max_diag = (0..n).map(|i| pd[(i, i)]).fold(0.0, f64::max);
    let se = (2.0 / count as f64).sqrt() * max_diag;
    assert!(max_abs_diff(cov.as_ref(), pd.as_ref()) < 5.0 * se);
}

#[test]
fn preconditioner_errors() {
    let k = se_kernel(10, 1.0, 7);
    let pc = PivotedCholesky::new(&k, &rank(3)).unwrap();
    for bad in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            pc.preconditioner(bad),
            Err(SolverError::PreconditionerNotSpd { .. })
        ));
    }
    let mut nan = k.clone();
    nan[(3, 3)] = f64::NAN;
    assert!(matches!(
        PivotedCholesky::new(&nan, &rank(3)),
        Err(SolverError::Linalg(LinalgError::NonFinite { .. }))
    ));
    let mut neg = k.clone();
    neg[(3, 3)] = -1.0;
    assert!(PivotedCholesky::new(&neg, &rank(3)).is_err());
    let opts = PivotedCholeskyOptions {
        max_rank: 3,
        relative_tolerance: -1.0,
    };
    assert!(matches!(
        PivotedCholesky::new(&k, &opts),
        Err(SolverError::InvalidOptions { .. })
    ));
}

#[test]
fn preconditioned_cg_needs_fewer_iterations() {
    // An ill-conditioned SE kernel system, n = 300: the rank-15 pivoted-Cholesky
    // preconditioner captures the large eigenvalues, so PCG needs far fewer iterations.
    let n = 300;
    let k = se_kernel(n, 0.5, 8);
    let sigma2 = 1e-3;
    let a = DenseOperator::new(add_noise(&k, sigma2));
    let y = gaussian(n, 4, 9);
    let opts = CgOptions {
        tolerance: 1e-6,
        max_iterations: 2000,
        ..Default::default()
    };
    let plain = cg(&a, y.as_ref(), None, &opts).unwrap();
    let p = pivoted_cholesky_preconditioner(&k, sigma2, &rank(15)).unwrap();
    let pre = cg(&a, y.as_ref(), Some(&p), &opts).unwrap();
    assert!(plain.all_converged() && pre.all_converged());
    let (ip, iq) = (plain.iterations, pre.iterations);
    eprintln!("plain CG: {ip} iterations, rank-15 PCG: {iq}");
    assert!(2 * iq < ip, "plain {ip} vs preconditioned {iq}");
    let exact = dense_solve(&a.matrix().to_owned(), &y);
    assert!(max_abs_diff(pre.solution.as_ref(), exact.as_ref()) < 1e-3 * exact.norm_max());
}
