//! Property tests: operators of random shapes and values match their dense matrices, and
//! constructors fed random bad input return `Err` instead of panicking.

use crate::common;

use std::sync::Arc;

use common::rel_err;
use faer::{Col, Mat};
use gp_linalg::{
    solve_lower_triangular, solve_upper_triangular, Cholesky, DenseOperator, DiagonalOperator,
    LinearOperator, LowRankOperator, LowRankPlusDiagonal, ScaledOperator, SharedOperator,
    ShiftedOperator, SparseOperator, SumOperator, SymmetricEigen, TransposeOperator,
};
use proptest::collection::vec;
use proptest::prelude::*;

/// Entries are O(10) and sizes ≤ 10, so products are accurate to ~1e-13 relative to the
/// largest entry of the result; 1e-11 is a safe bound that still catches any wrong formula.
const TOL: f64 = 1e-11;

fn mat_from(nrows: usize, ncols: usize, v: &[f64]) -> Mat<f64> {
    Mat::from_fn(nrows, ncols, |i, j| v[i + nrows * j])
}

/// Checks `apply_block`, `apply` on the first column, `diagonal` and `to_dense` against
/// `dense`; returns a description of the first mismatch.
fn matches_dense(
    op: &dyn LinearOperator,
    dense: &Mat<f64>,
    x: &Mat<f64>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(op.shape(), (dense.nrows(), dense.ncols()));
    let want = dense * x;
    let got = op
        .apply_block(x.as_ref())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(rel_err(got.as_ref(), want.as_ref()) <= TOL, "apply_block");
    if x.ncols() > 0 {
        let got = op
            .apply(x.col(0))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(rel_err(got.as_mat(), want.get(.., 0..1)) <= TOL, "apply");
    }
    prop_assert!(
        rel_err(op.to_dense().as_ref(), dense.as_ref()) <= TOL,
        "to_dense"
    );
    if let Some(d) = op.diagonal() {
        let n = dense.nrows().min(dense.ncols());
        let want = Col::from_fn(n, |i| dense[(i, i)]);
        prop_assert!(rel_err(d.as_mat(), want.as_mat()) <= TOL, "diagonal");
    }
    Ok(())
}

/// A rectangular case: dense and sparse matrices of one shape, a scale and a block.
#[derive(Debug, Clone)]
struct RectCase {
    a: Mat<f64>,
    sparse: Mat<f64>,
    c: f64,
    x: Mat<f64>,
}

prop_compose! {
    fn rect_case()(m in 0usize..10, n in 0usize..10, r in 0usize..4)
        (a in vec(-10.0..10.0f64, m * n),
         s in vec(prop_oneof![3 => Just(0.0), 1 => -10.0..10.0f64], m * n),
         x in vec(-1.0..1.0f64, n * r),
         c in -3.0..3.0f64,
         m in Just(m), n in Just(n), r in Just(r)) -> RectCase {
        RectCase { a: mat_from(m, n, &a), sparse: mat_from(m, n, &s), c, x: mat_from(n, r, &x) }
    }
}

/// A square case: a dense matrix, a low-rank factor, a positive diagonal and a block.
#[derive(Debug, Clone)]
struct SquareCase {
    a: Mat<f64>,
    u: Mat<f64>,
    d: Col<f64>,
    shift: f64,
    x: Mat<f64>,
}

prop_compose! {
    fn square_case()(n in 0usize..10, k in 0usize..5)
        (a in vec(-10.0..10.0f64, n * n),
         u in vec(-2.0..2.0f64, n * k),
         d in vec(0.05..3.0f64, n),
         shift in -2.0..2.0f64,
         x in vec(-1.0..1.0f64, n * 2),
         n in Just(n), k in Just(k)) -> SquareCase {
        SquareCase {
            a: mat_from(n, n, &a),
            u: mat_from(n, k, &u),
            d: Col::from_fn(n, |i| d[i]),
            shift,
            x: mat_from(n, 2, &x),
        }
    }
}

fn sparse_of(m: &Mat<f64>) -> SparseOperator {
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            if m[(i, j)] != 0.0 {
                rows.push(i);
                cols.push(j);
                vals.push(m[(i, j)]);
            }
        }
    }
    SparseOperator::from_triplets(m.nrows(), m.ncols(), &rows, &cols, &vals)
        .expect("finite, in-range triplets")
}

