//! Row-partitioned Khatri–Rao products and GRIEF Theorem 2 against dense matrices.

use faer::{Col, Mat, MatRef};
use gp_structured::{
    khatri_rao_kronecker_columns, khatri_rao_kronecker_columns_log, LinearOperator, RowKhatriRao,
    TransposeOperator,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_mat(r: usize, c: usize, rng: &mut ChaCha8Rng) -> Mat<f64> {
    Mat::from_fn(r, c, |_, _| rng.random::<f64>() * 2.0 - 1.0)
}

fn kron(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows() * b.nrows(), a.ncols() * b.ncols(), |i, j| {
        a[(i / b.nrows(), j / b.ncols())] * b[(i % b.nrows(), j % b.ncols())]
    })
}

/// The dense Khatri–Rao product: row i = kron of the rows i.
fn dense_khatri_rao(f: &[Mat<f64>]) -> Mat<f64> {
    let n = f[0].nrows();
    let rows: Vec<Mat<f64>> = (0..n)
        .map(|i| {
            f.iter().fold(Mat::<f64>::ones(1, 1), |acc, fl| {
                kron(&acc, &Mat::from_fn(1, fl.ncols(), |_, j| fl[(i, j)]))
            })
        })
        .collect();
    Mat::from_fn(n, rows[0].ncols(), |i, j| rows[i][(0, j)])
}

fn dense_kron(q: &[Mat<f64>]) -> Mat<f64> {
    q.iter()
        .fold(Mat::<f64>::ones(1, 1), |acc, ql| kron(&acc, ql))
}

fn check_products(sizes: &[usize], n: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let f: Vec<Mat<f64>> = sizes.iter().map(|&s| random_mat(n, s, &mut rng)).collect();
    let kr = RowKhatriRao::new(f.clone()).unwrap();
    let dense = dense_khatri_rao(&f);
    let m: usize = sizes.iter().product();
    assert_eq!(kr.shape(), (n, m));
    assert_eq!(kr.num_cols(), Some(m));
    assert!((kr.to_dense() - &dense).norm_max() < 1e-13);
    let x = random_mat(m, 3, &mut rng);
    let kx = kr.apply_block(x.as_ref()).unwrap();
    assert!((&kx - &dense * &x).norm_max() < 1e-12);
    let v = Col::from_fn(m, |j| x[(j, 0)]);
    let kv = kr.apply(v.as_ref()).unwrap();
    assert!((&kv - &dense * &v).norm_max() < 1e-12);
    let u = Col::from_fn(n, |i| (i as f64).sin());
    let ktu = kr.apply_transpose(u.as_ref()).unwrap();
    assert!((&ktu - dense.transpose() * &u).norm_max() < 1e-12);
    // Kronecker-structured vectors.
    let vs: Vec<Col<f64>> = sizes
        .iter()
        .map(|&s| Col::from_fn(s, |j| 0.5 - j as f64 * 0.1))
        .collect();
    let vk = vs.iter().fold(Mat::<f64>::ones(1, 1), |acc, v| {
        kron(&acc, &Mat::from_fn(v.nrows(), 1, |j, _| v[j]))
    });
    let refs: Vec<_> = vs.iter().map(|v| v.as_ref()).collect();
    let kk = kr.apply_kronecker(&refs).unwrap();
    let expect = &dense * &vk;
    for i in 0..n {
        assert!((kk[i] - expect[(i, 0)]).abs() < 1e-12);
    }
}

#[test]
fn products_match_dense() {
    check_products(&[3, 4], 7, 1);
    check_products(&[2, 3, 4], 600, 2); // several parallel row chunks
    check_products(&[5], 4, 3);
}

