//! [`NormalizedY`]: scikit-learn's `normalize_y` for every model of the crate. The targets
//! are centred and scaled by their training mean and standard deviation before the model is
//! fitted, and everything the model returns is mapped back to the original units.
//!
//! A model fitted to `z = (y − ȳ)/s` with kernel `k` and noise `σ²` is exactly the GP on `y`
//! with the constant prior mean `ȳ`, kernel `s²k` and noise `s²σ²`. The wrapper reports that
//! GP: means `ȳ + s·m_z`, variances and covariances times `s²`, and the log marginal
//! likelihood of `y` itself, `log p(z) − n log s` (its log determinant moved by `n log s²`).
//! This differs from scikit-learn, whose `log_marginal_likelihood_value_` is that of the
//! normalized targets (here [`NormalizedY::inner`]`.lml(..)`); the gradient with respect to
//! the log hyperparameters is the same in both, so training is unaffected. The
//! hyperparameters (and the likelihood's noise) are those of the inner model, in normalized
//! units.

use faer::{Col, ColRef, MatRef};

use crate::core::{
    GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, Prediction,
    TrainingObjective,
};
use crate::error::{ModelError, Result};

/// A model fitted to standardized targets, answering in the original units (see the
/// [module documentation](self)).
///
/// ```
/// use gp_kernels::SquaredExponential;
/// use gp_models::data::NormalizedY;
/// use gp_models::faer::{Col, Mat};
/// use gp_models::prelude::*;
///
/// // Targets far from zero mean and unit scale.
/// let x = Mat::from_fn(40, 1, |i, _| i as f64 * 0.25);
/// let y = Col::from_fn(40, |i| 1000.0 + 50.0 * (i as f64 * 0.25).sin());
/// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
/// let model = NormalizedY::fit(y.as_ref(), |z| {
///     ExactGp::fit(kernel.clone(), x.as_ref(), z, 0.01)
/// })?;
/// assert!((model.y_mean() - 1000.0).abs() < 10.0);
/// let pred = model.predict(x.as_ref(), &PredictRequest::default())?;
/// assert!((pred.mean[3] - y[3]).abs() < 1.0); // original units
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct NormalizedY<M> {
    model: M,
    y_mean: f64,
    y_std: f64,
}

