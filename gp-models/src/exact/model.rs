//! The [`ExactGp`] model: fitting, hyperparameters, log marginal likelihood.

use faer::{Col, ColRef, MatRef};
use gp_kernels::dense::points_row_major;
use gp_kernels::Kernel;
use gp_linalg::Cholesky;

use crate::core::likelihood::{
    check_noise, log_params_with_noise, param_names_with_noise, split_log_params_with_noise,
};
use crate::error::{ModelError, Result};
use crate::exact::lml::{
    factorize, log_marginal_likelihood, log_marginal_likelihood_grad, Factorization,
    NegLmlObjective, Workspace,
};
use crate::exact::memory::check_dense_memory;
use crate::exact::options::FitOptions;
use crate::validate::check_training_data;

pub use crate::core::likelihood::LOG_NOISE_NAME;

/// An exact Gaussian-process regression model with Gaussian noise, fitted by one dense
/// Cholesky factorization of `K + σ²I`.
///
/// Hyperparameters form one flat vector of logarithms ([`log_params`](Self::log_params)):
/// the kernel's log hyperparameters in the kernel's order, then `log σ²` (the noise
/// variance) last; [`param_names`](Self::param_names) names them.
///
/// The model is generic over the kernel so that it can be saved and loaded when the
/// kernel is `Serialize + DeserializeOwned` (see [`save_json`](Self::save_json)).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::ExactGp;
///
/// let x = Mat::from_fn(20, 1, |i, _| i as f64 / 4.0);
/// let y = Col::from_fn(20, |i| (i as f64 / 4.0).sin());
/// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
/// let gp = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 1e-2)?;
/// let mean = gp.predict_mean(Mat::from_fn(1, 1, |_, _| 2.0).as_ref())?;
/// assert!((mean[0] - 2f64.sin()).abs() < 0.05);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Clone)]
pub struct ExactGp<K> {
    pub(crate) kernel: K,
    pub(crate) noise_variance: f64,
    pub(crate) options: FitOptions,
    /// Training points, row major (`n × d`).
    pub(crate) xs: Vec<f64>,
    pub(crate) d: usize,
    pub(crate) y: Col<f64>,
    /// The constant prior mean (0 unless `options.constant_mean`).
    pub(crate) mean: f64,
    /// `y − mean`.
    pub(crate) yc: Col<f64>,
    pub(crate) factor: Factorization,
}

impl<K: std::fmt::Debug> std::fmt::Debug for ExactGp<K> {
    /// A summary: kernel, noise, options, data shape, prior mean, jitter (not the
    /// `n × n` factor).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExactGp")
            .field("kernel", &self.kernel)
            .field("noise_variance", &self.noise_variance)
            .field("options", &self.options)
            .field("n", &self.y.nrows())
            .field("d", &self.d)
            .field("prior_mean", &self.mean)
            .field("jitter", &self.factor.chol.jitter())
            .finish_non_exhaustive()
    }
}

impl<K: Kernel + Clone> ExactGp<K> {
    /// Fits with the default [`FitOptions`] (zero prior mean, default jitter ladder).
    ///
    /// `x` is `n × d` (one point per row), `y` has length `n`, `noise_variance` is `σ² > 0`.
    pub fn fit(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
    ) -> Result<Self> {
        Self::fit_with_options(kernel, x, y, noise_variance, &FitOptions::default())
    }

    /// Fits: factors `K(X, X) + σ²I` once and caches `α = (K + σ²I)⁻¹ (y − m)`.
    ///
    /// Errors: [`ModelError::EmptyData`], [`ModelError::LengthMismatch`],
    /// [`ModelError::KernelDim`], [`ModelError::NonFinite`], [`ModelError::InvalidNoise`],
    /// [`ModelError::Kernel`] for non-finite kernel hyperparameters, and
    /// [`ModelError::Linalg`] when the matrix stays indefinite after the jitter ladder.
    pub fn fit_with_options(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        options: &FitOptions,
    ) -> Result<Self> {
        check_training_data(&kernel, x, y, noise_variance)?;
        let xs = points_row_major(&kernel, x, "the training points X")?;
        Self::fit_row_major(kernel, xs, x.ncols(), y.to_owned(), noise_variance, options)
    }

    /// Fits from validated row-major points.
    pub(crate) fn fit_row_major(
        kernel: K,
        xs: Vec<f64>,
        d: usize,
        y: Col<f64>,
        noise_variance: f64,
        options: &FitOptions,
    ) -> Result<Self> {
        let n = y.nrows();
        check_dense_memory(
            n,
            2,
            "the Gram matrix and its Cholesky factor",
            options.memory_limit,
        )?;
        let mean = if options.constant_mean {
            (0..n).map(|i| y[i]).sum::<f64>() / n as f64
        } else {
            0.0
        };
        let yc = Col::from_fn(n, |i| y[i] - mean);
        let factor = factorize(
            &mut Workspace::new(),
            &kernel,
            &xs,
            d,
            yc.as_ref(),
            noise_variance,
            &options.jitter,
        )?;
        Ok(Self {
            kernel,
            noise_variance,
            options: *options,
            xs,
            d,
            y,
            mean,
            yc,
            factor,
        })
    }