#[test]
fn constructor_errors() {
    assert!(RowKhatriRao::new(vec![]).is_err());
    assert!(RowKhatriRao::new(vec![Mat::zeros(3, 2), Mat::zeros(4, 2)]).is_err());
    assert!(RowKhatriRao::new(vec![Mat::zeros(3, 2), Mat::zeros(3, 0)]).is_err());
    let mut bad = Mat::<f64>::zeros(3, 2);
    bad[(1, 1)] = f64::NAN;
    assert!(RowKhatriRao::new(vec![bad]).is_err());
    let kr = RowKhatriRao::new(vec![Mat::zeros(3, 2), Mat::zeros(3, 2)]).unwrap();
    assert!(kr.apply(Col::<f64>::zeros(3).as_ref()).is_err());
    assert!(kr
        .apply_kronecker(&[Col::<f64>::zeros(2).as_ref()])
        .is_err());
}

fn theorem2_case(sizes: &[usize], n: usize, p: usize, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let f: Vec<Mat<f64>> = sizes.iter().map(|&s| random_mat(n, s, &mut rng)).collect();
    let q: Vec<Mat<f64>> = sizes.iter().map(|&s| random_mat(s, s, &mut rng)).collect();
    let sel: Vec<Vec<usize>> = (0..p)
        .map(|_| sizes.iter().map(|&s| rng.random_range(0..s)).collect())
        .collect();
    let kr = RowKhatriRao::new(f.clone()).unwrap();
    let qrefs: Vec<MatRef<'_, f64>> = q.iter().map(|m| m.as_ref()).collect();
    let got = khatri_rao_kronecker_columns(&kr, &qrefs, &sel).unwrap();
    // Dense reference: K · Q · S_pᵀ with S_p selecting the flat indices.
    let kq = dense_khatri_rao(&f) * dense_kron(&q);
    let flat = |s: &Vec<usize>| s.iter().zip(sizes).fold(0, |a, (&k, &m)| a * m + k);
    let expect = Mat::from_fn(n, p, |i, j| kq[(i, flat(&sel[j]))]);
    let scale = expect.norm_max();
    assert!((&got - &expect).norm_max() <= 1e-12 * scale);
    let log = khatri_rao_kronecker_columns_log(&kr, &qrefs, &sel).unwrap();
    assert!((log.to_values() - &expect).norm_max() <= 1e-12 * scale);
    for j in 0..p {
        for i in 0..n {
            assert_eq!(log.sign[(i, j)], expect[(i, j)].signum());
        }
    }
}

#[test]
fn theorem2_matches_dense_d2_d3() {
    theorem2_case(&[4, 5], 13, 9, 10);
    theorem2_case(&[3, 4, 2], 11, 15, 11);
    theorem2_case(&[3, 3, 3], 5, 1, 12);
}

#[test]
fn theorem2_input_errors() {
    let kr = RowKhatriRao::new(vec![Mat::zeros(3, 2), Mat::zeros(3, 3)]).unwrap();
    let q = [Mat::<f64>::identity(2, 2), Mat::<f64>::identity(3, 3)];
    let qr: Vec<_> = q.iter().map(|m| m.as_ref()).collect();
    assert!(khatri_rao_kronecker_columns(&kr, &qr, &[[1usize, 2]]).is_ok());
    assert!(khatri_rao_kronecker_columns(&kr, &qr, &[[2usize, 2]]).is_err());
    assert!(khatri_rao_kronecker_columns(&kr, &qr, &[[1usize]]).is_err());
    assert!(khatri_rao_kronecker_columns(&kr, &qr[..1], &[[1usize, 2]]).is_err());
    let wrong = [Mat::<f64>::identity(3, 3), Mat::<f64>::identity(3, 3)];
    let wr: Vec<_> = wrong.iter().map(|m| m.as_ref()).collect();
    assert!(khatri_rao_kronecker_columns_log(&kr, &wr, &[[1usize, 2]]).is_err());
}

