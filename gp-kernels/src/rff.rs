//! Random Fourier features (Rahimi & Recht): a stationary kernel is the Fourier transform of
//! a spectral density, `k(x, z) = σ² E_ω[cos ωᵀ(x − z)]` with ω drawn from the normalized
//! spectral density, so `num_freqs` sampled frequencies give the unbiased estimate
//! `k̂(x, z) = σ²/F Σ_f cos ω_fᵀ(x − z) = φ(x)ᵀφ(z)` with the feature map
//! `φ(x) = sqrt(σ²/F) [cos ω₁ᵀx, sin ω₁ᵀx, …, cos ω_Fᵀx, sin ω_Fᵀx]`.
//!
//! Counts are named explicitly: `num_freqs = F` frequencies give `num_basis = 2F` feature
//! columns. The Monte Carlo error of `k̂` decays like `1/sqrt(F)`.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef};
use rand::RngCore;
use rand_distr::{ChiSquared, Distribution, StandardNormal};
use rayon::prelude::*;

use crate::ard::check_points;
use crate::error::{KernelError, Result};
use crate::kernel::Kernel;
use crate::matern::{Matern, MaternNu};
use crate::product::{FactorKind, ProductKernel};
use crate::se::SquaredExponential;

/// Kernels whose normalized spectral density can be sampled.
///
/// The trait takes the random source as `&mut dyn RngCore` so it stays object safe; any
/// `&mut rng` with `rng: impl Rng` coerces to it.
pub trait SpectralSampling: Kernel {
    /// Draws `num_freqs` frequencies (a `num_freqs × d` matrix, one ω per row) from the
    /// normalized spectral density, so that `k(x, z) = k(0) E[cos ωᵀ(x − z)]`.
    ///
    /// Errors on `num_freqs == 0`.
    fn sample_frequencies(&self, num_freqs: usize, rng: &mut dyn RngCore) -> Result<Mat<f64>>;

    /// `k(x, x)`, the variance the features are scaled to.
    fn spectral_variance(&self) -> f64;
}

fn check_num_freqs(num_freqs: usize) -> Result<()> {
    if num_freqs == 0 {
        return Err(KernelError::InvalidArgument {
            name: "num_freqs",
            reason: "need at least one frequency".into(),
        });
    }
    Ok(())
}

/// `2ν` as the degrees of freedom of the Student-t spectral density of a Matérn-ν kernel.
fn chi2(nu: MaternNu) -> Result<ChiSquared<f64>> {
    ChiSquared::new(2.0 * nu.value()).map_err(|e| KernelError::InvalidArgument {
        name: "nu",
        reason: format!("cannot build the chi-squared distribution: {e}"),
    })
}

impl SpectralSampling for SquaredExponential {
    /// `ω = g ⊘ ℓ`, `g ~ N(0, I)`.
    fn sample_frequencies(&self, num_freqs: usize, rng: &mut dyn RngCore) -> Result<Mat<f64>> {
        check_num_freqs(num_freqs)?;
        let ls = self.params().lengthscales();
        let mut w = Mat::<f64>::zeros(num_freqs, ls.len());
        for f in 0..num_freqs {
            for (k, l) in ls.iter().enumerate() {
                let g: f64 = StandardNormal.sample(rng);
                w[(f, k)] = g / l;
            }
        }
        Ok(w)
    }
    fn spectral_variance(&self) -> f64 {
        self.params().variance()
    }
}

