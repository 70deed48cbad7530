//! Symmetric and restricted Toeplitz operators against the dense matrices they represent.
//!
//! Tolerance: one product is a forward and an inverse real FFT of length `L`; their
//! round-off is about `ε · log₂L` relative to the `ℓ₂` norms of the transformed vectors, and
//! the spectrum is bounded by `‖c‖₁`, so an entry of `T x` is off by at most
//! `C · ε · log₂L · ‖c‖₁ · ‖x‖₂` with a small constant. We use `C = 8`; the largest error
//! measured over random columns and inputs with m < 200 was `0.92 · ε · log₂L · ‖c‖₁ · ‖x‖₂`.

use std::sync::Arc;

use faer::{Col, Mat};
use gp_linalg::{LinalgError, LinearOperator};
use gp_structured::fft::circulant_embedding_length;
use gp_structured::{RestrictedToeplitz, StructuredError, SymmetricToeplitz, TransposeOperator};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_vec(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

fn random_mat(rng: &mut ChaCha8Rng, r: usize, c: usize) -> Mat<f64> {
    Mat::from_fn(r, c, |_, _| rng.random_range(-1.0..1.0))
}

fn dense_toeplitz(c: &[f64]) -> Mat<f64> {
    Mat::from_fn(c.len(), c.len(), |i, j| c[i.abs_diff(j)])
}

/// The FFT round-off bound for products with a Toeplitz matrix of first column `c` and
/// embedding length `len`, for inputs of ℓ₂ norm `x_norm`.
fn fft_tol(c: &[f64], len: usize, x_norm: f64) -> f64 {
    let c1: f64 = c.iter().map(|v| v.abs()).sum();
    8.0 * f64::EPSILON * (len as f64).log2().max(1.0) * c1 * x_norm.max(1e-300)
}

fn max_abs_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_max()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn apply_and_block_match_dense(m in 1usize..40, k in 1usize..4, seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c = random_vec(&mut rng, m);
        let t = SymmetricToeplitz::new(&c).unwrap();
        let dense = dense_toeplitz(&c);
        prop_assert_eq!(t.embedding_length(), circulant_embedding_length(m).unwrap());
        prop_assert!(t.embedding_length() >= 2 * m - 1);
        let x = random_mat(&mut rng, m, k);
        let x_norm = x.norm_l2();
        let tol = fft_tol(&c, t.embedding_length(), x_norm);
        let expected = &dense * &x;
        let block = t.apply_block(x.as_ref()).unwrap();
        prop_assert!(max_abs_diff(&block, &expected) <= tol, "block err {} > {}", max_abs_diff(&block, &expected), tol);
        for j in 0..k {
            let y = t.apply(x.col(j)).unwrap();
            for i in 0..m {
                prop_assert!((y[i] - expected[(i, j)]).abs() <= tol);
            }
        }
        // Symmetric: the transpose is the operator itself.
        prop_assert!(max_abs_diff(&t.to_dense(), &dense.transpose().to_owned()) == 0.0);
        let diag = t.diagonal().unwrap();
        prop_assert!((0..m).all(|i| diag[i] == c[0]));
    }

    #[test]
    fn any_embedding_length_is_exact(m in 1usize..30, extra in 0usize..20, seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c = random_vec(&mut rng, m);
        let len = 2 * m - 1 + extra;
        let t = SymmetricToeplitz::with_embedding_length(&c, len).unwrap();
        prop_assert_eq!(t.embedding_length(), len);
        let x = random_mat(&mut rng, m, 1);
        let y = t.apply_block(x.as_ref()).unwrap();
        let expected = dense_toeplitz(&c) * &x;
        prop_assert!(max_abs_diff(&y, &expected) <= fft_tol(&c, len, x.norm_l2()));
    }

    #[test]
    fn restricted_matches_dense_submatrix(
        m in 1usize..40,
        restrict_rows in any::<bool>(),
        restrict_cols in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c = random_vec(&mut rng, m);
        let t = Arc::new(SymmetricToeplitz::new(&c).unwrap());
        let subset = |rng: &mut ChaCha8Rng| -> Vec<usize> {
            // Random positions, with gaps, possibly unsorted or repeated.
            let n = rng.random_range(1..=m + 2);
            (0..n).map(|_| rng.random_range(0..m)).collect()
        };
        let rows = restrict_rows.then(|| subset(&mut rng));
        let cols = restrict_cols.then(|| subset(&mut rng));
        let op = RestrictedToeplitz::new(Arc::clone(&t), rows.clone(), cols.clone()).unwrap();
        let rows_v: Vec<usize> = rows.clone().unwrap_or_else(|| (0..m).collect());
        let cols_v: Vec<usize> = cols.clone().unwrap_or_else(|| (0..m).collect());
        let dense = Mat::from_fn(rows_v.len(), cols_v.len(), |i, j| c[rows_v[i].abs_diff(cols_v[j])]);
        prop_assert_eq!(op.shape(), (rows_v.len(), cols_v.len()));
        prop_assert!(max_abs_diff(&op.to_dense(), &dense) == 0.0);

        let k = rng.random_range(1..4);
        let x = random_mat(&mut rng, cols_v.len(), k);
        // Repeated input positions add up, so bound by the scattered vector's norm too.
        let tol = fft_tol(&c, t.embedding_length(), x.norm_l2() * (cols_v.len() as f64).sqrt());
        let expected = &dense * &x;
        let got = op.apply_block(x.as_ref()).unwrap();
        prop_assert!(max_abs_diff(&got, &expected) <= tol);

        let mut ws = t.workspace();
        let mut out = Col::zeros(rows_v.len());
        op.apply_with_workspace(x.col(0), out.as_mut(), &mut ws).unwrap();
        for i in 0..rows_v.len() {
            prop_assert!((out[i] - expected[(i, 0)]).abs() <= tol);
        }

        let tr = op.transposed();
        let dense_t = dense.transpose().to_owned();
        let z = random_mat(&mut rng, rows_v.len(), 2);
        let tol_t = fft_tol(&c, t.embedding_length(), z.norm_l2() * (rows_v.len() as f64).sqrt());
        let got_t = tr.apply_block(z.as_ref()).unwrap();
        prop_assert!(max_abs_diff(&got_t, &(&dense_t * &z)) <= tol_t);

        if rows_v.len() == cols_v.len() {
            let d = op.diagonal().unwrap();
            prop_assert!((0..rows_v.len()).all(|i| d[i] == dense[(i, i)]));
        } else {
            prop_assert!(op.diagonal().is_none());
        }
    }
}

