//! Training an [`IterativeGp`]: maximizing the estimated log marginal likelihood over all
//! log hyperparameters.
//!
//! Two optimizers, each with the probe policy that suits it:
//!
//! * [`IterativeOptimizer::Adam`] (the default, GPyTorch's recipe): fresh probes at every
//!   step (seed `options.seed + step`), so the gradient estimates are independent across
//!   steps and their noise averages out along the trajectory. Adam only uses gradients, so
//!   the mismatch between the SLQ value and the Hutchinson gradient does not matter.
//! * [`IterativeOptimizer::Lbfgs`]: the same probes at every evaluation (seed
//!   `options.seed`), which makes the objective a deterministic function of the
//!   hyperparameters, as the line search needs. Its gradient is the Hutchinson estimate,
//!   not the exact derivative of the SLQ value, so the line search can fail when the
//!   estimates are noisy: use many probes and a tight CG tolerance with L-BFGS.
//!
//! Both minimize the negative estimated log marginal likelihood.

use faer::ColRef;
use gp_kernels::Kernel;

use crate::error::Result;
use crate::iterative::lml::{estimate, Problem};
use crate::iterative::model::IterativeGp;
use crate::optim::{adam, lbfgs, AdamOptions, LbfgsOptions, OptimResult};

/// The optimizer of [`IterativeGp::optimize`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IterativeOptimizer {
    /// Adam with fresh probes at every step.
    Adam(AdamOptions),
    /// L-BFGS with fixed probes.
    Lbfgs(LbfgsOptions),
}

impl Default for IterativeOptimizer {
    /// Adam with learning rate `0.05` (a common rate in log-hyperparameter space) for 100
    /// steps, the other settings as [`AdamOptions::default`].
    fn default() -> Self {
        Self::Adam(AdamOptions {
            learning_rate: 0.05,
            iterations: 100,
            ..AdamOptions::default()
        })
    }
}

/// Options of [`IterativeGp::optimize`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IterativeTrainOptions {
    /// The optimizer and its settings (default [`IterativeOptimizer::default`]: Adam, 100
    /// steps at learning rate 0.05). The solver settings (probes, tolerances,
    /// preconditioner, seed) are the model's [`IterativeOptions`](crate::IterativeOptions).
    pub optimizer: IterativeOptimizer,
}

/// A trained iterative model and the optimizer's record.
#[derive(Debug, Clone)]
pub struct IterativeTrained<K> {
    /// The model at the final hyperparameters.
    pub model: IterativeGp<K>,
    /// The optimizer run (objective: the negative estimated log marginal likelihood; the
    /// `x` are log hyperparameters in the order of
    /// [`IterativeGp::param_names`](crate::IterativeGp::param_names)).
    pub result: OptimResult,
}

impl<K: Kernel + Clone> IterativeGp<K> {
    /// Maximizes the estimated log marginal likelihood from the current hyperparameters
    /// (see the module documentation of [`train`](crate::iterative::train) for the probe
    /// policy of each optimizer) and returns the model at the final point.
    ///
    /// Errors: invalid optimizer options, an evaluation failing at the start (CG breakdown,
    /// invalid hyperparameters), or the optimizer's own failures
    /// ([`ModelError::Optimizer`](crate::ModelError::Optimizer)).
    pub fn optimize(&self, options: &IterativeTrainOptions) -> Result<IterativeTrained<K>> {
        let x0 = self.log_params();
        let mut kernel = self.kernel.clone();
        let yc: ColRef<'_, f64> = self.yc.as_ref();
        let evaluate = |params: &[f64], seed: u64| -> Result<(f64, Vec<f64>)> {
            let (noise_variance, kernel_params) =
                crate::exact::model::split_log_params(&kernel, params)?;
            kernel.set_log_params(kernel_params)?;
            let problem = Problem {
                kernel: &kernel,
                x: self.x.as_ref(),
                xs: &self.xs,
                yc,
                noise_variance,
            };
            let est = estimate(&problem, &self.options, seed)?;
            Ok((-est.lml, est.grad.iter().map(|g| -g).collect()))
        };
        let result = minimize_estimated_nlml(&x0, self.options.seed, options, evaluate)?;
        let model = self.with_log_params(&result.x)?;
        Ok(IterativeTrained { model, result })
    }
}

/// Minimizes a negative log-likelihood estimated with probes drawn from a seed, as the
/// iterative models train: Adam with fresh probes at every step (seed `seed + step`), or
/// L-BFGS with the same probes at every evaluation (seed `seed`). `evaluate(params, seed)`
/// returns the objective and its gradient.
pub(crate) fn minimize_estimated_nlml(
    x0: &[f64],
    seed: u64,
    options: &IterativeTrainOptions,
    mut evaluate: impl FnMut(&[f64], u64) -> Result<(f64, Vec<f64>)>,
) -> Result<OptimResult> {
    match options.optimizer {
        IterativeOptimizer::Adam(opts) => {
            let mut step = 0u64;
            adam(
                |params: &[f64]| {
                    let out = evaluate(params, seed.wrapping_add(step));
                    step += 1;
                    out
                },
                x0,
                &opts,
            )
        }
        IterativeOptimizer::Lbfgs(opts) => {
            lbfgs(|params: &[f64]| evaluate(params, seed), x0, &opts)
        }
    }
}
