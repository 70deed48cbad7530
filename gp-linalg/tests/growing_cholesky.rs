//! The bordered Cholesky factor against a fresh factorization of the same matrix.

use faer::Mat;
use gp_linalg::{Cholesky, GrowingCholesky, LinalgError};

fn spd(n: usize) -> Mat<f64> {
    let b = Mat::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4);
    let mut a = &b * b.transpose();
    for i in 0..n {
        a[(i, i)] += 0.5;
    }
    a
}

fn grown(a: &Mat<f64>) -> GrowingCholesky {
    let mut l = GrowingCholesky::new();
    for j in 0..a.nrows() {
        let col: Vec<f64> = (0..=j).map(|i| a[(i, j)]).collect();
        l.push(&col).unwrap();
    }
    l
}

#[test]
fn bordering_reproduces_the_full_factor_solves_and_log_det() {
    let a = spd(12);
    let l = grown(&a);
    let full = Cholesky::new(a.as_ref()).unwrap();
    assert!((&l.factor() - full.factor()).norm_max() < 1e-12);
    assert!((l.log_det() - full.log_det()).abs() < 1e-12);
    let b: Vec<f64> = (0..12).map(|i| (i as f64).sin()).collect();
    let mut x = b.clone();
    l.solve_in_place(&mut x).unwrap();
    let ax = &a * Mat::from_fn(12, 1, |i, _| x[i]);
    for i in 0..12 {
        assert!((ax[(i, 0)] - b[i]).abs() < 1e-11);
    }
    // L⁻¹b entry by entry equals the whole forward solve.
    let mut y = b.clone();
    l.solve_lower_in_place(&mut y).unwrap();
    let mut z = Vec::new();
    for (i, bi) in b.iter().enumerate() {
        let zi = l.forward_entry(i, &z, *bi);
        z.push(zi);
    }
    for i in 0..12 {
        assert!((y[i] - z[i]).abs() < 1e-13);
    }
    // Lᵀ then L: the two triangular halves compose to the solve.
    let mut w = y.clone();
    l.solve_upper_in_place(&mut w).unwrap();
    for i in 0..12 {
        assert!((w[i] - x[i]).abs() < 1e-12);
    }
}

#[test]
fn a_dependent_column_is_a_typed_breakdown_and_leaves_the_factor_unchanged() {
    // Third column = first + second: the 3×3 Gram is singular.
    let v = [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]];
    let g = |i: usize, j: usize| v[0][i] * v[0][j] + v[1][i] * v[1][j];
    let mut l = GrowingCholesky::new();
    l.push(&[g(0, 0)]).unwrap();
    l.push(&[g(0, 1), g(1, 1)]).unwrap();
    let before = l.clone();
    match l.push(&[g(0, 2), g(1, 2), g(2, 2)]) {
        Err(LinalgError::BorderBreakdown {
            order: 3,
            previous: 2,
            pivot,
        }) => assert!(pivot <= 1e-15),
        other => panic!("expected a breakdown, got {other:?}"),
    }
    assert_eq!(l, before);
    assert!(matches!(
        l.push(&[1.0]),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        l.solve_in_place(&mut [1.0]),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    l.truncate(1);
    assert_eq!(l.dim(), 1);
}
