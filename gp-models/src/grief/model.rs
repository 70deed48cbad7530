//! The GP-GRIEF model (Evans & Nair 2018): a Gaussian process whose kernel is the sum of
//! `p` grid-structured eigenfunctions, `k̃(x, z) = s_f² Σⱼ φⱼ(x) φⱼ(z)`, trained by type-II
//! maximum likelihood over the SE-ARD length scales, the signal variance and the noise
//! (GP-GRIEF-II, §6).
//!
//! The training data enter only through the sufficient statistics `A = ΦᵀΦ`, `r = Φᵀy`,
//! `yᵀy` (streamed over row blocks); every evaluation of the log marginal likelihood at new
//! length scales rebuilds the basis and the statistics (`O(d m̄³ + d n p + n p²)`), and its
//! gradient with respect to the length scales takes one more streamed pass with the
//! selection of eigenfunctions frozen (`O(n p²)` once plus `O(n p)` per length scale).
//!
//! **The selection policy** (the paper's discontinuity, spec P3): by default the top-`p`
//! eigenvalues are re-selected at every new set of length scales, so the log marginal
//! likelihood is piecewise smooth and jumps where the selection changes; the gradient is
//! that of the current branch, and L-BFGS treats a jump as an ordinary function value.
//! [`Grief::with_selection_frozen`] keeps the selection instead (a smooth objective), and
//! [`train_reselecting`](crate::grief::train_reselecting) trains in rounds: L-BFGS with the
//! selection frozen, then a re-selection, until the selection settles.

use faer::{Col, ColRef, Mat, MatRef};
use gp_kernels::{Kernel, SquaredExponential};

use crate::core::likelihood::{log_params_with_noise, param_names_with_noise};
use crate::error::{ModelError, Result};
use crate::grief::basis::{GriefBasis, GriefBasisOptions};
use crate::grief::grid::InducingGrid;
use crate::grief::options::GriefOptions;
use crate::grief::stats::GriefStats;
use crate::grief::woodbury::WoodburyFit;

/// A GP-GRIEF regression model with an SE-ARD base kernel and Gaussian noise.
///
/// ```
/// use gp_models::faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::grief::{Grief, GriefOptions};
/// use gp_models::prelude::*;
///
/// let x = Mat::from_fn(200, 2, |i, j| ((i * (j + 3)) as f64 * 0.37).sin());
/// let y = Col::from_fn(200, |i| x[(i, 0)] * x[(i, 1)] + 0.5 * x[(i, 0)]);
/// let kernel = SquaredExponential::new(vec![1.0, 1.0], 1.0)?;
/// let options = GriefOptions { p: 50, ..GriefOptions::default() };
/// let model = Grief::fit(kernel, x.as_ref(), y.as_ref(), 0.01, &options)?;
/// let trained = train(&model, &TrainOptions::default())?;
/// let pred = trained.model.predict(x.as_ref(), &PredictRequest::default())?;
/// assert!((pred.mean[3] - y[3]).abs() < 0.1);
/// # Ok::<(), ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Grief {
    pub(crate) kernel: SquaredExponential,
    pub(crate) noise_variance: f64,
    pub(crate) options: GriefOptions,
    pub(crate) x: Mat<f64>,
    pub(crate) y: Col<f64>,
    pub(crate) basis: GriefBasis,
    pub(crate) stats: GriefStats,
    /// Whether [`with_log_params`](Grief::with_log_params) keeps the selection of
    /// eigenfunctions instead of re-selecting it.
    pub(crate) selection_frozen: bool,
}

impl Grief {
    /// Builds the inducing grid from `x` (`options.grid`), the basis of the `p` leading
    /// eigenfunctions at the kernel's length scales and the statistics of `(x, y)`.
    ///
    /// Errors: empty, mismatched or non-finite data, a kernel of another dimension, a
    /// non-positive noise variance, invalid options, `p` larger than the grid without
    /// `options.cap_to_grid`.
    pub fn fit(
        kernel: SquaredExponential,
        x: MatRef<'_, f64>,
        y: ColRef<'_, f64>,
        noise_variance: f64,
        options: &GriefOptions,
    ) -> Result<Self> {
        options.validate()?;
        crate::validate::check_training_data(&kernel, x, y, noise_variance)?;
        let grid = InducingGrid::from_data(x, &options.grid)?;
        Self::build(
            kernel,
            noise_variance,
            *options,
            x.to_owned(),
            y.to_owned(),
            grid,
            None,
        )
    }

