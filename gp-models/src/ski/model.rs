//! The [`Ski`] model: data, grid, interpolation weights, grid kernel and hyperparameters.

use std::sync::{Arc, OnceLock};

use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::LowRankPlusDiagonal;
use gp_structured::{InterpolationOptions, InterpolationWeights, RegularGrid};

use crate::core::likelihood::{
    log_params_with_noise, param_names_with_noise, split_log_params_with_noise,
};
use crate::core::SolveReport;
use crate::error::{ModelError, Result};
use crate::grid::kernel::GridKernel;
use crate::grid::love::LoveMemo;
use crate::grid::memory::SkiMemory;
use crate::ski::columns::SkiKernelColumns;
use crate::ski::operator::SkiOperator;
use crate::ski::options::SkiOptions;
use crate::validate::{check_grid_dims, check_kernel_params, check_noise, check_training_data};

/// What predictions reuse: `α = K̂⁻¹y` and the grid cache `a = K_G Wᵀ α`.
#[derive(Debug, Clone)]
pub(crate) struct MeanCache {
    pub alpha: Col<f64>,
    pub grid_mean: Col<f64>,
    pub report: SolveReport,
}

/// Structured kernel interpolation (SKI / KISS-GP, Wilson & Nickisch 2015) for GP
/// regression: the kernel matrix is approximated by `W K_G Wᵀ`, with `K_G` the kernel on a
/// regular grid (a Kronecker product of Toeplitz factors, applied by FFTs) and `W` sparse
/// cubic interpolation weights (`4^d` per point), so that one product with
/// `K̂ = W K_G Wᵀ + σ²I` costs `O(4^d n + m log m)` and memory is `O(n + m)`.
///
/// Everything is by iterative solves with `K̂` (see the [module documentation](crate::ski)):
/// posterior mean from one CG solve and the grid cache `K_G Wᵀ α` (then `O(4^d)` per test
/// point), variances and covariances by CG solves or by a rank-`k` Lanczos (LOVE) cache,
/// the log marginal likelihood by stochastic Lanczos quadrature and its gradient by
/// Hutchinson traces with `∂K̂/∂θ = W (∂K_G/∂θ) Wᵀ`. Zero prior mean.
///
/// Hyperparameters (order of [`param_names`](Self::param_names)): the kernel's
/// `[log ℓ_0, …, log ℓ_{d−1}, log σ_f²]`, then `log σ²`.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::grid::GridSettings;
/// use gp_models::{ExactGp, Ski, SkiOptions};
///
/// let x = Mat::from_fn(100, 1, |i, _| i as f64 / 20.0);
/// let y = Col::from_fn(100, |i| (i as f64 / 20.0).sin());
/// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
/// let opts = SkiOptions {
///     grid: GridSettings { sizes: vec![60], ..GridSettings::default() },
///     ..SkiOptions::default()
/// };
/// let ski = Ski::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.01, &opts)?;
/// assert_eq!(ski.grid().num_points(), 60);
///
/// let x_test = Mat::from_fn(3, 1, |i, _| 1.0 + i as f64);
/// let mean = ski.predict_mean(x_test.as_ref())?;
/// let exact = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.01)?.predict_mean(x_test.as_ref())?;
/// assert!((&mean - &exact).norm_max() < 1e-3);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Clone)]
pub struct Ski<K> {
    pub(crate) kernel: K,
    pub(crate) noise_variance: f64,
    pub(crate) options: SkiOptions,
    pub(crate) x: Mat<f64>,
    pub(crate) y: Col<f64>,
    pub(crate) grid: RegularGrid,
    pub(crate) w: Arc<InterpolationWeights>,
    pub(crate) grid_kernel: GridKernel,
    pub(crate) cache: OnceLock<std::result::Result<MeanCache, ModelError>>,
    /// The preconditioner of [`preconditioner`](Self::preconditioner), built on first use.
    pub(crate) precond: OnceLock<std::result::Result<Option<LowRankPlusDiagonal>, ModelError>>,
    /// The LOVE cache the last LOVE prediction built.
    pub(crate) love_memo: LoveMemo,
}

impl<K: std::fmt::Debug> std::fmt::Debug for Ski<K> {
    /// A summary: kernel, noise, grid sizes, data shape.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ski")
            .field("kernel", &self.kernel)
            .field("noise_variance", &self.noise_variance)
            .field("grid_sizes", &self.grid.sizes())
            .field("n", &self.y.nrows())
            .field("d", &self.x.ncols())
            .finish_non_exhaustive()
    }
}

