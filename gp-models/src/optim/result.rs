//! What an optimizer run returns.

/// Why an optimizer stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConvergenceReason {
    /// The largest absolute gradient component fell below the gradient tolerance (for an
    /// unconstrained problem the projected gradient is the gradient).
    GradientTolerance,
    /// The relative decrease of the objective over one iteration fell below the function
    /// tolerance.
    FunctionTolerance,
    /// The iteration limit was reached.
    MaxIterations,
    /// The evaluation limit was reached.
    MaxEvaluations,
    /// The line search found no point that decreases the objective, even along the
    /// steepest-descent direction (the current point is returned; it is usually as good
    /// as floating point allows, or the objective fails everywhere nearby).
    LineSearchFailed,
    /// The observer asked to stop (an early stop by the caller).
    Stopped,
}

impl std::fmt::Display for ConvergenceReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::GradientTolerance => "gradient tolerance met",
            Self::FunctionTolerance => "function tolerance met",
            Self::MaxIterations => "iteration limit reached",
            Self::MaxEvaluations => "evaluation limit reached",
            Self::LineSearchFailed => {
                "line search found no decrease (an optimum to rounding if the gradient is small)"
            }
            Self::Stopped => "stopped by the observer",
        })
    }
}

impl ConvergenceReason {
    /// Whether a tolerance was met (as opposed to a limit or a failure).
    pub fn is_converged(self) -> bool {
        matches!(self, Self::GradientTolerance | Self::FunctionTolerance)
    }
}

/// One point of an optimizer's trajectory (one per iteration, the starting point first).
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryPoint {
    /// Iteration number (0 for the starting point).
    pub iteration: usize,
    /// The objective value.
    pub f: f64,
    /// The point.
    pub x: Vec<f64>,
    /// Largest absolute gradient component.
    pub grad_norm: f64,
    /// Objective evaluations used so far (failed ones included).
    pub evaluations: usize,
}

/// The outcome of an optimizer run.
#[derive(Debug, Clone, PartialEq)]
pub struct OptimResult {
    /// The final point.
    pub x: Vec<f64>,
    /// The objective at `x`.
    pub f: f64,
    /// The gradient at `x`.
    pub grad: Vec<f64>,
    /// Largest absolute component of `grad` (the infinity norm).
    pub grad_norm: f64,
    /// Iterations performed.
    pub iterations: usize,
    /// Objective evaluations, failed ones included.
    pub evaluations: usize,
    /// Evaluations that returned an error or a non-finite value (each made the optimizer
    /// shrink its step).
    pub failed_evaluations: usize,
    /// Why the run stopped.
    pub reason: ConvergenceReason,
    /// The value, point and gradient norm after every iteration, starting point first.
    pub trajectory: Vec<TrajectoryPoint>,
}

/// Infinity norm of a vector.
pub(crate) fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}