    /// The model on a given grid: the basis at the kernel's length scales (with the given
    /// selection, frozen, or the top `p` by Algorithm 1) and the statistics of `(x, y)`,
    /// deterministically (the same inputs give the same bits). The data, options and noise
    /// are taken as checked.
    pub(crate) fn build(
        kernel: SquaredExponential,
        noise_variance: f64,
        options: GriefOptions,
        x: Mat<f64>,
        y: Col<f64>,
        grid: InducingGrid,
        selection: Option<Vec<usize>>,
    ) -> Result<Self> {
        let lengthscales = kernel.params().lengthscales();
        let selection_frozen = selection.is_some();
        let basis = match selection {
            Some(indices) => GriefBasis::with_indices(grid, lengthscales, indices)?,
            None => GriefBasis::new(
                grid,
                lengthscales,
                options.p,
                &GriefBasisOptions {
                    cap_to_grid: options.cap_to_grid,
                },
            )?,
        };
        let stats = basis.stats(x.as_ref(), y.as_ref(), options.block_rows)?;
        Ok(Self {
            kernel,
            noise_variance,
            options,
            x,
            y,
            basis,
            stats,
            selection_frozen,
        })
    }

    /// The same model with its selection of eigenfunctions frozen: from now on
    /// [`with_log_params`](Self::with_log_params) (so every training step) keeps the current
    /// multi-indices ([`GriefBasis::with_lengthscales_frozen`]) instead of re-selecting the
    /// top `p`, so the log marginal likelihood is smooth in the length scales. See
    /// [`train_reselecting`](crate::grief::train_reselecting) for training by rounds.
    pub fn with_selection_frozen(&self) -> Self {
        Self {
            selection_frozen: true,
            ..self.clone()
        }
    }

    /// Whether the selection of eigenfunctions is frozen
    /// ([`with_selection_frozen`](Self::with_selection_frozen)).
    pub fn selection_frozen(&self) -> bool {
        self.selection_frozen
    }

    /// The model at the same hyperparameters with the top `p` eigenfunctions selected anew
    /// by Algorithm 1 (and the selection no longer frozen): the GP-GRIEF model of the paper
    /// at these hyperparameters.
    ///
    /// Errors: a basis that cannot be built.
    pub fn reselected(&self) -> Result<Self> {
        Self::build(
            self.kernel.clone(),
            self.noise_variance,
            self.options,
            self.x.clone(),
            self.y.clone(),
            self.basis.grid().clone(),
            None,
        )
    }

    /// The base kernel (its length scales define the eigenfunctions, its variance is the
    /// common weight `s_f²` of every eigenfunction).
    pub fn kernel(&self) -> &SquaredExponential {
        &self.kernel
    }

    /// The noise variance `σ²`.
    pub fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    /// The options.
    pub fn options(&self) -> &GriefOptions {
        &self.options
    }

    /// The basis: grid, per-axis eigendecompositions and the selected eigenfunctions.
    pub fn basis(&self) -> &GriefBasis {
        &self.basis
    }

    /// The sufficient statistics `ΦᵀΦ`, `Φᵀy`, `yᵀy` of the training data (unit signal
    /// variance).
    pub fn stats(&self) -> &GriefStats {
        &self.stats
    }

