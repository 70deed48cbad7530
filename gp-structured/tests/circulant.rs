//! Circulant operators against dense matrices and dense Cholesky.
//!
//! Tolerances: products and solves go through one forward and one inverse real FFT of
//! length `n`, accurate to about `ε · log₂n` relative to ℓ₂ norms; with the spectrum bounded
//! by `‖c‖₁` a product entry is off by at most `C · ε · log₂n · ‖c‖₁ · ‖x‖₂`, and a solve by
//! that times `1/λ_min²`-scaled quantities, i.e. `C · ε · log₂n · κ · ‖x‖₂` for the solution.
//! `C = 8`.

use faer::{Col, Mat, Side};
use gp_linalg::{Cholesky, LinalgError, LinearOperator};
use gp_structured::{Circulant, StructuredError, TransposeOperator};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn dense_circulant(c: &[f64]) -> Mat<f64> {
    let n = c.len();
    Mat::from_fn(n, n, |i, j| c[(i + n - j) % n])
}

fn random_mat(rng: &mut ChaCha8Rng, r: usize, c: usize) -> Mat<f64> {
    Mat::from_fn(r, c, |_, _| rng.random_range(-1.0..1.0))
}

fn tol(scale: f64, n: usize, x_norm: f64) -> f64 {
    8.0 * f64::EPSILON * (n as f64).log2().max(1.0) * scale * x_norm.max(1e-300)
}

/// A symmetric positive definite circulant column: `c[k] = f(min(k, n − k))` with a
/// dominant diagonal.
fn spd_column(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let half: Vec<f64> = (0..=n / 2).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut c: Vec<f64> = (0..n).map(|k| half[k.min(n - k)]).collect();
    let off: f64 = c.iter().skip(1).map(|v| v.abs()).sum();
    c[0] = off + rng.random_range(0.1..1.0);
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn apply_block_and_transpose_match_dense(n in 1usize..40, k in 1usize..4, seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let op = Circulant::new(&c).unwrap();
        let dense = dense_circulant(&c);
        prop_assert!((&op.to_dense() - &dense).norm_max() == 0.0);
        let c1: f64 = c.iter().map(|v| v.abs()).sum();
        let x = random_mat(&mut rng, n, k);
        let t = tol(c1, n, x.norm_l2());
        let got = op.apply_block(x.as_ref()).unwrap();
        prop_assert!((&got - &dense * &x).norm_max() <= t);
        let y = op.apply(x.col(0)).unwrap();
        let y_ref = &dense * x.col(0);
        prop_assert!((&y - &y_ref).norm_max() <= t);
        let yt = op.apply_transpose(x.col(0)).unwrap();
        let yt_ref = dense.transpose() * x.col(0);
        prop_assert!((&yt - &yt_ref).norm_max() <= t);
        let d = op.diagonal().unwrap();
        prop_assert!((0..n).all(|i| d[i] == c[0]));
    }

    #[test]
    fn spd_solve_and_log_det_match_cholesky(n in 1usize..40, seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c = spd_column(&mut rng, n);
        let op = Circulant::new(&c).unwrap();
        prop_assert!(op.is_symmetric());
        let dense = dense_circulant(&c);
        let chol = Cholesky::new(dense.as_ref()).unwrap();
        let b = random_mat(&mut rng, n, 3);
        let x_ref = chol.solve(b.as_ref()).unwrap();
        let x = op.solve_block(b.as_ref()).unwrap();
        let ev = op.real_eigenvalues().unwrap();
        let lmin = ev.iter().copied().fold(f64::INFINITY, f64::min);
        let lmax = ev.iter().copied().fold(0.0, f64::max);
        // Solution error ≲ κ · (relative round-off) · ‖x‖.
        let t = tol(lmax / lmin, n, x_ref.norm_l2());
        prop_assert!((&x - &x_ref).norm_max() <= t, "{} > {}", (&x - &x_ref).norm_max(), t);
        let x0 = op.solve(b.col(0)).unwrap();
        for i in 0..n {
            prop_assert!((x0[i] - x_ref[(i, 0)]).abs() <= t);
        }
        // log det: Σ log λ_k, each λ_k with absolute error ~ ε log₂n ‖c‖₁.
        let ld = op.log_det().unwrap();
        let ld_tol = n as f64 * tol(1.0, n, 1.0) * lmax / lmin + 1e-14 * chol.log_det().abs();
        prop_assert!((ld - chol.log_det()).abs() <= ld_tol);
        // The spectrum agrees with a dense symmetric eigensolver.
        let mut dense_ev = dense.self_adjoint_eigenvalues(Side::Lower).unwrap();
        let mut ev_sorted = ev.clone();
        ev_sorted.sort_by(f64::total_cmp);
        dense_ev.sort_by(f64::total_cmp);
        for (a, b) in ev_sorted.iter().zip(&dense_ev) {
            prop_assert!((a - b).abs() <= 1e-12 * lmax);
        }
    }
}