impl SpectralSampling for Matern {
    /// Multivariate Student-t with `2ν` degrees of freedom:
    /// `ω = (g ⊘ ℓ) sqrt(2ν/u)`, `g ~ N(0, I)`, `u ~ χ²_{2ν}` (one `u` per frequency).
    fn sample_frequencies(&self, num_freqs: usize, rng: &mut dyn RngCore) -> Result<Mat<f64>> {
        check_num_freqs(num_freqs)?;
        let chi = chi2(self.nu())?;
        let two_nu = 2.0 * self.nu().value();
        let ls = self.params().lengthscales();
        let mut w = Mat::<f64>::zeros(num_freqs, ls.len());
        for f in 0..num_freqs {
            let u: f64 = chi.sample(rng);
            let scale = (two_nu / u).sqrt();
            for (k, l) in ls.iter().enumerate() {
                let g: f64 = StandardNormal.sample(rng);
                w[(f, k)] = g / l * scale;
            }
        }
        Ok(w)
    }
    fn spectral_variance(&self) -> f64 {
        self.params().variance()
    }
}

impl SpectralSampling for ProductKernel {
    /// Independent coordinates: `ωᵢ = gᵢ/ℓᵢ` for a squared-exponential factor and the 1-D
    /// Student-t `ωᵢ = gᵢ/ℓᵢ · sqrt(2ν/uᵢ)` for a Matérn-ν factor.
    fn sample_frequencies(&self, num_freqs: usize, rng: &mut dyn RngCore) -> Result<Mat<f64>> {
        check_num_freqs(num_freqs)?;
        let ls = self.params().lengthscales();
        let chis = self
            .kinds()
            .iter()
            .map(|kind| match kind {
                FactorKind::SquaredExponential => Ok(None),
                FactorKind::Matern(nu) => Ok(Some((chi2(*nu)?, 2.0 * nu.value()))),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut w = Mat::<f64>::zeros(num_freqs, ls.len());
        for f in 0..num_freqs {
            for (k, (l, chi)) in ls.iter().zip(&chis).enumerate() {
                let g: f64 = StandardNormal.sample(rng);
                let scale = match chi {
                    None => 1.0,
                    Some((chi, two_nu)) => {
                        let u: f64 = chi.sample(rng);
                        (two_nu / u).sqrt()
                    }
                };
                w[(f, k)] = g / l * scale;
            }
        }
        Ok(w)
    }
    fn spectral_variance(&self) -> f64 {
        self.params().variance()
    }
}

/// A random Fourier feature map: `num_freqs` frequencies (`num_freqs × d`) and the variance
/// `s`; features `φ(x) = sqrt(s/F) [cos ω₁ᵀx, sin ω₁ᵀx, …]` (`num_basis = 2·num_freqs`
/// columns), approximate kernel `φ(x)ᵀφ(z)`.
///
/// ```
/// use faer::Mat;
/// use gp_kernels::{Kernel, RandomFourierFeatures, SquaredExponential};
/// use rand::SeedableRng;
///
/// let kernel = SquaredExponential::new(vec![1.0, 0.5], 2.0)?;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
/// let rff = RandomFourierFeatures::sample(&kernel, 2000, &mut rng)?;
/// let x = Mat::from_fn(5, 2, |i, j| 0.1 * (i + 2 * j) as f64);
/// let phi = rff.features(x.as_ref())?;
/// assert_eq!(phi.ncols(), rff.num_basis());
/// let approx = rff.kernel_matrix(x.as_ref(), x.as_ref())?;
/// let exact = kernel.matrix(x.as_ref(), x.as_ref())?;
/// assert!((&approx - &exact).norm_max() < 0.25); // Monte Carlo error ~ 2/sqrt(2000)
/// # Ok::<(), gp_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RandomFourierFeatures {
    freqs: Mat<f64>,
    variance: f64,
}

impl RandomFourierFeatures {
    /// Samples `num_freqs` frequencies from `kernel`'s spectral density with `rng`.
    pub fn sample<K: SpectralSampling + ?Sized, R: RngCore>(
        kernel: &K,
        num_freqs: usize,
        rng: &mut R,
    ) -> Result<Self> {
        let freqs = kernel.sample_frequencies(num_freqs, rng)?;
        Ok(Self {
            freqs,
            variance: kernel.spectral_variance(),
        })
    }

