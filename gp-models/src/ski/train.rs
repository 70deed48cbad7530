//! Training a [`Ski`] model: maximizing the estimated log marginal likelihood over all log
//! hyperparameters with the iterative gradient (SLQ + Hutchinson,
//! `∂K̂/∂θ = W (∂K_G/∂θ) Wᵀ`).
//!
//! The grid and the interpolation weights depend on the data only, so every evaluation
//! rebuilds just the Toeplitz factors of `K_G` (`O(Σ_l m_l log m_l)`). The optimizers and
//! their probe policies are those of the iterative exact GP
//! ([`IterativeOptimizer`](crate::IterativeOptimizer)): Adam with fresh probes at every step
//! (seed `seed + step`, the default) or L-BFGS with fixed probes (seed `seed`).

use gp_kernels::Kernel;

use crate::error::Result;
use crate::iterative::train::minimize_estimated_nlml;
use crate::iterative::IterativeTrainOptions;
use crate::optim::OptimResult;
use crate::ski::model::Ski;

/// Options of [`Ski::optimize`]: the optimizer (the solver settings are the model's
/// [`SkiOptions`](crate::SkiOptions)). The same type as for the iterative exact GP.
pub type SkiTrainOptions = IterativeTrainOptions;

/// A trained SKI model and the optimizer's record.
#[derive(Debug, Clone)]
pub struct SkiTrained<K> {
    /// The model at the final hyperparameters.
    pub model: Ski<K>,
    /// The optimizer run (objective: the negative estimated log marginal likelihood; `x`
    /// are log hyperparameters in the order of [`Ski::param_names`]).
    pub result: OptimResult,
}

impl<K: Kernel + Clone> Ski<K> {
    /// Maximizes the estimated log marginal likelihood from the current hyperparameters and
    /// returns the model at the final point (see the [module documentation](self)).
    ///
    /// Errors: invalid optimizer options, an evaluation failing at the start (CG breakdown,
    /// invalid hyperparameters, a kernel whose hyperparameter layout the gradient does not
    /// support), or the optimizer's own failures
    /// ([`ModelError::Optimizer`](crate::ModelError::Optimizer)).
    pub fn optimize(&self, options: &SkiTrainOptions) -> Result<SkiTrained<K>> {
        let x0 = self.log_params();
        let evaluate = |params: &[f64], seed: u64| -> Result<(f64, Vec<f64>)> {
            let model = self.with_log_params(params)?;
            let est = model.lml_and_grad_estimate_with_seed(seed)?;
            Ok((-est.lml, est.grad.iter().map(|g| -g).collect()))
        };
        let result = minimize_estimated_nlml(&x0, self.options.seed, options, evaluate)?;
        let model = self.with_log_params(&result.x)?;
        Ok(SkiTrained { model, result })
    }
}
