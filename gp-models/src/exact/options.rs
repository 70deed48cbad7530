//! Options of [`ExactGp::fit_with_options`](crate::ExactGp::fit_with_options).

use gp_linalg::JitterLadder;

/// How an [`ExactGp`](crate::ExactGp) is fitted.
///
/// ```
/// use gp_models::FitOptions;
///
/// let opts = FitOptions { constant_mean: true, ..FitOptions::default() };
/// assert!(opts.constant_mean);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FitOptions {
    /// Use a constant prior mean equal to the sample mean of the targets (default `false`:
    /// zero prior mean). The constant is fixed at fit time: it is not a hyperparameter and
    /// does not enter the gradient; the model is fitted to the centred targets `y − ȳ` and
    /// `ȳ` is added back to predicted means.
    pub constant_mean: bool,
    /// The jitter ladder of the Cholesky factorization of `K + σ²I`; the jitter actually
    /// used is reported by [`ExactGp::jitter`](crate::ExactGp::jitter). Default:
    /// [`JitterLadder::default`].
    pub jitter: JitterLadder,
    /// Memory limit in bytes for the dense `n × n` matrices (default `None`: the
    /// `MemAvailable` line of `/proc/meminfo` when readable, else 16 GiB). A fit needs two
    /// such matrices, training three more; above the limit the call fails with
    /// [`ModelError::DenseTooLarge`](crate::ModelError::DenseTooLarge) before allocating.
    /// Not saved with the model: a loaded model uses the limit of the machine it loads on.
    pub memory_limit: Option<u64>,
}
