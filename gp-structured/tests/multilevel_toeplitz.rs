//! Multilevel Toeplitz products against dense matrices built from the definition
//! `T[a, b] = g[|i_1 − j_1|, …, |i_d − j_d|]` (written here independently of the library's
//! `entry`), against `SymmetricToeplitz` for d = 1, and the typed errors of bad input.
//!
//! Tolerance: one product goes through a d-dimensional FFT pair of `L ≲ 2^d · 2 Π m_k` points,
//! accurate to about `ε · log₂L · Σ|g_embedded| · ‖x‖₂`; `1e-12 · max|g| · ‖x‖₂` covers that
//! with a wide margin for the sizes here (Σ|g_embedded| ≤ 2^d Π m_k · max|g| ≤ 1000 max|g|).

use faer::{Col, Mat};
use gp_structured::{
    LinearOperator, MultilevelToeplitz, StructuredError, SymmetricToeplitz, TransposeOperator,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The C-order multi-index of `flat` over `sizes` (last axis fastest).
fn multi_index(mut flat: usize, sizes: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; sizes.len()];
    for k in (0..sizes.len()).rev() {
        idx[k] = flat % sizes[k];
        flat /= sizes[k];
    }
    idx
}

/// The dense matrix of the definition: entry (a, b) is `g` at the C-order flat index of the
/// offsets `|i_k − j_k|`.
fn dense_from_definition(sizes: &[usize], g: &[f64]) -> Mat<f64> {
    let n: usize = sizes.iter().product();
    Mat::from_fn(n, n, |a, b| {
        let (i, j) = (multi_index(a, sizes), multi_index(b, sizes));
        let mut flat = 0;
        for k in 0..sizes.len() {
            flat = flat * sizes[k] + i[k].abs_diff(j[k]);
        }
        g[flat]
    })
}

/// The generator of the stationary kernel `k(r)` (of the Euclidean length of the offset in
/// input units) on a grid with the given spacings.
fn isotropic_generator(sizes: &[usize], spacings: &[f64], k: impl Fn(f64) -> f64) -> Vec<f64> {
    let n: usize = sizes.iter().product();
    (0..n)
        .map(|flat| {
            let o = multi_index(flat, sizes);
            let r2: f64 = o
                .iter()
                .zip(spacings)
                .map(|(&ok, &h)| (ok as f64 * h).powi(2))
                .sum();
            k(r2.sqrt())
        })
        .collect()
}

fn matern32(r: f64) -> f64 {
    let s = 3f64.sqrt() * r / 0.7;
    1.3 * (1.0 + s) * (-s).exp()
}

fn squared_exponential(r: f64) -> f64 {
    (-0.5 * r * r / 0.4).exp()
}

fn random_mat(rng: &mut ChaCha8Rng, r: usize, c: usize) -> Mat<f64> {
    Mat::from_fn(r, c, |_, _| rng.random_range(-1.0..1.0))
}

/// Checks `op` on `x` (every column) against `dense`.
fn assert_products_match(op: &MultilevelToeplitz, dense: &Mat<f64>, x: &Mat<f64>, what: &str) {
    let gmax = op.generator().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let expected = dense * x;
    let got = op.apply_block(x.as_ref()).unwrap();
    for j in 0..x.ncols() {
        let tol = 1e-12 * gmax * x.col(j).norm_l2();
        let err = (got.col(j) - expected.col(j)).norm_max();
        assert!(
            err <= tol,
            "{what}: matmat column {j} of {}: error {err:e} > {tol:e}",
            x.ncols()
        );
        let y = op.apply(x.col(j)).unwrap();
        let err = (&y - expected.col(j)).norm_max();
        assert!(
            err <= tol,
            "{what}: matvec column {j}: error {err:e} > {tol:e}"
        );
    }
}

const SIZES: [&[usize]; 5] = [&[7], &[5, 8], &[4, 3, 6], &[1, 5, 3], &[3, 1]];

