//! Training any [`GpModel`]: maximizing its log marginal likelihood over all log
//! hyperparameters, with optional random restarts and an observer called after every step.
//!
//! * [`Optimizer::Auto`] (the default) picks L-BFGS for models whose log marginal
//!   likelihood is exact ([`GpModel::has_exact_lml`]) and Adam (learning rate 0.05, 100
//!   steps) for stochastic estimates.
//! * Probe policy of the stochastic models: Adam draws fresh probes at every evaluation
//!   (seed [`GpModel::probe_seed`] `+ evaluation`), so the gradient noise averages out along
//!   the trajectory; L-BFGS uses the same probes (seed `probe_seed`) at every evaluation,
//!   which makes the objective deterministic as its line search needs. With L-BFGS on a
//!   stochastic model, use many probes and a tight CG tolerance: its gradient is the
//!   Hutchinson estimate, not the exact derivative of the SLQ value.
//! * Start ([`TrainStart`]): by default the first run starts from hyperparameters derived
//!   from the training data ([`DataScales`](crate::DataScales), the median heuristic) for models that keep
//!   their data (`ExactGp`, `IterativeGp`); [`TrainStart::Model`] starts from the model's own
//!   hyperparameters instead, and is what models without their data use. The report says
//!   which start ran ([`TrainReport::start`]).
//! * Restarts: run `r ≥ 1` starts from `θ₀ + s z`, `z ~ N(0, I)` (seed
//!   [`TrainOptions::seed`]); the best final objective wins.

use std::ops::ControlFlow;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::core::model::GpModel;
use crate::error::{ModelError, Result};
use crate::optim::{
    adam_observed, lbfgs_observed, AdamOptions, LbfgsOptions, OptimResult, TrajectoryPoint,
};

/// The optimizer of [`train`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub enum Optimizer {
    /// L-BFGS with its default options for exact models, [`Optimizer::default_adam`] for
    /// stochastic ones (the default).
    #[default]
    Auto,
    /// L-BFGS with a strong-Wolfe line search (same probes at every evaluation).
    Lbfgs(LbfgsOptions),
    /// Adam (fresh probes at every evaluation).
    Adam(AdamOptions),
}

impl Optimizer {
    /// Adam at learning rate `0.05` (a common rate in log-hyperparameter space) for 100
    /// steps, the rest as [`AdamOptions::default`]: what [`Optimizer::Auto`] uses for
    /// stochastic models.
    pub fn default_adam() -> Self {
        Self::Adam(AdamOptions {
            learning_rate: 0.05,
            iterations: 100,
            ..AdamOptions::default()
        })
    }

    /// The concrete optimizer for a model whose log marginal likelihood is exact or not.
    pub fn resolve(self, exact_lml: bool) -> Self {
        match self {
            Self::Auto if exact_lml => Self::Lbfgs(LbfgsOptions::default()),
            Self::Auto => Self::default_adam(),
            other => other,
        }
    }

    /// A short name for summaries.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Lbfgs(_) => "L-BFGS",
            Self::Adam(_) => "Adam",
        }
    }
}

/// Options of [`train`].
///
/// ```
/// use gp_models::{Optimizer, TrainOptions, LbfgsOptions};
///
/// let opts = TrainOptions {
///     optimizer: Optimizer::Lbfgs(LbfgsOptions { max_iterations: 50, ..LbfgsOptions::default() }),
///     restarts: 2,
///     ..TrainOptions::default()
/// };
/// assert_eq!(opts.restart_scale, 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainOptions {
    /// The optimizer and its settings (default [`Optimizer::Auto`]).
    pub optimizer: Optimizer,
    /// Extra runs from random starting points (default 0: one run from the model's
    /// current hyperparameters).
    pub restarts: usize,
    /// Standard deviation `s` of the Gaussian perturbation of the initial log
    /// hyperparameters for each restart (default `1.0`: each length scale, variance and
    /// the noise multiplied by a factor `e^{±1}` ≈ 2.7 at one standard deviation).
    pub restart_scale: f64,
    /// Seed of the restart perturbations (ChaCha8; default 0). The probes of stochastic
    /// models come from their own options' seed ([`GpModel::probe_seed`]).
    pub seed: u64,
    /// Where the first run starts (default [`TrainStart::Data`]); restarts perturb it.
    pub start: TrainStart,
}

