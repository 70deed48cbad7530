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

/// Bit patterns of a matrix, column by column.
fn bits(m: faer::MatRef<'_, f64>) -> Vec<u64> {
    m.col_iter()
        .flat_map(|c| c.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
        .collect()
}

#[test]
fn a_reused_buffer_gives_the_bits_of_a_fresh_factorization() {
    let mut r = rng(64);
    let n = 70;
    let spd = rand_spd(&mut r, n);
    let u = rand_mat(&mut r, n, 4);
    // Rank 4: the ladder has to add jitter, so the loop refills the buffer.
    let deficient = &u * u.transpose();
    let ladder = JitterLadder::default();
    for (name, a) in [("SPD", &spd), ("rank-deficient", &deficient)] {
        let fresh = Cholesky::with_jitter(a.as_ref(), &ladder).unwrap();
        // A buffer full of NaNs, an earlier factor of another matrix, and one of the wrong
        // size (dropped) must all give the fresh factor exactly, strict upper triangle zero.
        let buffers = [
            Mat::from_fn(n, n, |_, _| f64::NAN),
            Cholesky::new(rand_spd(&mut r, n).as_ref())
                .unwrap()
                .into_factor(),
            Mat::from_fn(n + 1, n - 1, |_, _| 1.0),
        ];
        for storage in buffers {
            let reused = Cholesky::with_jitter_reusing(a.as_ref(), &ladder, storage).unwrap();
            assert_eq!(
                reused.jitter().to_bits(),
                fresh.jitter().to_bits(),
                "{name}"
            );
            assert_eq!(
                bits(reused.factor()),
                bits(fresh.factor()),
                "{name}: factor bits"
            );
        }
    }
    // An error leaves nothing half-done to observe, and says what failed.
    let indefinite = Mat::from_fn(3, 3, |i, j| if i == j { -1.0 } else { 0.0 });
    assert!(matches!(
        Cholesky::with_jitter_reusing(indefinite.as_ref(), &ladder, Mat::zeros(3, 3)),
        Err(LinalgError::NotPositiveDefinite { .. })
    ));
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
