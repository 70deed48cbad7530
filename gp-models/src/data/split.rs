//! Seeded shuffles and train/test splits: by fraction, repeated, or k folds.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::ModelError;

/// Row indices of a training part and a disjoint test part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Training rows.
    pub train: Vec<usize>,
    /// Test rows.
    pub test: Vec<usize>,
}

/// A seeded random permutation of `0..n` (ChaCha8, Fisher–Yates).
///
/// ChaCha8 is used because its stream is fixed by the seed on every platform and version
/// of `rand_chacha`, so a split written into a report can be recreated.
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    idx
}

/// One seeded split of `0..n`: `round(test_fraction · n)` test rows (at least 1 and at most
/// `n − 1`), the rest training rows, both in shuffled order.
///
/// Errors: [`ModelError::InvalidOption`] for `n < 2` or a fraction outside `(0, 1)`.
pub fn train_test_split(n: usize, test_fraction: f64, seed: u64) -> Result<Split, ModelError> {
    if n < 2 {
        return Err(ModelError::InvalidOption {
            name: "n",
            reason: format!("a split needs at least 2 rows, got {n}"),
        });
    }
    // Written as a negated range test so that NaN is rejected too.
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(ModelError::InvalidOption {
            name: "test_fraction",
            reason: format!("must be strictly between 0 and 1, got {test_fraction}"),
        });
    }
    let n_test = ((test_fraction * n as f64).round() as usize).clamp(1, n - 1);
    let perm = permutation(n, seed);
    Ok(Split {
        test: perm[..n_test].to_vec(),
        train: perm[n_test..].to_vec(),
    })
}

/// `count` independent seeded splits (split `k` uses seed `seed + k`); test sets of
/// different splits may overlap.
///
/// Errors: those of [`train_test_split`].
pub fn random_splits(
    n: usize,
    test_fraction: f64,
    count: usize,
    seed: u64,
) -> Result<Vec<Split>, ModelError> {
    (0..count as u64)
        .map(|k| train_test_split(n, test_fraction, seed.wrapping_add(k)))
        .collect()
}

/// A seeded k-fold partition: one permutation cut into `k` test blocks whose sizes differ
/// by at most one; split `i` tests on block `i` and trains on the rest. The test blocks are
/// disjoint and cover `0..n`.
///
/// Errors: [`ModelError::InvalidOption`] for `k < 2` or `k > n`.
pub fn k_fold(n: usize, k: usize, seed: u64) -> Result<Vec<Split>, ModelError> {
    if k < 2 || k > n {
        return Err(ModelError::InvalidOption {
            name: "k",
            reason: format!("k-fold needs 2 ≤ k ≤ n, got k = {k}, n = {n}"),
        });
    }
    let perm = permutation(n, seed);
    let bounds: Vec<usize> = (0..=k).map(|i| i * n / k).collect();
    Ok((0..k)
        .map(|i| {
            let (lo, hi) = (bounds[i], bounds[i + 1]);
            Split {
                test: perm[lo..hi].to_vec(),
                train: perm[..lo].iter().chain(&perm[hi..]).copied().collect(),
            }
        })
        .collect())
}
