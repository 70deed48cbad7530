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
    options.validate()?;
    let dim = x0.len();
    let mut eval = Evaluator::new(objective, dim);
    let (mut f, mut g) = eval.eval_start(x0)?;
    let mut x = x0.to_vec();
    let mut m = vec![0.0; dim];
    let mut v = vec![0.0; dim];
    let mut trajectory = vec![TrajectoryPoint {
        iteration: 0,
        f,
        x: x.clone(),
        grad_norm: inf_norm(&g),
        evaluations: eval.evaluations,
    }];
    let mut reason = ConvergenceReason::MaxIterations;
    let mut iterations = 0;
    for t in 1..=options.iterations {
        if options.gradient_tolerance > 0.0 && inf_norm(&g) <= options.gradient_tolerance {
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
        for i in 0..dim {
            m[i] = options.beta1 * m[i] + (1.0 - options.beta1) * g[i];
            v[i] = options.beta2 * v[i] + (1.0 - options.beta2) * g[i] * g[i];
            let m_hat = m[i] / c1;
            let v_hat = v[i] / c2;
            step[i] = -learning_rate * m_hat / (v_hat.sqrt() + options.eps);
        }
        let mut retries = 0;
        let (x_new, f_new, g_new) = loop {
            let candidate: Vec<f64> = x.iter().zip(&step).map(|(a, b)| a + b).collect();
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
            for s in &mut step {
                *s *= 0.5;
            }
        };
        x = x_new;
        f = f_new;
        g = g_new;
        iterations = t;
        trajectory.push(TrajectoryPoint {
            iteration: t,
            f,
            x: x.clone(),
            grad_norm: inf_norm(&g),
            evaluations: eval.evaluations,
        });
        if let Some(point) = trajectory.last() {
            if observer(point).is_break() {
                reason = ConvergenceReason::Stopped;
                break;
            }
        }
    }
    if reason != ConvergenceReason::Stopped
        && options.gradient_tolerance > 0.0
        && inf_norm(&g) <= options.gradient_tolerance
    {
        reason = ConvergenceReason::GradientTolerance;
    }
    Ok(OptimResult {
        grad_norm: inf_norm(&g),
        x,
        f,
        grad: g,
        iterations,
        evaluations: eval.evaluations,
        failed_evaluations: eval.failed,
        reason,
        trajectory,
    })
}
