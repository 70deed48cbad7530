//! Kronecker products and their eigendecompositions against the formed dense matrices.
//!
//! Tolerances: mode products with dense factors are sums of products, exact up to
//! `≈ d · n_max · ε` relative to `Π ‖A_l‖ · ‖x‖` (we use `1e-13` relative to
//! `Π_l ‖A_l‖_max · n_l · ‖x‖_max`); Toeplitz factors add the FFT round-off of their own tests.
//! Solves through the eigendecomposition are backward stable per factor, so the solution
//! error is `≲ κ(K + σ²I) · d · n_max · ε` relative; we use `1e-12 · κ` relative.

use std::sync::Arc;

use faer::{Col, Mat};
use gp_linalg::{Cholesky, DenseOperator, LinalgError, LinearOperator};
use gp_structured::{Kronecker, KroneckerEigen, StructuredError, SymmetricToeplitz};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_mat(rng: &mut ChaCha8Rng, r: usize, c: usize) -> Mat<f64> {
    Mat::from_fn(r, c, |_, _| rng.random_range(-1.0..1.0))
}

fn random_spd(rng: &mut ChaCha8Rng, n: usize) -> Mat<f64> {
    let a = random_mat(rng, n, n);
    let mut s = &a * a.transpose();
    for i in 0..n {
        s[(i, i)] += 0.1;
    }
    s
}

/// The standard Kronecker product: `(A ⊗ B)[i·r_B + k, j·c_B + l] = A[i, j] · B[k, l]`.
fn dense_kron(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    let (rb, cb) = (b.nrows(), b.ncols());
    Mat::from_fn(a.nrows() * rb, a.ncols() * cb, |i, j| {
        a[(i / rb, j / cb)] * b[(i % rb, j % cb)]
    })
}

fn dense_kron_all(factors: &[Mat<f64>]) -> Mat<f64> {
    let mut out = Mat::from_fn(1, 1, |_, _| 1.0);
    for f in factors {
        out = dense_kron(&out, f);
    }
    out
}

fn op_tol(factors: &[Mat<f64>], x: &Mat<f64>) -> f64 {
    let scale: f64 = factors
        .iter()
        .map(|f| f.norm_max() * f.ncols() as f64)
        .product();
    1e-13 * scale * x.norm_max().max(1e-300)
}

