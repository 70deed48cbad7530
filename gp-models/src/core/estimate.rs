//! What one evaluation of the log marginal likelihood returns ([`LmlEstimate`], exact or
//! stochastic), what the caller asks of it ([`LmlRequest`]), and how a solve ended
//! ([`SolveReport`]).

use std::time::Duration;

use gp_solvers::{Estimate, Probes};

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

/// An estimate of the log marginal likelihood and, on request, its gradient: what
/// [`GpModel::lml`](crate::GpModel::lml) returns for
/// every model. For exact models (`ExactGp`) the standard errors are zero, there are no
/// probes and no solve.
///
/// For the iterative models:
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

impl SolveReport {
    /// The report of a direct (factorization) solve: no iterations, converged, zero residual.
    pub fn direct() -> Self {
        Self {
            iterations: 0,
            iterations_per_column: Vec::new(),
            converged: true,
            max_relative_residual: 0.0,
        }
    }
}

impl std::fmt::Display for SolveReport {
    /// `converged in 45 iterations (max relative residual 3.1e-9)`, or `NOT converged …`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.iterations == 0 && self.iterations_per_column.is_empty() {
            return write!(f, "direct solve");
        }
        write!(
            f,
            "{} in {} iterations (max relative residual {:.1e})",
            if self.converged {
                "converged"
            } else {
                "NOT converged"
            },
            self.iterations,
            self.max_relative_residual
        )
    }
}

impl LmlEstimate {
    /// The exact log marginal likelihood `lml = −½ data_fit − ½ log_det − (n/2) log 2π` of a
    /// model solved by factorization: zero standard errors, no probes, a direct solve.
    /// `grad` is empty when the gradient was not asked for.
    pub fn exact(lml: f64, grad: Vec<f64>, data_fit: f64, log_det: f64) -> Self {
        let grad_std_error = vec![0.0; grad.len()];
        Self {
            lml,
            lml_std_error: 0.0,
            grad,
            grad_std_error,
            data_fit,
            // Zero standard error, not the NaN of an average over no probes: exact.
            log_det: Estimate {
                value: log_det,
                per_probe: Vec::new(),
                offset: log_det,
                std_error: 0.0,
            },
            solve: SolveReport::direct(),
            preconditioner_rank: 0,
            times: PhaseTimes::default(),
        }
    }

    /// Whether the value is exact (no probes: the standard error is zero by construction).
    pub fn is_exact(&self) -> bool {
        self.log_det.per_probe.is_empty() && self.lml_std_error == 0.0
    }

    /// The number of probes behind the stochastic terms (0 for an exact value).
    pub fn probes(&self) -> usize {
        self.log_det.per_probe.len()
    }
}

impl std::fmt::Display for LmlEstimate {
    /// One line: the value with its standard error, how it was computed, and a warning when
    /// the solve behind it did not converge (then the standard error, which counts only the
    /// probes' randomness, does not bound the error of the value).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_exact() {
            write!(f, "log marginal likelihood {:.6} (exact)", self.lml)?;
        } else {
            write!(
                f,
                "log marginal likelihood {:.6} ± {:.3} (SLQ, {} probes; solve {})",
                self.lml,
                self.lml_std_error,
                self.probes(),
                self.solve
            )?;
            if !self.solve.converged {
                write!(
                    f,
                    "; WARNING: the solve did not converge, so the value is biased and its \
                     standard error (probe noise only) is not its error"
                )?;
            }
        }
        if !self.grad.is_empty() {
            write!(f, "; gradient of {} components", self.grad.len())?;
        }
        Ok(())
    }
}

/// Where the probe vectors of a stochastic estimate come from.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
// The given probes are held inline: a request is built once per evaluation and the
// variants' size difference costs nothing measurable.
#[allow(clippy::large_enum_variant)]
pub enum ProbeSource {
    /// Drawn from the seed in the model's options (the same model gives the same estimate).
    #[default]
    OptionsSeed,
    /// Drawn from this seed.
    Seed(u64),
    /// Given by the caller (`E[zzᵀ] = I`). `log_det` serves the log determinant (and, for
    /// models whose traces use the same probes, the gradient's traces); `trace` the traces
    /// of models that draw them separately (GSGP's grid-space probes; required there for a
    /// gradient).
    Given {
        /// Probes of the log-determinant estimate.
        log_det: Probes,
        /// Probes of the gradient's trace estimates, where a model draws them separately.
        trace: Option<Probes>,
    },
}

/// What a log-marginal-likelihood evaluation should return and with which probes.
///
/// ```
/// use gp_models::{LmlRequest, ProbeSource};
///
/// let value_only = LmlRequest::value();
/// assert!(!value_only.gradient);
/// let with_grad = LmlRequest { probes: ProbeSource::Seed(7), ..LmlRequest::with_gradient() };
/// assert!(with_grad.gradient);
/// ```
#[derive(Debug, Clone, Default)]
pub struct LmlRequest {
    /// Also compute the gradient with respect to every log hyperparameter (default `false`).
    pub gradient: bool,
    /// The probes of stochastic estimates (ignored by exact models).
    pub probes: ProbeSource,
}

impl LmlRequest {
    /// The value only, with the options' probes.
    pub fn value() -> Self {
        Self::default()
    }

    /// The value and the gradient, with the options' probes.
    pub fn with_gradient() -> Self {
        Self {
            gradient: true,
            probes: ProbeSource::OptionsSeed,
        }
    }

    /// The value and, if `gradient`, the gradient, with probes drawn from `seed`.
    pub fn seeded(gradient: bool, seed: u64) -> Self {
        Self {
            gradient,
            probes: ProbeSource::Seed(seed),
        }
    }
}