    /// From given frequencies (`num_freqs × d`, at least one of each, finite) and variance
    /// `s > 0` (finite).
    pub fn from_frequencies(freqs: Mat<f64>, variance: f64) -> Result<Self> {
        if freqs.nrows() == 0 || freqs.ncols() == 0 {
            return Err(KernelError::InvalidArgument {
                name: "freqs",
                reason: format!(
                    "need at least one frequency of dimension at least one, got a {}×{} matrix",
                    freqs.nrows(),
                    freqs.ncols()
                ),
            });
        }
        gp_linalg::validate::check_finite_mat(freqs.as_ref(), "random Fourier frequencies")?;
        if !(variance > 0.0 && variance.is_finite()) {
            return Err(KernelError::InvalidHyperparameter {
                name: "variance".into(),
                value: variance,
                reason: "must be finite and strictly positive",
            });
        }
        Ok(Self { freqs, variance })
    }

    /// Number of frequencies `F`.
    pub fn num_freqs(&self) -> usize {
        self.freqs.nrows()
    }

    /// Number of feature columns, `2F`.
    pub fn num_basis(&self) -> usize {
        2 * self.freqs.nrows()
    }

    /// Input dimension `d`.
    pub fn input_dim(&self) -> usize {
        self.freqs.ncols()
    }

    /// The frequencies, one per row (`F × d`).
    pub fn frequencies(&self) -> MatRef<'_, f64> {
        self.freqs.as_ref()
    }

    /// The variance `s` the features are scaled to.
    pub fn variance(&self) -> f64 {
        self.variance
    }

    /// The feature matrix `Φ(X)` (`n × 2F`): column `2f` is `sqrt(s/F) cos(X ω_f)`, column
    /// `2f + 1` is `sqrt(s/F) sin(X ω_f)`.
    pub fn features(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>> {
        check_points(self.input_dim(), x, "random Fourier features, X")?;
        let (n, f) = (x.nrows(), self.num_freqs());
        let mut proj = Mat::<f64>::zeros(n, f);
        matmul(
            proj.as_mut(),
            Accum::Replace,
            x,
            self.freqs.transpose(),
            1.0,
            gp_linalg::parallelism(),
        );
        let c = (self.variance / f as f64).sqrt();
        let mut phi = Mat::<f64>::zeros(n, 2 * f);
        if n == 0 {
            return Ok(phi);
        }
        phi.as_mut()
            .par_col_chunks_mut(2)
            .enumerate()
            .for_each(|(q, mut pair)| {
                for i in 0..n {
                    let (s, co) = proj[(i, q)].sin_cos();
                    pair[(i, 0)] = c * co;
                    pair[(i, 1)] = c * s;
                }
            });
        Ok(phi)
    }

    /// The approximate kernel matrix `Φ(X) Φ(Z)ᵀ`.
    pub fn kernel_matrix(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let px = self.features(x)?;
        let pz = self.features(z)?;
        let mut out = Mat::<f64>::zeros(x.nrows(), z.nrows());
        matmul(
            out.as_mut(),
            Accum::Replace,
            px.as_ref(),
            pz.transpose(),
            1.0,
            gp_linalg::parallelism(),
        );
        Ok(out)
    }

    /// The approximate kernel value `k̂(x, z) = s/F Σ_f cos ω_fᵀ(x − z)` for two points.
    pub fn eval(&self, x: &[f64], z: &[f64]) -> Result<f64> {
        let d = self.input_dim();
        if x.len() != d || z.len() != d {
            return Err(KernelError::InvalidArgument {
                name: "x, z",
                reason: format!(
                    "points must have length {d}, got {} and {}",
                    x.len(),
                    z.len()
                ),
            });
        }
        let mut sum = 0.0;
        for f in 0..self.num_freqs() {
            let mut dot = 0.0;
            for k in 0..d {
                dot += self.freqs[(f, k)] * (x[k] - z[k]);
            }
            sum += dot.cos();
        }
        Ok(self.variance * sum / self.num_freqs() as f64)
    }
}
