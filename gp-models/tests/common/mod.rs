//! Shared helpers of the integration tests: data generators and an independent dense
//! reference (naive Cholesky, triangular solves, SE kernel) that shares no code with
//! gp-linalg or gp-kernels.
#![allow(dead_code)]

use faer::{Col, Mat};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Row-major dense matrix `n × n` as `Vec<Vec<f64>>`.
pub type Dense = Vec<Vec<f64>>;

/// `σ² exp(−½ Σ ((x − z)/ℓ)²)`, written out independently of gp-kernels.
pub fn se(x: &[f64], z: &[f64], lengthscales: &[f64], variance: f64) -> f64 {
    let r2: f64 = x
        .iter()
        .zip(z)
        .zip(lengthscales)
        .map(|((a, b), l)| ((a - b) / l).powi(2))
        .sum();
    variance * (-0.5 * r2).exp()
}

pub fn rows(x: &Mat<f64>) -> Vec<Vec<f64>> {
    (0..x.nrows())
        .map(|i| (0..x.ncols()).map(|j| x[(i, j)]).collect())
        .collect()
}

pub fn se_matrix(a: &[Vec<f64>], b: &[Vec<f64>], ls: &[f64], var: f64) -> Dense {
    a.iter()
        .map(|xa| b.iter().map(|xb| se(xa, xb, ls, var)).collect())
        .collect()
}

/// Naive Cholesky–Banachiewicz: `A = L Lᵀ`, panics if not positive definite.
pub fn naive_cholesky(a: &Dense) -> Dense {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let v = a[i][i] - s;
                assert!(v > 0.0, "reference Cholesky: not positive definite");
                l[i][j] = v.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    l
}

/// Solves `L x = b` by forward substitution.
pub fn forward(l: &Dense, b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut x = vec![0.0; n];
    for i in 0..n {
        let s: f64 = (0..i).map(|k| l[i][k] * x[k]).sum();
        x[i] = (b[i] - s) / l[i][i];
    }
    x
}

/// Solves `Lᵀ x = b` by back substitution.
pub fn backward(l: &Dense, b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| l[k][i] * x[k]).sum();
        x[i] = (b[i] - s) / l[i][i];
    }
    x
}

pub fn spd_solve(l: &Dense, b: &[f64]) -> Vec<f64> {
    backward(l, &forward(l, b))
}

/// `A⁻¹` column by column from the reference factor.
pub fn spd_inverse(l: &Dense) -> Dense {
    let n = l.len();
    let mut inv = vec![vec![0.0; n]; n];
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        let c = spd_solve(l, &e);
        for i in 0..n {
            inv[i][j] = c[i];
        }
    }
    inv
}

pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Uniform points in `[0, width]^d` and targets `sin` of a projection plus noise.
pub fn toy_data(n: usize, d: usize, width: f64, seed: u64) -> (Mat<f64>, Col<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>() * width);
    let y = Col::from_fn(n, |i| {
        let s: f64 = (0..d).map(|j| x[(i, j)] * (1.0 + j as f64 * 0.5)).sum();
        s.sin() + 0.5 * (0.7 * s).cos() + 0.1 * (rng.random::<f64>() - 0.5)
    });
    (x, y)
}

/// `max |a − b| ≤ rel · max(max |b|, floor)`, with a message.
pub fn assert_close(a: &[f64], b: &[f64], rel: f64, floor: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths differ");
    let scale = b.iter().fold(floor, |m, v| m.max(v.abs()));
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= rel * scale,
            "{what}[{i}]: {x} vs reference {y} (|diff| = {:e}, allowed {:e})",
            (x - y).abs(),
            rel * scale
        );
    }
}

pub fn col_vec(c: &Col<f64>) -> Vec<f64> {
    (0..c.nrows()).map(|i| c[i]).collect()
}

/// `A⁻¹` of a symmetric positive definite `A` by faer's Cholesky (for references built on
/// faer matrices).
pub fn llt_inverse(a: &Mat<f64>) -> Mat<f64> {
    use faer::linalg::solvers::Solve;
    let llt = a.llt(faer::Side::Lower).expect("positive definite");
    llt.solve(Mat::<f64>::identity(a.nrows(), a.nrows()))
}

/// `log det A` of a symmetric positive definite `A` by faer's Cholesky.
pub fn llt_log_det(a: &Mat<f64>) -> f64 {
    let llt = a.llt(faer::Side::Lower).expect("positive definite");
    let l = llt.L();
    2.0 * (0..a.nrows()).map(|i| l[(i, i)].ln()).sum::<f64>()
}