/// The grid of `options` for the points `x`, after the memory check.
pub(crate) fn build_grid(x: MatRef<'_, f64>, options: &SkiOptions) -> Result<RegularGrid> {
    let (n, d) = (x.nrows(), x.ncols());
    let sizes = options.resolved_grid_sizes(n, d)?;
    SkiMemory::estimate(&sizes, options.estimator.probes, options.grid.memory_limit).check()?;
    options
        .grid
        .grid_with_sizes(x, &sizes, crate::core::settings::OptionOwner::Ski)
}

impl<K: Kernel + Clone> Ski<K> {
    /// Builds the grid (sizes, padding or bounds of `options`), the interpolation weights of
    /// the training points and the grid kernel. No solve happens here.
    ///
    /// `x` is `n × d`, `y` has length `n`, `noise_variance` is `σ² > 0`.
    ///
    /// Errors: [`ModelError::EmptyData`], [`ModelError::LengthMismatch`],
    /// [`ModelError::KernelDim`], [`ModelError::NonFinite`], [`ModelError::InvalidNoise`],
    /// [`ModelError::Kernel`]; [`ModelError::InvalidOption`] for invalid options;
    /// [`ModelError::GridTooLarge`] when the grid's memory estimate exceeds the limit
    /// (see [`SkiMemory`]); [`ModelError::Structured`] for a grid that
    /// cannot be built (too few points per axis for the padding or the scheme);
    /// [`ModelError::OutsideGrid`] for a training point outside explicit bounds;
    /// [`ModelError::UnsupportedKernel`] for a kernel that is not separable into stationary
    /// 1-D factors.
    pub fn fit(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        options: &SkiOptions,
    ) -> Result<Self> {
        check_training_data(&kernel, x, y, noise_variance)?;
        options.validate()?;
        let grid = build_grid(x, options)?;
        Self::assemble(kernel, x, y, noise_variance, options, grid)
    }

    /// [`fit`](Self::fit) on a given grid instead of the one `options` would derive from
    /// `x`: a reloaded model must keep the grid it was saved with, and the default grid
    /// depends on the data range (to the last bit of its spacing). The grid must have one
    /// axis per input dimension and pass the memory check of `options`.
    pub(crate) fn fit_on_grid(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        options: &SkiOptions,
        grid: RegularGrid,
    ) -> Result<Self> {
        check_training_data(&kernel, x, y, noise_variance)?;
        options.validate()?;
        check_grid_dims(grid.dims(), x.ncols())?;
        SkiMemory::estimate(
            grid.sizes(),
            options.estimator.probes,
            options.grid.memory_limit,
        )
        .check()?;
        Self::assemble(kernel, x, y, noise_variance, options, grid)
    }

    /// The interpolation weights and the grid kernel on a checked grid.
    fn assemble(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        options: &SkiOptions,
        grid: RegularGrid,
    ) -> Result<Self> {
        let interp = InterpolationOptions {
            scheme: options.grid.scheme,
            out_of_grid: options.grid.out_of_grid,
        };
        let w = InterpolationWeights::new(&grid, x, interp)
            .map_err(|e| ModelError::from_structured(e, "the training points"))?;
        let grid_kernel = GridKernel::new(&kernel, &grid)?;
        Ok(Self {
            kernel,
            noise_variance,
            options: options.clone(),
            x: x.to_owned(),
            y: y.to_owned(),
            grid,
            w: Arc::new(w),
            grid_kernel,
            cache: OnceLock::new(),
            precond: OnceLock::new(),
            love_memo: LoveMemo::default(),
        })
    }