#[test]
fn kernel_generators_match_dense_definition() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for sizes in SIZES {
        let spacings: Vec<f64> = (0..sizes.len()).map(|k| 0.3 + 0.1 * k as f64).collect();
        for (name, k) in [
            ("Matérn-3/2", matern32 as fn(f64) -> f64),
            ("SE", squared_exponential),
        ] {
            let g = isotropic_generator(sizes, &spacings, k);
            let op = MultilevelToeplitz::new(sizes.to_vec(), g.clone()).unwrap();
            let dense = dense_from_definition(sizes, &g);
            assert_eq!(op.dim(), dense.nrows());
            for ncols in [1, 2, 5] {
                let x = random_mat(&mut rng, op.dim(), ncols);
                assert_products_match(&op, &dense, &x, &format!("{name} {sizes:?}"));
            }
        }
    }
}

#[test]
fn random_generators_match_dense_definition() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for sizes in SIZES {
        let n: usize = sizes.iter().product();
        // Any generator defines a symmetric matrix (entries depend on |i_k − j_k| only);
        // random ones have no decay, so the embedding's wrap-around gap is really tested.
        let g: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let op = MultilevelToeplitz::new(sizes.to_vec(), g.clone()).unwrap();
        let dense = dense_from_definition(sizes, &g);
        for ncols in [1, 2, 5] {
            let x = random_mat(&mut rng, n, ncols);
            assert_products_match(&op, &dense, &x, &format!("random {sizes:?}"));
        }
        // to_dense, entry, diagonal and the transpose products follow the definition.
        assert_eq!((&op.to_dense() - &dense).norm_max(), 0.0);
        let diag = op.diagonal().unwrap();
        assert!((0..n).all(|i| diag[i] == dense[(i, i)]));
        let x = random_mat(&mut rng, n, 3);
        let mut t = Mat::<f64>::zeros(n, 3);
        op.matmat_transpose(x.as_ref(), t.as_mut());
        let tol = 1e-12 * x.norm_l2();
        assert!((&t - &dense * &x).norm_max() <= tol, "transpose {sizes:?}");
    }
}

#[test]
fn strided_inputs_and_outputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let sizes = [4, 3, 6];
    let n: usize = sizes.iter().product();
    let g: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let op = MultilevelToeplitz::new(sizes.to_vec(), g.clone()).unwrap();
    let dense = dense_from_definition(&sizes, &g);
    // Rows of a matrix are strided columns; the transpose of an n × 3 block is 3 × n.
    let xt = random_mat(&mut rng, 3, n);
    let x = xt.transpose();
    let mut out_t = Mat::<f64>::zeros(3, n);
    op.matmat(x, out_t.as_mut().transpose_mut());
    let expected = &dense * x;
    assert!((out_t.transpose() - &expected).norm_max() <= 1e-12 * x.norm_l2());
    let mut y = Mat::<f64>::zeros(1, n);
    op.matvec(x.col(1), y.as_mut().row_mut(0).transpose_mut());
    assert!((y.row(0).transpose() - expected.col(1)).norm_max() <= 1e-12 * x.norm_l2());
}

#[test]
fn from_kernel_fn_scales_offsets_by_spacings() {
    let sizes = [5, 4, 3];
    let spacings = [0.2, 0.5, 0.35];
    let op = MultilevelToeplitz::from_kernel_fn(&sizes, &spacings, |d| {
        matern32(d.iter().map(|v| v * v).sum::<f64>().sqrt())
    })
    .unwrap();
    let g = isotropic_generator(&sizes, &spacings, matern32);
    assert_eq!(op.generator(), g.as_slice());
    assert_eq!(op.sizes(), &sizes);
    assert_eq!(op.embedding_sizes(), &[9, 8, 5]);
    let dense = dense_from_definition(&sizes, &g);
    let n = op.dim();
    assert!((0..n).all(|a| (0..n).all(|b| op.entry(a, b) == dense[(a, b)])));
}

