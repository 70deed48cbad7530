//! The [`IterativeGp`] model: data, hyperparameters and the stochastic log marginal
//! likelihood.

use std::sync::OnceLock;

use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::dense::points_row_major;
use gp_kernels::Kernel;
use gp_linalg::LowRankPlusDiagonal;

use crate::core::likelihood::{
    log_params_with_noise, param_names_with_noise, split_log_params_with_noise,
};
use crate::core::{LmlEstimate, SolveReport};
use crate::error::{ModelError, Result};
use crate::iterative::lml::{estimate, Problem};
use crate::iterative::options::IterativeOptions;
use crate::validate::{check_kernel_params, check_noise, check_training_data};

/// What predictions reuse across calls: the preconditioner and `α = K̂⁻¹(y − m)` solved to
/// the prediction tolerance.
#[derive(Debug, Clone)]
pub(crate) struct PredictionCache {
    pub precond: Option<LowRankPlusDiagonal>,
    pub alpha: Col<f64>,
    pub report: SolveReport,
}

/// The exact Gaussian-process regression model of [`ExactGp`](crate::ExactGp) (same
/// likelihood, same hyperparameters in the same order), with every solve by batched
/// conjugate gradients on the matrix-free operator `K̂ = K(X, X) + σ²I` and the log marginal
/// likelihood and its gradient estimated by stochastic Lanczos quadrature and Hutchinson
/// traces (GPyTorch's default recipe). No `n × n` matrix is ever stored: memory is `O(n t)`
/// for `t` probes, time `O(n² t)` per CG iteration.
///
/// Fitting only validates and stores the data; the solves happen in
/// [`lml_and_grad_estimate`](Self::lml_and_grad_estimate) (a fresh preconditioner, probes
/// from the seed and one batched CG solve per call) and in the predictions
/// (`α` solved once, on first use, and cached).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::{EstimatorSettings, ExactGp, IterativeGp, IterativeOptions};
///
/// let x = Mat::from_fn(60, 1, |i, _| i as f64 / 10.0);
/// let y = Col::from_fn(60, |i| (i as f64 / 10.0).sin());
/// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
/// let opts = IterativeOptions {
///     estimator: EstimatorSettings { probes: 30, ..EstimatorSettings::default() },
///     ..IterativeOptions::default()
/// };
/// let gp = IterativeGp::fit_with_options(kernel.clone(), x.as_ref(), y.as_ref(), 0.01, &opts)?;
/// let est = gp.lml_and_grad_estimate()?;
///
/// let exact = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.01)?;
/// assert!((est.lml - exact.log_marginal_likelihood()).abs() < 4.0 * est.lml_std_error + 1e-3);
/// let x_test = Mat::from_fn(1, 1, |_, _| 2.05);
/// let mean = gp.predict_mean(x_test.as_ref())?;
/// assert!((mean[0] - exact.predict_mean(x_test.as_ref())?[0]).abs() < 1e-5);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Clone)]
pub struct IterativeGp<K> {
    pub(crate) kernel: K,
    pub(crate) noise_variance: f64,
    pub(crate) options: IterativeOptions,
    /// Training points, column major (`n × d`), for the kernel operator.
    pub(crate) x: Mat<f64>,
    /// The same points, row major, for the derivative pass.
    pub(crate) xs: Vec<f64>,
    pub(crate) y: Col<f64>,
    /// The constant prior mean (0 unless `options.constant_mean`).
    pub(crate) mean: f64,
    /// `y − mean`.
    pub(crate) yc: Col<f64>,
    pub(crate) cache: OnceLock<std::result::Result<PredictionCache, ModelError>>,
}

impl<K: std::fmt::Debug> std::fmt::Debug for IterativeGp<K> {
    /// A summary: kernel, noise, options, data shape, prior mean.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IterativeGp")
            .field("kernel", &self.kernel)
            .field("noise_variance", &self.noise_variance)
            .field("options", &self.options)
            .field("n", &self.y.nrows())
            .field("d", &self.x.ncols())
            .field("prior_mean", &self.mean)
            .finish_non_exhaustive()
    }
}

impl<K: Kernel + Clone> IterativeGp<K> {
    /// Fits with the default [`IterativeOptions`].
    ///
    /// `x` is `n × d` (one point per row), `y` has length `n`, `noise_variance` is `σ² > 0`.
    pub fn fit(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
    ) -> Result<Self> {
        Self::fit_with_options(kernel, x, y, noise_variance, &IterativeOptions::default())
    }

    /// Validates and stores the data (`O(n d)`; no solve happens here).
    ///
    /// Errors: [`ModelError::EmptyData`], [`ModelError::LengthMismatch`],
    /// [`ModelError::KernelDim`], [`ModelError::NonFinite`], [`ModelError::InvalidNoise`],
    /// [`ModelError::Kernel`] for non-finite kernel hyperparameters and
    /// [`ModelError::InvalidOption`] for invalid options.
    pub fn fit_with_options(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        options: &IterativeOptions,
    ) -> Result<Self> {
        check_training_data(&kernel, x, y, noise_variance)?;
        options.validate()?;
        let xs = points_row_major(&kernel, x, "the training points X")?;
        let n = y.nrows();
        let mean = if options.constant_mean {
            y.iter().sum::<f64>() / n as f64
        } else {
            0.0
        };
        let yc = Col::from_fn(n, |i| y[i] - mean);
        Ok(Self {
            kernel,
            noise_variance,
            options: *options,
            x: x.to_owned(),
            xs,
            y: y.to_owned(),
            mean,
            yc,
            cache: OnceLock::new(),
        })
    }

