//! Observation models: how the data `y` relate to the latent function `f`.
//!
//! Every model's hyperparameter vector is the kernel's log hyperparameters followed by the
//! likelihood's ([`Likelihood::log_params`]); [`split_log_params`] cuts a flat vector at
//! that boundary, so a model never assumes "the last entry is the noise". Today every model
//! is Gaussian ([`Gaussian`]); non-Gaussian likelihoods (Poisson, Bernoulli, softmax) and
//! weight-space models implement the same trait.

use gp_kernels::Kernel;

use crate::error::{ModelError, Result};

/// Name of the Gaussian likelihood's one hyperparameter, the log noise variance.
pub const LOG_NOISE_NAME: &str = "log_noise_variance";

/// An observation model `p(y | f)` with hyperparameters in log space.
pub trait Likelihood: Clone + std::fmt::Debug + Send + Sync {
    /// A short name for summaries (`"Gaussian"`).
    fn name(&self) -> &'static str;

    /// Names of the likelihood's log hyperparameters, in the order of
    /// [`log_params`](Self::log_params).
    fn param_names(&self) -> Vec<String>;

    /// The likelihood's hyperparameters as logarithms.
    fn log_params(&self) -> Vec<f64>;

    /// Number of hyperparameters.
    fn n_params(&self) -> usize {
        self.log_params().len()
    }

    /// The same likelihood with new log hyperparameters (layout as
    /// [`log_params`](Self::log_params)).
    ///
    /// Errors: [`ModelError::LengthMismatch`] for a wrong length, a variant naming the
    /// parameter for an invalid value.
    fn with_log_params(&self, log_params: &[f64]) -> Result<Self>;

    /// Predictive variances of observations from latent variances at the same points.
    fn predictive_variance(&self, latent_variance: f64) -> f64;
}

/// Gaussian observation noise: `y = f(x) + ε`, `ε ~ N(0, σ²)`, one hyperparameter
/// `log σ²` ([`LOG_NOISE_NAME`]).
///
/// ```
/// use gp_models::{Gaussian, Likelihood};
///
/// let lik = Gaussian::new(0.01)?;
/// assert_eq!(lik.param_names(), vec!["log_noise_variance".to_string()]);
/// assert_eq!(lik.predictive_variance(0.5), 0.51);
/// let wider = lik.with_log_params(&[0.0])?;
/// assert_eq!(wider.noise_variance(), 1.0);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gaussian {
    noise_variance: f64,
}

impl Gaussian {
    /// Gaussian noise of variance `σ² > 0`.
    ///
    /// Errors: [`ModelError::InvalidNoise`] unless `noise_variance` is finite and positive.
    pub fn new(noise_variance: f64) -> Result<Self> {
        check_noise(noise_variance)?;
        Ok(Self { noise_variance })
    }

    /// A model's likelihood from a noise variance the model checked when it was built.
    pub(crate) fn validated(noise_variance: f64) -> Self {
        Self { noise_variance }
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }
}

impl Likelihood for Gaussian {
    fn name(&self) -> &'static str {
        "Gaussian"
    }

    fn param_names(&self) -> Vec<String> {
        vec![LOG_NOISE_NAME.to_string()]
    }

    fn log_params(&self) -> Vec<f64> {
        vec![self.noise_variance.ln()]
    }

    fn n_params(&self) -> usize {
        1
    }

    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        match log_params {
            [log_noise] => Self::new(log_noise.exp()),
            _ => Err(ModelError::LengthMismatch {
                context: "the Gaussian likelihood's log hyperparameters (log noise variance)",
                expected: 1,
                found: log_params.len(),
            }),
        }
    }

    fn predictive_variance(&self, latent_variance: f64) -> f64 {
        latent_variance + self.noise_variance
    }
}

/// The noise variance must be finite and strictly positive.
pub(crate) fn check_noise(noise_variance: f64) -> Result<()> {
    if noise_variance > 0.0 && noise_variance.is_finite() {
        Ok(())
    } else {
        Err(ModelError::InvalidNoise {
            value: noise_variance,
        })
    }
}

/// The hyperparameter names of a model: the kernel's, then the likelihood's.
pub fn param_names<K: Kernel + ?Sized, L: Likelihood>(kernel: &K, likelihood: &L) -> Vec<String> {
    let mut names = kernel.param_names();
    names.extend(likelihood.param_names());
    names
}

/// The log hyperparameters of a model: the kernel's, then the likelihood's.
pub fn log_params<K: Kernel + ?Sized, L: Likelihood>(kernel: &K, likelihood: &L) -> Vec<f64> {
    let mut p = kernel.log_params();
    p.extend(likelihood.log_params());
    p
}

/// Splits a flat log-hyperparameter vector (the kernel's, then the likelihood's) into the
/// kernel's part and the likelihood rebuilt from its part, checking the length.
///
/// Errors: [`ModelError::LengthMismatch`] unless the length is the kernel's count plus the
/// likelihood's, and the likelihood's errors for invalid values.
pub fn split_log_params<'p, K: Kernel + ?Sized, L: Likelihood>(
    kernel: &K,
    likelihood: &L,
    params: &'p [f64],
) -> Result<(&'p [f64], L)> {
    let p = kernel.n_params();
    let q = likelihood.n_params();
    if params.len() != p + q {
        return Err(ModelError::LengthMismatch {
            context: "log hyperparameters (the kernel's, then the likelihood's)",
            expected: p + q,
            found: params.len(),
        });
    }
    let likelihood = likelihood.with_log_params(&params[p..])?;
    Ok((&params[..p], likelihood))
}

/// The hyperparameter names of a model with Gaussian noise: the kernel's, then
/// [`LOG_NOISE_NAME`].
pub(crate) fn param_names_with_noise<K: Kernel + ?Sized>(kernel: &K) -> Vec<String> {
    param_names(kernel, &Gaussian::validated(1.0))
}

/// The log hyperparameters of a model with Gaussian noise `σ²` (validated by the model):
/// the kernel's, then `log σ²`.
pub(crate) fn log_params_with_noise<K: Kernel + ?Sized>(
    kernel: &K,
    noise_variance: f64,
) -> Vec<f64> {
    log_params(kernel, &Gaussian::validated(noise_variance))
}

/// [`split_log_params`] for a model with Gaussian noise: the noise variance (checked) and
/// the kernel's part.
pub(crate) fn split_log_params_with_noise<'p, K: Kernel + ?Sized>(
    kernel: &K,
    params: &'p [f64],
) -> Result<(f64, &'p [f64])> {
    let (kernel_params, likelihood) = split_log_params(kernel, &Gaussian::validated(1.0), params)?;
    Ok((likelihood.noise_variance(), kernel_params))
}
