//! Shared helpers for the integration tests: seeded random data and dense comparisons.
#![allow(dead_code)]

use faer::{Col, Mat, MatRef};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A seeded generator, so every test is reproducible.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// An `m×n` matrix with entries uniform in `[-1, 1)`.
pub fn rand_mat(rng: &mut ChaCha8Rng, m: usize, n: usize) -> Mat<f64> {
    Mat::from_fn(m, n, |_, _| rng.random_range(-1.0..1.0))
}

/// A column with entries uniform in `[lo, hi)`.
pub fn rand_col(rng: &mut ChaCha8Rng, n: usize, lo: f64, hi: f64) -> Col<f64> {
    Col::from_fn(n, |_| rng.random_range(lo..hi))
}

/// A well-conditioned SPD matrix `B Bᵀ + n I`.
pub fn rand_spd(rng: &mut ChaCha8Rng, n: usize) -> Mat<f64> {
    let b = rand_mat(rng, n, n);
    let mut a = &b * b.transpose();
    for i in 0..n {
        a[(i, i)] += n as f64;
    }
    a
}

/// Max-abs difference relative to the max-abs size of `b` (absolute when `b` is zero).
pub fn rel_err(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    assert_eq!(
        (a.nrows(), a.ncols()),
        (b.nrows(), b.ncols()),
        "shapes differ"
    );
    let diff = (a - b).norm_max();
    let scale = b.norm_max();
    if scale > 0.0 {
        diff / scale
    } else {
        diff
    }
}

/// Asserts `rel_err(a, b) <= tol` with a readable message.
pub fn assert_close(a: MatRef<'_, f64>, b: MatRef<'_, f64>, tol: f64, what: &str) {
    let e = rel_err(a, b);
    assert!(e <= tol, "{what}: relative error {e:e} > {tol:e}");
}
