//! Synthetic problems of the RR-CG paper: Figure 2's lengthscale-recovery toy and the
//! ill-conditioned problem of claim H10 (spec `rtgps.md` §5.7, §6, §8 item 22).
//!
//! Both draw the targets exactly from the GP prior with noise, `y ~ N(0, K_f + σ² I)` with
//! `K_f = s · k_ℓ(X, X)` (SE kernel, GPyTorch's `exp(−r²/2)` convention), by a Cholesky
//! factor of `K_f + σ² I` and no jitter: `σ² > 0` makes the matrix positive definite, and
//! this is the model the training runs fit (the code draws `likelihood(model(x)).sample()`
//! in prior mode). gp-models has no prior sampler (its `sampling` module is MCMC over
//! hyperparameters); gp-bench's [`crate::synthetic::gp_prior_draw`] draws the noise-free
//! latent with a jitter ladder, which would add up to `1e−4` to `σ²`, 10% of H10's smallest
//! noise, so the noisy draw is made here ([`noisy_prior_draw`]).
//!
//! **Figure 2 decision** (§8 item 22): we follow the code (`experiments/lengthscale_recovery.py`):
//! `x = linspace(−3, 3, 200)`, `y` re-drawn from the prior for each true
//! `ℓ ∈ linspace(0.1, 1.0, 11)` with `s = 2`, `σ² = 0.01`. The paper's text
//! (`y = x sin(5πx) + ε`, `ε ~ N(0, 0.01)`) is kept as [`fig2_paper_text_targets`] for
//! comparison only; its targets are overwritten in the code before any training.

use faer::{Col, Mat, MatRef};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{Cholesky, JitterLadder};
use gp_structured::GridAxis;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use crate::error::BenchError;
use crate::synthetic::{standard_normal, uniform_inputs};

/// Points of the Figure 2 toy.
pub const FIG2_N: usize = 200;
/// The toy's inputs run from this ...
pub const FIG2_X_MIN: f64 = -3.0;
/// ... to this, equally spaced.
pub const FIG2_X_MAX: f64 = 3.0;
/// The toy's outputscale `s`.
pub const FIG2_OUTPUTSCALE: f64 = 2.0;
/// The toy's noise variance `σ²`.
pub const FIG2_NOISE_VARIANCE: f64 = 0.01;
/// Smallest true lengthscale of the toy.
pub const FIG2_LENGTHSCALE_MIN: f64 = 0.1;
/// Largest true lengthscale of the toy.
pub const FIG2_LENGTHSCALE_MAX: f64 = 1.0;
/// Number of true lengthscales (`linspace(0.1, 1.0, 11)`).
pub const FIG2_NUM_LENGTHSCALES: usize = 11;

/// Inputs and targets drawn from a GP prior with known hyperparameters.
#[derive(Debug, Clone)]
pub struct PriorProblem {
    /// Inputs, one point per row.
    pub x: Mat<f64>,
    /// Targets `y ~ N(0, s·k_ℓ(X, X) + σ² I)`.
    pub y: Col<f64>,
    /// The true (isotropic) lengthscale `ℓ`.
    pub lengthscale: f64,
    /// The true outputscale `s`.
    pub outputscale: f64,
    /// The true noise variance `σ²`.
    pub noise_variance: f64,
    /// The seed the targets (and random inputs, if any) were drawn with.
    pub seed: u64,
    /// One line for reports: generator and hyperparameters.
    pub description: String,
}

impl PriorProblem {
    /// Number of points.
    pub fn n(&self) -> usize {
        self.x.nrows()
    }

    /// Input dimension.
    pub fn d(&self) -> usize {
        self.x.ncols()
    }

    /// The true kernel `s · k_ℓ` (isotropic SE).
    ///
    /// Errors: none for a problem built by this module (its hyperparameters are validated).
    pub fn kernel(&self) -> Result<SquaredExponential, BenchError> {
        Ok(SquaredExponential::isotropic(
            self.d(),
            self.lengthscale,
            self.outputscale,
        )?)
    }
}

