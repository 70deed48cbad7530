//! The interface every Gaussian-process model implements.

use faer::MatRef;

use crate::core::estimate::{LmlEstimate, LmlRequest};
use crate::core::likelihood::Likelihood;
use crate::core::predict::{LatentPrediction, PredictRequest, Prediction};
use crate::error::Result;

/// The negative log marginal likelihood and its gradient as a function of the log
/// hyperparameters and a probe seed: what [`train`](crate::train()) minimizes.
pub type TrainingObjective<'a> = Box<dyn FnMut(&[f64], u64) -> Result<(f64, Vec<f64>)> + 'a>;

/// A fitted Gaussian-process model: hyperparameters, predictions and the log marginal
/// likelihood, the same for every model (`ExactGp`, `IterativeGp`, `Ski`, `Gsgp`, `Grief`), so that
/// code written once works with all of them.
///
/// Every model prints a short summary (`Display`: data shape, settings, hyperparameters).
///
/// Hyperparameters are one flat vector of logarithms: the kernel's, then the
/// likelihood's ([`Likelihood::log_params`]); [`param_names`](Self::param_names) names them.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::prelude::*;
///
/// /// Any model: the mean at one point and the log marginal likelihood.
/// fn describe<M: GpModel>(model: &M) -> Result<(f64, f64), ModelError> {
///     let x = Mat::from_fn(1, 1, |_, _| 2.0);
///     let pred = model.predict(x.as_ref(), &PredictRequest::default())?;
///     Ok((pred.mean[0], model.lml(&LmlRequest::value())?.lml))
/// }
///
/// let x = Mat::from_fn(60, 1, |i, _| i as f64 / 10.0);
/// let y = Col::from_fn(60, |i| (i as f64 / 10.0).sin());
/// let kernel = SquaredExponential::new(vec![1.0], 1.0)?;
/// let exact = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.01)?;
/// let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.01,
///                    &SkiOptions {
///     grid: GridSettings { sizes: vec![80], ..GridSettings::default() },
///     ..SkiOptions::default()
/// })?;
/// let (mean_exact, lml_exact) = describe(&exact)?;
/// let (mean_ski, lml_ski) = describe(&ski)?;
/// assert!((mean_exact - mean_ski).abs() < 1e-3);
/// assert!((lml_exact - lml_ski).abs() < 5.0);
/// # Ok::<(), ModelError>(())
/// ```
pub trait GpModel: Sized + Send + Sync + std::fmt::Display {
    /// The observation model.
    type Likelihood: Likelihood;

    /// A short name of the model type (`"ExactGp"`, `"Ski"`, …) for summaries.
    fn model_name(&self) -> &'static str;

    /// Number of training points `n`.
    fn n_train(&self) -> usize;

    /// Input dimension `d`.
    fn input_dim(&self) -> usize;

    /// The likelihood with its current hyperparameters.
    fn likelihood(&self) -> Self::Likelihood;

    /// Names of the log hyperparameters: the kernel's, then the likelihood's.
    fn param_names(&self) -> Vec<String>;

    /// The log hyperparameters, in the order of [`param_names`](Self::param_names).
    fn log_params(&self) -> Vec<f64>;

    /// The same data and options with new log hyperparameters (layout as
    /// [`log_params`](Self::log_params)).
    ///
    /// Errors: a length mismatch, invalid hyperparameters, and whatever rebuilding the
    /// model at them can fail with (for `ExactGp`, a factorization failure).
    fn with_log_params(&self, log_params: &[f64]) -> Result<Self>;

    /// The latent posterior at the rows of `x_test` (`b × d`): mean, and the variances
    /// and covariance the request asks for, computed as it says.
    ///
    /// Errors: wrong test dimension, non-finite test points, points outside a structured
    /// model's grid, a solver failure, a LOVE request to a model without LOVE.
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction>;

    /// Posterior predictions at the rows of `x_test`: the latent posterior and the
    /// predictive variances of observations under the model's likelihood.
    ///
    /// Errors as [`predict_latent`](Self::predict_latent), and
    /// [`ModelError::NotConverged`](crate::ModelError::NotConverged) when the mean solve
    /// stopped before its tolerance and the request does not accept that
    /// ([`PredictRequest::unconverged`]).
    fn predict(&self, x_test: MatRef<'_, f64>, request: &PredictRequest) -> Result<Prediction> {
        let latent = self.predict_latent(x_test, request)?;
        request.check_mean_solve(latent.mean_solve.as_ref())?;
        Ok(Prediction::from_latent_prediction(
            latent,
            &self.likelihood(),
        ))
    }

    /// The log marginal likelihood `log p(y | X, θ)` with its standard error (zero for
    /// exact models) and, if requested, its gradient with respect to every log
    /// hyperparameter.
    ///
    /// Errors: a solver breakdown, probes of the wrong dimension, a kernel whose
    /// hyperparameter layout the gradient does not support.
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate>;

    /// Whether [`lml`](Self::lml) is exact and deterministic (a factorization), so that a
    /// line-search optimizer (L-BFGS) suits it; stochastic estimates train with Adam by
    /// default.
    fn has_exact_lml(&self) -> bool;

    /// The base seed of the probes during training (the options' seed; 0 for exact
    /// models): Adam draws fresh probes from `seed + evaluation` at every step, L-BFGS the
    /// same probes (`seed`) at every evaluation.
    fn probe_seed(&self) -> u64 {
        0
    }

    /// Scales of the training data for a data-based starting point
    /// ([`TrainStart::Data`](crate::TrainStart::Data)); `None` for models that do not keep
    /// their training points (the default; `Ski`, `Gsgp`).
    fn data_scales(&self) -> Option<crate::core::start::DataScales> {
        None
    }

    /// The training objective: the negative log marginal likelihood and its gradient at
    /// given log hyperparameters with the probes of a seed. The default rebuilds the model
    /// ([`with_log_params`](Self::with_log_params)) and evaluates [`lml`](Self::lml);
    /// models override it to reuse workspaces across evaluations.
    fn training_objective(&self) -> TrainingObjective<'_> {
        Box::new(move |params: &[f64], seed: u64| {
            let model = self.with_log_params(params)?;
            let est = model.lml(&LmlRequest::seeded(true, seed))?;
            Ok((-est.lml, est.grad.iter().map(|g| -g).collect()))
        })
    }
}
