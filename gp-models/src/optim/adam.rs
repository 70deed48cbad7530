//! Adam (Kingma & Ba, 2015), for objectives whose gradients are stochastic estimates.
//!
//! ```text
//! m ← β₁ m + (1 − β₁) g,   v ← β₂ v + (1 − β₂) g²,
//! x ← x − η m̂ / (√v̂ + ε),  m̂ = m / (1 − β₁ᵗ),  v̂ = v / (1 − β₂ᵗ).
//! ```
//!
//! A failed evaluation (error or non-finite value) at a new point halves the step back
//! towards the previous point, up to [`AdamOptions::max_retries`] times in a row.

use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};
use crate::optim::evaluator::Evaluator;
use crate::optim::result::{inf_norm, ConvergenceReason, OptimResult, TrajectoryPoint};

/// Options of [`adam`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamOptions {
    /// Step size `η` (default `0.01`; in log-hyperparameter space `0.05`–`0.1` is common
    /// for GP training).
    pub learning_rate: f64,
    /// Decay of the first-moment estimate `β₁` (default `0.9`).
    pub beta1: f64,
    /// Decay of the second-moment estimate `β₂` (default `0.999`).
    pub beta2: f64,
    /// `ε` in the denominator (default `1e-8`).
    pub eps: f64,
    /// Number of updates (default 1000).
    pub iterations: usize,
    /// Stop early when the largest absolute gradient component is at most this; 0 (the
    /// default) disables the test, as suits stochastic gradients.
    pub gradient_tolerance: f64,
    /// How many times in a row a failed evaluation may halve the step before the run
    /// gives up with an error (default 30).
    pub max_retries: usize,
    /// Step-size decay at fixed fractions of the run (PyTorch's `MultiStepLR`); default
    /// `None` (constant step size).
    pub learning_rate_decay: Option<MultiStepDecay>,
}

/// Multiplies the step size by `factor` after each of three milestones, given as fractions
/// of [`AdamOptions::iterations`] (PyTorch's `MultiStepLR`; the paper's GP training uses
/// ×0.1 at 50%, 70% and 90%, its RFF runs ×0.5 at 85%, 90%, 95%).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MultiStepDecay {
    /// The milestones as fractions of the run, each in `(0, 1]`.
    pub fractions: [f64; 3],
    /// The factor applied at each milestone, in `(0, 1]`.
    pub factor: f64,
}

impl MultiStepDecay {
    /// The schedule of the paper's CG/RR-CG/Cholesky training: ×0.1 at 50%, 70%, 90%.
    pub fn paper_gp() -> Self {
        Self {
            fractions: [0.5, 0.7, 0.9],
            factor: 0.1,
        }
    }

    /// The schedule of the paper's RFF baseline (spec `rtgps.md` §5.2): ×0.5 at 85%, 90%,
    /// 95%.
    pub fn paper_rff() -> Self {
        Self {
            fractions: [0.85, 0.9, 0.95],
            factor: 0.5,
        }
    }

    /// The multiplier of step `t` (1-based) of a run of `iterations` steps: `factor^m`
    /// with `m` the number of milestones `⌊f · iterations⌋` already passed (`t >` the
    /// milestone).
    pub fn multiplier(&self, t: usize, iterations: usize) -> f64 {
        let passed = self
            .fractions
            .iter()
            .filter(|&&f| t > (f * iterations as f64).floor() as usize)
            .count();
        self.factor.powi(passed as i32)
    }
}

impl Default for AdamOptions {
    fn default() -> Self {
        Self {
            learning_rate: 0.01,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            iterations: 1000,
            gradient_tolerance: 0.0,
            max_retries: 30,
            learning_rate_decay: None,
        }
    }
}

impl AdamOptions {
    fn validate(&self) -> Result<()> {
        let bad = |name, reason: &str| {
            Err(ModelError::InvalidOption {
                name,
                reason: reason.to_string(),
            })
        };
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return bad("AdamOptions::learning_rate", "must be finite and positive");
        }
        if !(0.0..1.0).contains(&self.beta1) {
            return bad("AdamOptions::beta1", "must lie in [0, 1)");
        }
        if !(0.0..1.0).contains(&self.beta2) {
            return bad("AdamOptions::beta2", "must lie in [0, 1)");
        }
        if !(self.eps > 0.0 && self.eps.is_finite()) {
            return bad("AdamOptions::eps", "must be finite and positive");
        }
        if self.gradient_tolerance.is_nan() || self.gradient_tolerance < 0.0 {
            return bad("AdamOptions::gradient_tolerance", "must be non-negative");
        }
        if let Some(decay) = self.learning_rate_decay {
            if !(decay.factor > 0.0 && decay.factor <= 1.0) {
                return bad("MultiStepDecay::factor", "must lie in (0, 1]");
            }
            if decay.fractions.iter().any(|f| !(*f > 0.0 && *f <= 1.0)) {
                return bad("MultiStepDecay::fractions", "each must lie in (0, 1]");
            }
        }
        Ok(())
    }
}

