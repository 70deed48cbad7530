//! The Cholesky jitter ladder: no jitter for SPD, some for rank-deficient PSD, a typed error
//! for indefinite and non-finite input.

use crate::common;

use common::{assert_close, rand_mat, rand_spd, rng};
use faer::Mat;
use gp_linalg::{Cholesky, JitterLadder, LinalgError};

#[test]
fn spd_needs_no_jitter_and_reconstructs() {
    let mut r = rng(61);
    let a = rand_spd(&mut r, 80);
    let chol = Cholesky::new(a.as_ref()).unwrap();
    assert_eq!(chol.jitter(), 0.0);
    let l = chol.factor();
    assert_close((l * l.transpose()).as_ref(), a.as_ref(), 1e-13, "L Lᵀ = A");
}

#[test]
fn rank_deficient_psd_succeeds_with_jitter() {
    let mut r = rng(62);
    let (n, k) = (60, 5);
    let u = rand_mat(&mut r, n, k);
    let a = &u * u.transpose();
    let chol = Cholesky::new(a.as_ref()).unwrap();
    assert!(
        chol.jitter() > 0.0,
        "a rank-{k} {n}×{n} matrix needs jitter"
    );
    let scale = (0..n).map(|i| a[(i, i)]).sum::<f64>() / n as f64;
    assert!(chol.jitter() <= 1e-6 * scale * (1.0 + 1e-12));
    // The factor is that of A + jitter·I.
    let mut shifted = a.clone();
    for i in 0..n {
        shifted[(i, i)] += chol.jitter();
    }
    let l = chol.factor();
    assert_close(
        (l * l.transpose()).as_ref(),
        shifted.as_ref(),
        1e-12,
        "L Lᵀ = A + jI",
    );
    // Without a ladder the same matrix is rejected.
    assert!(matches!(
        Cholesky::with_jitter(a.as_ref(), &JitterLadder::none()),
        Err(LinalgError::NotPositiveDefinite { largest_jitter, .. }) if largest_jitter == 0.0
    ));
}

#[test]
fn indefinite_reports_the_top_rung() {
    let mut r = rng(63);
    let n = 30;
    let mut a = rand_spd(&mut r, n);
    a[(0, 0)] = -5.0; // makes the matrix indefinite by far more than any jitter
    let scale = (0..n).map(|i| a[(i, i)].abs()).sum::<f64>() / n as f64;
    match Cholesky::new(a.as_ref()) {
        Err(LinalgError::NotPositiveDefinite {
            n: got_n,
            largest_jitter,
        }) => {
            assert_eq!(got_n, n);
            let top = JitterLadder::default().max * scale;
            assert!(
                (largest_jitter - top).abs() <= 1e-12 * top,
                "largest jitter {largest_jitter:e} vs top rung {top:e}"
            );
        }
        other => panic!("expected NotPositiveDefinite, got {other:?}"),
    }
    // An absolute ladder: rungs 1e-3, 1e-2, 1e-1.
    let ladder = JitterLadder {
        start: 1e-3,
        growth: 10.0,
        max: 1e-1,
        relative: false,
    };
    match Cholesky::with_jitter(faer::mat![[1.0, 0.0], [0.0, -1.0]].as_ref(), &ladder) {
        Err(LinalgError::NotPositiveDefinite { largest_jitter, .. }) => {
            assert!((largest_jitter - 1e-1).abs() <= 1e-15);
        }
        other => panic!("expected NotPositiveDefinite, got {other:?}"),
    }
}

#[test]
fn non_finite_and_shape_errors() {
    let mut a = Mat::<f64>::identity(4, 4);
    a[(3, 1)] = f64::NAN;
    assert!(matches!(
        Cholesky::new(a.as_ref()),
        Err(LinalgError::NonFinite { row: 3, col: 1, .. })
    ));
    assert!(matches!(
        Cholesky::new(Mat::<f64>::zeros(2, 3).as_ref()),
        Err(LinalgError::NotSquare { .. })
    ));
    let chol = Cholesky::new(Mat::<f64>::identity(3, 3).as_ref()).unwrap();
    assert!(matches!(
        chol.solve(Mat::<f64>::zeros(4, 1).as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    let bad = JitterLadder {
        start: 1e-8,
        growth: 0.5,
        max: 1e-4,
        relative: true,
    };
    assert!(matches!(
        Cholesky::with_jitter(Mat::<f64>::identity(2, 2).as_ref(), &bad),
        Err(LinalgError::InvalidArgument { .. })
    ));
}

#[test]
fn huge_indefinite_matrix_terminates_with_an_error() {
    // The mean diagonal overflows a naive sum and the jitter becomes infinite; the ladder
    // must still stop and report an error.
    let a = faer::mat![[1.5e308, 0.0], [0.0, -1.5e308]];
    assert!(Cholesky::new(a.as_ref()).is_err());
    let a = faer::mat![[1.5e308, 1.7e308], [1.7e308, 1.5e308]];
    assert!(Cholesky::new(a.as_ref()).is_err());
}