/// d = 30, m_l = 10: m = 10^30 never appears; the log form stays finite where the plain
/// product underflows, and both match the product of the per-dimension values.
#[test]
fn theorem2_in_thirty_dimensions() {
    let (d, ml, n, p) = (30usize, 10usize, 20usize, 40usize);
    let mut rng = ChaCha8Rng::seed_from_u64(30);
    // Entries of size ~1e-12 so that the 30-fold products (~1e-360) underflow f64.
    let f: Vec<Mat<f64>> = (0..d)
        .map(|_| Mat::from_fn(n, ml, |_, _| (rng.random::<f64>() - 0.5) * 1e-11))
        .collect();
    let q: Vec<Mat<f64>> = (0..d).map(|_| random_mat(ml, ml, &mut rng)).collect();
    let sel: Vec<Vec<usize>> = (0..p)
        .map(|_| (0..d).map(|_| rng.random_range(0..ml)).collect())
        .collect();
    let kr = RowKhatriRao::new(f.clone()).unwrap();
    assert_eq!(kr.num_cols(), None);
    assert_eq!(kr.ncols(), usize::MAX);
    assert!((kr.ln_num_cols() - 30.0 * 10f64.ln()).abs() < 1e-10);
    assert!(kr.apply_transpose(Col::<f64>::zeros(n).as_ref()).is_err());
    let qrefs: Vec<_> = q.iter().map(|m| m.as_ref()).collect();
    let log = khatri_rao_kronecker_columns_log(&kr, &qrefs, &sel).unwrap();
    let plain = khatri_rao_kronecker_columns(&kr, &qrefs, &sel).unwrap();
    let b: Vec<Mat<f64>> = f.iter().zip(&q).map(|(fl, ql)| fl * ql).collect();
    for j in 0..p {
        for i in 0..n {
            let mut expect_log = 0.0;
            let mut expect_sign = 1.0;
            for l in 0..d {
                let v = b[l][(i, sel[j][l])];
                expect_log += v.abs().ln();
                expect_sign *= v.signum();
            }
            let la = log.log_abs[(i, j)];
            assert!(la.is_finite());
            assert!(
                la < -700.0,
                "expected an underflowing magnitude, got ln = {la}"
            );
            assert!((la - expect_log).abs() <= 1e-12 * expect_log.abs());
            assert_eq!(log.sign[(i, j)], expect_sign);
            assert_eq!(plain[(i, j)], 0.0); // underflow in the plain form
        }
    }
    // Moderate scale: the plain product is representable and agrees with the log form.
    let f2: Vec<Mat<f64>> = f.iter().map(|fl| fl * 1e11).collect();
    let kr2 = RowKhatriRao::new(f2).unwrap();
    let plain2 = khatri_rao_kronecker_columns(&kr2, &qrefs, &sel).unwrap();
    let log2 = khatri_rao_kronecker_columns_log(&kr2, &qrefs, &sel)
        .unwrap()
        .to_values();
    for j in 0..p {
        for i in 0..n {
            let v = plain2[(i, j)];
            assert!(v.is_finite() && v != 0.0);
            assert!((v - log2[(i, j)]).abs() <= 1e-11 * v.abs());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(30))]
    #[test]
    fn random_shapes(sizes in prop::collection::vec(1usize..5, 1..4), n in 1usize..12, p in 1usize..8, seed in 0u64..1000) {
        check_products(&sizes, n, seed);
        theorem2_case(&sizes, n, p, seed);
    }
}

/// `Kᵀ v` sums fixed row blocks in a fixed order, so 1, 2 and 3 threads give the same bits
/// (enough rows for several blocks, each row adding into every grid value).
#[test]
fn transpose_product_does_not_depend_on_the_thread_count() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let n = 1500;
    let factors: Vec<Mat<f64>> = [6, 5, 4]
        .iter()
        .map(|&m| random_mat(n, m, &mut rng))
        .collect();
    let k = RowKhatriRao::new(factors).unwrap();
    let v = Col::from_fn(n, |_| rng.random::<f64>() - 0.5);
    let bits = |threads: usize| -> Vec<u64> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| k.apply_transpose(v.as_ref()).unwrap())
            .iter()
            .map(|x| x.to_bits())
            .collect()
    };
    let one = bits(1);
    assert_eq!(one.len(), 120);
    for threads in [2, 3] {
        assert_eq!(bits(threads), one, "{threads} threads");
    }
}
