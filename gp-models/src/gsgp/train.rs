//! Training a [`Gsgp`] model: maximizing the estimated log marginal likelihood over all log
//! hyperparameters with the statistics-only gradient ([`lml`](super::lml)).
//!
//! The statistics depend on the data and the grid only, so every evaluation rebuilds just the
//! grid kernel (and the eigendecompositions of its Toeplitz factors for the log determinant).
//! The optimizers and probe policies are those of SKI ([`Ski::optimize`](crate::Ski::optimize)):
//! Adam with fresh probes at every step (seed `seed + step`, the default) or L-BFGS with
//! fixed probes (seed `seed`).

use gp_kernels::Kernel;

use crate::error::Result;
use crate::gsgp::model::Gsgp;
use crate::iterative::train::minimize_estimated_nlml;
use crate::iterative::IterativeTrainOptions;
use crate::optim::OptimResult;

/// Options of [`Gsgp::optimize`]: the optimizer (the solver settings are the model's
/// [`GsgpOptions`](crate::GsgpOptions)). The same type as for SKI.
pub type GsgpTrainOptions = IterativeTrainOptions;

/// A trained GSGP model and the optimizer's record.
#[derive(Debug, Clone)]
pub struct GsgpTrained<K> {
    /// The model at the final hyperparameters.
    pub model: Gsgp<K>,
    /// The optimizer run (objective: the negative estimated log marginal likelihood; `x`
    /// are log hyperparameters in the order of [`Gsgp::param_names`]).
    pub result: OptimResult,
}

impl<K: Kernel + Clone> Gsgp<K> {
    /// Maximizes the estimated log marginal likelihood from the current hyperparameters and
    /// returns the model at the final point (see the [module documentation](self)).
    ///
    /// Errors: invalid optimizer options, an evaluation failing at the start (solver
    /// breakdown, invalid hyperparameters, a kernel whose hyperparameter layout the gradient
    /// does not support), or the optimizer's own failures
    /// ([`ModelError::Optimizer`](crate::ModelError::Optimizer)).
    pub fn optimize(&self, options: &GsgpTrainOptions) -> Result<GsgpTrained<K>> {
        let x0 = self.log_params();
        let evaluate = |params: &[f64], seed: u64| -> Result<(f64, Vec<f64>)> {
            let model = self.with_log_params(params)?;
            let est = model.lml_and_grad_estimate_with_seed(seed)?;
            Ok((-est.lml, est.grad.iter().map(|g| -g).collect()))
        };
        let result = minimize_estimated_nlml(&x0, self.options.seed, options, evaluate)?;
        let model = self.with_log_params(&result.x)?;
        Ok(GsgpTrained { model, result })
    }
}