    /// Refits the same data with new log hyperparameters (layout as
    /// [`log_params`](Self::log_params)).
    pub fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        let (noise_variance, kernel_params) =
            split_log_params_with_noise(&self.kernel, log_params)?;
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(kernel_params)?;
        self.with_kernel_and_noise(kernel, noise_variance)
    }

    /// Refits the same data (and options) with another kernel and noise variance.
    pub fn with_kernel_and_noise(&self, kernel: K, noise_variance: f64) -> Result<Self> {
        check_noise(noise_variance)?;
        if kernel.input_dim() != self.d {
            return Err(ModelError::KernelDim {
                kernel_dim: kernel.input_dim(),
                data_dim: self.d,
            });
        }
        crate::validate::check_kernel_params(&kernel)?;
        Self::fit_row_major(
            kernel,
            self.xs.clone(),
            self.d,
            self.y.clone(),
            noise_variance,
            &self.options,
        )
    }

    /// The negative-LML objective over all log hyperparameters, for the optimizers.
    pub(crate) fn neg_lml_objective(&self) -> NegLmlObjective<K> {
        NegLmlObjective {
            kernel: self.kernel.clone(),
            xs: self.xs.clone(),
            d: self.d,
            yc: self.yc.clone(),
            ladder: self.options.jitter,
            memory_limit: self.options.memory_limit,
            workspace: Workspace::new(),
        }
    }
}

impl<K: Kernel> ExactGp<K> {
    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// The options the model was fitted with.
    pub fn options(&self) -> &FitOptions {
        &self.options
    }

    /// The constant prior mean (0 unless [`FitOptions::constant_mean`]).
    pub fn prior_mean(&self) -> f64 {
        self.mean
    }

    /// Number of training points `n`.
    pub fn n_train(&self) -> usize {
        self.y.nrows()
    }

    /// Input dimension `d`.
    pub fn input_dim(&self) -> usize {
        self.d
    }

    /// The training points (`n × d`, a row-major view).
    pub fn train_x(&self) -> MatRef<'_, f64> {
        MatRef::from_row_major_slice(&self.xs, self.n_train(), self.d)
    }

    /// The training targets as given.
    pub fn train_y(&self) -> ColRef<'_, f64> {
        self.y.as_ref()
    }

    /// The Cholesky factor of `K + σ²I` (plus [`jitter`](Self::jitter)).
    pub fn cholesky(&self) -> &Cholesky {
        &self.factor.chol
    }

    /// The diagonal jitter the factorization needed (0 when none).
    pub fn jitter(&self) -> f64 {
        self.factor.chol.jitter()
    }

    /// `α = (K + σ²I)⁻¹ (y − m)`.
    pub fn alpha(&self) -> ColRef<'_, f64> {
        self.factor.alpha.as_ref()
    }

    /// Number of hyperparameters: the kernel's plus one for the noise.
    pub fn n_params(&self) -> usize {
        self.kernel.n_params() + 1
    }

    /// Names of the hyperparameters in the order of [`log_params`](Self::log_params): the
    /// kernel's names, then `"log_noise_variance"`.
    pub fn param_names(&self) -> Vec<String> {
        param_names_with_noise(&self.kernel)
    }

    /// All hyperparameters as logarithms: the kernel's, then `log σ²`.
    pub fn log_params(&self) -> Vec<f64> {
        log_params_with_noise(&self.kernel, self.noise_variance)
    }

    /// `log p(y | X, θ) = −½ (y − m)ᵀα − ½ log det(K + σ²I) − (n/2) log 2π`, from the cached
    /// factor (`O(n)`).
    pub fn log_marginal_likelihood(&self) -> f64 {
        log_marginal_likelihood(&self.factor, self.yc.as_ref())
    }

    /// The log marginal likelihood and its gradient with respect to every log
    /// hyperparameter, in the order of [`param_names`](Self::param_names) (the kernel's,
    /// then `log σ²`).
    ///
    /// `∂/∂θ = ½ Σᵢⱼ Wᵢⱼ (∂(K + σ²I)/∂θ)ᵢⱼ` with `W = ααᵀ − (K + σ²I)⁻¹`: one inverse from
    /// the cached factor (`n³` flops), then one fused `O(n² p)` pass that evaluates the
    /// kernel derivatives entrywise without storing any derivative matrix.
    pub fn lml_and_grad(&self) -> (f64, Vec<f64>) {
        let lml = self.log_marginal_likelihood();
        let grad = log_marginal_likelihood_grad(
            &mut Workspace::new(),
            &self.kernel,
            &self.xs,
            self.d,
            &self.factor,
            self.noise_variance,
        );
        (lml, grad)
    }
}
