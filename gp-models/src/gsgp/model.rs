//! The [`Gsgp`] model: sufficient statistics, grid kernel, hyperparameters.

use std::sync::{Arc, OnceLock};

use faer::{Col, ColRef, MatRef};
use gp_kernels::Kernel;
use gp_solvers::factorized::OperatorSystem;
use gp_structured::{InterpolationOptions, InterpolationWeights, RegularGrid, SufficientStats};

use crate::core::likelihood::{
    log_params_with_noise, param_names_with_noise, split_log_params_with_noise,
};
use crate::core::SolveReport;
use crate::error::{ModelError, Result};
use crate::grid::love::LoveMemo;
use crate::grid::GridKernel;
use crate::gsgp::log_det::LogDetFactor;
use crate::gsgp::memory::gsgp_memory;
use crate::gsgp::options::GsgpOptions;
use crate::validate::{check_kernel_params, check_noise, check_training_data};

/// What predictions and the likelihood reuse: `α = K̂⁻¹y = W x̂ + c y` in factorized form and
/// its grid-space images.
#[derive(Debug, Clone)]
pub(crate) struct MeanCache {
    /// `Wᵀα` (length `m`).
    pub wt_alpha: Col<f64>,
    /// The grid cache `K_G Wᵀ α`.
    pub grid_mean: Col<f64>,
    /// `yᵀα = tᵀx̂ + c q`.
    pub data_fit: f64,
    /// `‖α‖² = x̂ᵀ(Wᵀα) + c yᵀα`.
    pub alpha_sq_norm: f64,
    pub report: SolveReport,
}

/// GSGP (grid-structured GP; Yadav, Sheldon & Musco 2021): the SKI model
/// ([`Ski`](crate::Ski)) computed from the sufficient statistics `S = WᵀW`, `t = Wᵀy`,
/// `q = yᵀy` and `n` only, so that after one pass over the data every solve costs
/// `O(m log m + 7^d m)` per iteration, independent of `n`.
///
/// The model is SKI viewed as Bayesian linear regression on the grid values
/// (`θ ~ N(0, K_G)`, `f(x) = w_xᵀθ`): posterior mean, covariances and log marginal likelihood
/// are identical to SKI's (to solver tolerance), computed by the factorized solvers of
/// `gp_solvers::factorized` (see the [module documentation](crate::gsgp)). Zero prior mean.
///
/// Hyperparameters (order of [`param_names`](Self::param_names)): the kernel's
/// `[log ℓ_0, …, log ℓ_{d−1}, log σ_f²]`, then `log σ²`.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::grid::GridSettings;
/// use gp_models::{Gsgp, GsgpOptions, KrylovSettings, Ski, SkiOptions};
///
/// let x = Mat::from_fn(100, 1, |i, _| i as f64 / 20.0);
/// let y = Col::from_fn(100, |i| (i as f64 / 20.0).sin());
/// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
/// // The same grid and tight prediction solves for both models.
/// let grid = GridSettings { sizes: vec![60], ..GridSettings::default() };
/// let krylov = KrylovSettings { prediction_tolerance: 1e-10, ..KrylovSettings::default() };
/// let gsgp_opts = GsgpOptions { grid: grid.clone(), krylov, ..GsgpOptions::default() };
/// let ski_opts = SkiOptions { grid, krylov, ..SkiOptions::default() };
/// let gsgp = Gsgp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.01, &gsgp_opts)?;
/// let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.01, &ski_opts)?;
///
/// let x_test = Mat::from_fn(3, 1, |i, _| 1.0 + i as f64);
/// let a = gsgp.predict_mean(x_test.as_ref())?;
/// let b = ski.predict_mean(x_test.as_ref())?;
/// assert!((&a - &b).norm_max() < 1e-6);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Clone)]
pub struct Gsgp<K> {
    pub(crate) kernel: K,
    pub(crate) noise_variance: f64,
    pub(crate) options: GsgpOptions,
    pub(crate) stats: Arc<SufficientStats>,
    pub(crate) interp: InterpolationOptions,
    pub(crate) grid_kernel: GridKernel,
    pub(crate) cache: OnceLock<std::result::Result<MeanCache, ModelError>>,
    /// The LOVE cache the last LOVE prediction built.
    pub(crate) love_memo: LoveMemo,
    pub(crate) log_det_factor: OnceLock<std::result::Result<Arc<LogDetFactor>, ModelError>>,
}

