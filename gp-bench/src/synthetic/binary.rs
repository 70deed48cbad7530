//! The binary classification data of IterNCGP App. C.1 (spec `ncgp.md` §4.1): 2-D inputs
//! `x₁ ~ U(−3, 5)`, `x₂ ~ U(−4, 1)` (Figs. 1, 3, 4, 8) or 1-D inputs `x ~ U(−3, 5)` (Fig. 2),
//! a latent draw `f ~ GP(0, s · RBF(ℓ = 1))` at the inputs, labels `y ~ Bernoulli(σ(f))` with
//! the logistic `σ`.

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::gp_prior_draw;
use crate::error::BenchError;

/// The RBF length scale of the paper's 1-D and 2-D data.
pub const BINARY_LENGTHSCALE: f64 = 1.0;

/// Inputs, latent function and labels.
#[derive(Debug, Clone)]
pub struct BinaryData {
    /// `N × 2` inputs.
    pub x: Mat<f64>,
    /// The latent function at `x`.
    pub f: Col<f64>,
    /// Labels 0 or 1 (stored as `f64`).
    pub y: Col<f64>,
}

/// Per-coordinate input ranges of the 2-D data (C.1: "the first coordinate is sampled
/// uniformly between −3 and 5, the second between −4 and 1").
pub const BINARY_2D_BOX: [(f64, f64); 2] = [(-3.0, 5.0), (-4.0, 1.0)];

/// The input range of the 1-D data (C.1: "sampling N = 50 data points between −3 and 5";
/// uniform is assumed, spec §4.1).
pub const BINARY_1D_RANGE: (f64, f64) = (-3.0, 5.0);

/// Draws `n` points of the App. C.1 2-D data with prior outputscale `outputscale` (a
/// variance: 20 in the paper's Fig. 1, 10 in Figs. 3 and 4) from `seed`.
///
/// Errors: `n = 0`, an invalid outputscale, or a factorization failure of the prior draw.
pub fn binary_classification(
    n: usize,
    outputscale: f64,
    seed: u64,
) -> Result<BinaryData, BenchError> {
    binary_in_box(n, &BINARY_2D_BOX, outputscale, seed)
}

/// Draws `n` points of the App. C.1 1-D data (Fig. 2: `N = 50`, outputscale 5) from `seed`;
/// `x` is `n × 1`.
///
/// Errors: as [`binary_classification`].
pub fn binary_classification_1d(
    n: usize,
    outputscale: f64,
    seed: u64,
) -> Result<BinaryData, BenchError> {
    binary_in_box(n, &[BINARY_1D_RANGE], outputscale, seed)
}

/// Inputs uniform in the box `ranges` (one `(lo, hi)` per coordinate), then the latent draw,
/// then the labels, all from one `ChaCha8Rng` stream (so the 2-D data are the ones drawn
/// before the 1-D variant existed: the same draws in the same order).
fn binary_in_box(
    n: usize,
    ranges: &[(f64, f64)],
    outputscale: f64,
    seed: u64,
) -> Result<BinaryData, BenchError> {
    if n == 0 {
        return Err(BenchError::InvalidArgument {
            name: "n",
            reason: "need at least one point".into(),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Uniform per coordinate (stated in C.1), on different ranges; `hi − lo` is exact for
    // the paper's integer bounds, so `lo + (hi − lo)·u` reproduces `−3 + 8u` and `−4 + 5u`.
    let x = Mat::from_fn(n, ranges.len(), |_, j| {
        let (lo, hi) = ranges[j];
        lo + (hi - lo) * rng.random::<f64>()
    });
    let kernel = SquaredExponential::new(vec![BINARY_LENGTHSCALE; ranges.len()], outputscale)?;
    let f = gp_prior_draw(&kernel, x.as_ref(), &mut rng)?;
    let y = Col::from_fn(n, |i| {
        let p = 1.0 / (1.0 + (-f[i]).exp());
        if rng.random::<f64>() < p {
            1.0
        } else {
            0.0
        }
    });
    Ok(BinaryData { x, f, y })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_in_range_labels_binary_and_seeded() {
        let a = binary_classification(200, 10.0, 3).unwrap();
        assert!((0..200).all(|i| (-3.0..=5.0).contains(&a.x[(i, 0)])));
        assert!((0..200).all(|i| (-4.0..=1.0).contains(&a.x[(i, 1)])));
        assert!(a.y.iter().all(|&y| y == 0.0 || y == 1.0));
        // A draw with variance 10 has both signs, so both labels occur.
        let ones = a.y.iter().filter(|&&y| y == 1.0).count();
        assert!(ones > 0 && ones < 200, "{ones}");
        // Labels follow the latent sign more often than not.
        let agree = (0..200)
            .filter(|&i| (a.f[i] > 0.0) == (a.y[i] == 1.0))
            .count();
        assert!(agree > 120, "{agree}");
        let b = binary_classification(200, 10.0, 3).unwrap();
        assert_eq!(a.y, b.y);
        assert_eq!(a.x, b.x);
        assert!(binary_classification(0, 10.0, 3).is_err());
    }

    #[test]
    fn one_dimensional_data_in_range() {
        let a = binary_classification_1d(50, 5.0, 1).unwrap();
        assert_eq!(a.x.ncols(), 1);
        assert!((0..50).all(|i| (-3.0..=5.0).contains(&a.x[(i, 0)])));
        assert!(a.y.iter().all(|&y| y == 0.0 || y == 1.0));
    }
}