/// One draw `y ~ N(0, K(X, X) + σ² I)` by the Cholesky factor of `K + σ² I` (no jitter).
///
/// Errors: [`BenchError::InvalidArgument`] for `noise_variance` not finite and positive; a
/// kernel error for `x` of the wrong dimension; a Cholesky failure (not expected for
/// `σ² > 0`).
pub fn noisy_prior_draw<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    noise_variance: f64,
    rng: &mut impl Rng,
) -> Result<Col<f64>, BenchError> {
    if !(noise_variance > 0.0 && noise_variance.is_finite()) {
        return Err(BenchError::InvalidArgument {
            name: "noise_variance",
            reason: format!("must be finite and positive, got {noise_variance}"),
        });
    }
    let mut k = kernel.matrix(x, x)?;
    for i in 0..x.nrows() {
        k[(i, i)] += noise_variance;
    }
    let chol = Cholesky::with_jitter(k.as_ref(), &JitterLadder::none())?;
    let z = standard_normal(x.nrows(), rng);
    Ok(chol.factor() * &z)
}

/// `linspace(lo, hi, m)` (both ends included, as numpy).
fn linspace(lo: f64, hi: f64, m: usize) -> Result<Vec<f64>, BenchError> {
    Ok(GridAxis::new(lo, hi, m)?.points())
}

/// The toy's true lengthscales, `linspace(0.1, 1.0, 11)`.
pub fn fig2_true_lengthscales() -> Vec<f64> {
    linspace(
        FIG2_LENGTHSCALE_MIN,
        FIG2_LENGTHSCALE_MAX,
        FIG2_NUM_LENGTHSCALES,
    )
    .expect("constant bounds are valid")
}

/// The toy's inputs, `linspace(−3, 3, 200)` as a `200 × 1` matrix.
pub fn fig2_inputs() -> Mat<f64> {
    let xs = linspace(FIG2_X_MIN, FIG2_X_MAX, FIG2_N).expect("constant bounds are valid");
    Mat::from_fn(FIG2_N, 1, |i, _| xs[i])
}

/// Figure 2's toy for one true lengthscale: [`fig2_inputs`] and `y` drawn from the prior with
/// SE lengthscale `lengthscale`, outputscale 2 and noise variance 0.01. Deterministic in
/// `seed`.
///
/// Errors: a kernel error for a lengthscale that is not finite and positive.
pub fn fig2_toy(lengthscale: f64, seed: u64) -> Result<PriorProblem, BenchError> {
    let x = fig2_inputs();
    let kernel = SquaredExponential::isotropic(1, lengthscale, FIG2_OUTPUTSCALE)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let y = noisy_prior_draw(&kernel, x.as_ref(), FIG2_NOISE_VARIANCE, &mut rng)?;
    Ok(PriorProblem {
        x,
        y,
        lengthscale,
        outputscale: FIG2_OUTPUTSCALE,
        noise_variance: FIG2_NOISE_VARIANCE,
        seed,
        description: format!(
            "Fig. 2 toy (code's version): x = linspace(−3, 3, {FIG2_N}), y ~ GP prior, SE \
             ℓ = {lengthscale}, s = {FIG2_OUTPUTSCALE}, σ² = {FIG2_NOISE_VARIANCE} (seed {seed})"
        ),
    })
}

/// The toy at every true lengthscale of [`fig2_true_lengthscales`], in order; the `i`-th
/// (0-based) is drawn with seed `seed + i` (independent draws, as the code's loop).
///
/// Errors: none expected (valid constants).
pub fn fig2_toys(seed: u64) -> Result<Vec<PriorProblem>, BenchError> {
    fig2_true_lengthscales()
        .into_iter()
        .zip(0u64..)
        .map(|(ell, i)| fig2_toy(ell, seed.wrapping_add(i)))
        .collect()
}

