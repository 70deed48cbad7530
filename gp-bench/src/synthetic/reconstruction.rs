//! The GP-GRIEF kernel-reconstruction inputs (spec `grief.md` §3.2 and check 13): points
//! uniform in `[−√3, √3]^d` (unit variance per coordinate, d = 100 in the paper), a random
//! half for training and the other half for testing.

use faer::Mat;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::uniform_inputs;
use crate::data::split::{train_test_split, Split};
use crate::error::BenchError;

/// The inputs and their seeded half/half split.
#[derive(Debug, Clone)]
pub struct ReconstructionData {
    /// All `n × d` points.
    pub x: Mat<f64>,
    /// Rows used to build the approximation (train) and the others (test).
    pub split: Split,
}

/// `n` points uniform in `[−√3, √3]^d` and a half/half split, both from `seed`.
///
/// Errors: `n < 2` or `d = 0`.
pub fn grief_reconstruction(
    n: usize,
    d: usize,
    seed: u64,
) -> Result<ReconstructionData, BenchError> {
    if d == 0 {
        return Err(BenchError::InvalidArgument {
            name: "d",
            reason: "the input dimension must be positive".into(),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let r = 3f64.sqrt();
    let x = uniform_inputs(n, d, -r, r, &mut rng);
    let split = train_test_split(n, 0.5, seed.wrapping_add(1))?;
    Ok(ReconstructionData { x, split })
}