/// Where training starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TrainStart {
    /// From hyperparameters derived from the training data ([`DataScales`](crate::DataScales): length scales
    /// from the median pairwise distance per dimension times `√d`, signal variance
    /// `var(y)`, noise `var(y)/10`) for the parameters it recognizes, the model's values
    /// for the others; from the model's hyperparameters when the model does not keep its
    /// data ([`GpModel::data_scales`] is `None`). The default: the start `ℓ = 1` is
    /// flat in every length scale when `d` is large (see [`DataScales`](crate::DataScales)).
    #[default]
    Data,
    /// From the model's current hyperparameters.
    Model,
}

/// The start that ran (see [`TrainStart`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartUsed {
    /// Derived from the training data.
    Data,
    /// The model's hyperparameters, as asked.
    Model,
    /// The model's hyperparameters, because the model does not keep its training data.
    ModelWithoutData,
}

impl std::fmt::Display for StartUsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Data => "from the data (median heuristic)",
            Self::Model => "from the model's hyperparameters",
            Self::ModelWithoutData => {
                "from the model's hyperparameters (the model does not keep its data)"
            }
        })
    }
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            optimizer: Optimizer::Auto,
            restarts: 0,
            restart_scale: 1.0,
            seed: 0,
            start: TrainStart::Data,
        }
    }
}

/// One optimizer run of training.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainRun {
    /// Starting log hyperparameters.
    pub start: Vec<f64>,
    /// The run's result (objective: the negative log marginal likelihood) or the error
    /// that prevented it from starting (e.g. a Cholesky failure at a random start).
    pub outcome: std::result::Result<OptimResult, ModelError>,
}

/// What happened during training.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainReport {
    /// The optimizer that ran ([`Optimizer::Auto`] resolved).
    pub optimizer: Optimizer,
    /// Names of the log hyperparameters, in the order of every `x` in the runs.
    pub param_names: Vec<String>,
    /// Every run: the first from the initial hyperparameters, then the restarts.
    pub runs: Vec<TrainRun>,
    /// Index in `runs` of the run with the lowest final negative log marginal likelihood.
    pub best_run: usize,
    /// Where the first run started.
    pub start: StartUsed,
}

impl TrainReport {
    /// The best run's optimizer result.
    pub fn best(&self) -> Option<&OptimResult> {
        self.runs.get(self.best_run)?.outcome.as_ref().ok()
    }
}

impl std::fmt::Display for TrainReport {
    /// A few lines: the optimizer, each run's outcome, the best hyperparameters (log and
    /// natural values). Not the trajectories (they are in [`TrainRun::outcome`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} training, {} run(s), best run {}, started {}",
            self.optimizer.name(),
            self.runs.len(),
            self.best_run,
            self.start
        )?;
        for (i, run) in self.runs.iter().enumerate() {
            match &run.outcome {
                Ok(r) => writeln!(
                    f,
                    "  run {i}: -log p = {:.6} after {} iterations, {} evaluations ({} failed), largest gradient component {:.2e}: {}",
                    r.f, r.iterations, r.evaluations, r.failed_evaluations, r.grad_norm, r.reason
                )?,
                Err(e) => writeln!(f, "  run {i}: could not start: {e}")?,
            }
        }
        if let Some(best) = self.best() {
            for (name, v) in self.param_names.iter().zip(&best.x) {
                writeln!(f, "  {name} = {v:.6} ({:.6e})", v.exp())?;
            }
        }
        Ok(())
    }
}

/// A trained model and the record of its training.
#[derive(Debug, Clone)]
pub struct TrainResult<M> {
    /// The model rebuilt at the best hyperparameters found.
    pub model: M,
    /// The runs.
    pub report: TrainReport,
}

impl<M: std::fmt::Display> std::fmt::Display for TrainResult<M> {
    /// The model's summary, then the training report.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.model)?;
        write!(f, "{}", self.report)
    }
}

/// What the observer of [`train_observed`] sees after every optimizer step.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct TrainProgress<'a> {
    /// The run (0 for the run from the initial hyperparameters).
    pub run: usize,
    /// The step just taken: iteration, objective (negative log marginal likelihood), log
    /// hyperparameters, gradient norm, evaluations so far.
    pub point: &'a TrajectoryPoint,
}

