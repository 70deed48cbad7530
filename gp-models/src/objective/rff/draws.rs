//! The fixed random draws behind the random Fourier frequencies.

use faer::{Mat, MatRef};
use gp_linalg::validate::check_finite_mat;
use rand::RngCore;
use rand_distr::{ChiSquared, Distribution, StandardNormal};

use super::kernel::RffKernel;
use crate::error::{ModelError, Result};

/// Standard normal draws `G` (`num_freqs × d`, one row per frequency) and, for a Student-t
/// spectral density (Matérn), one scale `t_f = sqrt(2ν/u_f)` per row.
///
/// The frequencies are `ω_f = t_f · g_f ⊘ ℓ` (`t_f = 1` without scales), so the same draws
/// serve every value of the hyperparameters (reparameterisation) and every prefix of rows:
/// the objective with `F` frequencies uses the first `F` rows, so estimates with different
/// numbers of frequencies are nested (spec `rtgps.md` §3.1, pitfall 10).
///
/// ```
/// use gp_kernels::SquaredExponential;
/// use gp_models::objective::rff::SpectralDraws;
/// use rand::SeedableRng;
///
/// let kernel = SquaredExponential::new(vec![0.5, 1.0], 1.0)?;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let draws = SpectralDraws::sample(&kernel, 40, &mut rng)?;
/// assert_eq!((draws.num_freqs(), draws.input_dim()), (40, 2));
/// assert!(draws.scales().is_none());
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SpectralDraws {
    g: Mat<f64>,
    scales: Option<Vec<f64>>,
}

impl SpectralDraws {
    /// Draws for a Gaussian spectral density (squared exponential): `g` is `num_freqs × d`
    /// with at least one row and one column, all finite.
    ///
    /// Errors: [`ModelError::InvalidOption`] for an empty matrix, [`ModelError::NonFinite`].
    pub fn gaussian(g: Mat<f64>) -> Result<Self> {
        check_g(g.as_ref())?;
        Ok(Self { g, scales: None })
    }

    /// Draws for a Student-t spectral density (Matérn): `g` as in
    /// [`gaussian`](Self::gaussian) and one finite positive scale `t_f = sqrt(2ν/u_f)` per
    /// row.
    ///
    /// Errors: those of [`gaussian`](Self::gaussian), [`ModelError::LengthMismatch`] when
    /// there is not one scale per row, [`ModelError::InvalidOption`] for a scale that is not
    /// finite and positive.
    pub fn student_t(g: Mat<f64>, scales: Vec<f64>) -> Result<Self> {
        check_g(g.as_ref())?;
        if scales.len() != g.nrows() {
            return Err(ModelError::LengthMismatch {
                context: "Student-t scales of the random Fourier draws (one per row of G)",
                expected: g.nrows(),
                found: scales.len(),
            });
        }
        if let Some((f, t)) = scales
            .iter()
            .enumerate()
            .find(|(_, t)| !(t.is_finite() && **t > 0.0))
        {
            return Err(ModelError::InvalidOption {
                name: "SpectralDraws scales",
                reason: format!("scale {f} is {t}; every scale must be finite and positive"),
            });
        }
        Ok(Self {
            g,
            scales: Some(scales),
        })
    }

    /// Draws `num_freqs` frequencies for `kernel` from `rng`: per row, `u ~ χ²_{2ν}` first
    /// (Matérn only), then the `d` standard normals.
    ///
    /// Errors: [`ModelError::InvalidOption`] for `num_freqs == 0`.
    pub fn sample<K: RffKernel>(
        kernel: &K,
        num_freqs: usize,
        rng: &mut dyn RngCore,
    ) -> Result<Self> {
        if num_freqs == 0 {
            return Err(ModelError::InvalidOption {
                name: "num_freqs",
                reason: "need at least one random Fourier frequency, got 0".into(),
            });
        }
        let d = kernel.ard_params().dim();
        let chi = match kernel.student_t_dof() {
            None => None,
            Some(dof) => Some((
                ChiSquared::new(dof).map_err(|e| ModelError::InvalidOption {
                    name: "Student-t degrees of freedom",
                    reason: format!("cannot build χ²_{dof}: {e}"),
                })?,
                dof,
            )),
        };
        let mut g = Mat::<f64>::zeros(num_freqs, d);
        let mut scales = Vec::with_capacity(if chi.is_some() { num_freqs } else { 0 });
        for f in 0..num_freqs {
            if let Some((chi, dof)) = &chi {
                let u: f64 = chi.sample(rng);
                scales.push((dof / u).sqrt());
            }
            for k in 0..d {
                g[(f, k)] = StandardNormal.sample(rng);
            }
        }
        match chi {
            None => Self::gaussian(g),
            Some(_) => Self::student_t(g, scales),
        }
    }

