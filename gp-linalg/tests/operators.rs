//! Every operator against the dense matrix it represents.

use crate::common;

use std::sync::Arc;

use common::{assert_close, rand_col, rand_mat, rng};
use faer::{Col, Mat};
use gp_linalg::{
    DenseOperator, DiagonalOperator, LinalgError, LinearOperator, LowRankOperator,
    LowRankPlusDiagonal, ScaledOperator, SharedOperator, ShiftedOperator, SparseOperator,
    SumOperator, TransposeOperator, Transposed,
};
use sprs::TriMat;

/// Products with data of size ≤ 200 and O(1) entries are accurate to a few hundred ulps;
/// 1e-12 relative leaves room for summation-order differences between two product paths.
const TOL: f64 = 1e-12;

/// Checks `apply`, `apply_block`, `diagonal` and `to_dense` of `op` against `dense`.
fn check_against_dense(op: &dyn LinearOperator, dense: &Mat<f64>, seed: u64, what: &str) {
    let mut r = rng(seed);
    assert_eq!(op.shape(), (dense.nrows(), dense.ncols()), "{what}: shape");
    assert_close(
        op.to_dense().as_ref(),
        dense.as_ref(),
        TOL,
        &format!("{what}: to_dense"),
    );
    let x = rand_mat(&mut r, dense.ncols(), 1);
    let y = op.apply(x.col(0)).expect("apply");
    let want = dense * &x;
    assert_close(y.as_mat(), want.as_ref(), TOL, &format!("{what}: apply"));
    let xb = rand_mat(&mut r, dense.ncols(), 4);
    let yb = op.apply_block(xb.as_ref()).expect("apply_block");
    let want = dense * &xb;
    assert_close(
        yb.as_ref(),
        want.as_ref(),
        TOL,
        &format!("{what}: apply_block"),
    );
    if let Some(d) = op.diagonal() {
        let n = dense.nrows().min(dense.ncols());
        let want = Col::from_fn(n, |i| dense[(i, i)]);
        assert_close(d.as_mat(), want.as_mat(), TOL, &format!("{what}: diagonal"));
    }
}

/// A random sparse matrix with about `density · m · n` entries, as triplets.
fn rand_sparse(seed: u64, m: usize, n: usize, density: f64) -> TriMat<f64> {
    use rand::Rng;
    let mut r = rng(seed);
    let mut t = TriMat::new((m, n));
    for i in 0..m {
        for j in 0..n {
            if r.random_bool(density) {
                t.add_triplet(i, j, r.random_range(-1.0..1.0));
            }
        }
    }
    t
}

fn tri_to_dense(t: &TriMat<f64>) -> Mat<f64> {
    let mut d = Mat::zeros(t.rows(), t.cols());
    for (v, (i, j)) in t.triplet_iter() {
        d[(i, j)] += *v;
    }
    d
}

#[test]
fn dense_operator_matches_itself() {
    let mut r = rng(1);
    let a = rand_mat(&mut r, 30, 20);
    check_against_dense(&DenseOperator::new(a.clone()), &a, 2, "dense");
}

