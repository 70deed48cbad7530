//! Poisson counts from a latent GP (IterNCGP §5.1, spec `ncgp.md` §4.2): `N` inputs equally
//! spaced on `[0, 1]`, one latent log-rate `f ~ GP(0, s · RBF(ℓ))` drawn from `latent_seed`
//! and kept fixed, counts `y_n ~ Poisson(exp f(x_n))` redrawn from `count_seed`.

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Poisson};

use super::gp_prior_draw;
use crate::error::BenchError;

/// Settings of [`poisson_counts`]; the defaults are the paper's (`N = 100`, `ℓ = 0.1`,
/// `s = 5` as a variance).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoissonOptions {
    /// Number of points.
    pub n: usize,
    /// RBF length scale of the latent GP.
    pub lengthscale: f64,
    /// Output scale (a variance) of the latent GP.
    pub outputscale: f64,
    /// Seed of the latent draw (fixed across runs in the paper).
    pub latent_seed: u64,
    /// Seed of the counts (redrawn per run).
    pub count_seed: u64,
}

impl Default for PoissonOptions {
    fn default() -> Self {
        Self {
            n: 100,
            lengthscale: 0.1,
            outputscale: 5.0,
            latent_seed: 0,
            count_seed: 0,
        }
    }
}

/// Inputs, latent log-rates and counts.
#[derive(Debug, Clone)]
pub struct PoissonData {
    /// `N × 1` inputs, equally spaced on `[0, 1]`.
    pub x: Mat<f64>,
    /// The latent log-rate `f` at `x`.
    pub f: Col<f64>,
    /// Counts (non-negative integers stored as `f64`).
    pub y: Col<f64>,
}

/// Generates the Poisson data. The latent draw is a Cholesky draw with the jitter ladder
/// (the RBF matrix at ℓ = 0.1 on 100 points is numerically singular).
///
/// Errors: `n < 2`, invalid kernel values, or a factorization failure.
pub fn poisson_counts(options: &PoissonOptions) -> Result<PoissonData, BenchError> {
    let n = options.n;
    if n < 2 {
        return Err(BenchError::InvalidArgument {
            name: "n",
            reason: format!("need at least 2 points, got {n}"),
        });
    }
    let x = Mat::from_fn(n, 1, |i, _| i as f64 / (n - 1) as f64);
    let kernel = SquaredExponential::new(vec![options.lengthscale], options.outputscale)?;
    let f = gp_prior_draw(
        &kernel,
        x.as_ref(),
        &mut ChaCha8Rng::seed_from_u64(options.latent_seed),
    )?;
    let mut rng = ChaCha8Rng::seed_from_u64(options.count_seed);
    let mut y = Col::zeros(n);
    for i in 0..n {
        let rate = f[i].exp();
        y[i] = if rate > 0.0 && rate.is_finite() {
            Poisson::new(rate)
                .map_err(|e| BenchError::InvalidArgument {
                    name: "rate",
                    reason: format!("Poisson rate {rate}: {e}"),
                })?
                .sample(&mut rng)
        } else {
            0.0
        };
    }
    Ok(PoissonData { x, f, y })
}
