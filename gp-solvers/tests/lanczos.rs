//! Lanczos with full re-orthogonalization against dense references.

use crate::common;

use common::*;
use faer::{Col, Mat};
use gp_linalg::DenseOperator;
use gp_solvers::{lanczos, LanczosOptions, LanczosStatus, SolverError, SymTridiagonal};

#[test]
fn q_is_orthonormal_and_t_is_projection() {
    let n = 150;
    let a = with_spectrum(&log_spectrum(n, 1e6), 1);
    let b = gaussian(n, 1, 2);
    let k = 60;
    let lz = lanczos(
        &DenseOperator::new(a.clone()),
        b.col(0),
        &LanczosOptions {
            max_iterations: k,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(lz.status, LanczosStatus::MaxIterations);
    assert_eq!(lz.steps(), k);
    let q = &lz.q;
    let qtq = q.transpose() * q;
    assert!(max_abs_diff(qtq.as_ref(), Mat::<f64>::identity(k, k).as_ref()) < 1e-13);
    let t = q.transpose() * &a * q;
    assert!(max_abs_diff(t.as_ref(), lz.tridiagonal.to_dense().as_ref()) < 1e-12);
    // q₁ = b/‖b‖.
    let q1 = &b * (1.0 / b.norm_l2());
    assert!(max_abs_diff(q.as_ref().subcols(0, 1), q1.as_ref()) < 1e-15);
    assert!((lz.start_norm - b.norm_l2()).abs() < 1e-12);
}

#[test]
fn full_lanczos_reproduces_the_spectrum() {
    let n = 40;
    let ev: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
    let a = with_spectrum(&ev, 3);
    let b = gaussian(n, 1, 4);
    let lz = lanczos(
        &DenseOperator::new(a),
        b.col(0),
        &LanczosOptions {
            max_iterations: n,
            ..Default::default()
        },
    )
    .unwrap();
    let eig = lz.tridiagonal.eigen().unwrap();
    for (i, &e) in ev.iter().enumerate() {
        assert!(
            (eig.values[i] - e).abs() < 1e-10,
            "{} vs {e}",
            eig.values[i]
        );
    }
}

#[test]
fn invariant_subspace_stops_early() {
    // Three distinct eigenvalues: the Krylov space has dimension 3.
    let n = 30;
    let ev: Vec<f64> = (0..n).map(|i| [1.0, 2.0, 5.0][i % 3]).collect();
    let a = with_spectrum(&ev, 5);
    let b = gaussian(n, 1, 6);
    let lz = lanczos(&DenseOperator::new(a), b.col(0), &LanczosOptions::default()).unwrap();
    assert_eq!(lz.status, LanczosStatus::InvariantSubspace);
    assert_eq!(lz.steps(), 3);
    let eig = lz.tridiagonal.eigen().unwrap();
    for (i, e) in [1.0, 2.0, 5.0].into_iter().enumerate() {
        assert!((eig.values[i] - e).abs() < 1e-10);
    }
}

#[test]
fn lanczos_errors() {
    let a = DenseOperator::new(spd(5, 1));
    assert!(matches!(
        lanczos(
            &a,
            Col::<f64>::zeros(5).as_ref(),
            &LanczosOptions::default()
        ),
        Err(SolverError::InvalidOptions { .. })
    ));
    assert!(matches!(
        lanczos(&a, Col::<f64>::ones(4).as_ref(), &LanczosOptions::default()),
        Err(SolverError::ShapeMismatch { .. })
    ));
}

#[test]
fn tridiagonal_quadrature_and_errors() {
    let t = SymTridiagonal::new(vec![2.0, 3.0, 4.0], vec![0.5, 0.25]).unwrap();
    let dense = t.to_dense();
    // e₁ᵀ T⁻¹ e₁ against a dense solve.
    let inv = dense_solve(
        &dense,
        &Mat::from_fn(3, 1, |i, _| if i == 0 { 1.0 } else { 0.0 }),
    );
    assert!((t.quadrature(|l| 1.0 / l).unwrap() - inv[(0, 0)]).abs() < 1e-14);
    // e₁ᵀ log(T) e₁ against an eigen-decomposition.
    let eig = gp_linalg::SymmetricEigen::new(dense.as_ref()).unwrap();
    let expected: f64 = (0..3)
        .map(|m| eig.vectors[(0, m)].powi(2) * eig.values[m].ln())
        .sum();
    assert!((t.log_quadrature().unwrap() - expected).abs() < 1e-14);
    assert_eq!(t.leading(2).dim(), 2);
    assert_eq!(t.leading(2).off_diagonal(), &[0.5]);
    assert!(SymTridiagonal::new(vec![1.0], vec![1.0]).is_err());
    assert!(SymTridiagonal::new(vec![f64::NAN], vec![]).is_err());
    let indefinite = SymTridiagonal::new(vec![1.0, -1.0], vec![0.1]).unwrap();
    assert!(matches!(
        indefinite.log_quadrature(),
        Err(SolverError::NonPositiveRitzValue { .. })
    ));
    assert!(SymTridiagonal::from_cg_coefficients(&[1.0, -1.0], &[0.5]).is_err());
    assert!(SymTridiagonal::from_cg_coefficients(&[1.0, 1.0], &[]).is_err());
}