#[test]
fn sparse_csr_and_csc_match_dense() {
    for (seed, (m, n)) in [(3, (40, 40)), (4, (57, 23)), (5, (10, 80)), (6, (1, 1))] {
        let t = rand_sparse(seed, m, n, 0.15);
        let dense = tri_to_dense(&t);
        let csr = SparseOperator::new(t.to_csr()).expect("csr");
        check_against_dense(&csr, &dense, seed, "sparse csr");
        let csc = SparseOperator::new(t.to_csc()).expect("csc");
        assert!(csc.matrix().is_csr(), "CSC input is converted to CSR");
        check_against_dense(&csc, &dense, seed, "sparse csc");
        // Aᵀx without forming the transpose.
        let mut r = rng(seed + 100);
        let x = rand_mat(&mut r, m, 3);
        let want = dense.transpose() * &x;
        let got = csr.apply_transpose(x.col(0)).expect("apply_transpose");
        assert_close(got.as_mat(), want.get(.., 0..1), TOL, "apply_transpose");
        let got = csr
            .apply_transpose_block(x.as_ref())
            .expect("apply_transpose_block");
        assert_close(got.as_ref(), want.as_ref(), TOL, "apply_transpose_block");
        // The wrapper is the same product as an operator, and its transpose is A again.
        let t = csr.transposed();
        assert_eq!(t.shape(), (dense.ncols(), dense.nrows()));
        let got = t.apply_block(x.as_ref()).expect("transposed");
        assert_close(got.as_ref(), want.as_ref(), TOL, "Transposed");
        let y = rand_mat(&mut r, dense.ncols(), 2);
        let back = Transposed::new(&t).apply_block(y.as_ref()).expect("(Aᵀ)ᵀ");
        assert_close(back.as_ref(), (&dense * &y).as_ref(), TOL, "(Aᵀ)ᵀ");
        let dense_op = DenseOperator::new(dense.clone());
        let got = dense_op.apply_transpose_block(x.as_ref()).expect("dense");
        assert_close(got.as_ref(), want.as_ref(), TOL, "dense transpose");
        assert!(dense_op
            .apply_transpose(Col::<f64>::zeros(dense.ncols() + 1).as_ref())
            .is_err());
    }
}

#[test]
fn sparse_from_triplets_sums_duplicates() {
    let a = SparseOperator::from_triplets(2, 2, &[0, 0, 1], &[1, 1, 0], &[1.0, 2.0, 5.0])
        .expect("triplets");
    let want = faer::mat![[0.0, 3.0], [5.0, 0.0]];
    check_against_dense(&a, &want, 7, "from_triplets");
    assert_eq!(a.nnz(), 2);
}

#[test]
fn sparse_parallel_path_matches_sequential_rows() {
    // A tridiagonal matrix with more rows than SPARSE_PARALLEL_ROWS exercises the rayon path;
    // every row is a 3-term sum, so the expected product is computed exactly row by row.
    let n = gp_linalg::sparse::SPARSE_PARALLEL_ROWS + 1234;
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        for (j, v) in [
            (i.wrapping_sub(1), -1.0),
            (i, 2.0 + i as f64 * 1e-5),
            (i + 1, -0.5),
        ] {
            if j < n {
                rows.push(i);
                cols.push(j);
                vals.push(v);
            }
        }
    }
    let a = SparseOperator::from_triplets(n, n, &rows, &cols, &vals).expect("triplets");
    let x = Col::from_fn(n, |i| ((i * 7919) % 101) as f64 / 101.0);
    let y = a.apply(x.as_ref()).expect("apply");
    for i in 0..n {
        let mut want = 0.0;
        if i > 0 {
            want -= x[i - 1];
        }
        want += (2.0 + i as f64 * 1e-5) * x[i];
        if i + 1 < n {
            want += -0.5 * x[i + 1];
        }
        assert!((y[i] - want).abs() <= 1e-14 * (1.0 + want.abs()), "row {i}");
    }
    let d = a.diagonal().expect("diagonal");
    assert_eq!(d[n - 1], 2.0 + (n - 1) as f64 * 1e-5);
}

#[test]
fn sparse_rejects_non_finite_and_bad_triplets() {
    let mut t = TriMat::new((3, 3));
    t.add_triplet(0, 0, 1.0);
    t.add_triplet(2, 1, f64::NAN);
    match SparseOperator::new(t.to_csr()) {
        Err(LinalgError::NonFinite { row: 2, col: 1, .. }) => {}
        other => panic!("expected NonFinite at (2, 1), got {other:?}"),
    }
    assert!(matches!(
        SparseOperator::new(t.to_csc()),
        Err(LinalgError::NonFinite { .. })
    ));
    assert!(matches!(
        SparseOperator::from_triplets(2, 2, &[0, 2], &[0, 0], &[1.0, 1.0]),
        Err(LinalgError::InvalidArgument { .. })
    ));
    assert!(matches!(
        SparseOperator::from_triplets(2, 2, &[0], &[0, 1], &[1.0]),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        SparseOperator::from_triplets(2, 2, &[0], &[0], &[f64::INFINITY]),
        Err(LinalgError::NonFinite { .. })
    ));
}