/// Minimizes `objective` from `x0` by Adam.
///
/// Returns the last iterate (not the best one seen: with stochastic objectives the values
/// along the trajectory are noisy; the trajectory is in the result). Errors: invalid
/// options, a failed start (the objective's own error or [`ModelError::Optimizer`]), a
/// gradient of the wrong length, or more than `max_retries` failures in a row.
///
/// ```
/// use gp_models::optim::{adam, AdamOptions};
///
/// let opts = AdamOptions { learning_rate: 0.1, iterations: 500, ..AdamOptions::default() };
/// let res = adam(|x: &[f64]| Ok(((x[0] - 3.0).powi(2), vec![2.0 * (x[0] - 3.0)])), &[0.0], &opts)?;
/// assert!((res.x[0] - 3.0).abs() < 1e-2);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
pub fn adam<F>(objective: F, x0: &[f64], options: &AdamOptions) -> Result<OptimResult>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    adam_observed(objective, x0, options, &mut |_| ControlFlow::Continue(()))
}

/// [`adam`] with an observer called after every step with the new trajectory point (not
/// for the starting point); returning [`ControlFlow::Break`] stops the run with
/// [`ConvergenceReason::Stopped`] at that point.
///
/// Errors as [`adam`].
pub fn adam_observed<F>(
    objective: F,
    x0: &[f64],
    options: &AdamOptions,
    observer: &mut dyn FnMut(&TrajectoryPoint) -> ControlFlow<()>,
) -> Result<OptimResult>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    adam_resumable(objective, AdamStart::Point(x0), options, &mut |point, _| {
        observer(point)
    })
}

/// Everything Adam carries from one step to the next: enough to continue a run exactly
/// where it stopped (a training of hours, checkpointed to disk).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdamState {
    /// Steps taken (0 at the start).
    pub iteration: usize,
    /// The current point.
    pub x: Vec<f64>,
    /// The objective at `x`.
    pub f: f64,
    /// The gradient at `x` (the next step's input: a resumed run does not evaluate `x`
    /// again, so a stochastic objective's draws continue unchanged).
    pub gradient: Vec<f64>,
    /// The first-moment estimate `m`.
    pub m: Vec<f64>,
    /// The second-moment estimate `v`.
    pub v: Vec<f64>,
    /// Evaluations so far, failed ones included.
    pub evaluations: usize,
    /// Evaluations that failed.
    pub failed_evaluations: usize,
}

impl AdamState {
    /// Checks that the state is one `options` can continue: equal lengths, finite values,
    /// no more steps than the run has.
    fn validate(&self, options: &AdamOptions) -> Result<()> {
        let dim = self.x.len();
        if dim == 0 {
            return Err(ModelError::Optimizer {
                reason: "the resumed Adam state has an empty point".into(),
            });
        }
        for (context, len) in [
            ("the resumed Adam state's gradient", self.gradient.len()),
            ("the resumed Adam state's first moment", self.m.len()),
            ("the resumed Adam state's second moment", self.v.len()),
        ] {
            if len != dim {
                return Err(ModelError::LengthMismatch {
                    context,
                    expected: dim,
                    found: len,
                });
            }
        }
        let finite = self.f.is_finite()
            && [&self.x, &self.gradient, &self.m, &self.v]
                .iter()
                .all(|c| c.iter().all(|v| v.is_finite()));
        if !finite || self.v.iter().any(|&v| v < 0.0) {
            return Err(ModelError::Optimizer {
                reason: "the resumed Adam state has a non-finite value or a negative second \
                         moment: it was not written by this optimizer"
                    .into(),
            });
        }
        if self.iteration > options.iterations {
            return Err(ModelError::Optimizer {
                reason: format!(
                    "the resumed Adam state is at step {} but the run has only {} steps",
                    self.iteration, options.iterations
                ),
            });
        }
        Ok(())
    }
}