fn shapes_strategy(square: bool) -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((1usize..6, 1usize..6), 1..=3).prop_map(move |v| {
        if square {
            v.into_iter().map(|(r, _)| (r, r)).collect()
        } else {
            v
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn dense_factors_match_formed_product(
        shapes in shapes_strategy(false),
        k in 1usize..4,
        seed in any::<u64>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mats: Vec<Mat<f64>> = shapes.iter().map(|&(r, c)| random_mat(&mut rng, r, c)).collect();
        let ops: Vec<Arc<dyn LinearOperator>> = mats
            .iter()
            .map(|m| Arc::new(DenseOperator::new(m.clone())) as Arc<dyn LinearOperator>)
            .collect();
        let kron = Kronecker::new(ops).unwrap();
        let dense = dense_kron_all(&mats);
        prop_assert_eq!(kron.shape(), (dense.nrows(), dense.ncols()));
        prop_assert_eq!(kron.num_factors(), shapes.len());
        let x = random_mat(&mut rng, dense.ncols(), k);
        let t = op_tol(&mats, &x);
        let got = kron.apply_block(x.as_ref()).unwrap();
        prop_assert!((&got - &dense * &x).norm_max() <= t);
        let y = kron.apply(x.col(0)).unwrap();
        let y_ref = &dense * x.col(0);
        prop_assert!((&y - &y_ref).norm_max() <= t);
        // The transpose is the Kronecker product of the transposes.
        let tr_ops: Vec<Arc<dyn LinearOperator>> = mats
            .iter()
            .map(|m| Arc::new(DenseOperator::new(m.transpose().to_owned())) as Arc<dyn LinearOperator>)
            .collect();
        let kron_t = Kronecker::new(tr_ops).unwrap();
        let z = random_mat(&mut rng, dense.nrows(), 2);
        let got_t = kron_t.apply_block(z.as_ref()).unwrap();
        prop_assert!((&got_t - dense.transpose() * &z).norm_max() <= op_tol(&mats, &z));
        // Diagonal only for square products of square factors.
        let square = shapes.iter().all(|&(r, c)| r == c);
        match kron.diagonal() {
            Some(d) => {
                prop_assert!(square);
                for i in 0..d.nrows() {
                    prop_assert!((d[i] - dense[(i, i)]).abs() <= 1e-15 * dense.norm_max().max(1.0));
                }
            }
            None => prop_assert!(!square),
        }
    }

    #[test]
    fn toeplitz_and_dense_factors_mix(
        sizes in prop::collection::vec(1usize..6, 1..=3),
        seed in any::<u64>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut mats = Vec::new();
        let mut ops: Vec<Arc<dyn LinearOperator>> = Vec::new();
        for (l, &m) in sizes.iter().enumerate() {
            if l % 2 == 0 {
                let c: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
                let t = SymmetricToeplitz::new(&c).unwrap();
                mats.push(t.to_dense());
                ops.push(Arc::new(t));
            } else {
                let a = random_mat(&mut rng, m, m);
                mats.push(a.clone());
                ops.push(Arc::new(DenseOperator::new(a)));
            }
        }
        let kron = Kronecker::new(ops).unwrap();
        let dense = dense_kron_all(&mats);
        let x = random_mat(&mut rng, dense.ncols(), 3);
        let got = kron.apply_block(x.as_ref()).unwrap();
        prop_assert!((&got - &dense * &x).norm_max() <= op_tol(&mats, &x));
    }

    #[test]
    fn eigen_solve_and_log_det_match_cholesky(
        sizes in prop::collection::vec(1usize..6, 1..=3),
        sigma2 in 0.01f64..1.0,
        seed in any::<u64>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mats: Vec<Mat<f64>> = sizes.iter().map(|&m| random_spd(&mut rng, m)).collect();
        let refs: Vec<_> = mats.iter().map(|m| m.as_ref()).collect();
        let eig = KroneckerEigen::from_matrices(&refs).unwrap();
        let mut dense = dense_kron_all(&mats);
        let n = dense.nrows();
        prop_assert_eq!(eig.dim(), n);
        prop_assert_eq!(eig.dims(), sizes.clone());

        // Eigenvalues: products, and Q Λ Qᵀ = K.
        let lam = eig.eigenvalues();
        let q_lam_qt = {
            let qt = eig.apply_eigenvectors_transpose(Mat::<f64>::identity(n, n).as_ref()).unwrap();
            let scaled = Mat::from_fn(n, n, |i, j| lam[i] * qt[(i, j)]);
            eig.apply_eigenvectors(scaled.as_ref()).unwrap()
        };
        prop_assert!((&q_lam_qt - &dense).norm_max() <= 1e-12 * dense.norm_max());
        let multi: Vec<usize> = sizes.iter().map(|&m| m - 1).collect();
        prop_assert!((eig.eigenvalue(&multi).unwrap() - lam[n - 1]).abs() <= 1e-14 * lam[n - 1].abs().max(1.0));

        for i in 0..n {
            dense[(i, i)] += sigma2;
        }
        let chol = Cholesky::new(dense.as_ref()).unwrap();
        let b = random_mat(&mut rng, n, 2);
        let x_ref = chol.solve(b.as_ref()).unwrap();
        let x = eig.solve_shifted(sigma2, b.as_ref()).unwrap();
        let lmax = (0..n).map(|i| lam[i]).fold(0.0, f64::max) + sigma2;
        let lmin = (0..n).map(|i| lam[i]).fold(f64::INFINITY, f64::min) + sigma2;
        let kappa = lmax / lmin;
        prop_assert!((&x - &x_ref).norm_max() <= 1e-12 * kappa * x_ref.norm_max().max(1e-300));
        let ld = eig.log_det_shifted(sigma2).unwrap();
        prop_assert!((ld - chol.log_det()).abs() <= 1e-12 * n as f64 * kappa);
    }
}

#[test]
fn flat_index_order_last_factor_fastest() {
    // A = [[1, 2], [3, 4]], B = [[10, 20, 30]] (1×3): (A⊗B)[i, j·3 + l] = A[i, j]·B[0, l].
    let a = Mat::from_fn(2, 2, |i, j| (2 * i + j + 1) as f64);
    let b = Mat::from_fn(1, 3, |_, l| 10.0 * (l + 1) as f64);
    let kron = Kronecker::new(vec![
        Arc::new(DenseOperator::new(a)),
        Arc::new(DenseOperator::new(b)),
    ])
    .unwrap();
    let d = kron.to_dense();
    assert_eq!((d.nrows(), d.ncols()), (2, 6));
    assert_eq!(d[(0, 4)], 2.0 * 20.0);
    assert_eq!(d[(1, 2)], 3.0 * 30.0);
}

#[test]
fn toeplitz_grid_solve_is_exact_gp() {
    // K = T₁ ⊗ T₂ ⊗ T₃ of SE kernels on a 4 × 5 × 3 grid, plus noise.
    let se = |m: usize, h: f64, ell: f64| -> Vec<f64> {
        (0..m)
            .map(|i| (-(i as f64 * h).powi(2) / (2.0 * ell * ell)).exp())
            .collect()
    };
    let cols = [se(4, 0.3, 0.5), se(5, 0.2, 0.7), se(3, 0.5, 0.4)];
    let ts: Vec<SymmetricToeplitz> = cols
        .iter()
        .map(|c| SymmetricToeplitz::new(c).unwrap())
        .collect();
    let mats: Vec<Mat<f64>> = ts.iter().map(|t| t.to_dense()).collect();
    let refs: Vec<_> = mats.iter().map(|m| m.as_ref()).collect();
    let eig = KroneckerEigen::from_matrices(&refs).unwrap();
    let sigma2 = 0.05;
    let mut dense = dense_kron_all(&mats);
    for i in 0..60 {
        dense[(i, i)] += sigma2;
    }
    let y = Mat::from_fn(60, 1, |i, _| (i as f64 * 0.37).sin());
    let chol = Cholesky::new(dense.as_ref()).unwrap();
    let alpha = eig.solve_shifted(sigma2, y.as_ref()).unwrap();
    assert!((&alpha - chol.solve(y.as_ref()).unwrap()).norm_max() < 1e-9);
    assert!((eig.log_det_shifted(sigma2).unwrap() - chol.log_det()).abs() < 1e-9);
    // And the Kronecker operator of the Toeplitz factors (+ σ²) reproduces y from alpha.
    let ops: Vec<Arc<dyn LinearOperator>> = ts
        .into_iter()
        .map(|t| Arc::new(t) as Arc<dyn LinearOperator>)
        .collect();
    let kron = Kronecker::new(ops).unwrap();
    let back = kron.apply_block(alpha.as_ref()).unwrap() + &alpha * faer::Scale(sigma2);
    assert!((&back - &y).norm_max() < 1e-10);
}

#[test]
fn from_parts_and_accessors() {
    let q = Mat::<f64>::identity(2, 2);
    let eig = KroneckerEigen::from_parts(
        vec![vec![2.0, 3.0], vec![5.0]],
        vec![q, Mat::identity(1, 1)],
    )
    .unwrap();
    assert_eq!(eig.num_factors(), 2);
    assert_eq!(eig.factor_eigenvalues(0), Some(&[2.0, 3.0][..]));
    assert_eq!(eig.factor_eigenvectors(1).map(|m| m.nrows()), Some(1));
    assert!(eig.factor_eigenvalues(2).is_none());
    assert_eq!(eig.eigenvalue(&[1, 0]).unwrap(), 15.0);
    assert!(eig.eigenvalue(&[2, 0]).is_err());
    assert!(eig.eigenvalue(&[0]).is_err());
    let top = eig
        .top_eigenvalues(1, &gp_structured::TopEigenOptions::default())
        .unwrap();
    assert_eq!(top.index(0), Some(&[1, 0][..]));
    // Eigenvalues 10 and 15, shifted by 1.
    let ld = eig.log_det_shifted(1.0).unwrap();
    assert!((ld - (11f64.ln() + 16f64.ln())).abs() < 1e-14);
}

#[test]
fn invalid_inputs_are_errors() {
    assert!(matches!(
        Kronecker::new(vec![]),
        Err(StructuredError::InvalidArgument { .. })
    ));
    assert!(matches!(
        Kronecker::new(vec![Arc::new(DenseOperator::new(Mat::zeros(0, 2)))]),
        Err(StructuredError::InvalidArgument { .. })
    ));
    let huge: Vec<Arc<dyn LinearOperator>> = (0..70)
        .map(|_| Arc::new(DenseOperator::new(Mat::zeros(2, 2))) as Arc<dyn LinearOperator>)
        .collect();
    assert!(matches!(
        Kronecker::new(huge),
        Err(StructuredError::InvalidArgument { .. })
    ));
    assert!(matches!(
        KroneckerEigen::from_matrices(&[]),
        Err(StructuredError::InvalidArgument { .. })
    ));
    let rect = Mat::<f64>::zeros(2, 3);
    assert!(matches!(
        KroneckerEigen::from_matrices(&[rect.as_ref()]),
        Err(StructuredError::Linalg(LinalgError::NotSquare { .. }))
    ));
    let nan = Mat::from_fn(2, 2, |i, _| if i == 1 { f64::NAN } else { 1.0 });
    assert!(matches!(
        KroneckerEigen::from_matrices(&[nan.as_ref()]),
        Err(StructuredError::Linalg(LinalgError::NonFinite { .. }))
    ));
    assert!(KroneckerEigen::from_parts(vec![vec![1.0]], vec![]).is_err());
    assert!(KroneckerEigen::from_parts(vec![vec![1.0, 2.0]], vec![Mat::identity(3, 3)]).is_err());
    // Indefinite shifted spectrum, non-finite σ², wrong right-hand side.
    let eig = KroneckerEigen::from_parts(vec![vec![-1.0, 2.0]], vec![Mat::identity(2, 2)]).unwrap();
    let b = Mat::<f64>::zeros(2, 1);
    assert!(matches!(
        eig.solve_shifted(0.5, b.as_ref()),
        Err(StructuredError::Linalg(LinalgError::NotPositive {
            index: 0,
            ..
        }))
    ));
    assert!(matches!(
        eig.log_det_shifted(1.0),
        Err(StructuredError::Linalg(LinalgError::NotPositive { .. }))
    ));
    assert!(eig.log_det_shifted(f64::NAN).is_err());
    assert!(eig
        .solve_shifted(2.0, Mat::<f64>::zeros(3, 1).as_ref())
        .is_err());
    assert!(eig
        .apply_eigenvectors(Mat::<f64>::zeros(3, 1).as_ref())
        .is_err());
    let x = Col::<f64>::zeros(2);
    assert!(eig.solve_shifted(2.0, x.as_mat()).is_ok());
}
