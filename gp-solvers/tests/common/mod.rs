//! Shared helpers of the integration tests: random SPD matrices with a prescribed spectrum,
//! kernel matrices, dense references.
#![allow(dead_code)]

use faer::Mat;
use gp_linalg::{Cholesky, SymmetricEigen};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

pub fn gaussian(rows: usize, cols: usize, seed: u64) -> Mat<f64> {
    let mut r = rng(seed);
    Mat::from_fn(rows, cols, |_, _| StandardNormal.sample(&mut r))
}

/// A random orthogonal matrix (eigenvectors of a random symmetric matrix).
pub fn orthogonal(n: usize, seed: u64) -> Mat<f64> {
    let g = gaussian(n, n, seed);
    let s = &g + g.transpose();
    SymmetricEigen::new(s.as_ref()).expect("eigen").vectors
}

/// `V diag(λ) Vᵀ` for a random orthogonal `V`.
pub fn with_spectrum(eigenvalues: &[f64], seed: u64) -> Mat<f64> {
    let n = eigenvalues.len();
    let v = orthogonal(n, seed);
    let scaled = Mat::from_fn(n, n, |i, j| v[(i, j)] * eigenvalues[j]);
    let a = &scaled * v.transpose();
    // Exact symmetry.
    Mat::from_fn(n, n, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]))
}

/// Eigenvalues spread log-uniformly from 1 down to `1/cond`.
pub fn log_spectrum(n: usize, cond: f64) -> Vec<f64> {
    (0..n)
        .map(|i| cond.powf(-(i as f64) / (n as f64 - 1.0)))
        .collect()
}

/// A well-conditioned SPD matrix of order `n` (eigenvalues in [1, 10]).
pub fn spd(n: usize, seed: u64) -> Mat<f64> {
    let ev: Vec<f64> = (0..n)
        .map(|i| 1.0 + 9.0 * i as f64 / (n as f64 - 1.0))
        .collect();
    with_spectrum(&ev, seed)
}

/// SE kernel matrix (noise-free) on sorted 1-D points in [0, 10].
pub fn se_kernel(n: usize, lengthscale: f64, seed: u64) -> Mat<f64> {
    use gp_kernels::{Kernel, SquaredExponential};
    let mut r = rng(seed);
    let mut xs: Vec<f64> = (0..n)
        .map(|_| 10.0 * rand::Rng::random::<f64>(&mut r))
        .collect();
    xs.sort_by(f64::total_cmp);
    let x = Mat::from_fn(n, 1, |i, _| xs[i]);
    let k = SquaredExponential::isotropic(1, lengthscale, 1.0).expect("kernel");
    k.matrix(x.as_ref(), x.as_ref()).expect("matrix")
}

pub fn add_noise(k: &Mat<f64>, sigma2: f64) -> Mat<f64> {
    let mut a = k.clone();
    for i in 0..a.nrows() {
        a[(i, i)] += sigma2;
    }
    a
}

pub fn dense_log_det(a: &Mat<f64>) -> f64 {
    Cholesky::new(a.as_ref()).expect("SPD").log_det()
}

pub fn dense_solve(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    Cholesky::new(a.as_ref())
        .expect("SPD")
        .solve(b.as_ref())
        .expect("solve")
}

/// The symmetric square root and inverse square root of an SPD matrix.
pub fn sqrt_and_inv_sqrt(a: &Mat<f64>) -> (Mat<f64>, Mat<f64>) {
    let eig = SymmetricEigen::new(a.as_ref()).expect("eigen");
    let n = a.nrows();
    let v = &eig.vectors;
    let f = |p: f64| {
        let s = Mat::from_fn(n, n, |i, j| v[(i, j)] * eig.values[j].powf(p));
        &s * v.transpose()
    };
    (f(0.5), f(-0.5))
}

pub fn max_abs_diff(a: faer::MatRef<'_, f64>, b: faer::MatRef<'_, f64>) -> f64 {
    (a - b).norm_max()
}
