//! The jitter ladder's number of rungs is bounded (issue 11: growth 1 + 1e-12 meant ~10¹⁴
//! factorizations).

use faer::Mat;
use gp_linalg::{Cholesky, JitterLadder, LinalgError};

fn indefinite() -> Mat<f64> {
    Mat::from_fn(2, 2, |i, j| if i == j { 1.0 } else { 2.0 })
}

#[test]
fn a_ladder_with_too_many_rungs_is_refused_before_any_factorization() {
    let ladder = JitterLadder {
        start: 1e-10,
        growth: 1.0 + 1e-12,
        max: 1e-6,
        relative: true,
    };
    assert!(ladder.rungs() > JitterLadder::MAX_RUNGS);
    let err = ladder.validate().unwrap_err();
    let msg = err.to_string();
    assert!(matches!(
        err,
        LinalgError::InvalidArgument {
            name: "JitterLadder",
            ..
        }
    ));
    assert!(
        msg.contains("growth") && msg.contains("start") && msg.contains("max"),
        "{msg}"
    );
    let started = std::time::Instant::now();
    assert!(matches!(
        Cholesky::with_jitter(indefinite().as_ref(), &ladder),
        Err(LinalgError::InvalidArgument { .. })
    ));
    assert!(started.elapsed().as_secs() < 5);
    // Many decades at a modest growth are refused too.
    let wide = JitterLadder {
        start: 1e-300,
        growth: 10.0,
        max: 1e300,
        relative: false,
    };
    assert!(wide.validate().is_err());
}

#[test]
fn ordinary_ladders_are_accepted_and_counted() {
    assert_eq!(JitterLadder::default().rungs(), 5);
    assert!(JitterLadder::default().validate().is_ok());
    assert_eq!(JitterLadder::none().rungs(), 0);
    assert!(JitterLadder::none().validate().is_ok());
    let edge = JitterLadder {
        start: 1.0,
        growth: 2.0,
        max: 2f64.powi(63),
        relative: false,
    };
    assert_eq!(edge.rungs(), JitterLadder::MAX_RUNGS);
    assert!(edge.validate().is_ok());
    let over = JitterLadder {
        max: 2f64.powi(64),
        ..edge
    };
    assert_eq!(over.rungs(), JitterLadder::MAX_RUNGS + 1);
    assert!(over.validate().is_err());
}

#[test]
fn an_indefinite_matrix_fails_after_at_most_the_cap() {
    let ladder = JitterLadder {
        start: 1e-10,
        growth: 1.5,
        max: 1e-3,
        relative: false,
    };
    assert!(ladder.validate().is_ok());
    match Cholesky::with_jitter(indefinite().as_ref(), &ladder) {
        Err(LinalgError::NotPositiveDefinite { largest_jitter, .. }) => {
            assert!(largest_jitter <= 1e-3 * (1.0 + 1e-12) && largest_jitter > 1e-4);
        }
        other => panic!("expected NotPositiveDefinite, got {other:?}"),
    }
}