impl<M: GpModel> NormalizedY<M> {
    /// Standardizes `y` by its mean and standard deviation (divisor `n`; a constant `y` is
    /// only centred) and fits the inner model to the result with `fit`, which receives the
    /// standardized targets.
    ///
    /// Errors: [`ModelError::EmptyData`] for no targets, [`ModelError::NonFinite`] for a
    /// non-finite target, [`ModelError::LengthMismatch`] if the fitted model does not have
    /// `y.nrows()` training points, and whatever `fit` returns.
    pub fn fit<F>(y: ColRef<'_, f64>, fit: F) -> Result<Self>
    where
        F: FnOnce(ColRef<'_, f64>) -> Result<M>,
    {
        let n = y.nrows();
        if n == 0 {
            return Err(ModelError::EmptyData {
                context: "NormalizedY::fit",
                n,
                d: 0,
            });
        }
        gp_linalg::validate::check_finite_col(y, "the training targets y")
            .map_err(ModelError::from_finite_check)?;
        let y_mean = y.iter().sum::<f64>() / n as f64;
        let var = y.iter().map(|v| (v - y_mean) * (v - y_mean)).sum::<f64>() / n as f64;
        let sd = var.sqrt();
        let y_std = if sd > 0.0 && sd.is_finite() { sd } else { 1.0 };
        let z = Col::from_fn(n, |i| (y[i] - y_mean) / y_std);
        let model = fit(z.as_ref())?;
        if model.n_train() != n {
            return Err(ModelError::LengthMismatch {
                context: "NormalizedY::fit: training points of the fitted model vs targets",
                expected: n,
                found: model.n_train(),
            });
        }
        Ok(Self {
            model,
            y_mean,
            y_std,
        })
    }

    /// The model of the standardized targets.
    pub fn inner(&self) -> &M {
        &self.model
    }

    /// The training targets' mean `ȳ`.
    pub fn y_mean(&self) -> f64 {
        self.y_mean
    }

    /// The training targets' standard deviation `s` (1 for constant targets).
    pub fn y_std(&self) -> f64 {
        self.y_std
    }

    /// `n log s²`: what the log determinant of the original-units GP adds to the inner one.
    fn log_det_shift(&self) -> f64 {
        self.model.n_train() as f64 * (self.y_std * self.y_std).ln()
    }

    fn latent_to_original(&self, mut latent: LatentPrediction) -> LatentPrediction {
        let (m, s2) = (self.y_mean, self.y_std * self.y_std);
        latent
            .mean
            .iter_mut()
            .for_each(|v| *v = m + self.y_std * *v);
        if let Some(var) = latent.variance.as_mut() {
            var.iter_mut().for_each(|v| *v *= s2);
        }
        if let Some(cov) = latent.covariance.as_mut() {
            *cov = &*cov * faer::Scale(s2);
        }
        latent
    }
}

impl<M: GpModel> GpModel for NormalizedY<M> {
    type Likelihood = M::Likelihood;

    fn model_name(&self) -> &'static str {
        self.model.model_name()
    }
    fn n_train(&self) -> usize {
        self.model.n_train()
    }
    fn input_dim(&self) -> usize {
        self.model.input_dim()
    }
    /// The inner model's likelihood, in normalized units.
    fn likelihood(&self) -> Self::Likelihood {
        self.model.likelihood()
    }
    fn param_names(&self) -> Vec<String> {
        self.model.param_names()
    }
    fn log_params(&self) -> Vec<f64> {
        self.model.log_params()
    }
    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        Ok(Self {
            model: self.model.with_log_params(log_params)?,
            y_mean: self.y_mean,
            y_std: self.y_std,
        })
    }
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        let latent = self.model.predict_latent(x_test, request)?;
        Ok(self.latent_to_original(latent))
    }
    /// The inner model's prediction (predictive variances with its noise, in normalized
    /// units) mapped to the original units.
    fn predict(&self, x_test: MatRef<'_, f64>, request: &PredictRequest) -> Result<Prediction> {
        let mut p = self.model.predict(x_test, request)?;
        let s2 = self.y_std * self.y_std;
        p.mean
            .iter_mut()
            .for_each(|v| *v = self.y_mean + self.y_std * *v);
        p.latent_variance.iter_mut().for_each(|v| *v *= s2);
        p.variance.iter_mut().for_each(|v| *v *= s2);
        if let Some(cov) = p.latent_covariance.as_mut() {
            *cov = &*cov * faer::Scale(s2);
        }
        Ok(p)
    }
    /// The log marginal likelihood of the targets in their original units:
    /// `log p(z) − n log s`, the log determinant moved by `n log s²` (the data-fit term and
    /// the gradient are the inner model's).
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        let mut est = self.model.lml(request)?;
        let shift = self.log_det_shift();
        est.lml -= 0.5 * shift;
        est.log_det.value += shift;
        est.log_det.offset += shift;
        Ok(est)
    }
    fn has_exact_lml(&self) -> bool {
        self.model.has_exact_lml()
    }
    /// The inner model's scales: its targets are the normalized ones, whose
    /// hyperparameters are the ones trained.
    fn data_scales(&self) -> Option<crate::core::start::DataScales> {
        self.model.data_scales()
    }
    fn probe_seed(&self) -> u64 {
        self.model.probe_seed()
    }
    /// The inner model's objective (it may reuse workspaces), moved by the constant
    /// `n log s` so that its values are the negative log marginal likelihood of `y`.
    fn training_objective(&self) -> TrainingObjective<'_> {
        let mut inner = self.model.training_objective();
        let shift = 0.5 * self.log_det_shift();
        Box::new(move |params: &[f64], seed: u64| {
            let (value, grad) = inner(params, seed)?;
            Ok((value + shift, grad))
        })
    }
}

impl<M: GpModel> std::fmt::Display for NormalizedY<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (targets normalized: mean {:.6e}, standard deviation {:.6e})",
            self.model, self.y_mean, self.y_std
        )
    }
}