    /// The same data and options with new log hyperparameters (layout as
    /// [`log_params`](Self::log_params)).
    ///
    /// Errors: [`ModelError::LengthMismatch`], [`ModelError::InvalidNoise`],
    /// [`ModelError::Kernel`].
    pub fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        let (noise_variance, kernel_params) =
            split_log_params_with_noise(&self.kernel, log_params)?;
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(kernel_params)?;
        self.with_kernel_and_noise(kernel, noise_variance)
    }

    /// The same data and options with another kernel and noise variance.
    ///
    /// Errors: [`ModelError::InvalidNoise`], [`ModelError::KernelDim`],
    /// [`ModelError::Kernel`].
    pub fn with_kernel_and_noise(&self, kernel: K, noise_variance: f64) -> Result<Self> {
        check_noise(noise_variance)?;
        if kernel.input_dim() != self.x.ncols() {
            return Err(ModelError::KernelDim {
                kernel_dim: kernel.input_dim(),
                data_dim: self.x.ncols(),
            });
        }
        check_kernel_params(&kernel)?;
        Ok(Self {
            kernel,
            noise_variance,
            cache: OnceLock::new(),
            ..self.clone_data()
        })
    }

    /// The same model with other options (the prior mean is recomputed if
    /// `constant_mean` changes).
    ///
    /// Errors: [`ModelError::InvalidOption`].
    pub fn with_options(&self, options: &IterativeOptions) -> Result<Self> {
        Self::fit_with_options(
            self.kernel.clone(),
            self.x.as_ref(),
            self.y.as_ref(),
            self.noise_variance,
            options,
        )
    }

    fn clone_data(&self) -> Self {
        Self {
            kernel: self.kernel.clone(),
            noise_variance: self.noise_variance,
            options: self.options,
            x: self.x.clone(),
            xs: self.xs.clone(),
            y: self.y.clone(),
            mean: self.mean,
            yc: self.yc.clone(),
            cache: OnceLock::new(),
        }
    }
}

impl<K: Kernel> IterativeGp<K> {
    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// The options.
    pub fn options(&self) -> &IterativeOptions {
        &self.options
    }

    /// The constant prior mean (0 unless [`IterativeOptions::constant_mean`]).
    pub fn prior_mean(&self) -> f64 {
        self.mean
    }

    /// Number of training points `n`.
    pub fn n_train(&self) -> usize {
        self.y.nrows()
    }

    /// Input dimension `d`.
    pub fn input_dim(&self) -> usize {
        self.x.ncols()
    }

    /// The training points (`n × d`).
    pub fn train_x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training targets as given.
    pub fn train_y(&self) -> ColRef<'_, f64> {
        self.y.as_ref()
    }

    /// Number of hyperparameters: the kernel's plus one for the noise.
    pub fn n_params(&self) -> usize {
        self.kernel.n_params() + 1
    }

    /// Names of the hyperparameters (as [`ExactGp::param_names`](crate::ExactGp::param_names)):
    /// the kernel's, then `"log_noise_variance"`.
    pub fn param_names(&self) -> Vec<String> {
        param_names_with_noise(&self.kernel)
    }

    /// All hyperparameters as logarithms: the kernel's, then `log σ²`.
    pub fn log_params(&self) -> Vec<f64> {
        log_params_with_noise(&self.kernel, self.noise_variance)
    }

    /// The estimate of the log marginal likelihood and its gradient with the probes of
    /// [`IterativeOptions::estimator.seed`](crate::EstimatorSettings::seed) (deterministic: the same model and seed give the same
    /// estimate). See [`lml_and_grad_estimate_with_seed`](Self::lml_and_grad_estimate_with_seed).
    pub fn lml_and_grad_estimate(&self) -> Result<LmlEstimate> {
        self.lml_and_grad_estimate_with_seed(self.options.estimator.seed)
    }

    /// The estimate of the log marginal likelihood and its gradient (order of
    /// [`param_names`](Self::param_names)) with the probes drawn from `seed`:
    ///
    /// 1. the rank-`k` pivoted-Cholesky preconditioner `P = L Lᵀ + σ²I` from `k` kernel
    ///    columns (`O(n k² + n k d)`);
    /// 2. `t` probes `z ~ N(0, P)` (Rademacher without preconditioner);
    /// 3. one batched preconditioned CG solve of `K̂ [α | U] = [y − m | Z]` with the
    ///    matrix-free kernel operator (`O(n² (t + 1))` per iteration);
    /// 4. `log det K̂ ≈ log det P + (1/t) Σᵢ ‖wᵢ‖² e₁ᵀ log(Tᵢ) e₁` from the CG tridiagonals;
    /// 5. one matrix-free pass over the kernel derivatives for `αᵀ(∂K/∂θ)α` and the
    ///    Hutchinson traces `tr(K̂⁻¹ ∂K/∂θ) ≈ (1/t) Σᵢ uᵢᵀ (∂K/∂θ) (P⁻¹zᵢ)`
    ///    (`n²/2` kernel evaluations with gradient); for the noise,
    ///    `∂K̂/∂ log σ² = σ² I`.
    ///
    /// Errors: [`ModelError::CgBreakdown`] if CG breaks down, [`ModelError::Solver`] for a
    /// non-positive Ritz value (the operator is numerically not positive definite),
    /// [`ModelError::InvalidOption`] for invalid options.
    pub fn lml_and_grad_estimate_with_seed(&self, seed: u64) -> Result<LmlEstimate> {
        estimate(&self.problem(), &self.options, seed)
    }

    pub(crate) fn problem(&self) -> Problem<'_, K> {
        Problem {
            kernel: &self.kernel,
            x: self.x.as_ref(),
            xs: &self.xs,
            yc: self.yc.as_ref(),
            noise_variance: self.noise_variance,
        }
    }
}
