//! The GSGP synthetic sine data (Yadav, Sheldon & Musco; spec `gsgp.md` §4.2), as the
//! reference code `fkigp/dataloader.py` (SINE) generates it: `x ~ U(−1, 1)` sorted,
//! `y = sin(2πx + 0.25u − 0.125)` with `u ~ U(0, 1)` — a phase jitter inside the sine, not
//! additive noise — so there are two periods on `[−1, 1]`; the test set is 30 equally
//! spaced points from `min x` to `max x` with the noise-free `sin(2πx)`.

use faer::{Col, Mat};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::BenchError;

/// Hyperparameters the GSGP code uses for the sine data (`configs/hypers.yaml`): noise
/// standard deviation, length scale, output scale.
pub const SINE_HYPERS: (f64, f64, f64) = (0.0742, 0.3126, 1.4395);

/// Number of test points of the sine data.
pub const SINE_TEST_POINTS: usize = 30;

/// The sine data: `n × 1` training inputs (sorted) and targets, and the test grid.
#[derive(Debug, Clone)]
pub struct SineData {
    /// Training inputs, `n × 1`, sorted ascending, in `[−1, 1]`.
    pub x: Mat<f64>,
    /// Training targets.
    pub y: Col<f64>,
    /// Test inputs, [`SINE_TEST_POINTS`] × 1, equally spaced over the training range.
    pub x_test: Mat<f64>,
    /// Noise-free test targets `sin(2πx)`.
    pub y_test: Col<f64>,
}

/// Generates the sine data with `n ≥ 2` training points.
///
/// Errors: `n < 2`.
pub fn gsgp_sine(n: usize, seed: u64) -> Result<SineData, BenchError> {
    if n < 2 {
        return Err(BenchError::InvalidArgument {
            name: "n",
            reason: format!("the sine data needs at least 2 points, got {n}"),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut xs: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    xs.sort_by(f64::total_cmp);
    let tau = 2.0 * std::f64::consts::PI;
    let y = Col::from_fn(n, |i| {
        let u: f64 = rng.random();
        (tau * xs[i] + 0.25 * u - 0.125).sin()
    });
    let (lo, hi) = (xs[0], xs[n - 1]);
    let m = SINE_TEST_POINTS;
    let t = |i: usize| lo + (hi - lo) * i as f64 / (m - 1) as f64;
    Ok(SineData {
        x: Mat::from_fn(n, 1, |i, _| xs[i]),
        y,
        x_test: Mat::from_fn(m, 1, |i, _| t(i)),
        y_test: Col::from_fn(m, |i| (tau * t(i)).sin()),
    })
}