    /// The training inputs (`n × d`).
    pub fn train_x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training targets.
    pub fn train_y(&self) -> ColRef<'_, f64> {
        self.y.as_ref()
    }

    /// The number of eigenfunctions kept, `p' = min(p, m)`.
    pub fn eigenfunctions(&self) -> usize {
        self.basis.len()
    }

    /// Names of the log hyperparameters: the kernel's, then `log_noise_variance`.
    pub fn param_names(&self) -> Vec<String> {
        param_names_with_noise(&self.kernel)
    }

    /// The log hyperparameters in the order of [`param_names`](Self::param_names).
    pub fn log_params(&self) -> Vec<f64> {
        log_params_with_noise(&self.kernel, self.noise_variance)
    }

    /// The same data and options at new log hyperparameters: the grid is kept, the basis
    /// and the statistics are rebuilt, with the selection of eigenfunctions re-selected or,
    /// if [frozen](Self::with_selection_frozen), kept.
    ///
    /// Errors: a length mismatch, non-finite values, a basis that cannot be built.
    pub fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        let (noise_variance, kernel_params) =
            crate::core::likelihood::split_log_params_with_noise(&self.kernel, log_params)?;
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(kernel_params)?;
        crate::validate::check_noise(noise_variance)?;
        let selection = self.selection_frozen.then(|| self.basis.indices().to_vec());
        Self::build(
            kernel,
            noise_variance,
            self.options,
            self.x.clone(),
            self.y.clone(),
            self.basis.grid().clone(),
            selection,
        )
    }

    /// The eigenfunction weights `w = s_f² 1` of this model.
    pub(crate) fn weights(&self) -> Vec<f64> {
        vec![self.kernel.params().variance(); self.basis.len()]
    }

    /// The weight-space fit at the current hyperparameters.
    pub(crate) fn woodbury(&self) -> Result<WoodburyFit<'_>> {
        WoodburyFit::new(&self.stats, &self.weights(), self.noise_variance)
    }

    /// The log marginal likelihood and, if `gradient`, its gradient with respect to every
    /// log hyperparameter (`log ℓᵢ`, `log s_f²`, `log σ²`).
    ///
    /// Errors: a weight-space matrix that is not positive definite, a basis evaluation
    /// failure.
    pub fn lml_and_grad(&self, gradient: bool) -> Result<(f64, Vec<f64>)> {
        let fit = self.woodbury()?;
        self.lml_and_grad_with(&fit, gradient)
    }

    /// [`lml_and_grad`](Self::lml_and_grad) from a weight-space fit at this model's
    /// hyperparameters (one `p × p` factorization serves the value, the gradient and the
    /// data-fit and log-determinant parts).
    pub(crate) fn lml_and_grad_with(
        &self,
        fit: &WoodburyFit<'_>,
        gradient: bool,
    ) -> Result<(f64, Vec<f64>)> {
        if !gradient {
            return Ok((fit.lml(), Vec::new()));
        }
        let (lml, dw, dnoise) = fit.lml_and_gradients();
        let d = self.basis.dims();
        let mut acc = fit.theta_gradient(d);
        let n = self.x.nrows();
        let block = self.options.block_rows;
        // H_b = ∂LML/∂Φ_b, contracted with ∂Φ_b/∂log ℓ column by column (never formed).
        let mut h = Mat::<f64>::zeros(block.min(n), self.basis.len());
        let mut start = 0;
        while start < n {
            let b = block.min(n - start);
            let xb = self.x.as_ref().subrows(start, b);
            let phi = self.basis.phi_block(xb)?;
            let mut hb = h.as_mut().subrows_mut(0, b);
            acc.basis_gradient_into(phi.as_ref(), self.y.as_ref().subrows(start, b), hb.as_mut())?;
            let contributions = self.basis.contract_derivatives(xb, hb.as_ref())?;
            acc.add_contracted(b, &contributions)?;
            start += b;
        }
        let mut grad = acc.finish()?;
        let sf2 = self.kernel.params().variance();
        grad.push(sf2 * dw.iter().sum::<f64>());
        grad.push(self.noise_variance * dnoise);
        if let Some(bad) = grad.iter().position(|g| !g.is_finite()) {
            return Err(ModelError::Optimizer {
                reason: format!(
                    "the GRIEF log-likelihood gradient is not finite in {} (value {}); the \
                     hyperparameters are extreme for this basis",
                    self.param_names()[bad],
                    grad[bad]
                ),
            });
        }
        Ok((lml, grad))
    }

    /// Latent posterior mean and variance at the rows of `x_test`, from the weight-space
    /// form `E f* = φ*ᵀ P⁻¹ r`, `V f* = σ² φ*ᵀ P⁻¹ φ*` (with `w = s_f² 1`).
    ///
    /// Errors: test points of the wrong dimension or non-finite.
    pub fn predict_mean_variance(&self, x_test: MatRef<'_, f64>) -> Result<(Col<f64>, Col<f64>)> {
        crate::validate::check_test_points(x_test, self.basis.dims())?;
        let fit = self.woodbury()?;
        let b = x_test.nrows();
        let mut mean = Col::zeros(b);
        let mut var = Col::zeros(b);
        let block = self.options.block_rows;
        let mut start = 0;
        while start < b {
            let len = block.min(b - start);
            let phi = self.basis.phi_block(x_test.subrows(start, len))?;
            let (m, v) = fit.predict(phi.as_ref())?;
            mean.as_mut().subrows_mut(start, len).copy_from(&m);
            var.as_mut().subrows_mut(start, len).copy_from(&v);
            start += len;
        }
        Ok((mean, var))
    }
}
