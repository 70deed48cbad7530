//! The [`SparseGp`] model: fitting, hyperparameters, evidence.

use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::validate::check_finite_col;

use crate::core::likelihood::{
    check_noise, log_params_with_noise, param_names_with_noise, split_log_params_with_noise,
};
use crate::error::{ModelError, Result};
use crate::inducing::fit::{factorize, SparseEvidence, SparseFactors};
use crate::inducing::options::{SparseMethod, SparseOptions};
use crate::inducing::selection::InducingPoints;
use crate::validate::{check_kernel_params, check_training_inputs};

/// A sparse Gaussian-process regression model on `m` inducing inputs `U` (SoR, DTC, VFE or
/// FITC, [`SparseMethod`]), fitted in `O(N m²)` by the numerically stable factorization of
/// the reference code, with zero prior mean and Gaussian noise.
///
/// Hyperparameters are the kernel's log hyperparameters, then `log σ²`, as for
/// [`ExactGp`](crate::ExactGp); the inducing inputs are fixed (not trained).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::{InducingPoints, SparseGp, SparseMethod};
///
/// let x = Mat::from_fn(60, 1, |i, _| i as f64 / 6.0);
/// let y = Col::from_fn(60, |i| (i as f64 / 6.0).sin());
/// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
/// let u = InducingPoints::grid(x.as_ref(), &[15])?;
/// let gp = SparseGp::fit(kernel, x.as_ref(), y.as_ref(), 1e-2, &u, SparseMethod::Vfe)?;
/// let mean = gp.predict_mean(Mat::from_fn(1, 1, |_, _| 2.0).as_ref())?;
/// assert!((mean[0] - 2f64.sin()).abs() < 0.05);
/// let ev = gp.evidence();
/// assert_eq!(ev.objective, ev.nlz + ev.trace_penalty); // −ELBO
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Clone)]
pub struct SparseGp<K> {
    pub(crate) kernel: K,
    pub(crate) noise_variance: f64,
    pub(crate) options: SparseOptions,
    pub(crate) x: Mat<f64>,
    pub(crate) y: Col<f64>,
    pub(crate) inducing: InducingPoints,
    pub(crate) factors: SparseFactors,
}

impl<K: std::fmt::Debug> std::fmt::Debug for SparseGp<K> {
    /// A summary: kernel, noise, options, shapes, jitters and evidence (not the factors).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseGp")
            .field("kernel", &self.kernel)
            .field("noise_variance", &self.noise_variance)
            .field("options", &self.options)
            .field("n", &self.y.nrows())
            .field("m", &self.inducing.len())
            .field("d", &self.x.ncols())
            .field("jitter", &self.factors.luu.jitter())
            .field("evidence", &self.factors.evidence)
            .finish_non_exhaustive()
    }
}

impl<K: Kernel + Clone> SparseGp<K> {
    /// Fits `method` with no jitter (the reference code's setting:
    /// [`SparseOptions::new`]).
    ///
    /// `x` is `N × d`, `y` has length `N`, `noise_variance` is `σ² > 0`, `inducing` holds
    /// `m` points of dimension `d`.
    pub fn fit(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        inducing: &InducingPoints,
        method: SparseMethod,
    ) -> Result<Self> {
        Self::fit_with_options(
            kernel,
            x,
            y,
            noise_variance,
            inducing,
            &SparseOptions::new(method),
        )
    }

    /// Fits with options: factors `K_UU` and `σ²K_UU + ΦᵀΦ` and evaluates the evidence.
    ///
    /// Errors: [`ModelError::EmptyData`], [`ModelError::LengthMismatch`] (targets, or
    /// inducing points of another dimension), [`ModelError::KernelDim`],
    /// [`ModelError::NonFinite`], [`ModelError::InvalidNoise`], [`ModelError::Kernel`] for
    /// non-finite kernel hyperparameters, [`ModelError::InducingCholesky`] naming the
    /// factor that failed (with the default zero jitter: the paper's "crash"), and
    /// [`ModelError::Linalg`] for an invalid jitter ladder.
    pub fn fit_with_options(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        inducing: &InducingPoints,
        options: &SparseOptions,
    ) -> Result<Self> {
        check_sparse_data(&kernel, x, y, noise_variance, inducing)?;
        Self::fit_checked(
            kernel,
            x.to_owned(),
            y.to_owned(),
            noise_variance,
            inducing.clone(),
            options,
        )
    }