/// Where [`adam_resumable`] starts.
#[derive(Debug, Clone, Copy)]
pub enum AdamStart<'a> {
    /// A new run from this point (evaluated first).
    Point(&'a [f64]),
    /// The continuation of a run from its recorded state (not evaluated again).
    Resume(&'a AdamState),
}

/// [`adam_observed`] that can continue a recorded run: the observer also sees the state
/// after each step, and a run started from that state ([`AdamStart::Resume`]) takes the same
/// steps as the uninterrupted one would have (for a stochastic objective, provided its
/// random draws continue where they stopped too). The result's trajectory starts at the
/// resumed point.
///
/// Errors as [`adam`], and for a resumed state of the wrong dimensions, with non-finite
/// values, or past the run's last step.
pub fn adam_resumable<F>(
    objective: F,
    start: AdamStart<'_>,
    options: &AdamOptions,
    observer: &mut dyn FnMut(&TrajectoryPoint, &AdamState) -> ControlFlow<()>,
) -> Result<OptimResult>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    options.validate()?;
    let mut s = match start {
        // f and the gradient are filled in by the first evaluation below.
        AdamStart::Point(x0) => AdamState {
            iteration: 0,
            x: x0.to_vec(),
            f: 0.0,
            gradient: Vec::new(),
            m: vec![0.0; x0.len()],
            v: vec![0.0; x0.len()],
            evaluations: 0,
            failed_evaluations: 0,
        },
        AdamStart::Resume(state) => {
            state.validate(options)?;
            state.clone()
        }
    };
    let dim = s.x.len();
    let mut eval = Evaluator::new(objective, dim);
    if let AdamStart::Point(x0) = start {
        let (f, g) = eval.eval_start(x0)?;
        s.f = f;
        s.gradient = g;
    } else {
        eval.evaluations = s.evaluations;
        eval.failed = s.failed_evaluations;
    }
    let mut trajectory = vec![TrajectoryPoint {
        iteration: s.iteration,
        f: s.f,
        x: s.x.clone(),
        grad_norm: inf_norm(&s.gradient),
        evaluations: eval.evaluations,
    }];
    let mut reason = ConvergenceReason::MaxIterations;
    for t in s.iteration + 1..=options.iterations {
        if options.gradient_tolerance > 0.0 && inf_norm(&s.gradient) <= options.gradient_tolerance {
            reason = ConvergenceReason::GradientTolerance;
            break;
        }
        let c1 = 1.0 - options.beta1.powi(t.min(i32::MAX as usize) as i32);
        let c2 = 1.0 - options.beta2.powi(t.min(i32::MAX as usize) as i32);
        let learning_rate = options.learning_rate
            * options
                .learning_rate_decay
                .map_or(1.0, |decay| decay.multiplier(t, options.iterations));
        let mut step = vec![0.0; dim];
        for (((step, m), v), &g) in step.iter_mut().zip(&mut s.m).zip(&mut s.v).zip(&s.gradient) {
            *m = options.beta1 * *m + (1.0 - options.beta1) * g;
            *v = options.beta2 * *v + (1.0 - options.beta2) * g * g;
            let m_hat = *m / c1;
            let v_hat = *v / c2;
            *step = -learning_rate * m_hat / (v_hat.sqrt() + options.eps);
        }
        let mut retries = 0;
        let (x_new, f_new, g_new) = loop {
            let candidate: Vec<f64> = s.x.iter().zip(&step).map(|(a, b)| a + b).collect();
            if let Some((fc, gc)) = eval.eval(&candidate)? {
                break (candidate, fc, gc);
            }
            retries += 1;
            if retries > options.max_retries {
                return Err(ModelError::Optimizer {
                    reason: format!(
                        "Adam: the objective failed {retries} times in a row at iteration {t} \
                         (last error: {})",
                        eval.last_error
                            .as_ref()
                            .map_or("non-finite value".to_string(), |e| e.to_string())
                    ),
                });
            }
            for v in &mut step {
                *v *= 0.5;
            }
        };
        s.x = x_new;
        s.f = f_new;
        s.gradient = g_new;
        s.iteration = t;
        s.evaluations = eval.evaluations;
        s.failed_evaluations = eval.failed;
        trajectory.push(TrajectoryPoint {
            iteration: t,
            f: s.f,
            x: s.x.clone(),
            grad_norm: inf_norm(&s.gradient),
            evaluations: eval.evaluations,
        });
        if let Some(point) = trajectory.last() {
            if observer(point, &s).is_break() {
                reason = ConvergenceReason::Stopped;
                break;
            }
        }
    }
    if reason != ConvergenceReason::Stopped
        && options.gradient_tolerance > 0.0
        && inf_norm(&s.gradient) <= options.gradient_tolerance
    {
        reason = ConvergenceReason::GradientTolerance;
    }
    Ok(OptimResult {
        grad_norm: inf_norm(&s.gradient),
        x: s.x,
        f: s.f,
        grad: s.gradient,
        iterations: s.iteration,
        evaluations: eval.evaluations,
        failed_evaluations: eval.failed,
        reason,
        trajectory,
    })
}