impl<K: std::fmt::Debug> std::fmt::Debug for Gsgp<K> {
    /// A summary: kernel, noise, grid sizes, number of points.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gsgp")
            .field("kernel", &self.kernel)
            .field("noise_variance", &self.noise_variance)
            .field("grid_sizes", &self.stats.grid().sizes())
            .field("n", &self.stats.num_points())
            .finish_non_exhaustive()
    }
}

/// The grid kernel, with an unsupported kernel reported for GSGP.
fn grid_kernel<K: Kernel>(kernel: &K, grid: &RegularGrid) -> Result<GridKernel> {
    GridKernel::new(kernel, grid).map_err(|e| match e {
        ModelError::UnsupportedKernel { reason, .. } => ModelError::UnsupportedKernel {
            model: "GSGP",
            reason,
        },
        other => other,
    })
}

impl<K: Kernel + Clone> Gsgp<K> {
    /// Builds the grid of `options` for `x` (the grid [`Ski`](crate::Ski) would build,
    /// [`GsgpOptions::grid_for`]), accumulates the sufficient statistics in one parallel
    /// streaming pass ([`SufficientStats::compute`]) and keeps only them: `x` and `y` are not
    /// stored and `W` is never formed. No solve happens here.
    ///
    /// `x` is `n × d`, `y` has length `n`, `noise_variance` is `σ² > 0`.
    ///
    /// Errors: [`ModelError::EmptyData`], [`ModelError::LengthMismatch`],
    /// [`ModelError::KernelDim`], [`ModelError::NonFinite`], [`ModelError::InvalidNoise`],
    /// [`ModelError::Kernel`], [`ModelError::InvalidOption`];
    /// [`ModelError::GridTooLarge`] when the grid's memory estimate exceeds the limit (see
    /// [`gsgp::memory`](crate::gsgp::memory)); [`ModelError::Structured`] for a grid that
    /// cannot be built; [`ModelError::OutsideGrid`] for a training point outside explicit
    /// bounds; [`ModelError::UnsupportedKernel`] for a kernel that is not separable into
    /// stationary 1-D factors.
    pub fn fit(
        kernel: K,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        options: &GsgpOptions,
    ) -> Result<Self> {
        check_training_data(&kernel, x, y, noise_variance)?;
        options.validate()?;
        let grid = options.grid_for(x)?;
        // Refuse the kernel before the pass over the data.
        let gk = grid_kernel(&kernel, &grid)?;
        let stats = SufficientStats::compute(&grid, x, y, options.interpolation())
            .map_err(|e| ModelError::from_structured(e, "the training points"))?;
        Ok(Self::from_parts(
            kernel,
            Arc::new(stats),
            gk,
            noise_variance,
            options,
        ))
    }

    /// The model from sufficient statistics accumulated elsewhere (for example streamed over
    /// `10⁸` points with [`SufficientStats::from_chunks`] on the grid of
    /// [`GsgpOptions::grid_for`]). The grid and the interpolation scheme are those of
    /// `stats`; the grid fields of `options` are not used, its `scheme` must match and its
    /// `out_of_grid` applies to test points.
    ///
    /// Errors: [`ModelError::EmptyData`] for statistics of no points,
    /// [`ModelError::KernelDim`], [`ModelError::InvalidNoise`], [`ModelError::Kernel`],
    /// [`ModelError::InvalidOption`] (also for a scheme other than the statistics'),
    /// [`ModelError::GridTooLarge`], [`ModelError::UnsupportedKernel`].
    pub fn from_stats(
        kernel: K,
        stats: SufficientStats,
        noise_variance: f64,
        options: &GsgpOptions,
    ) -> Result<Self> {
        let grid = stats.grid();
        if stats.num_points() == 0 {
            return Err(ModelError::EmptyData {
                context: "building a GSGP model from sufficient statistics",
                n: 0,
                d: grid.dims(),
            });
        }
        if kernel.input_dim() != grid.dims() {
            return Err(ModelError::KernelDim {
                kernel_dim: kernel.input_dim(),
                data_dim: grid.dims(),
            });
        }
        check_noise(noise_variance)?;
        check_kernel_params(&kernel)?;
        options.validate()?;
        if stats.options().scheme != options.grid.scheme {
            return Err(ModelError::InvalidOption {
                name: "GsgpOptions::grid.scheme",
                reason: format!(
                    "the statistics were accumulated with {} interpolation, the options ask \
                     for {}",
                    stats.options().scheme.name(),
                    options.grid.scheme.name()
                ),
            });
        }
        gsgp_memory(
            grid.sizes(),
            options.grid.scheme,
            options.estimator.probes,
            options.grid.memory_limit,
        )
        .check()?;
        let gk = grid_kernel(&kernel, grid)?;
        Ok(Self::from_parts(
            kernel,
            Arc::new(stats),
            gk,
            noise_variance,
            options,
        ))
    }

