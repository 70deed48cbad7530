//! Gaussian-mixture multi-class data (IterNCGP §5.2, spec `ncgp.md` §4.3 and §7.9): `C`
//! classes in `D` dimensions, class means uniform in `[−1, 1]^D`, class covariances
//! `Σ_c = U diag(λ) Uᵀ` with `U` the eigenvectors of `AAᵀ` (`A` with `U(0, 1)` entries) and
//! `λ_d ~ U(0.001, 0.1)`. The mixture comes from `mixture_seed` (fixed across runs in the
//! paper); the samples from `sample_seed`.

use faer::Mat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::standard_normal;
use crate::error::BenchError;

/// Settings of [`gaussian_mixture`]; the defaults are the paper's shape (`C = 10`, `D = 3`)
/// at a small size (the paper uses 10⁴ training and 10³ test points per class).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MixtureOptions {
    /// Number of classes `C`.
    pub classes: usize,
    /// Input dimension `D`.
    pub dim: usize,
    /// Points per class.
    pub per_class: usize,
    /// Seed of the mixture parameters.
    pub mixture_seed: u64,
    /// Seed of the samples.
    pub sample_seed: u64,
}

impl Default for MixtureOptions {
    fn default() -> Self {
        Self {
            classes: 10,
            dim: 3,
            per_class: 100,
            mixture_seed: 0,
            sample_seed: 0,
        }
    }
}

/// Labelled samples and the mixture they come from.
#[derive(Debug, Clone)]
pub struct MixtureData {
    /// `(C · per_class) × D` points, class by class.
    pub x: Mat<f64>,
    /// The class of each point, `0..C`.
    pub labels: Vec<usize>,
    /// Class means, `C × D`.
    pub means: Mat<f64>,
    /// Class covariances, `D × D` each.
    pub covariances: Vec<Mat<f64>>,
}

/// Generates the mixture and its samples (`x = μ_c + U diag(√λ) z`).
///
/// Errors: zero classes, dimension or points per class, or an eigendecomposition failure.
pub fn gaussian_mixture(options: &MixtureOptions) -> Result<MixtureData, BenchError> {
    let (c, d, m) = (options.classes, options.dim, options.per_class);
    if c == 0 || d == 0 || m == 0 {
        return Err(BenchError::InvalidArgument {
            name: "MixtureOptions",
            reason: format!("classes, dim and per_class must be positive, got {c}, {d}, {m}"),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(options.mixture_seed);
    let means = Mat::from_fn(c, d, |_, _| rng.random_range(-1.0..1.0));
    let mut factors = Vec::with_capacity(c);
    let mut covariances = Vec::with_capacity(c);
    for _ in 0..c {
        let a = Mat::from_fn(d, d, |_, _| rng.random::<f64>());
        let aat = &a * a.transpose();
        let evd = gp_linalg::eigen::self_adjoint_eigen(aat.as_ref())?;
        let u = evd.U().to_owned();
        let lambda: Vec<f64> = (0..d).map(|_| rng.random_range(0.001..0.1)).collect();
        let l = Mat::from_fn(d, d, |i, j| u[(i, j)] * lambda[j].sqrt());
        covariances.push(&l * l.transpose());
        factors.push(l);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(options.sample_seed);
    let mut x = Mat::zeros(c * m, d);
    let mut labels = Vec::with_capacity(c * m);
    for (k, l) in factors.iter().enumerate() {
        for r in 0..m {
            let z = standard_normal(d, &mut rng);
            let v = l * &z;
            for j in 0..d {
                x[(k * m + r, j)] = means[(k, j)] + v[j];
            }
            labels.push(k);
        }
    }
    Ok(MixtureData {
        x,
        labels,
        means,
        covariances,
    })
}
