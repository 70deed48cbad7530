//! `LowRankPlusDiagonal` solve and log-det against a dense Cholesky of `D + U Uᵀ`.
//!
//! Tolerance: with `U` entries in [-1, 1), `k ≤ 10`, `n ≤ 200` and `D` in [0.1, 2), the
//! condition number of `D + U Uᵀ` is at most about `(2 + n k) / 0.1 ≈ 2·10⁴`. Both the
//! Woodbury solve and the dense Cholesky solve are backward stable, so each forward error is
//! about `κ · ε ≈ 5·10⁻¹²`; 1e-10 relative leaves a margin of 20 without hiding a wrong
//! formula (which would give O(1) errors). The log-determinants are sums of `n + k`
//! logarithms of well-scaled pivots, accurate to about `n ε` relative.

use crate::common;

use common::{assert_close, rand_col, rand_mat, rng};
use faer::{Col, Mat};
use gp_linalg::{Cholesky, DiagonalOperator, LinalgError, LinearOperator, LowRankPlusDiagonal};

const TOL: f64 = 1e-10;

fn dense_of(u: &Mat<f64>, d: &Col<f64>) -> Mat<f64> {
    let mut a = u * u.transpose();
    for i in 0..d.nrows() {
        a[(i, i)] += d[i];
    }
    a
}

fn got_block(op: &LowRankPlusDiagonal, b: &Mat<f64>) -> Mat<f64> {
    let mut x = b.clone();
    op.solve_in_place(x.as_mut()).unwrap();
    x
}

#[test]
fn woodbury_solve_and_log_det_match_dense_cholesky() {
    let mut r = rng(31);
    for (n, k) in [(200, 10), (120, 1), (50, 0), (30, 30), (7, 3)] {
        let u = rand_mat(&mut r, n, k);
        let d = rand_col(&mut r, n, 0.1, 2.0);
        let op =
            LowRankPlusDiagonal::new(u.clone(), DiagonalOperator::new(d.clone()).unwrap()).unwrap();
        let dense = dense_of(&u, &d);
        let chol = Cholesky::new(dense.as_ref()).unwrap();
        assert_eq!(chol.jitter(), 0.0);

        let b = rand_mat(&mut r, n, 5);
        let want = chol.solve(b.as_ref()).unwrap();
        let got = op.solve_block(b.as_ref()).unwrap();
        assert_close(
            got.as_ref(),
            want.as_ref(),
            TOL,
            &format!("solve_block n={n} k={k}"),
        );
        let got = op.solve(b.col(2)).unwrap();
        assert_close(
            got.as_mat(),
            want.get(.., 2..3),
            TOL,
            &format!("solve n={n} k={k}"),
        );
        // Into a separate output (the preconditioner's path): the same bits as in place.
        let mut out = Mat::<f64>::from_fn(n, 5, |_, _| f64::NAN);
        op.solve_into(b.as_ref(), out.as_mut()).unwrap();
        assert_eq!(out, got_block(&op, &b), "solve_into n={n} k={k}");
        assert!(op
            .solve_into(b.as_ref(), Mat::zeros(n, 4).as_mut())
            .is_err());
        // The residual of the Woodbury solve is small as well.
        let back = op
            .apply_block(op.solve_block(b.as_ref()).unwrap().as_ref())
            .unwrap();
        assert_close(back.as_ref(), b.as_ref(), TOL, "A A⁻¹ b");

        let ld = op.log_det();
        assert!(
            (ld - chol.log_det()).abs() <= TOL * chol.log_det().abs().max(1.0),
            "log det n={n} k={k}: {ld} vs {}",
            chol.log_det()
        );
    }
}

#[test]
fn woodbury_with_noise_matches_dense() {
    let mut r = rng(32);
    let (n, k) = (80, 6);
    let u = rand_mat(&mut r, n, k);
    let op = LowRankPlusDiagonal::with_noise(u.clone(), 0.05).unwrap();
    let dense = dense_of(&u, &Col::full(n, 0.05));
    let chol = Cholesky::new(dense.as_ref()).unwrap();
    let b = rand_mat(&mut r, n, 2);
    assert_close(
        op.solve_block(b.as_ref()).unwrap().as_ref(),
        chol.solve(b.as_ref()).unwrap().as_ref(),
        TOL,
        "σ²I solve",
    );
    assert!((op.log_det() - chol.log_det()).abs() <= TOL * chol.log_det().abs());
    assert_eq!(op.capacitance().dim(), k);
}

#[test]
fn woodbury_errors() {
    let u = Mat::<f64>::zeros(4, 2);
    for bad in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            LowRankPlusDiagonal::with_noise(u.clone(), bad),
            Err(LinalgError::NotPositive { .. })
        ));
    }
    assert!(matches!(
        LowRankPlusDiagonal::with_noise(u.clone(), f64::INFINITY),
        Err(LinalgError::NonFinite { .. })
    ));
    let d = DiagonalOperator::from_vec(vec![1.0, 1.0, 0.0, 1.0]).unwrap();
    assert!(matches!(
        LowRankPlusDiagonal::new(u.clone(), d),
        Err(LinalgError::NotPositive { index: 2, .. })
    ));
    let d = DiagonalOperator::from_vec(vec![1.0; 3]).unwrap();
    assert!(matches!(
        LowRankPlusDiagonal::new(u.clone(), d),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    let mut bad_u = u.clone();
    bad_u[(1, 1)] = f64::NAN;
    assert!(matches!(
        LowRankPlusDiagonal::with_noise(bad_u, 1.0),
        Err(LinalgError::NonFinite { .. })
    ));
    let op = LowRankPlusDiagonal::with_noise(u, 1.0).unwrap();
    assert!(matches!(
        op.solve(Col::<f64>::zeros(5).as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
}