    fn from_parts(
        kernel: K,
        stats: Arc<SufficientStats>,
        grid_kernel: GridKernel,
        noise_variance: f64,
        options: &GsgpOptions,
    ) -> Self {
        // Part of the model's set-up, not of its first solve (a no-op when the statistics
        // are shared with an earlier model).
        stats.gram().prepare();
        let interp = InterpolationOptions {
            scheme: stats.options().scheme,
            out_of_grid: options.grid.out_of_grid,
        };
        Self {
            kernel,
            noise_variance,
            options: options.clone(),
            stats,
            interp,
            grid_kernel,
            cache: OnceLock::new(),
            love_memo: LoveMemo::default(),
            log_det_factor: OnceLock::new(),
        }
    }

    /// The same statistics with new log hyperparameters (layout as
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

    /// The same statistics with another kernel and noise variance.
    ///
    /// Errors: [`ModelError::InvalidNoise`], [`ModelError::KernelDim`],
    /// [`ModelError::Kernel`], [`ModelError::UnsupportedKernel`].
    pub fn with_kernel_and_noise(&self, kernel: K, noise_variance: f64) -> Result<Self> {
        check_noise(noise_variance)?;
        if kernel.input_dim() != self.input_dim() {
            return Err(ModelError::KernelDim {
                kernel_dim: kernel.input_dim(),
                data_dim: self.input_dim(),
            });
        }
        check_kernel_params(&kernel)?;
        let gk = grid_kernel(&kernel, self.grid())?;
        Ok(Self::from_parts(
            kernel,
            Arc::clone(&self.stats),
            gk,
            noise_variance,
            &self.options,
        ))
    }
}

impl<K: Kernel> Gsgp<K> {
    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// The options.
    pub fn options(&self) -> &GsgpOptions {
        &self.options
    }

    /// The regular grid (`m = Π m_l` points, last dimension fastest).
    pub fn grid(&self) -> &RegularGrid {
        self.stats.grid()
    }

    /// The sufficient statistics `S = WᵀW`, `t = Wᵀy`, `q = yᵀy`, `n`.
    pub fn stats(&self) -> &SufficientStats {
        &self.stats
    }

    /// The grid kernel `K_G` (Toeplitz factors, entries, derivatives).
    pub fn grid_kernel(&self) -> &GridKernel {
        &self.grid_kernel
    }

    /// The system `(K_G, S, σ²)` the factorized solvers of
    /// [`gp_solvers::factorized`] run on: every product the model's solves make goes through
    /// it, and none of them involves `n`.
    ///
    /// Errors: none in practice (the shapes agree by construction); a shape error of the
    /// solver crate otherwise.
    pub fn system(&self) -> Result<OperatorSystem<'_>> {
        Ok(OperatorSystem::new(
            self.grid_kernel.operator(),
            self.stats.gram(),
            self.noise_variance,
        )?)
    }

    /// Number of training points `n`.
    pub fn n_train(&self) -> usize {
        self.stats.num_points()
    }

    /// Input dimension `d`.
    pub fn input_dim(&self) -> usize {
        self.grid().dims()
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

    /// Interpolation weights of test points on the model's grid.
    pub(crate) fn test_weights(&self, x_test: MatRef<'_, f64>) -> Result<InterpolationWeights> {
        crate::validate::check_test_points(x_test, self.input_dim())?;
        InterpolationWeights::new(self.grid(), x_test, self.interp)
            .map_err(|e| ModelError::from_structured(e, "the test points"))
    }
}