/// The paper text's Figure 2 targets at [`fig2_inputs`]: `y = x sin(5πx) + ε`,
/// `ε ~ N(0, 0.01)` (standard deviation 0.1, as the code's `randn · 0.1`). Not what the
/// figure was made from (see the module docs). Deterministic in `seed`.
pub fn fig2_paper_text_targets(seed: u64) -> (Mat<f64>, Col<f64>) {
    let x = fig2_inputs();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let y = Col::from_fn(FIG2_N, |i| {
        let t = x[(i, 0)];
        t * (5.0 * std::f64::consts::PI * t).sin() + 0.1 * rng.sample::<f64, _>(StandardNormal)
    });
    (x, y)
}

/// Settings of H10's synthetic problem (spec §6): a GP prior draw on uniform inputs with a
/// small noise variance, so `K_f + σ² I` is ill-conditioned and truncated CG is biased.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct H10Config {
    /// Points (spec: 1,000–2,000).
    pub n: usize,
    /// Input dimension (spec: 2 or 3).
    pub d: usize,
    /// True isotropic SE lengthscale.
    pub lengthscale: f64,
    /// True outputscale `s`.
    pub outputscale: f64,
    /// True noise variance `σ²` (spec: 1e−3 … 1e−2).
    pub noise_variance: f64,
}

impl Default for H10Config {
    /// `N = 1000`, `d = 2`, `ℓ = 0.5`, `s = 1`, `σ² = 1e−3` (the small end of the spec's
    /// range: the most ill-conditioned).
    fn default() -> Self {
        Self {
            n: 1000,
            d: 2,
            lengthscale: 0.5,
            outputscale: 1.0,
            noise_variance: 1e-3,
        }
    }
}