    /// Fits validated data.
    fn fit_checked(
        kernel: K,
        x: Mat<f64>,
        y: Col<f64>,
        noise_variance: f64,
        inducing: InducingPoints,
        options: &SparseOptions,
    ) -> Result<Self> {
        let factors = factorize(
            &kernel,
            x.as_ref(),
            y.as_ref(),
            inducing.points(),
            noise_variance,
            options.method,
            &options.jitter,
        )?;
        Ok(Self {
            kernel,
            noise_variance,
            options: *options,
            x,
            y,
            inducing,
            factors,
        })
    }

    /// Refits the same data, inducing points and options with new log hyperparameters
    /// (layout as [`log_params`](Self::log_params)).
    pub fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        let (noise_variance, kernel_params) =
            split_log_params_with_noise(&self.kernel, log_params)?;
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(kernel_params)?;
        check_kernel_params(&kernel)?;
        Self::fit_checked(
            kernel,
            self.x.clone(),
            self.y.clone(),
            noise_variance,
            self.inducing.clone(),
            &self.options,
        )
    }

    /// The same data and hyperparameters with other inducing points (e.g. the next
    /// prefix of a [`NestedSubsets`](crate::NestedSubsets)) or another method.
    pub fn refit(&self, inducing: &InducingPoints, options: &SparseOptions) -> Result<Self> {
        Self::fit_with_options(
            self.kernel.clone(),
            self.x.as_ref(),
            self.y.as_ref(),
            self.noise_variance,
            inducing,
            options,
        )
    }
}

impl<K: Kernel> SparseGp<K> {
    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// The options the model was fitted with.
    pub fn options(&self) -> &SparseOptions {
        &self.options
    }

    /// The approximation.
    pub fn method(&self) -> SparseMethod {
        self.options.method
    }

    /// The inducing points.
    pub fn inducing(&self) -> &InducingPoints {
        &self.inducing
    }

    /// Number of training points `N`.
    pub fn n_train(&self) -> usize {
        self.y.nrows()
    }

    /// Input dimension `d`.
    pub fn input_dim(&self) -> usize {
        self.x.ncols()
    }

    /// The training points (`N × d`).
    pub fn train_x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training targets.
    pub fn train_y(&self) -> ColRef<'_, f64> {
        self.y.as_ref()
    }

    /// The diagonal jitter the factor of `K_UU` needed (0 when none; always 0 with the
    /// default [`SparseOptions`]). The model uses `K_UU + jitter · I` throughout.
    pub fn jitter(&self) -> f64 {
        self.factors.luu.jitter()
    }

    /// The diagonal jitter the factor of the system `σ²K_UU + ΦᵀΦ` needed (0 when none).
    pub fn system_jitter(&self) -> f64 {
        self.factors.system.jitter()
    }

    /// FITC's `λᵢ = (kᵢᵢ − Qᵢᵢ)/σ² + 1` (all ones for the other methods): the training
    /// noise of point `i` is `σ² λᵢ`.
    pub fn lambda(&self) -> ColRef<'_, f64> {
        self.factors.lambda.as_ref()
    }

    /// The negative log evidence: the method's objective, `nlZ` of `Q + Λ`, and VFE's
    /// trace penalty separately.
    pub fn evidence(&self) -> SparseEvidence {
        self.factors.evidence
    }

    /// The log evidence the model is trained by: `−nlZ` (SoR, DTC, FITC) or the ELBO
    /// (VFE).
    pub fn log_evidence(&self) -> f64 {
        -self.factors.evidence.objective
    }

    /// Names of the hyperparameters: the kernel's, then `"log_noise_variance"`.
    pub fn param_names(&self) -> Vec<String> {
        param_names_with_noise(&self.kernel)
    }

    /// All hyperparameters as logarithms: the kernel's, then `log σ²`.
    pub fn log_params(&self) -> Vec<f64> {
        log_params_with_noise(&self.kernel, self.noise_variance)
    }
}

/// Checks the data of a sparse GP: non-empty, matching lengths and dimensions, finite
/// values, a valid noise and kernel.
pub(crate) fn check_sparse_data<K: Kernel + ?Sized>(
    kernel: &K,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
    inducing: &InducingPoints,
) -> Result<()> {
    check_training_inputs(kernel, x, y.nrows(), "fitting a sparse GP")?;
    let d = x.ncols();
    if inducing.dim() != d {
        return Err(ModelError::LengthMismatch {
            context: "columns of the inducing points (the training points' dimension)",
            expected: d,
            found: inducing.dim(),
        });
    }
    if inducing.is_empty() {
        return Err(ModelError::EmptyData {
            context: "fitting a sparse GP: the inducing points",
            n: 0,
            d,
        });
    }
    check_finite_col(y, "the training targets y").map_err(ModelError::from_finite_check)?;
    check_noise(noise_variance)
}
