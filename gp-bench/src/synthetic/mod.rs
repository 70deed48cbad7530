//! Seeded synthetic data sets.
//!
//! Every generator takes a seed and uses `ChaCha8Rng`, a portable PRNG, so the same seed gives
//! the same data on every machine. This module holds the generic ones (uniform inputs, exact
//! GP prior draws by Cholesky, a smooth test function); the submodules hold the data sets the
//! papers use:
//!
//! * [`sine`]: the GSGP synthetic sine data;
//! * [`grid`]: exact prior draws on tensor grids by Kronecker eigendecomposition and the KMCG
//!   grid data sets;
//! * [`poisson`]: Poisson counts from a latent GP (IterNCGP §5.1);
//! * [`binary`]: the 1-D and 2-D binary classification data (IterNCGP App. C.1);
//! * [`mixture`]: the Gaussian-mixture multi-class data (IterNCGP §5.2);
//! * [`reconstruction`]: the GP-GRIEF kernel-reconstruction inputs (uniform, d = 100).

pub mod binary;
pub mod grid;
pub mod mixture;
pub mod poisson;
pub mod reconstruction;
pub mod sine;

use faer::{Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{Cholesky, JitterLadder};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use crate::error::BenchError;

/// A regression data set split into training and test parts.
#[derive(Debug, Clone)]
pub struct RegressionData {
    /// Training inputs, one point per row.
    pub x_train: Mat<f64>,
    /// Training targets.
    pub y_train: Col<f64>,
    /// Test inputs.
    pub x_test: Mat<f64>,
    /// Test targets (noisy, as a held-out observation would be).
    pub y_test: Col<f64>,
    /// Noise-free latent function at the test inputs.
    pub f_test: Col<f64>,
}

/// `n × d` points uniform in `[lo, hi]^d`.
pub fn uniform_inputs(n: usize, d: usize, lo: f64, hi: f64, rng: &mut impl Rng) -> Mat<f64> {
    Mat::from_fn(n, d, |_, _| lo + (hi - lo) * rng.random::<f64>())
}

/// A vector of `n` independent standard normal draws.
pub fn standard_normal(n: usize, rng: &mut impl Rng) -> Col<f64> {
    Col::from_fn(n, |_| rng.sample::<f64, _>(StandardNormal))
}

/// One exact draw `f ~ N(0, K(X, X))` by Cholesky (with the default jitter ladder, since
/// smooth kernels give numerically singular matrices on dense inputs).
pub fn gp_prior_draw<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    rng: &mut impl Rng,
) -> Result<Col<f64>, BenchError> {
    let k = kernel.matrix(x, x)?;
    let chol = Cholesky::with_jitter(
        k.as_ref(),
        &JitterLadder {
            max: 1e-4,
            ..JitterLadder::default()
        },
    )?;
    let z = standard_normal(x.nrows(), rng);
    Ok(chol.factor() * &z)
}

/// Inputs uniform in the unit cube, a latent draw from the GP prior with `kernel`, and
/// Gaussian noise of variance `noise_variance`; the first `n_train` points train, the
/// remaining `n_test` test.
pub fn gp_regression<K: Kernel + ?Sized>(
    kernel: &K,
    n_train: usize,
    n_test: usize,
    noise_variance: f64,
    seed: u64,
) -> Result<RegressionData, BenchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = n_train + n_test;
    let d = kernel.input_dim();
    let x = uniform_inputs(n, d, 0.0, 1.0, &mut rng);
    let f = gp_prior_draw(kernel, x.as_ref(), &mut rng)?;
    let noise_sd = noise_variance.sqrt();
    let y = Col::from_fn(n, |i| {
        f[i] + noise_sd * rng.sample::<f64, _>(StandardNormal)
    });
    Ok(RegressionData {
        x_train: x.subrows(0, n_train).to_owned(),
        y_train: y.subrows(0, n_train).to_owned(),
        x_test: x.subrows(n_train, n_test).to_owned(),
        y_test: y.subrows(n_train, n_test).to_owned(),
        f_test: f.subrows(n_train, n_test).to_owned(),
    })
}

/// A cheap smooth test function on `[0, 1]^d` plus noise, for sizes where an exact prior draw
/// (O(n³)) would dominate a benchmark: `f(x) = Σᵢ sin(2π(i+1)xᵢ/2)/√d`.
pub fn smooth_regression(
    n: usize,
    d: usize,
    noise_variance: f64,
    seed: u64,
) -> (Mat<f64>, Col<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = uniform_inputs(n, d, 0.0, 1.0, &mut rng);
    let noise_sd = noise_variance.sqrt();
    let scale = 1.0 / (d.max(1) as f64).sqrt();
    let y = Col::from_fn(n, |i| {
        let f: f64 = (0..d)
            .map(|k| (std::f64::consts::PI * (k + 1) as f64 * x[(i, k)]).sin())
            .sum();
        scale * f + noise_sd * rng.sample::<f64, _>(StandardNormal)
    });
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gp_kernels::SquaredExponential;

    #[test]
    fn same_seed_same_data() {
        let k = SquaredExponential::new(vec![0.3, 0.5], 1.0).unwrap();
        let a = gp_regression(&k, 40, 10, 0.01, 7).unwrap();
        let b = gp_regression(&k, 40, 10, 0.01, 7).unwrap();
        assert_eq!(a.y_train, b.y_train);
        assert_eq!(a.x_test, b.x_test);
        let c = gp_regression(&k, 40, 10, 0.01, 8).unwrap();
        assert_ne!(a.y_train, c.y_train);
    }

    #[test]
    fn prior_draw_has_the_kernel_variance() {
        // The empirical variance of 400 values of one smooth draw is a noisy estimate of σ² = 4;
        // averaged over 20 independent draws its relative standard error is well under 25%.
        let k = SquaredExponential::new(vec![0.05], 4.0).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let x = uniform_inputs(400, 1, 0.0, 1.0, &mut rng);
        let mut mean_sq = 0.0;
        for _ in 0..20 {
            let f = gp_prior_draw(&k, x.as_ref(), &mut rng).unwrap();
            mean_sq += f.squared_norm_l2() / 400.0 / 20.0;
        }
        assert!((mean_sq / 4.0 - 1.0).abs() < 0.25, "mean square {mean_sq}");
    }
}