#[test]
fn order_one_and_two() {
    let t = SymmetricToeplitz::new(&[3.0]).unwrap();
    assert_eq!(t.embedding_length(), 1);
    let y = t.apply(Col::from_fn(1, |_| 2.0).as_ref()).unwrap();
    assert!((y[0] - 6.0).abs() < 1e-15);
    let t = SymmetricToeplitz::new(&[2.0, -1.0]).unwrap();
    let y = t
        .apply(Col::from_fn(2, |i| i as f64 + 1.0).as_ref())
        .unwrap();
    assert!((y[0] - 0.0).abs() < 1e-15 && (y[1] - 3.0).abs() < 1e-15);
}

#[test]
fn large_order_against_direct_sum() {
    // m = 1000, L = 2000 (smooth): compare with the O(m²) sum without forming the matrix.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let m = 1000;
    let c: Vec<f64> = (0..m).map(|i| (-(i as f64 / 50.0).powi(2)).exp()).collect();
    let x = random_vec(&mut rng, m);
    let t = SymmetricToeplitz::new(&c).unwrap();
    assert_eq!(t.embedding_length(), 2000);
    let y = t.apply(Col::from_fn(m, |i| x[i]).as_ref()).unwrap();
    let x_norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    let tol = fft_tol(&c, t.embedding_length(), x_norm);
    for i in 0..m {
        let direct: f64 = (0..m).map(|j| c[i.abs_diff(j)] * x[j]).sum();
        assert!((y[i] - direct).abs() <= tol, "{i}: {} vs {direct}", y[i]);
    }
}

#[test]
fn workspace_products_match_trait_products_and_are_reusable() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let c = random_vec(&mut rng, 17);
    let t = SymmetricToeplitz::new(&c).unwrap();
    let mut ws = t.workspace();
    assert_eq!(ws.embedding_length(), t.embedding_length());
    let mut out = Col::zeros(17);
    for _ in 0..3 {
        let x = Col::from_iter(random_vec(&mut rng, 17));
        t.apply_with_workspace(x.as_ref(), out.as_mut(), &mut ws)
            .unwrap();
        let y = t.apply(x.as_ref()).unwrap();
        assert_eq!((&out - &y).norm_max(), 0.0);
    }
    // A workspace for another length is refused, as are wrong shapes.
    let other = SymmetricToeplitz::new(&c[..5]).unwrap();
    let mut wrong = other.workspace();
    let x = Col::<f64>::zeros(17);
    assert!(matches!(
        t.apply_with_workspace(x.as_ref(), out.as_mut(), &mut wrong),
        Err(StructuredError::InvalidArgument { name: "ws", .. })
    ));
    let short = Col::<f64>::zeros(16);
    assert!(matches!(
        t.apply_with_workspace(short.as_ref(), out.as_mut(), &mut ws),
        Err(StructuredError::Linalg(LinalgError::ShapeMismatch { .. }))
    ));
}