proptest! {
    #[test]
    fn rectangular_operators_match_dense(case in rect_case()) {
        let RectCase { a, sparse, c, x } = case;
        let dense_op: SharedOperator = Arc::new(DenseOperator::new(a.clone()));
        let sparse_op = sparse_of(&sparse);
        matches_dense(&sparse_op, &sparse, &x)?;
        // Aᵀ y through the sparse transpose product.
        let y = Mat::from_fn(sparse.nrows(), x.ncols(), |i, j| (i + 2 * j) as f64 - 3.0);
        let got = sparse_op.apply_transpose_block(y.as_ref()).unwrap();
        prop_assert!(rel_err(got.as_ref(), (sparse.transpose() * &y).as_ref()) <= TOL);
        let sparse_op: SharedOperator = Arc::new(sparse_op);

        let scaled = ScaledOperator::new(dense_op.clone(), c).unwrap();
        matches_dense(&scaled, &(&a * faer::Scale(c)), &x)?;
        let sum = SumOperator::new(vec![dense_op, sparse_op, Arc::new(scaled)]).unwrap();
        matches_dense(&sum, &(&a + &sparse + &a * faer::Scale(c)), &x)?;
    }

    #[test]
    fn square_operators_match_dense(case in square_case()) {
        let SquareCase { a, u, d, shift, x } = case;
        let n = a.nrows();
        let uut = &u * u.transpose();
        let mut uut_d = uut.clone();
        for i in 0..n {
            uut_d[(i, i)] += d[i];
        }
        let diag = DiagonalOperator::new(d.clone()).unwrap();
        matches_dense(&diag, &diag.to_dense(), &x)?;
        let low_rank = LowRankOperator::new(u.clone()).unwrap();
        matches_dense(&low_rank, &uut, &x)?;
        let lrd = LowRankPlusDiagonal::new(u.clone(), diag.clone()).unwrap();
        matches_dense(&lrd, &uut_d, &x)?;
        // Woodbury against a dense Cholesky: D ≥ 0.05 and ‖UUᵀ‖ ≤ 4·5·10 keep κ ≤ 5·10³.
        let chol = Cholesky::new(uut_d.as_ref()).unwrap();
        let got = lrd.solve_block(x.as_ref()).unwrap();
        prop_assert!(rel_err(got.as_ref(), chol.solve(x.as_ref()).unwrap().as_ref()) <= 1e-10);
        prop_assert!((lrd.log_det() - chol.log_det()).abs() <= 1e-10 * chol.log_det().abs().max(1.0));

        let dense_op: SharedOperator = Arc::new(DenseOperator::new(a.clone()));
        let shifted = ShiftedOperator::new(dense_op.clone(), shift).unwrap();
        let mut want = a.clone();
        for i in 0..n {
            want[(i, i)] += shift;
        }
        matches_dense(&shifted, &want, &x)?;
        let shifted_d = ShiftedOperator::with_diagonal(Arc::new(low_rank), diag).unwrap();
        matches_dense(&shifted_d, &uut_d, &x)?;
    }

    #[test]
    fn constructors_reject_non_finite(
        n in 1usize..8,
        idx in 0usize..64,
        bad in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
    ) {
        let i = idx % n;
        let mut v = vec![1.0; n];
        v[i] = bad;
        prop_assert!(DiagonalOperator::from_vec(v.clone()).is_err());
        let rows: Vec<usize> = (0..n).collect();
        prop_assert!(SparseOperator::from_triplets(n, n, &rows, &rows, &v).is_err());
        let mut m = Mat::<f64>::identity(n, n);
        m[(i, idx % n)] = bad;
        m[(idx % n, i)] = bad;
        prop_assert!(Cholesky::new(m.as_ref()).is_err());
        prop_assert!(SymmetricEigen::new(m.as_ref()).is_err());
        prop_assert!(LowRankOperator::new(m.clone()).is_err());
        prop_assert!(LowRankPlusDiagonal::with_noise(m.clone(), 1.0).is_err());
        prop_assert!(solve_lower_triangular(m.as_ref(), Mat::<f64>::zeros(n, 1).as_ref()).is_err());
        prop_assert!(solve_upper_triangular(m.as_ref(), Mat::<f64>::zeros(n, 1).as_ref()).is_err());
        let op: SharedOperator = Arc::new(DenseOperator::new(Mat::zeros(n, n)));
        prop_assert!(ScaledOperator::new(op.clone(), bad).is_err());
        prop_assert!(ShiftedOperator::new(op, bad).is_err());
    }

    #[test]
    fn constructors_reject_wrong_shapes(m in 0usize..6, n in 0usize..6, extra in 1usize..4) {
        let rect: SharedOperator = Arc::new(DenseOperator::new(Mat::zeros(m, n + extra + m)));
        let other: SharedOperator = Arc::new(DenseOperator::new(Mat::zeros(m + extra, n)));
        prop_assert!(SumOperator::new(vec![rect.clone(), other]).is_err());
        prop_assert!(ShiftedOperator::new(rect, 1.0).is_err());
        let sq: SharedOperator = Arc::new(DenseOperator::new(Mat::zeros(n, n)));
        let d = DiagonalOperator::from_vec(vec![1.0; n + extra]).unwrap();
        prop_assert!(ShiftedOperator::with_diagonal(sq.clone(), d.clone()).is_err());
        prop_assert!(LowRankPlusDiagonal::new(Mat::zeros(n, m), d).is_err());
        prop_assert!(sq.apply(Col::<f64>::zeros(n + extra).as_ref()).is_err());
        prop_assert!(sq.apply_block(Mat::<f64>::zeros(n + extra, m).as_ref()).is_err());
        let nonsq = Mat::<f64>::zeros(n, n + extra);
        prop_assert!(Cholesky::new(nonsq.as_ref()).is_err());
        prop_assert!(SymmetricEigen::new(nonsq.as_ref()).is_err());
        prop_assert!(solve_lower_triangular(nonsq.as_ref(), Mat::<f64>::zeros(n, 1).as_ref()).is_err());
        prop_assert!(SparseOperator::from_triplets(m, n, &[m], &[0], &[1.0]).is_err());
    }

    #[test]
    fn constructors_reject_non_positive_diagonals(
        n in 1usize..8,
        idx in 0usize..64,
        bad in prop_oneof![Just(0.0), Just(-0.0), -1e3..0.0f64],
    ) {
        let mut v = vec![1.0; n];
        v[idx % n] = bad;
        let d = DiagonalOperator::from_vec(v).unwrap();
        prop_assert!(d.log_det().is_err());
        prop_assert!(LowRankPlusDiagonal::new(Mat::zeros(n, 2), d).is_err());
        prop_assert!(LowRankPlusDiagonal::with_noise(Mat::zeros(n, 2), bad).is_err());
        let mut t = Mat::<f64>::identity(n, n);
        t[(idx % n, idx % n)] = 0.0;
        prop_assert!(solve_lower_triangular(t.as_ref(), Mat::<f64>::zeros(n, 1).as_ref()).is_err());
    }

    /// Arbitrary bit patterns (NaN, ±∞, subnormals, ±1e308) never make a constructor panic
    /// or hang: each returns `Ok` or `Err`.
    #[test]
    fn arbitrary_values_never_panic(
        n in 0usize..6,
        k in 0usize..3,
        vals in vec(any::<f64>(), 36),
        sigma2 in any::<f64>(),
    ) {
        let m = mat_from(n, n, &vals[..n * n]);
        let u = mat_from(n, k, &vals[..n * k]);
        let d: Vec<f64> = vals[..n].to_vec();
        let _ = Cholesky::new(m.as_ref());
        let _ = SymmetricEigen::new(m.as_ref());
        let _ = solve_lower_triangular(m.as_ref(), m.as_ref());
        let _ = solve_upper_triangular(m.as_ref(), m.as_ref());
        let _ = LowRankPlusDiagonal::with_noise(u.clone(), sigma2);
        if let Ok(d) = DiagonalOperator::from_vec(d) {
            let _ = d.log_det();
            let _ = d.inverse();
            let _ = LowRankPlusDiagonal::new(u, d);
        }
        let rows: Vec<usize> = (0..n).collect();
        let _ = SparseOperator::from_triplets(n, n, &rows, &rows, &vals[..n]);
    }

    /// Finite values of extreme size (near ±f64::MAX, tiny, zero) never make a factorization
    /// panic or loop forever.
    #[test]
    fn extreme_finite_values_never_hang(
        n in 1usize..6,
        vals in vec(prop_oneof![
            Just(f64::MAX), Just(-f64::MAX), Just(0.0), Just(f64::MIN_POSITIVE),
            -1.7e308..1.7e308f64, -1.0..1.0f64,
        ], 25),
    ) {
        let m = mat_from(n, n, &vals[..n * n]);
        let _ = Cholesky::new(m.as_ref());
        let _ = SymmetricEigen::new(m.as_ref());
        let _ = LowRankPlusDiagonal::with_noise(m.clone(), f64::MIN_POSITIVE);
        let _ = solve_lower_triangular(m.as_ref(), m.as_ref());
    }
}