/// Maximizes the model's log marginal likelihood over all log hyperparameters (see the
/// [module documentation](self)); returns the model rebuilt at the best optimum and a
/// report of every run.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::prelude::*;
///
/// let x = Mat::from_fn(30, 1, |i, _| i as f64 * 0.25);
/// let y = Col::from_fn(30, |i| (i as f64 * 0.25).sin());
/// let gp = ExactGp::fit(SquaredExponential::new(vec![0.5], 1.0)?, x.as_ref(), y.as_ref(), 0.1)?;
/// let trained = train(&gp, &TrainOptions::default())?;
/// assert!(trained.model.log_marginal_likelihood() > gp.log_marginal_likelihood());
/// println!("{trained}");
/// # Ok::<(), ModelError>(())
/// ```
///
/// Errors: [`ModelError::InvalidOption`] for a negative or non-finite restart scale,
/// invalid optimizer options, or the first run's own error (for example
/// [`ModelError::DenseTooLarge`] or a factorization failure) when no run could start.
pub fn train<M: GpModel>(model: &M, options: &TrainOptions) -> Result<TrainResult<M>> {
    train_observed(model, options, |_| ControlFlow::Continue(()))
}

/// [`train`] with an observer called after every optimizer step (progress display, time
/// limits, early stopping): returning [`ControlFlow::Break`] ends the current run at that
/// step (its reason is [`ConvergenceReason::Stopped`](crate::ConvergenceReason::Stopped))
/// and skips the remaining restarts.
///
/// Errors as [`train`].
pub fn train_observed<M, O>(
    model: &M,
    options: &TrainOptions,
    mut observer: O,
) -> Result<TrainResult<M>>
where
    M: GpModel,
    O: FnMut(&TrainProgress<'_>) -> ControlFlow<()>,
{
    if !(options.restart_scale >= 0.0 && options.restart_scale.is_finite()) {
        return Err(ModelError::InvalidOption {
            name: "TrainOptions::restart_scale",
            reason: format!(
                "must be finite and non-negative, got {}",
                options.restart_scale
            ),
        });
    }
    let normal =
        Normal::new(0.0, options.restart_scale).map_err(|e| ModelError::InvalidOption {
            name: "TrainOptions::restart_scale",
            reason: e.to_string(),
        })?;
    let optimizer = options.optimizer.resolve(model.has_exact_lml());
    let (p0, start_used) = match (options.start, model.data_scales()) {
        (TrainStart::Model, _) => (model.log_params(), StartUsed::Model),
        (TrainStart::Data, Some(scales)) => (
            scales.log_params(&model.param_names(), &model.log_params()),
            StartUsed::Data,
        ),
        (TrainStart::Data, None) => (model.log_params(), StartUsed::ModelWithoutData),
    };
    let seed = model.probe_seed();
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let mut objective = model.training_objective();
    let mut runs = Vec::with_capacity(options.restarts + 1);
    let mut stopped = false;
    for run in 0..=options.restarts {
        if stopped {
            break;
        }
        let start: Vec<f64> = if run == 0 {
            p0.clone()
        } else {
            p0.iter().map(|v| v + normal.sample(&mut rng)).collect()
        };
        let mut observe = |point: &TrajectoryPoint| {
            let flow = observer(&TrainProgress { run, point });
            stopped |= flow.is_break();
            flow
        };
        let outcome = match optimizer {
            Optimizer::Adam(opts) => {
                let mut evaluation = 0u64;
                adam_observed(
                    |p: &[f64]| {
                        let out = objective(p, seed.wrapping_add(evaluation));
                        evaluation += 1;
                        out
                    },
                    &start,
                    &opts,
                    &mut observe,
                )
            }
            // `resolve` never returns `Auto`; treat it as L-BFGS with defaults regardless.
            Optimizer::Lbfgs(opts) => {
                lbfgs_observed(|p: &[f64]| objective(p, seed), &start, &opts, &mut observe)
            }
            Optimizer::Auto => lbfgs_observed(
                |p: &[f64]| objective(p, seed),
                &start,
                &LbfgsOptions::default(),
                &mut observe,
            ),
        };
        runs.push(TrainRun { start, outcome });
    }
    drop(objective);
    let best_run = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.outcome.as_ref().ok().map(|o| (i, o.f)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    let Some(best_run) = best_run else {
        // Every run failed: the first run's error as it is (typed, e.g. a memory limit or a
        // factorization failure), not a string around it.
        return Err(runs
            .into_iter()
            .find_map(|r| r.outcome.err())
            .unwrap_or_else(|| ModelError::Optimizer {
                reason: "no training run was made (no start point)".into(),
            }));
    };
    let best_x = match &runs[best_run].outcome {
        Ok(o) => o.x.clone(),
        Err(e) => return Err(e.clone()),
    };
    let trained = model.with_log_params(&best_x)?;
    Ok(TrainResult {
        model: trained,
        report: TrainReport {
            optimizer,
            param_names: model.param_names(),
            runs,
            best_run,
            start: start_used,
        },
    })
}