/// H10's problem: `n` inputs uniform in `[−1, 1]^d`, `y ~ N(0, s·k_ℓ + σ² I)` (isotropic
/// SE). Deterministic in `seed` (inputs, then targets, from one ChaCha8 stream).
///
/// Errors: [`BenchError::InvalidArgument`] for `n < 2` or `d = 0`; a kernel error for a
/// lengthscale or outputscale that is not finite and positive; those of
/// [`noisy_prior_draw`] for the noise variance.
pub fn h10_problem(cfg: &H10Config, seed: u64) -> Result<PriorProblem, BenchError> {
    if cfg.n < 2 || cfg.d == 0 {
        return Err(BenchError::InvalidArgument {
            name: "H10Config",
            reason: format!("need n ≥ 2 and d ≥ 1, got n = {}, d = {}", cfg.n, cfg.d),
        });
    }
    let kernel = SquaredExponential::isotropic(cfg.d, cfg.lengthscale, cfg.outputscale)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = uniform_inputs(cfg.n, cfg.d, -1.0, 1.0, &mut rng);
    let y = noisy_prior_draw(&kernel, x.as_ref(), cfg.noise_variance, &mut rng)?;
    Ok(PriorProblem {
        x,
        y,
        lengthscale: cfg.lengthscale,
        outputscale: cfg.outputscale,
        noise_variance: cfg.noise_variance,
        seed,
        description: format!(
            "H10 synthetic: {} points uniform in [−1,1]^{}, y ~ GP prior, SE ℓ = {}, s = {}, \
             σ² = {} (seed {seed})",
            cfg.n, cfg.d, cfg.lengthscale, cfg.outputscale, cfg.noise_variance
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig2_shapes_and_grid() {
        let ells = fig2_true_lengthscales();
        assert_eq!(ells.len(), 11);
        assert!((ells[0] - 0.1).abs() < 1e-15 && (ells[10] - 1.0).abs() < 1e-15);
        assert!((ells[1] - 0.19).abs() < 1e-15);
        let toys = fig2_toys(0).unwrap();
        assert_eq!(toys.len(), 11);
        for (t, ell) in toys.iter().zip(&ells) {
            assert_eq!((t.n(), t.d(), t.y.nrows()), (200, 1, 200));
            assert_eq!(t.lengthscale, *ell);
            assert_eq!((t.outputscale, t.noise_variance), (2.0, 0.01));
        }
        let x = &toys[0].x;
        assert_eq!((x[(0, 0)], x[(199, 0)]), (-3.0, 3.0));
        assert!((x[(1, 0)] - x[(0, 0)] - 6.0 / 199.0).abs() < 1e-14);
    }

    #[test]
    fn draws_are_seeded() {
        let a = fig2_toy(0.4, 9).unwrap();
        assert_eq!(a.y, fig2_toy(0.4, 9).unwrap().y);
        assert_ne!(a.y, fig2_toy(0.4, 10).unwrap().y);
        let toys = fig2_toys(3).unwrap();
        assert_ne!(toys[0].y, toys[1].y);
        let cfg = H10Config {
            n: 200,
            ..H10Config::default()
        };
        let h = h10_problem(&cfg, 4).unwrap();
        let h2 = h10_problem(&cfg, 4).unwrap();
        assert_eq!((&h.x, &h.y), (&h2.x, &h2.y));
        assert_ne!(h.y, h10_problem(&cfg, 5).unwrap().y);
        assert_eq!(fig2_paper_text_targets(1).1, fig2_paper_text_targets(1).1);
    }

    /// Averaged over draws, the mean square of `y` is `s + σ²`, and the average product of
    /// targets 10 grid steps apart is `s·exp(−(10h)²/(2ℓ²))`.
    #[test]
    fn fig2_draws_have_the_prior_covariance() {
        let draws = 40u64;
        let h: f64 = 6.0 / 199.0;
        for ell in [0.1_f64, 1.0] {
            let (mut sq, mut lag) = (0.0, 0.0);
            for seed in 0..draws {
                let y = fig2_toy(ell, seed).unwrap().y;
                sq += y.squared_norm_l2() / 200.0;
                lag += (0..190).map(|i| y[i] * y[i + 10]).sum::<f64>() / 190.0;
            }
            let (sq, lag) = (sq / draws as f64, lag / draws as f64);
            let expect_lag = 2.0 * (-(10.0 * h).powi(2) / (2.0 * ell * ell)).exp();
            assert!(
                (sq / 2.01 - 1.0).abs() < 0.25,
                "ℓ = {ell}: mean square {sq}"
            );
            assert!(
                (lag - expect_lag).abs() < 0.5,
                "ℓ = {ell}: lag-10 product {lag}, expected {expect_lag}"
            );
        }
    }

    #[test]
    fn h10_shapes_range_and_variance() {
        let cfg = H10Config {
            d: 3,
            ..H10Config::default()
        };
        let p = h10_problem(&cfg, 1).unwrap();
        assert_eq!((p.n(), p.d(), p.y.nrows()), (1000, 3, 1000));
        assert!(p
            .x
            .col_iter()
            .all(|c| c.iter().all(|v| (-1.0..=1.0).contains(v))));
        assert!(p.description.contains("σ² = 0.001"));
        let k = p.kernel().unwrap();
        assert_eq!(k.eval(&[0.0; 3], &[0.0; 3]), 1.0);
        // Mean square over 8 draws (each about 30 effective samples at ℓ = 0.5 in 3-D).
        let small = H10Config { n: 400, ..cfg };
        let sq = (0..8u64)
            .map(|s| h10_problem(&small, s).unwrap().y.squared_norm_l2() / 400.0)
            .sum::<f64>()
            / 8.0;
        assert!((sq / 1.001 - 1.0).abs() < 0.3, "mean square {sq}");
    }

    #[test]
    fn bad_settings_are_errors() {
        let bad_n = H10Config {
            n: 1,
            ..H10Config::default()
        };
        assert!(matches!(
            h10_problem(&bad_n, 0),
            Err(BenchError::InvalidArgument { .. })
        ));
        let bad_noise = H10Config {
            n: 10,
            noise_variance: 0.0,
            ..H10Config::default()
        };
        assert!(matches!(
            h10_problem(&bad_noise, 0),
            Err(BenchError::InvalidArgument {
                name: "noise_variance",
                ..
            })
        ));
        assert!(fig2_toy(-1.0, 0).is_err());
    }
}
