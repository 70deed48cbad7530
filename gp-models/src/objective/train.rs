//! Training with any estimator: Adam on GPyTorch's softplus parameters and the loss
//! `−log p / n`, every step recorded, the exact loss evaluated at the recorded
//! hyperparameters on request (the paper's "exact loss" curves).

use std::cell::Cell;
use std::ops::ControlFlow;
use std::time::Instant;

use faer::{ColRef, MatRef};
use gp_kernels::Kernel;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::{ModelError, Result};
use crate::objective::cholesky::cholesky_estimate;
use crate::objective::estimator::{Estimator, KrylovObjectiveOptions};
use crate::objective::evaluate::estimate;
use crate::objective::softplus::SoftplusParameterization;
use crate::optim::{adam_observed, AdamOptions, MultiStepDecay};

/// Options of [`train_objective`].
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectiveTrainOptions {
    /// Adam's settings (default: the paper's, lr 0.01, 1500 steps, ×0.1 at 50/70/90%).
    pub adam: AdamOptions,
    /// Settings of the CG and RR-CG estimators.
    pub krylov: KrylovObjectiveOptions,
    /// Floors of the softplus parameterisation (default `None`: GPyTorch's, 0 for the
    /// kernel's hyperparameters and `1e-4` for the noise).
    pub floors: Option<Vec<f64>>,
    /// Seed of the estimator's random draws.
    pub seed: u64,
    /// Evaluate the exact (Cholesky) loss at the hyperparameters of every `k`-th step
    /// (`None`: never; its cost is not counted in the training time).
    pub exact_loss_every: Option<usize>,
}

impl Default for ObjectiveTrainOptions {
    fn default() -> Self {
        Self {
            adam: AdamOptions {
                learning_rate: 0.01,
                iterations: 1500,
                learning_rate_decay: Some(MultiStepDecay::paper_gp()),
                ..AdamOptions::default()
            },
            krylov: KrylovObjectiveOptions::default(),
            floors: None,
            seed: 0,
            exact_loss_every: None,
        }
    }
}

/// One recorded step of [`train_objective`].
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingStep {
    /// The step (0 is the start).
    pub step: usize,
    /// The log hyperparameters after the step (kernel's, then `log σ²`).
    pub log_params: Vec<f64>,
    /// The estimator's loss `−log p / n` at these hyperparameters, where it has a value.
    pub estimated_loss: Option<f64>,
    /// The exact loss `−log p / n` (when requested for this step).
    pub exact_loss: Option<f64>,
    /// Krylov iterations of the evaluation (0 for direct methods).
    pub work: usize,
}

/// What [`train_objective`] returns.
#[derive(Debug, Clone)]
pub struct ObjectiveTrainResult<K> {
    /// The kernel at the final hyperparameters.
    pub kernel: K,
    /// The final noise variance.
    pub noise_variance: f64,
    /// Every step, from the start.
    pub steps: Vec<TrainingStep>,
    /// Wall time of the estimator's evaluations and Adam (without the exact losses).
    pub training_seconds: f64,
}

/// Trains the kernel's hyperparameters and the noise by Adam on `−log p / n` estimated by
/// `estimator` (the paper's protocol, spec §5.2): raw parameters `r` with
/// `θ = softplus(r) + floor`, fresh random draws at every step. `observer` sees every step
/// and may stop the run.
///
/// Errors: those of the estimator at the start, a starting hyperparameter not above its
/// floor, and Adam's (a step that keeps failing).
#[allow(clippy::too_many_arguments)]
pub fn train_objective<K: Kernel + Clone>(
    kernel: &K,
    noise_variance: f64,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    estimator: &Estimator,
    options: &ObjectiveTrainOptions,
    observer: &mut dyn FnMut(&TrainingStep) -> ControlFlow<()>,
) -> Result<ObjectiveTrainResult<K>> {
    let p = kernel.n_params();
    let param = match &options.floors {
        Some(f) => SoftplusParameterization::new(f.clone())?,
        None => SoftplusParameterization::gpytorch(p),
    };
    if param.len() != p + 1 {
        return Err(ModelError::LengthMismatch {
            context: "softplus floors (the kernel's hyperparameters, then the noise)",
            expected: p + 1,
            found: param.len(),
        });
    }
    let mut start = kernel.log_params();
    start.push(noise_variance.ln());
    let raw0 = param.raw_params(&start)?;
    let n = y.nrows() as f64;
    let with_params = |log_params: &[f64]| -> Result<(K, f64)> {
        let mut k = kernel.clone();
        k.set_log_params(&log_params[..p])?;
        Ok((k, log_params[p].exp()))
    };
    let exact_loss = |log_params: &[f64]| -> Result<f64> {
        let (k, s2) = with_params(log_params)?;
        let e = cholesky_estimate(&k, x, y, s2)?;
        Ok(-e.lml.unwrap_or(f64::NAN) / n)
    };

    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let last_loss = Cell::new(None);
    let last_work = Cell::new(0usize);
    let exact_seconds = Cell::new(0.0f64);
    let clock = Instant::now();
    let objective = |raw: &[f64]| -> Result<(f64, Vec<f64>)> {
        let log_params = param.log_params(raw);
        let (k, s2) = with_params(&log_params)?;
        let e = estimate(&k, s2, x, y, estimator, &options.krylov, &mut rng)?;
        last_loss.set(e.lml.map(|l| -l / n));
        last_work.set(e.work);
        let log_grad: Vec<f64> = e.gradient.iter().map(|g| -g / n).collect();
        // Adam needs a finite value only to accept the step; estimators without one
        // report 0.
        Ok((
            e.lml.map_or(0.0, |l| -l / n),
            param.raw_gradient(raw, &log_grad),
        ))
    };
    let mut steps: Vec<TrainingStep> = Vec::new();
    let mut failure = None;
    let mut record = |step: usize, raw: &[f64]| -> ControlFlow<()> {
        let log_params = param.log_params(raw);
        let wants_exact = options
            .exact_loss_every
            .is_some_and(|k| k > 0 && step.is_multiple_of(k));
        let exact = if wants_exact {
            let t = Instant::now();
            let v = exact_loss(&log_params);
            exact_seconds.set(exact_seconds.get() + t.elapsed().as_secs_f64());
            match v {
                Ok(v) => Some(v),
                Err(e) => {
                    failure = Some(e);
                    return ControlFlow::Break(());
                }
            }
        } else {
            None
        };
        let s = TrainingStep {
            step,
            log_params,
            estimated_loss: last_loss.get(),
            exact_loss: exact,
            work: last_work.get(),
        };
        let flow = observer(&s);
        steps.push(s);
        flow
    };
    let mut obs = |point: &crate::optim::TrajectoryPoint| record(point.iteration, &point.x);
    let result = adam_observed(objective, &raw0, &options.adam, &mut obs)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let training_seconds = clock.elapsed().as_secs_f64() - exact_seconds.get();
    let mut start_step = TrainingStep {
        step: 0,
        log_params: param.log_params(&raw0),
        estimated_loss: result.trajectory.first().map(|t| t.f),
        exact_loss: None,
        work: 0,
    };
    if options.exact_loss_every.is_some_and(|k| k > 0) {
        start_step.exact_loss = Some(exact_loss(&start_step.log_params)?);
    }
    steps.insert(0, start_step);
    let final_log = param.log_params(&result.x);
    let (kernel, noise_variance) = with_params(&final_log)?;
    Ok(ObjectiveTrainResult {
        kernel,
        noise_variance,
        steps,
        training_seconds,
    })
}
