//! Limited-memory BFGS (Nocedal & Wright, *Numerical Optimization*, 2nd ed., Algorithm 7.5)
//! with the two-loop recursion (Algorithm 7.4) and a strong-Wolfe line search.
//!
//! Details:
//!
//! * The initial inverse Hessian of each two-loop recursion is `γ I` with
//!   `γ = sᵀy / yᵀy` of the newest pair (N&W eq. 7.20).
//! * A pair `(s, y)` enters the memory only if `sᵀy > ε yᵀy` (ε the machine epsilon), which
//!   keeps the approximation positive definite when the line search returns a step with
//!   sufficient decrease but without the curvature condition.
//! * The first step (and every step after a reset) has length `min(1, 1/‖g‖₂)` along
//!   `−g`; later steps start at 1.
//! * If the line search fails along the quasi-Newton direction, the memory is cleared and
//!   the search is retried once along `−g`; only a failure there ends the run
//!   ([`ConvergenceReason::LineSearchFailed`]).
//! * Failed evaluations (errors or non-finite values) shrink the step, see
//!   [`line_search`](crate::optim::line_search).

use std::collections::VecDeque;
use std::ops::ControlFlow;

use crate::error::{ModelError, Result};
use crate::optim::evaluator::Evaluator;
use crate::optim::line_search::{strong_wolfe, LineSearchOptions, LineSearchOutcome};
use crate::optim::result::{inf_norm, ConvergenceReason, OptimResult, TrajectoryPoint};

/// Options of [`lbfgs`].
///
/// The run stops on the gradient (the largest absolute component at most `1e-5`, SciPy's
/// `pgtol` as scikit-learn's Gaussian process regressor uses it), an iteration or
/// evaluation limit, or a line search that finds no decrease. The stop on a small change
/// of the objective (SciPy's `factr`) is off by default (`function_tolerance = 0`): in a
/// flat region (length scales far too short for the data, every kernel entry ≈ 0) the
/// objective changes by less than `1e7 · ε` relative per iteration while the model is far
/// from an optimum, and such a run used to report convergence. Set
/// `function_tolerance = 1e7 * f64::EPSILON` (≈ `2.2e-9`) for SciPy's behaviour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsOptions {
    /// Number of correction pairs kept (default 10).
    pub memory: usize,
    /// Stop when the largest absolute gradient component is at most this (default `1e-5`).
    pub gradient_tolerance: f64,
    /// Stop when `(f_k − f_{k+1}) / max(|f_k|, |f_{k+1}|, 1)` is at most this (default
    /// `0`: off, see above; the test depends on the objective's additive constant).
    pub function_tolerance: f64,
    /// Maximum iterations (default 1000).
    pub max_iterations: usize,
    /// Maximum objective evaluations, failed ones included (default 5000).
    pub max_evaluations: usize,
    /// The line search.
    pub line_search: LineSearchOptions,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        Self {
            memory: 10,
            gradient_tolerance: 1e-5,
            function_tolerance: 0.0,
            max_iterations: 1000,
            max_evaluations: 5000,
            line_search: LineSearchOptions::default(),
        }
    }
}

impl LbfgsOptions {
    fn validate(&self) -> Result<()> {
        let bad = |name, reason: &str| {
            Err(ModelError::InvalidOption {
                name,
                reason: reason.to_string(),
            })
        };
        if self.memory == 0 {
            return bad("LbfgsOptions::memory", "must be at least 1");
        }
        if self.gradient_tolerance.is_nan() || self.gradient_tolerance < 0.0 {
            return bad("LbfgsOptions::gradient_tolerance", "must be non-negative");
        }
        if self.function_tolerance.is_nan() || self.function_tolerance < 0.0 {
            return bad("LbfgsOptions::function_tolerance", "must be non-negative");
        }
        self.line_search.validate()
    }
}

/// A correction pair with `ρ = 1 / sᵀy`.
struct Pair {
    s: Vec<f64>,
    y: Vec<f64>,
    rho: f64,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The two-loop recursion: returns `−H g`.
fn direction(memory: &VecDeque<Pair>, g: &[f64]) -> Vec<f64> {
    let mut q = g.to_vec();
    let mut alphas = vec![0.0; memory.len()];
    for (k, pair) in memory.iter().enumerate().rev() {
        let a = pair.rho * dot(&pair.s, &q);
        alphas[k] = a;
        for (qi, yi) in q.iter_mut().zip(&pair.y) {
            *qi -= a * yi;
        }
    }
    if let Some(last) = memory.back() {
        let gamma = dot(&last.s, &last.y) / dot(&last.y, &last.y);
        for qi in &mut q {
            *qi *= gamma;
        }
    }
    for (k, pair) in memory.iter().enumerate() {
        let b = pair.rho * dot(&pair.y, &q);
        for (qi, si) in q.iter_mut().zip(&pair.s) {
            *qi += (alphas[k] - b) * si;
        }
    }
    for qi in &mut q {
        *qi = -*qi;
    }
    q
}

/// Minimizes `objective` from `x0` by L-BFGS.
///
/// The objective returns the value and the gradient; an `Err` or a non-finite value at a
/// trial point makes the line search shrink its step. At the starting point it is an
/// error: the objective's own error is returned, or [`ModelError::Optimizer`] for a
/// non-finite value. A gradient of the wrong length is always an error.
///
/// ```
/// use gp_models::optim::{lbfgs, LbfgsOptions};
///
/// let rosenbrock = |x: &[f64]| {
///     let (a, b) = (x[0], x[1]);
///     let f = (1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2);
///     let g = vec![-2.0 * (1.0 - a) - 400.0 * a * (b - a * a), 200.0 * (b - a * a)];
///     Ok((f, g))
/// };
/// let res = lbfgs(rosenbrock, &[-1.2, 1.0], &LbfgsOptions::default())?;
/// assert!((res.x[0] - 1.0).abs() < 1e-4 && (res.x[1] - 1.0).abs() < 1e-4);
/// # Ok::<(), gp_models::ModelError>(())
/// ```
pub fn lbfgs<F>(objective: F, x0: &[f64], options: &LbfgsOptions) -> Result<OptimResult>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    lbfgs_observed(objective, x0, options, &mut |_| ControlFlow::Continue(()))
}