#[test]
fn non_symmetric_circulant_has_no_solve() {
    let op = Circulant::new(&[4.0, 1.0, 0.0, 0.0]).unwrap();
    assert!(!op.is_symmetric());
    assert!(op.real_eigenvalues().is_none());
    let b = Col::<f64>::zeros(4);
    assert!(matches!(
        op.solve(b.as_ref()),
        Err(StructuredError::InvalidArgument { .. })
    ));
    assert!(matches!(
        op.log_det(),
        Err(StructuredError::InvalidArgument { .. })
    ));
}

#[test]
fn non_positive_spectrum_is_an_error() {
    // c = [0, 1, 0, 0, 0, 1]: eigenvalues 2 cos(2πk/6), negative for k = 2, 3.
    let op = Circulant::new(&[0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).unwrap();
    assert!(op.is_symmetric());
    let b = Col::<f64>::zeros(6);
    assert!(matches!(
        op.solve(b.as_ref()),
        Err(StructuredError::Linalg(LinalgError::NotPositive {
            index: 2,
            ..
        }))
    ));
    assert!(matches!(
        op.log_det(),
        Err(StructuredError::Linalg(LinalgError::NotPositive { .. }))
    ));
    // A singular one (zero eigenvalue at k = 0).
    let op = Circulant::new(&[1.0, -1.0]).unwrap();
    assert!(matches!(
        op.log_det(),
        Err(StructuredError::Linalg(LinalgError::NotPositive {
            index: 0,
            ..
        }))
    ));
}

#[test]
fn invalid_inputs_are_errors() {
    assert!(matches!(
        Circulant::new(&[]),
        Err(StructuredError::InvalidArgument { .. })
    ));
    assert!(matches!(
        Circulant::new(&[1.0, f64::INFINITY]),
        Err(StructuredError::Linalg(LinalgError::NonFinite { .. }))
    ));
    let op = Circulant::new(&[2.0, 1.0, 1.0]).unwrap();
    let wrong = Col::<f64>::zeros(2);
    assert!(op.solve(wrong.as_ref()).is_err());
    assert!(op.apply_transpose(wrong.as_ref()).is_err());
    assert!(op.solve_block(Mat::<f64>::zeros(4, 1).as_ref()).is_err());
}

#[test]
fn spectrum_is_the_dft_of_the_column() {
    let c = [1.0, 2.0, 3.0];
    let op = Circulant::new(&c).unwrap();
    let s = op.spectrum();
    assert_eq!(s.len(), 2);
    assert!((s[0].re - 6.0).abs() < 1e-14 && s[0].im.abs() < 1e-14);
    // λ₁ = 1 + 2 e^{−2πi/3} + 3 e^{−4πi/3} = −1.5 + i·(√3/2).
    assert!((s[1].re + 1.5).abs() < 1e-14);
    assert!((s[1].im - 3f64.sqrt() / 2.0).abs() < 1e-14);
    let t = op.clone();
    assert_eq!(t.first_column(), &c);
    assert_eq!(t.dim(), 3);
}
