//! Checked triangular solves against products with the triangle.

use crate::common;

use common::{assert_close, rand_mat, rng};
use faer::Mat;
use gp_linalg::{
    solve_lower_triangular, solve_lower_triangular_in_place, solve_upper_triangular,
    solve_upper_triangular_in_place, LinalgError,
};

/// A triangular matrix with unit-size diagonal (in [1, 2)) and off-diagonals in [-1, 1)/n:
/// diagonally dominant, so the solves are well conditioned and 1e-12 is ample.
fn rand_tri(seed: u64, n: usize, lower: bool) -> Mat<f64> {
    let mut r = rng(seed);
    let m = rand_mat(&mut r, n, n);
    Mat::from_fn(n, n, |i, j| {
        if i == j {
            1.5 + 0.5 * m[(i, j)]
        } else if (i > j) == lower {
            m[(i, j)] / n as f64
        } else {
            0.0
        }
    })
}

#[test]
fn lower_and_upper_solves_invert_the_product() {
    for (seed, n) in [(51, 1), (52, 10), (53, 120)] {
        let mut r = rng(seed + 10);
        let b = rand_mat(&mut r, n, 3);
        let l = rand_tri(seed, n, true);
        let x = solve_lower_triangular(l.as_ref(), b.as_ref()).unwrap();
        assert_close((&l * &x).as_ref(), b.as_ref(), 1e-12, "L x = b");
        let u = rand_tri(seed, n, false);
        let x = solve_upper_triangular(u.as_ref(), b.as_ref()).unwrap();
        assert_close((&u * &x).as_ref(), b.as_ref(), 1e-12, "U x = b");
        let mut y = b.clone();
        solve_upper_triangular_in_place(u.as_ref(), y.as_mut()).unwrap();
        assert_close(y.as_ref(), x.as_ref(), 0.0, "in place = out of place");
    }
}

#[test]
fn only_the_triangle_is_read() {
    let l = rand_tri(54, 8, true);
    let mut dirty = l.clone();
    for j in 1..8 {
        for i in 0..j {
            dirty[(i, j)] = f64::NAN;
        }
    }
    let b = Mat::from_fn(8, 1, |i, _| i as f64);
    let x = solve_lower_triangular(dirty.as_ref(), b.as_ref()).unwrap();
    let want = solve_lower_triangular(l.as_ref(), b.as_ref()).unwrap();
    assert_close(x.as_ref(), want.as_ref(), 0.0, "upper triangle ignored");
}

#[test]
fn errors() {
    let mut l = rand_tri(55, 4, true);
    let mut b = Mat::<f64>::zeros(4, 2);
    assert!(matches!(
        solve_lower_triangular(Mat::<f64>::zeros(3, 4).as_ref(), b.as_ref()),
        Err(LinalgError::NotSquare { .. })
    ));
    assert!(matches!(
        solve_lower_triangular(l.as_ref(), Mat::<f64>::zeros(3, 2).as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    l[(2, 2)] = 0.0;
    assert!(matches!(
        solve_lower_triangular_in_place(l.as_ref(), b.as_mut()),
        Err(LinalgError::Singular { index: 2, .. })
    ));
    l[(2, 2)] = f64::NAN;
    assert!(matches!(
        solve_lower_triangular(l.as_ref(), b.as_ref()),
        Err(LinalgError::Singular { index: 2, .. })
    ));
    l[(2, 2)] = 1.0;
    l[(3, 0)] = f64::INFINITY;
    assert!(matches!(
        solve_lower_triangular(l.as_ref(), b.as_ref()),
        Err(LinalgError::NonFinite { row: 3, col: 0, .. })
    ));
    let mut u = rand_tri(56, 4, false);
    u[(0, 0)] = 0.0;
    assert!(matches!(
        solve_upper_triangular(u.as_ref(), b.as_ref()),
        Err(LinalgError::Singular { index: 0, .. })
    ));
}