#[test]
fn one_dimension_equals_symmetric_toeplitz() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    for m in [1, 2, 7, 16, 300] {
        let c: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
        let ml = MultilevelToeplitz::new(vec![m], c.clone()).unwrap();
        let st = SymmetricToeplitz::new(&c).unwrap();
        assert_eq!(ml.embedding_sizes(), &[st.embedding_length()]);
        let x = random_mat(&mut rng, m, 5);
        let tol = 1e-12 * x.norm_l2();
        let a = ml.apply_block(x.as_ref()).unwrap();
        let b = st.apply_block(x.as_ref()).unwrap();
        assert!((&a - &b).norm_max() <= tol, "m = {m}");
        let a = ml.apply(x.col(0)).unwrap();
        let b = st.apply(x.col(0)).unwrap();
        assert!((&a - &b).norm_max() <= tol, "m = {m}");
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    fn name_of(r: Result<MultilevelToeplitz, StructuredError>) -> &'static str {
        match r {
            Err(StructuredError::InvalidArgument { name, .. }) => name,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }
    assert_eq!(name_of(MultilevelToeplitz::new(vec![], vec![])), "sizes");
    assert_eq!(
        name_of(MultilevelToeplitz::new(vec![3, 0], vec![])),
        "sizes"
    );
    // Π m_k overflows.
    assert_eq!(
        name_of(MultilevelToeplitz::new(vec![1 << 32, 1 << 32], vec![])),
        "sizes"
    );
    // One axis too long to embed (2m − 1 overflows).
    assert_eq!(
        name_of(MultilevelToeplitz::new(vec![usize::MAX], vec![1.0])),
        "sizes"
    );
    // Π m_k fits, Π L_k overflows.
    assert_eq!(
        name_of(MultilevelToeplitz::new(vec![1 << 31, 1 << 31], vec![])),
        "sizes"
    );
    // Π L_k fits in usize but not in memory.
    assert_eq!(
        name_of(MultilevelToeplitz::new(vec![1 << 61], vec![])),
        "sizes"
    );
    assert_eq!(
        name_of(MultilevelToeplitz::new(vec![2, 3], vec![1.0; 5])),
        "generator"
    );
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut g = vec![1.0; 6];
        g[4] = bad;
        assert_eq!(name_of(MultilevelToeplitz::new(vec![2, 3], g)), "generator");
    }
    let k = |d: &[f64]| (-d.iter().sum::<f64>()).exp();
    assert_eq!(
        name_of(MultilevelToeplitz::from_kernel_fn(&[2, 3], &[0.1], k)),
        "spacings"
    );
    for h in [0.0, -1.0, f64::NAN] {
        assert_eq!(
            name_of(MultilevelToeplitz::from_kernel_fn(&[2, 3], &[0.1, h], k)),
            "spacings"
        );
    }
    assert_eq!(
        name_of(MultilevelToeplitz::from_kernel_fn(&[1 << 61], &[0.1], k)),
        "sizes"
    );
    assert_eq!(
        name_of(MultilevelToeplitz::from_kernel_fn(&[2], &[0.1], |_| {
            f64::NAN
        })),
        "generator"
    );
    // Shape errors of the checked products are typed too.
    let op = MultilevelToeplitz::new(vec![2, 3], vec![1.0; 6]).unwrap();
    assert!(op.apply(Col::<f64>::zeros(5).as_ref()).is_err());
}

/// Timing of one product for sizes [64, 64, 64] (not an assertion). Run with
/// `cargo test --release -p gp-structured --test integration multilevel_toeplitz::timing -- --ignored --nocapture`.
#[test]
#[ignore = "timing only; run in release with --nocapture"]
fn timing() {
    use std::time::Instant;
    let sizes = [64, 64, 64];
    let op = MultilevelToeplitz::from_kernel_fn(&sizes, &[0.1, 0.1, 0.1], |d| {
        matern32(d.iter().map(|v| v * v).sum::<f64>().sqrt())
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let n = op.dim();
    let x = random_mat(&mut rng, n, 10);
    let mut y = Col::<f64>::zeros(n);
    op.matvec(x.col(0), y.as_mut()); // warm-up: the pooled workspace is allocated here
    let reps = 5;
    let start = Instant::now();
    for _ in 0..reps {
        op.matvec(x.col(0), y.as_mut());
    }
    let matvec = start.elapsed().as_secs_f64() / reps as f64;
    let mut out = Mat::<f64>::zeros(n, 10);
    op.matmat(x.as_ref(), out.as_mut());
    let start = Instant::now();
    for _ in 0..reps {
        op.matmat(x.as_ref(), out.as_mut());
    }
    let matmat = start.elapsed().as_secs_f64() / reps as f64;
    println!(
        "MultilevelToeplitz {sizes:?} (embedding {:?}): matvec {:.1} ms, 10-column matmat {:.1} ms \
         (parallelism {:?})",
        op.embedding_sizes(),
        matvec * 1e3,
        matmat * 1e3,
        gp_linalg::parallelism()
    );
}