    /// The same data, grid and interpolation weights with new log hyperparameters (layout as
    /// [`log_params`](Self::log_params)); only the grid kernel is rebuilt.
    ///
    /// Errors: [`ModelError::LengthMismatch`], [`ModelError::InvalidNoise`],
    /// [`ModelError::Kernel`], [`ModelError::UnsupportedKernel`].
    pub fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        let (noise_variance, kernel_params) =
            split_log_params_with_noise(&self.kernel, log_params)?;
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(kernel_params)?;
        self.with_kernel_and_noise(kernel, noise_variance)
    }

    /// The same data, grid and interpolation weights with another kernel and noise variance.
    ///
    /// Errors: [`ModelError::InvalidNoise`], [`ModelError::KernelDim`],
    /// [`ModelError::Kernel`], [`ModelError::UnsupportedKernel`].
    pub fn with_kernel_and_noise(&self, kernel: K, noise_variance: f64) -> Result<Self> {
        check_noise(noise_variance)?;
        if kernel.input_dim() != self.x.ncols() {
            return Err(ModelError::KernelDim {
                kernel_dim: kernel.input_dim(),
                data_dim: self.x.ncols(),
            });
        }
        check_kernel_params(&kernel)?;
        let grid_kernel = GridKernel::new(&kernel, &self.grid)?;
        Ok(Self {
            kernel,
            noise_variance,
            options: self.options.clone(),
            x: self.x.clone(),
            y: self.y.clone(),
            grid: self.grid.clone(),
            w: Arc::clone(&self.w),
            grid_kernel,
            cache: OnceLock::new(),
            precond: OnceLock::new(),
            love_memo: LoveMemo::default(),
        })
    }
}

impl<K: Kernel> Ski<K> {
    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// The options.
    pub fn options(&self) -> &SkiOptions {
        &self.options
    }

    /// The regular grid (`m = Π m_l` points, last dimension fastest).
    pub fn grid(&self) -> &RegularGrid {
        &self.grid
    }

    /// The interpolation weights `W` (`n × m`) of the training points.
    pub fn interpolation(&self) -> &InterpolationWeights {
        &self.w
    }

    /// The grid kernel `K_G` (Toeplitz factors, entries, derivatives).
    pub fn grid_kernel(&self) -> &GridKernel {
        &self.grid_kernel
    }

    /// The SKI operator `K̂ = W K_G Wᵀ + σ²I` (`n × n`, matrix free).
    pub fn operator(&self) -> SkiOperator<'_> {
        SkiOperator::from_parts(&self.w, self.grid_kernel.operator(), self.noise_variance)
    }

    /// The pivoted-Cholesky preconditioner `L Lᵀ + σ²I` of `K̂` of rank
    /// [`SkiOptions::preconditioner_rank`] (at most `n`), built on first use and shared by
    /// the likelihood and the prediction solves; `None` when the rank is 0 or there are no
    /// training points.
    ///
    /// Errors: a pivoted-Cholesky factorization that fails
    /// ([`ModelError::Solver`]); the same error on every call.
    pub fn preconditioner(&self) -> Result<Option<&LowRankPlusDiagonal>> {
        let built = self.precond.get_or_init(|| {
            let rank = self.options.preconditioner_rank.min(self.n_train());
            if rank == 0 {
                return Ok(None);
            }
            SkiKernelColumns::new(&self.w, &self.grid_kernel)?
                .preconditioner(rank, self.noise_variance)
                .map(Some)
        });
        match built {
            Ok(p) => Ok(p.as_ref()),
            Err(e) => Err(e.clone()),
        }
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

    /// The training targets.
    pub fn train_y(&self) -> ColRef<'_, f64> {
        self.y.as_ref()
    }

    /// Number of hyperparameters: the kernel's plus one for the noise.
    pub fn n_params(&self) -> usize {
        self.kernel.n_params() + 1
    }

    /// Names of the hyperparameters: the kernel's, then `"log_noise_variance"`.
    pub fn param_names(&self) -> Vec<String> {
        param_names_with_noise(&self.kernel)
    }

    /// All hyperparameters as logarithms: the kernel's, then `log σ²`.
    pub fn log_params(&self) -> Vec<f64> {
        log_params_with_noise(&self.kernel, self.noise_variance)
    }

    /// The interpolation options of the model (scheme and out-of-grid policy).
    pub(crate) fn interpolation_options(&self) -> InterpolationOptions {
        InterpolationOptions {
            scheme: self.options.grid.scheme,
            out_of_grid: self.options.grid.out_of_grid,
        }
    }

    /// Interpolation weights of test points on the model's grid.
    pub(crate) fn test_weights(&self, x_test: MatRef<'_, f64>) -> Result<InterpolationWeights> {
        crate::validate::check_test_points(x_test, self.input_dim())?;
        InterpolationWeights::new(&self.grid, x_test, self.interpolation_options())
            .map_err(|e| ModelError::from_structured(e, "the test points"))
    }
}