#[test]
fn parallel_block_products_agree_with_sequential() {
    // m = 33 takes the dense GEMM path for blocks, m = 300 the per-column FFT path (split
    // across threads under rayon); both must be deterministic.
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for m in [33, 300] {
        let c = random_vec(&mut rng, m);
        let t = SymmetricToeplitz::new(&c).unwrap();
        let x = random_mat(&mut rng, m, 7);
        let before = gp_linalg::parallelism_setting();
        gp_linalg::set_parallelism(gp_linalg::Par::Seq);
        let seq = t.apply_block(x.as_ref()).unwrap();
        gp_linalg::set_parallelism(gp_linalg::Par::rayon(3));
        let par = t.apply_block(x.as_ref());
        gp_linalg::restore_parallelism(before);
        assert_eq!((&seq - &par.unwrap()).norm_max(), 0.0, "m = {m}");
    }
}

#[test]
fn block_products_match_column_products_on_both_paths() {
    // Orders on both sides of DENSE_BLOCK_MAX_ORDER: the block product (GEMM below it, FFT
    // per column above it) equals the per-column FFT product to FFT round-off.
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let max = gp_structured::toeplitz::DENSE_BLOCK_MAX_ORDER;
    for m in [2, 17, max, max + 1, 400] {
        let c = random_vec(&mut rng, m);
        let t = SymmetricToeplitz::new(&c).unwrap();
        let x = random_mat(&mut rng, m, 5);
        let block = t.apply_block(x.as_ref()).unwrap();
        let dense = dense_toeplitz(&c) * &x;
        for j in 0..5 {
            let col = t.apply(x.col(j)).unwrap();
            let tol = fft_tol(&c, t.embedding_length(), x.col(j).norm_l2());
            assert!((&col - block.col(j)).norm_max() <= 2.0 * tol, "m = {m}");
            assert!((&col - dense.col(j)).norm_max() <= tol, "m = {m}");
        }
    }
}

#[test]
fn operators_are_send_sync_and_clone() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SymmetricToeplitz>();
    assert_send_sync::<RestrictedToeplitz>();
    let t = SymmetricToeplitz::new(&[1.0, 0.5]).unwrap();
    let u = t.clone();
    assert_eq!(u.first_column(), t.first_column());
    assert!(format!("{t:?}").contains("SymmetricToeplitz"));
}

#[test]
fn embedding_eigenvalues_are_the_circulant_spectrum() {
    let c = [4.0, 1.0, 0.5];
    let t = SymmetricToeplitz::with_embedding_length(&c, 6).unwrap();
    // Embedding column [4, 1, 0.5, 0, 0.5, 1]: λ_k = 4 + 2cos(2πk/6) + cos(4πk/6).
    let ev = t.embedding_eigenvalues();
    assert_eq!(ev.len(), 4);
    for (k, &l) in ev.iter().enumerate() {
        let w = 2.0 * std::f64::consts::PI * k as f64 / 6.0;
        assert!((l - (4.0 + 2.0 * w.cos() + (2.0 * w).cos())).abs() < 1e-13);
    }
}

#[test]
fn invalid_inputs_are_errors() {
    assert!(matches!(
        SymmetricToeplitz::new(&[]),
        Err(StructuredError::InvalidArgument {
            name: "first_column",
            ..
        })
    ));
    assert!(matches!(
        SymmetricToeplitz::new(&[1.0, f64::NAN]),
        Err(StructuredError::Linalg(LinalgError::NonFinite {
            row: 1,
            ..
        }))
    ));
    assert!(matches!(
        SymmetricToeplitz::with_embedding_length(&[1.0, 0.5, 0.2], 4),
        Err(StructuredError::InvalidArgument { name: "len", .. })
    ));
    let t = Arc::new(SymmetricToeplitz::new(&[1.0, 0.5, 0.2]).unwrap());
    assert!(matches!(
        RestrictedToeplitz::new(Arc::clone(&t), Some(vec![0, 3]), None),
        Err(StructuredError::InvalidArgument { name: "rows", .. })
    ));
    assert!(matches!(
        RestrictedToeplitz::observed(t, vec![5]),
        Err(StructuredError::InvalidArgument { name: "rows", .. })
    ));
}

#[test]
fn multilevel_parallel_block_products_agree_with_sequential() {
    // Chunks hold whole column pairs, so the pairing (x + i·y) and hence every bit of the
    // result is the same with and without rayon; 7 columns leave one column unpaired.
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<gp_structured::MultilevelToeplitz>();
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let sizes = vec![4, 3, 6];
    let g = random_vec(&mut rng, 72);
    let t = gp_structured::MultilevelToeplitz::new(sizes, g).unwrap();
    let t = t.clone();
    let x = random_mat(&mut rng, 72, 7);
    let before = gp_linalg::parallelism_setting();
    gp_linalg::set_parallelism(gp_linalg::Par::Seq);
    let seq = t.apply_block(x.as_ref()).unwrap();
    gp_linalg::set_parallelism(gp_linalg::Par::rayon(3));
    let par = t.apply_block(x.as_ref());
    gp_linalg::restore_parallelism(before);
    assert_eq!((&seq - &par.unwrap()).norm_max(), 0.0);
}