    /// Number of frequencies (rows of `G`).
    pub fn num_freqs(&self) -> usize {
        self.g.nrows()
    }

    /// Input dimension (columns of `G`).
    pub fn input_dim(&self) -> usize {
        self.g.ncols()
    }

    /// The standard normal draws `G` (`num_freqs × d`).
    pub fn g(&self) -> MatRef<'_, f64> {
        self.g.as_ref()
    }

    /// The Student-t scales `t_f`, if any.
    pub fn scales(&self) -> Option<&[f64]> {
        self.scales.as_deref()
    }

    /// The frequencies `ω_f = t_f · g_f ⊘ ℓ` of the first `num_freqs` rows
    /// (`num_freqs × d`). Contract: `num_freqs ≤ self.num_freqs()` and `lengthscales` has
    /// [`input_dim`](Self::input_dim) entries (the objective checks both).
    pub(crate) fn frequencies(&self, num_freqs: usize, lengthscales: &[f64]) -> Mat<f64> {
        Mat::from_fn(num_freqs, self.input_dim(), |f, k| {
            let t = self.scales.as_ref().map_or(1.0, |s| s[f]);
            t * self.g[(f, k)] / lengthscales[k]
        })
    }

    /// Checks that these draws fit `kernel`: one column per input dimension, Student-t
    /// scales exactly when the kernel's spectral density is Student-t, and at least
    /// `num_freqs ≥ 1` rows.
    pub(crate) fn check_for<K: RffKernel>(&self, kernel: &K, num_freqs: usize) -> Result<()> {
        let d = kernel.ard_params().dim();
        if self.input_dim() != d {
            return Err(ModelError::LengthMismatch {
                context: "columns of the random Fourier draws G (one per input dimension)",
                expected: d,
                found: self.input_dim(),
            });
        }
        match (kernel.student_t_dof(), &self.scales) {
            (None, Some(_)) => {
                return Err(ModelError::InvalidOption {
                    name: "SpectralDraws",
                    reason: "the draws carry Student-t scales but the kernel's spectral density \
                             is Gaussian (squared exponential); use SpectralDraws::gaussian"
                        .into(),
                })
            }
            (Some(_), None) => {
                return Err(ModelError::InvalidOption {
                    name: "SpectralDraws",
                    reason: "a Matérn kernel needs Student-t draws (one scale per frequency); \
                             use SpectralDraws::student_t or SpectralDraws::sample"
                        .into(),
                })
            }
            _ => {}
        }
        if num_freqs == 0 {
            return Err(ModelError::InvalidOption {
                name: "num_freqs",
                reason: "need at least one random Fourier frequency, got 0".into(),
            });
        }
        if num_freqs > self.num_freqs() {
            return Err(ModelError::InvalidOption {
                name: "num_freqs",
                reason: format!(
                    "asked for the first {num_freqs} frequencies but the draws have only {} rows",
                    self.num_freqs()
                ),
            });
        }
        Ok(())
    }
}

/// `G` has at least one row and one column, all finite.
fn check_g(g: MatRef<'_, f64>) -> Result<()> {
    if g.nrows() == 0 || g.ncols() == 0 {
        return Err(ModelError::InvalidOption {
            name: "SpectralDraws G",
            reason: format!(
                "need at least one frequency (row) of dimension at least one (column), got a \
                 {}×{} matrix",
                g.nrows(),
                g.ncols()
            ),
        });
    }
    check_finite_mat(g, "the random Fourier draws G").map_err(ModelError::from_finite_check)
}
