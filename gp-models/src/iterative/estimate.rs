//! What one stochastic evaluation of the log marginal likelihood returns.

use std::time::Duration;

use gp_solvers::Estimate;

/// How a batched CG solve ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveReport {
    /// Iterations of the batch (the largest over its columns).
    pub iterations: usize,
    /// Iterations of each column (right-hand side), in the order of the solve.
    pub iterations_per_column: Vec<usize>,
    /// Whether every column met its tolerance (columns stopped by the iteration cap did
    /// not).
    pub converged: bool,
    /// The largest final relative residual `‖b − K̂x‖ / ‖b‖` over the columns.
    pub max_relative_residual: f64,
}

/// Wall-clock time of the phases of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PhaseTimes {
    /// Pivoted Cholesky of `K` and the preconditioner `L Lᵀ + σ²I` (zero without one).
    pub preconditioner: Duration,
    /// Drawing the probes (and `P⁻¹Z`).
    pub probes: Duration,
    /// The batched CG solve on `[y | z₁..z_t]`.
    pub solve: Duration,
    /// SLQ: eigen-decompositions of the probe tridiagonals.
    pub log_det: Duration,
    /// The matrix-free pass of derivative contractions `uᵀ (∂K/∂θ) w`.
    pub derivatives: Duration,
    /// The whole evaluation.
    pub total: Duration,
}

/// A stochastic estimate of the log marginal likelihood and its gradient, from
/// [`IterativeGp::lml_and_grad_estimate`](crate::IterativeGp::lml_and_grad_estimate).
///
/// `lml = −½ (y−m)ᵀα − ½ log det K̂ − (n/2) log 2π` with `α` from CG and `log det K̂` from
/// SLQ; the gradient (order of [`IterativeGp::param_names`](crate::IterativeGp::param_names))
/// is `½ αᵀ(∂K̂/∂θ)α − ½ tr(K̂⁻¹ ∂K̂/∂θ)` with Hutchinson traces from the same probe solves.
/// Only the probes are random: the standard errors are those of the probe averages (they
/// do not include the deterministic CG truncation error).
#[derive(Debug, Clone, PartialEq)]
pub struct LmlEstimate {
    /// The estimate of `log p(y | X, θ)`.
    pub lml: f64,
    /// Its standard error: half the SLQ standard error (`sd / √t` over the probes).
    pub lml_std_error: f64,
    /// The gradient estimate with respect to every log hyperparameter (the kernel's, then
    /// `log σ²`).
    pub grad: Vec<f64>,
    /// Standard error of each gradient component (from the per-probe Hutchinson terms).
    pub grad_std_error: Vec<f64>,
    /// The data-fit term `(y − m)ᵀα` (α from CG; exact up to the CG residual).
    pub data_fit: f64,
    /// The SLQ estimate of `log det K̂` (`log det P` plus the per-probe quadratures).
    pub log_det: Estimate,
    /// How the batched solve on `[y | z₁..z_t]` ended.
    pub solve: SolveReport,
    /// The rank of the pivoted-Cholesky preconditioner reached (0 without one).
    pub preconditioner_rank: usize,
    /// Time spent in each phase.
    pub times: PhaseTimes,
}
