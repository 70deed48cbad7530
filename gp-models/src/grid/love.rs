//! The LOVE cache of the grid-interpolation models (Pleiss et al. 2018): its options, its
//! start vector and the low-rank covariances it gives, shared by [`Ski::love`](crate::Ski::love)
//! and [`Gsgp::love`](crate::Gsgp::love), which differ only in how they run the Lanczos
//! iteration on `K̂ = W K_G Wᵀ + σ²I` (see [`ski::love`](crate::ski::love) and
//! [`gsgp::love`](crate::gsgp::love)).
//!
//! With the grid caches `R = K_G Wᵀ Q` and `R' = R T⁻¹` (`m × k` each) of a `k`-step run
//! (`K̂⁻¹ ≈ Q T⁻¹ Qᵀ`), the subtracted term of the posterior covariance of test points is
//! `(W* R)(W* R')ᵀ`: `O(4^d k)` per test point. The prior term `W* K_G W*ᵀ` comes from the
//! stencils (`O(16^d)` per pair, `O(16 d)` per variance).

use std::sync::{Arc, Mutex};

use faer::{Col, Mat, MatRef};
use gp_linalg::LinearOperator;
use gp_solvers::LanczosStatus;
use gp_structured::{InterpolationOptions, InterpolationWeights, RegularGrid};

use crate::core::{LatentPrediction, PredictRequest, SolveReport, VarianceSource};
use crate::error::{ModelError, Result};
use crate::grid::kernel::GridKernel;

/// The start vector of the LOVE Lanczos run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoveStart {
    /// `W K_G 1/m`, the average column of `W K_G` (the GSGP reference code; default).
    #[default]
    AverageColumn,
    /// The training targets `y` (the LOVE paper's mean-cache Krylov space).
    Targets,
}

/// Options of [`Ski::love`](crate::Ski::love) and [`Gsgp::love`](crate::Gsgp::love).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoveOptions {
    /// Lanczos rank `k` (clamped to `n`; default 50).
    pub rank: usize,
    /// The start vector (default [`LoveStart::AverageColumn`]).
    pub start: LoveStart,
    /// Breakdown tolerance of the Lanczos run (default `1e-12`, as
    /// [`LanczosOptions`](gp_solvers::LanczosOptions)).
    pub breakdown_tolerance: f64,
}

impl Default for LoveOptions {
    fn default() -> Self {
        Self {
            rank: 50,
            start: LoveStart::AverageColumn,
            breakdown_tolerance: 1e-12,
        }
    }
}

/// The LOVE cache of a [`Ski`](crate::Ski) or [`Gsgp`](crate::Gsgp) model: `R = K_G Wᵀ Q`, `R' = R T⁻¹` and what is needed to
/// interpolate test points and form their prior covariance.
#[derive(Debug, Clone)]
pub struct LoveCache {
    r: Mat<f64>,
    r_prime: Mat<f64>,
    grid: RegularGrid,
    interp: InterpolationOptions,
    grid_kernel: GridKernel,
    status: LanczosStatus,
}

impl LoveCache {
    /// A cache from its parts (`R`, `R'` and the Lanczos status) of either model's run.
    pub(crate) fn from_parts(
        r: Mat<f64>,
        r_prime: Mat<f64>,
        grid: RegularGrid,
        interp: InterpolationOptions,
        grid_kernel: GridKernel,
        status: LanczosStatus,
    ) -> Self {
        Self {
            r,
            r_prime,
            grid,
            interp,
            grid_kernel,
            status,
        }
    }

    /// The rank `k` reached (smaller than requested after a Lanczos breakdown).
    pub fn rank(&self) -> usize {
        self.r.ncols()
    }

    /// Why the Lanczos run stopped.
    pub fn status(&self) -> LanczosStatus {
        self.status
    }

    /// `R = K_G Wᵀ Q` (`m × k`).
    pub fn r(&self) -> MatRef<'_, f64> {
        self.r.as_ref()
    }

    /// `R' = R T⁻¹` (`m × k`).
    pub fn r_prime(&self) -> MatRef<'_, f64> {
        self.r_prime.as_ref()
    }

    fn weights(&self, x_test: MatRef<'_, f64>) -> Result<InterpolationWeights> {
        crate::validate::check_test_points(x_test, self.grid.dims())?;
        InterpolationWeights::new(&self.grid, x_test, self.interp)
            .map_err(|e| ModelError::from_structured(e, "the test points"))
    }

    /// The low-rank posterior covariance of the latent function at the rows of `x_test`
    /// (`b × b`, symmetrized): `W* K_G W*ᵀ − (W* R)(W* R')ᵀ`.
    ///
    /// Errors: [`ModelError::TestDim`], [`ModelError::NonFinite`],
    /// [`ModelError::OutsideGrid`].
    pub fn latent_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let ws = self.weights(x_test)?;
        let mut cov = self.grid_kernel.interpolated_cross(&ws, &ws)?;
        let a = ws.apply_block(self.r.as_ref())?;
        let b = ws.apply_block(self.r_prime.as_ref())?;
        let sub = &a * b.transpose();
        for i in 0..cov.nrows() {
            for j in 0..cov.ncols() {
                cov[(i, j)] -= 0.5 * (sub[(i, j)] + sub[(j, i)]);
            }
        }
        Ok(cov)
    }

    /// The low-rank posterior variances of the latent function at the rows of `x_test`,
    /// clamped at 0: `O(d·16 + 4^d k)` per point.
    ///
    /// Errors as [`latent_covariance`](Self::latent_covariance).
    pub fn latent_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        let ws = self.weights(x_test)?;
        let prior = self.grid_kernel.interpolated_diagonal(&ws)?;
        let a = ws.apply_block(self.r.as_ref())?;
        let b = ws.apply_block(self.r_prime.as_ref())?;
        Ok(Col::from_fn(prior.nrows(), |i| {
            let sub: f64 = (0..a.ncols()).map(|c| a[(i, c)] * b[(i, c)]).sum();
            (prior[i] - sub).max(0.0)
        }))
    }
}

