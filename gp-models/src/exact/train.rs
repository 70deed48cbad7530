//! Training an [`ExactGp`]: maximizing the log marginal likelihood over all log
//! hyperparameters (noise included) with L-BFGS, with optional random restarts.

use faer::{ColRef, MatRef};
use gp_kernels::Kernel;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::error::{ModelError, Result};
use crate::exact::model::ExactGp;
use crate::exact::options::FitOptions;
use crate::optim::{lbfgs, LbfgsOptions, OptimResult};

/// Options of [`ExactGp::optimize`] and [`train`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainOptions {
    /// The L-BFGS settings of every run.
    pub lbfgs: LbfgsOptions,
    /// Extra runs from random starting points (default 0: one run from the model's current
    /// hyperparameters).
    pub restarts: usize,
    /// Standard deviation `s` of the Gaussian perturbation of the initial log
    /// hyperparameters for each restart (default `1.0`): restart `r` starts from
    /// `θ₀ + s z`, `z ~ N(0, I)`, so each length scale, variance and the noise are multiplied
    /// by a factor `e^{±1}` ≈ 2.7 at one standard deviation.
    pub restart_scale: f64,
    /// Seed of the restart perturbations (ChaCha8); the same seed gives the same runs.
    pub seed: u64,
}

impl Default for TrainOptions {
    fn default() -> Self {
        Self {
            lbfgs: LbfgsOptions::default(),
            restarts: 0,
            restart_scale: 1.0,
            seed: 0,
        }
    }
}

/// One optimizer run of training.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainRun {
    /// Starting log hyperparameters.
    pub start: Vec<f64>,
    /// The run's result (objective: the negative log marginal likelihood) or the error
    /// that prevented it from starting (e.g. a Cholesky failure at the random start).
    pub outcome: std::result::Result<OptimResult, ModelError>,
}

/// What happened during training.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainReport {
    /// Names of the log hyperparameters, in the order of every `x` in the runs.
    pub param_names: Vec<String>,
    /// Every run: the first from the initial hyperparameters, then the restarts.
    pub runs: Vec<TrainRun>,
    /// Index in `runs` of the run with the lowest negative log marginal likelihood.
    pub best_run: usize,
}

impl TrainReport {
    /// The best run's optimizer result.
    pub fn best(&self) -> Option<&OptimResult> {
        self.runs.get(self.best_run)?.outcome.as_ref().ok()
    }
}

/// A trained model and the record of its training.
#[derive(Debug, Clone)]
pub struct Trained<K> {
    /// The model refitted at the best hyperparameters found.
    pub model: ExactGp<K>,
    /// The runs.
    pub report: TrainReport,
}

impl<K: Kernel + Clone> ExactGp<K> {
    /// Maximizes the log marginal likelihood over all log hyperparameters (the kernel's and
    /// `log σ²`) with L-BFGS, starting from the current ones, plus
    /// [`TrainOptions::restarts`] runs from random perturbations of them; returns the model
    /// refitted at the best optimum and a report with every run's trajectory.
    ///
    /// Errors: [`ModelError::InvalidOption`], or [`ModelError::Optimizer`] (wrapping the
    /// first run's error) when no run could start.
    pub fn optimize(&self, options: &TrainOptions) -> Result<Trained<K>> {
        if !(options.restart_scale >= 0.0 && options.restart_scale.is_finite()) {
            return Err(ModelError::InvalidOption {
                name: "TrainOptions::restart_scale",
                reason: "must be finite and non-negative".into(),
            });
        }
        let p0 = self.log_params();
        let normal =
            Normal::new(0.0, options.restart_scale).map_err(|e| ModelError::InvalidOption {
                name: "TrainOptions::restart_scale",
                reason: e.to_string(),
            })?;
        let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
        let mut objective = self.neg_lml_objective();
        let mut runs = Vec::with_capacity(options.restarts + 1);
        for r in 0..=options.restarts {
            let start: Vec<f64> = if r == 0 {
                p0.clone()
            } else {
                p0.iter().map(|v| v + normal.sample(&mut rng)).collect()
            };
            let outcome = lbfgs(|p| objective.eval(p), &start, &options.lbfgs);
            runs.push(TrainRun { start, outcome });
        }
        let best_run = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.outcome.as_ref().ok().map(|o| (i, o.f)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i);
        let Some(best_run) = best_run else {
            let first = runs
                .first()
                .and_then(|r| r.outcome.as_ref().err())
                .map_or_else(|| "no run".to_string(), |e| e.to_string());
            return Err(ModelError::Optimizer {
                reason: format!("no training run could start; the first failed with: {first}"),
            });
        };
        let best_x = match &runs[best_run].outcome {
            Ok(o) => o.x.clone(),
            Err(e) => return Err(e.clone()),
        };
        let model = self.with_log_params(&best_x)?;
        Ok(Trained {
            model,
            report: TrainReport {
                param_names: self.param_names(),
                runs,
                best_run,
            },
        })
    }
}

/// Fits an [`ExactGp`] at the given initial hyperparameters and trains it
/// ([`ExactGp::optimize`]).
pub fn train<K: Kernel + Clone>(
    kernel: K,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
    fit_options: &FitOptions,
    train_options: &TrainOptions,
) -> Result<Trained<K>> {
    ExactGp::fit_with_options(kernel, x, y, noise_variance, fit_options)?.optimize(train_options)
}
