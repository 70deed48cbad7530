//! The TOY generator of the authors' code (spec `kmcg.md` §3.3, §6 item 11) and the
//! labelled synthetic PRECIPITATION stand-in (the real GPstuff files are not distributed).

use faer::{Col, Mat};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{Cholesky, JitterLadder};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use crate::error::BenchError;
use crate::synthetic::standard_normal;

/// Points of the TOY generator (100 from each of its four components).
pub const TOY_N: usize = 400;
/// SE signal variance of the TOY prior draw.
pub const TOY_SIGNAL_VARIANCE: f64 = 1.0;
/// SE lengthscale of the TOY prior draw.
pub const TOY_LENGTHSCALE: f64 = 0.2;
/// Noise variance of the TOY prior draw.
pub const TOY_NOISE_VARIANCE: f64 = 0.02;

/// Rows of the PRECIPITATION stand-in (2 × 2888: 2888 train, 2888 test).
pub const PRECIPITATION_N: usize = 5776;

/// The TOY inputs (`400 × 1`): 100 from `U[0,1]`, 100 from `N(0,1)`, 100 from
/// `1 + 0.1·N(0,1)`, 100 from `−0.5 + 0.05·N(0,1)`, in that order, and one draw of
/// `N(0, K + σ²I)` with the SE kernel `sf² = 1`, `ℓ = 0.2`, `σ² = 0.02` (the code's
/// generator, not the paper's Table 1 text). Deterministic in `seed`.
///
/// **Known mismatch.** With this noise, the exact GP at the authors' fixed TOY
/// hyperparameters (Appendix A: `σ² = 0.0045`, `sf² = 0.42`, `ℓ = 0.218`) gives
/// `nlZ ≈ +75 … +170` (seeds 0–2) against Appendix B's `−157`; drawing with
/// `σ² = 0.0045` instead ([`toy_with_noise`]) gives `−175 … −206`. So the authors' stored
/// TOY data evidently had a noise variance near 0.0045, not the 0.02 read from their
/// generator. The ε metrics compare against the exact GP at the same hyperparameters, so
/// either draw is a valid benchmark; the default stays the documented generator.
///
/// Errors: a failed Cholesky of `K + σ²I` (not expected: `σ² = 0.02`).
pub fn toy(seed: u64) -> Result<(Mat<f64>, Col<f64>), BenchError> {
    toy_with_noise(seed, TOY_NOISE_VARIANCE)
}

/// [`toy`] with another noise variance of the prior draw (same inputs for the same seed).
///
/// Errors: a failed Cholesky of `K + σ²I` (e.g. `noise_variance ≤ 0`).
pub fn toy_with_noise(seed: u64, noise_variance: f64) -> Result<(Mat<f64>, Col<f64>), BenchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let per = TOY_N / 4;
    let mut xs = Vec::with_capacity(TOY_N);
    xs.extend((0..per).map(|_| rng.random::<f64>()));
    for (shift, scale) in [(0.0, 1.0), (1.0, 0.1), (-0.5, 0.05)] {
        xs.extend((0..per).map(|_| shift + scale * rng.sample::<f64, _>(StandardNormal)));
    }
    let x = Mat::from_fn(TOY_N, 1, |i, _| xs[i]);
    let kernel = SquaredExponential::new(vec![TOY_LENGTHSCALE], TOY_SIGNAL_VARIANCE)?;
    let mut k = kernel.matrix(x.as_ref(), x.as_ref())?;
    for i in 0..TOY_N {
        k[(i, i)] += noise_variance;
    }
    let chol = Cholesky::with_jitter(k.as_ref(), &JitterLadder::none())?;
    let z = standard_normal(TOY_N, &mut rng);
    let y = chol.factor() * &z;
    Ok((x, y))
}

/// A synthetic stand-in for PRECIPITATION (`5776 × 2`, clearly not the real data): station
/// coordinates uniform on the contiguous-US box (longitude −125…−67, latitude 25…49), and
/// a smooth "annual precipitation / 100" field — a west–east gradient, a wet south-east, a
/// wet Pacific north-west strip and a few medium-scale bumps — plus `N(0, 0.2²)`-relative
/// noise. Deterministic in `seed`.
pub fn precipitation_stand_in(seed: u64) -> (Mat<f64>, Col<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5052_4543);
    let n = PRECIPITATION_N;
    let x = Mat::from_fn(n, 2, |_, j| {
        let u: f64 = rng.random();
        if j == 0 {
            -125.0 + 58.0 * u
        } else {
            25.0 + 24.0 * u
        }
    });
    let bumps: Vec<(f64, f64, f64)> = (0..12)
        .map(|_| {
            (
                -125.0 + 58.0 * rng.random::<f64>(),
                25.0 + 24.0 * rng.random::<f64>(),
                2.0 * rng.sample::<f64, _>(StandardNormal),
            )
        })
        .collect();
    let field = |lon: f64, lat: f64| {
        let gradient = 3.0 + 6.0 * (lon + 125.0) / 58.0;
        let south_east = 4.0 * (-((lon + 85.0).powi(2) + (lat - 31.0).powi(2)) / 60.0).exp();
        let north_west = 8.0 * (-((lon + 123.5).powi(2)) / 2.0 - (lat - 46.0).powi(2) / 20.0).exp();
        let local: f64 = bumps
            .iter()
            .map(|(cx, cy, a)| a * (-((lon - cx).powi(2) + (lat - cy).powi(2)) / 8.0).exp())
            .sum();
        gradient + south_east + north_west + local
    };
    let y = Col::from_fn(n, |i| {
        let f = field(x[(i, 0)], x[(i, 1)]);
        f * (1.0 + 0.2 * rng.sample::<f64, _>(StandardNormal))
    });
    (x, y)
}