/// LOVE options of rank `rank` (the other settings as [`LoveOptions::default`]), refusing
/// rank 0.
fn love_options(rank: usize) -> Result<LoveOptions> {
    if rank == 0 {
        return Err(ModelError::InvalidOption {
            name: "VarianceMethod::Love::rank",
            reason: "must be at least 1".into(),
        });
    }
    Ok(LoveOptions {
        rank,
        ..LoveOptions::default()
    })
}

/// The LOVE cache a grid model's predictions last built, kept so that repeated
/// [`predict`](crate::GpModel::predict) calls with the same rank (GPyTorch's fast predictive
/// variances in batches of test points) build it once. A clone of the model shares nothing:
/// it starts empty. Rebuilt models ([`with_log_params`](crate::GpModel::with_log_params)) get
/// a new, empty memo, so a cache never outlives the hyperparameters it was built at.
#[derive(Debug, Default)]
pub(crate) struct LoveMemo(Mutex<Option<(LoveOptions, Arc<LoveCache>)>>);

impl Clone for LoveMemo {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl LoveMemo {
    /// The cache for `options`: the kept one if it was built with the same options, else
    /// `build()`'s, which is then kept. An error is returned and not kept.
    pub(crate) fn get_or_build(
        &self,
        options: &LoveOptions,
        build: impl FnOnce() -> Result<LoveCache>,
    ) -> Result<Arc<LoveCache>> {
        // A poisoned lock only means another thread panicked while holding it; the memo is
        // then just a cache that may be rebuilt.
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((kept, cache)) = slot.as_ref() {
            if kept == options {
                return Ok(Arc::clone(cache));
            }
        }
        let cache = Arc::new(build()?);
        *slot = Some((*options, Arc::clone(&cache)));
        Ok(cache)
    }
}

/// How a grid model (SKI, GSGP) computes what a prediction request asks for beyond the mean.
pub(crate) trait GridVariances {
    /// The rank-`k` LOVE cache of the model.
    fn love_cache(&self, options: &LoveOptions) -> Result<LoveCache>;
    /// Where the model keeps the LOVE cache its predictions build.
    fn love_memo(&self) -> &LoveMemo;
    /// Latent variances of the test points by one solve per point.
    fn solved_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>>;
    /// The latent covariance of the test points by solves.
    fn solved_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>>;
}

/// The latent prediction of a grid model from its mean, the mean solve's report and the
/// request: LOVE for the request's rank (if any), exact solves otherwise.
pub(crate) fn grid_latent_prediction<M: GridVariances>(
    model: &M,
    n_train: usize,
    x_test: MatRef<'_, f64>,
    request: &PredictRequest,
    mean: Col<f64>,
    mean_solve: Option<SolveReport>,
) -> Result<LatentPrediction> {
    if !request.wants_variance() {
        return Ok(LatentPrediction::new(mean, None, None, None, mean_solve));
    }
    let wants_cov = request.wants_covariance();
    let (variance, covariance, source) = match request.love_rank(n_train) {
        Some(rank) => {
            let options = love_options(rank)?;
            let cache = model
                .love_memo()
                .get_or_build(&options, || model.love_cache(&options))?;
            love_variances(&cache, x_test, wants_cov)?
        }
        None if wants_cov => {
            let cov = model.solved_covariance(x_test)?;
            (diagonal(&cov), Some(cov), VarianceSource::Solves)
        }
        None => (model.solved_variance(x_test)?, None, VarianceSource::Solves),
    };
    Ok(LatentPrediction::new(
        mean,
        Some(variance),
        covariance,
        Some(source),
        mean_solve,
    ))
}

/// The diagonal of a covariance, clamped at 0 against round-off.
fn diagonal(cov: &Mat<f64>) -> Col<f64> {
    Col::from_fn(cov.nrows(), |i| cov[(i, i)].max(0.0))
}

/// Variances (and the covariance, if `covariance`) of the test points from a LOVE cache.
fn love_variances(
    cache: &LoveCache,
    x_test: MatRef<'_, f64>,
    covariance: bool,
) -> Result<(Col<f64>, Option<Mat<f64>>, VarianceSource)> {
    let source = VarianceSource::Love { rank: cache.rank() };
    if covariance {
        let cov = cache.latent_covariance(x_test)?;
        Ok((diagonal(&cov), Some(cov), source))
    } else {
        Ok((cache.latent_variance(x_test)?, None, source))
    }
}