/// [`lbfgs`] with an observer called after every iteration with the new trajectory point
/// (not for the starting point); returning [`ControlFlow::Break`] stops the run with
/// [`ConvergenceReason::Stopped`] at that point.
///
/// Errors as [`lbfgs`].
pub fn lbfgs_observed<F>(
    objective: F,
    x0: &[f64],
    options: &LbfgsOptions,
    observer: &mut dyn FnMut(&TrajectoryPoint) -> ControlFlow<()>,
) -> Result<OptimResult>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    options.validate()?;
    let mut eval = Evaluator::new(objective, x0.len());
    let (mut f, mut g) = eval.eval_start(x0)?;
    let mut x = x0.to_vec();
    let mut memory: VecDeque<Pair> = VecDeque::with_capacity(options.memory);
    let mut trajectory = vec![TrajectoryPoint {
        iteration: 0,
        f,
        x: x.clone(),
        grad_norm: inf_norm(&g),
        evaluations: eval.evaluations,
    }];
    let mut iterations = 0;
    let reason = loop {
        if inf_norm(&g) <= options.gradient_tolerance {
            break ConvergenceReason::GradientTolerance;
        }
        if iterations >= options.max_iterations {
            break ConvergenceReason::MaxIterations;
        }
        if eval.evaluations >= options.max_evaluations {
            break ConvergenceReason::MaxEvaluations;
        }
        let mut ls_options = options.line_search;
        // Quasi-Newton direction first; steepest descent after a failure or a reset.
        let mut outcome = LineSearchOutcome::Failed;
        for attempt in 0..2 {
            if attempt == 1 {
                if memory.is_empty() {
                    break;
                }
                memory.clear();
            }
            // Each attempt gets what is left of the evaluation budget, so that a failed
            // first search and the retry together never exceed `max_evaluations`.
            let left = options.max_evaluations.saturating_sub(eval.evaluations);
            if left == 0 {
                break;
            }
            ls_options.max_evaluations = options.line_search.max_evaluations.min(left);
            let mut p = direction(&memory, &g);
            let slope = dot(&p, &g);
            if slope.is_nan() || slope >= 0.0 {
                memory.clear();
                p = g.iter().map(|v| -v).collect();
            }
            let a_init = if memory.is_empty() {
                (1.0 / dot(&g, &g).sqrt()).min(1.0)
            } else {
                1.0
            };
            outcome = strong_wolfe(&mut eval, &x, f, &g, &p, a_init, &ls_options)?;
            if !matches!(outcome, LineSearchOutcome::Failed) {
                break;
            }
        }
        let trial = match outcome {
            LineSearchOutcome::Wolfe(t) | LineSearchOutcome::SufficientDecrease(t) => t,
            LineSearchOutcome::Failed => break ConvergenceReason::LineSearchFailed,
        };
        iterations += 1;
        let s: Vec<f64> = trial.x.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = trial.g.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        if sy > f64::EPSILON * dot(&y, &y) {
            if memory.len() == options.memory {
                memory.pop_front();
            }
            memory.push_back(Pair {
                s,
                y,
                rho: 1.0 / sy,
            });
        }
        let f_prev = f;
        x = trial.x;
        f = trial.f;
        g = trial.g;
        trajectory.push(TrajectoryPoint {
            iteration: iterations,
            f,
            x: x.clone(),
            grad_norm: inf_norm(&g),
            evaluations: eval.evaluations,
        });
        if let Some(point) = trajectory.last() {
            if observer(point).is_break() {
                break ConvergenceReason::Stopped;
            }
        }
        let scale = f_prev.abs().max(f.abs()).max(1.0);
        if options.function_tolerance > 0.0
            && (f_prev - f) / scale <= options.function_tolerance
            && inf_norm(&g) > options.gradient_tolerance
        {
            break ConvergenceReason::FunctionTolerance;
        }
    };
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