#[test]
fn diagonal_matches_dense_and_inverts() {
    let mut r = rng(8);
    let d = rand_col(&mut r, 50, 0.5, 2.0);
    let op = DiagonalOperator::new(d.clone()).expect("diag");
    let dense = op.to_dense();
    check_against_dense(&op, &dense, 9, "diagonal");
    let b = rand_mat(&mut r, 50, 3);
    let x = op.solve_block(b.as_ref()).expect("solve");
    assert_close(
        op.apply_block(x.as_ref()).expect("apply").as_ref(),
        b.as_ref(),
        1e-15,
        "D D⁻¹ b",
    );
    let inv = op.inverse().expect("inverse");
    assert_close(
        (&dense * inv.to_dense()).as_ref(),
        Mat::<f64>::identity(50, 50).as_ref(),
        1e-15,
        "D D⁻¹",
    );
    let want: f64 = (0..50).map(|i| d[i].ln()).sum();
    assert!((op.log_det().expect("log_det") - want).abs() < 1e-12);
}

#[test]
fn diagonal_errors() {
    assert!(matches!(
        DiagonalOperator::from_vec(vec![1.0, f64::NAN]),
        Err(LinalgError::NonFinite { row: 1, .. })
    ));
    let op = DiagonalOperator::from_vec(vec![1.0, -2.0, 0.0]).expect("finite");
    assert!(matches!(
        op.log_det(),
        Err(LinalgError::NotPositive { index: 1, .. })
    ));
    assert!(matches!(
        op.solve(Col::<f64>::zeros(3).as_ref()),
        Err(LinalgError::Singular { index: 2, .. })
    ));
    assert!(matches!(op.inverse(), Err(LinalgError::Singular { .. })));
    assert!(matches!(
        op.solve(Col::<f64>::zeros(2).as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
}

#[test]
fn scaled_sum_shifted_match_dense() {
    let mut r = rng(10);
    let n = 40;
    let a = rand_mat(&mut r, n, n);
    let t = rand_sparse(11, n, n, 0.2);
    let s_dense = tri_to_dense(&t);
    let u = rand_mat(&mut r, n, 3);
    let d = rand_col(&mut r, n, 0.1, 1.0);

    let dense_op: SharedOperator = Arc::new(DenseOperator::new(a.clone()));
    let sparse_op: SharedOperator = Arc::new(SparseOperator::new(t.to_csr()).expect("sparse"));
    let low_rank: SharedOperator = Arc::new(LowRankOperator::new(u.clone()).expect("low rank"));

    let scaled = ScaledOperator::new(dense_op.clone(), -2.5).expect("scaled");
    check_against_dense(&scaled, &(&a * faer::Scale(-2.5)), 12, "scaled");

    let sum =
        SumOperator::new(vec![dense_op.clone(), sparse_op.clone(), low_rank.clone()]).expect("sum");
    let want = &a + &s_dense + &u * u.transpose();
    check_against_dense(&sum, &want, 13, "sum");
    assert_eq!(sum.terms().len(), 3);

    let single = SumOperator::new(vec![sparse_op.clone()]).expect("single");
    check_against_dense(&single, &s_dense, 14, "sum of one");

    let shifted = ShiftedOperator::new(dense_op.clone(), 0.7).expect("shifted");
    let mut want = a.clone();
    for i in 0..n {
        want[(i, i)] += 0.7;
    }
    check_against_dense(&shifted, &want, 15, "A + σ²I");

    let dd = DiagonalOperator::new(d.clone()).expect("diag");
    let shifted = ShiftedOperator::with_diagonal(Arc::new(sum), dd).expect("with diag");
    let mut want = &a + &s_dense + &u * u.transpose();
    for i in 0..n {
        want[(i, i)] += d[i];
    }
    check_against_dense(&shifted, &want, 16, "(A + S + UUᵀ) + D");

    // Nested composites: 3 (A + σ²I), with a diagonal only where every part has one.
    let nested = ScaledOperator::new(
        Arc::new(ShiftedOperator::new(low_rank.clone(), 1.5).expect("shift")),
        3.0,
    )
    .expect("nested");
    let mut want = &u * u.transpose();
    for i in 0..n {
        want[(i, i)] += 1.5;
    }
    check_against_dense(&nested, &(&want * faer::Scale(3.0)), 17, "3 (UUᵀ + 1.5 I)");
    assert!(nested.diagonal().is_some());
}

#[test]
fn composite_constructor_errors() {
    let square: SharedOperator = Arc::new(DenseOperator::new(Mat::zeros(3, 3)));
    let rect: SharedOperator = Arc::new(DenseOperator::new(Mat::zeros(3, 4)));
    assert!(matches!(
        SumOperator::new(vec![]),
        Err(LinalgError::InvalidArgument { .. })
    ));
    assert!(matches!(
        SumOperator::new(vec![square.clone(), rect.clone()]),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        ShiftedOperator::new(rect.clone(), 1.0),
        Err(LinalgError::NotSquare { .. })
    ));
    assert!(matches!(
        ShiftedOperator::new(square.clone(), f64::NAN),
        Err(LinalgError::InvalidArgument { .. })
    ));
    let d2 = DiagonalOperator::from_vec(vec![1.0, 1.0]).expect("diag");
    assert!(matches!(
        ShiftedOperator::with_diagonal(square.clone(), d2),
        Err(LinalgError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        ScaledOperator::new(square, f64::INFINITY),
        Err(LinalgError::InvalidArgument { .. })
    ));
}

#[test]
fn low_rank_operators_match_dense() {
    let mut r = rng(18);
    for (n, k) in [(60, 5), (30, 0), (20, 20), (1, 1)] {
        let u = rand_mat(&mut r, n, k);
        let uut = &u * u.transpose();
        let op = LowRankOperator::new(u.clone()).expect("low rank");
        assert_eq!((op.dim(), op.rank()), (n, k));
        check_against_dense(&op, &uut, 19, "UUᵀ");
        let d = rand_col(&mut r, n, 0.2, 2.0);
        let lrd = LowRankPlusDiagonal::new(u.clone(), DiagonalOperator::new(d.clone()).expect("d"))
            .expect("UUᵀ + D");
        let mut want = uut.clone();
        for i in 0..n {
            want[(i, i)] += d[i];
        }
        check_against_dense(&lrd, &want, 20, "UUᵀ + D");
    }
}

#[test]
fn shape_errors_from_apply() {
    let mut r = rng(21);
    let ops: Vec<SharedOperator> = vec![
        Arc::new(DenseOperator::new(rand_mat(&mut r, 5, 4))),
        Arc::new(SparseOperator::from_triplets(5, 4, &[0], &[0], &[1.0]).expect("sparse")),
        Arc::new(DiagonalOperator::from_vec(vec![1.0; 4]).expect("diag")),
        Arc::new(LowRankOperator::new(rand_mat(&mut r, 4, 2)).expect("low rank")),
        Arc::new(LowRankPlusDiagonal::with_noise(rand_mat(&mut r, 4, 2), 0.1).expect("lrd")),
    ];
    for op in &ops {
        let bad = op.ncols() + 1;
        assert!(matches!(
            op.apply(Col::<f64>::zeros(bad).as_ref()),
            Err(LinalgError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            op.apply_block(Mat::<f64>::zeros(bad, 2).as_ref()),
            Err(LinalgError::ShapeMismatch { .. })
        ));
        let mut out = Col::<f64>::zeros(op.nrows() + 1);
        assert!(matches!(
            op.apply_into(Col::<f64>::zeros(op.ncols()).as_ref(), out.as_mut()),
            Err(LinalgError::ShapeMismatch { .. })
        ));
    }
    let sparse = SparseOperator::from_triplets(5, 4, &[0], &[0], &[1.0]).expect("sparse");
    assert!(matches!(
        sparse.apply_transpose(Col::<f64>::zeros(4).as_ref()),
        Err(LinalgError::ShapeMismatch { .. })
    ));
}
