//! What the factorized CG solvers return, and the bookkeeping they share (which mirrors
//! [`CgSolver::step`](crate::CgSolver::step) so that iteration counts and statuses agree with
//! plain CG).

use faer::Col;

use super::options::FactorizedCgOptions;
use super::vector::FactorizedVector;
use crate::error::Result;
use crate::krylov::scale::is_rounding_level;
use crate::krylov::{KrylovRecord, StoppingRule};
use crate::tridiagonal::SymTridiagonal;

/// Why a factorized CG solve stopped: the shared [`krylov::Status`](crate::krylov::Status)
/// under its former name ([`Status::Running`](crate::krylov::Status::Running) appears in a
/// [`FactorizedCgResult`] only for a solve finished early through a step interface such as
/// [`EfcgSolver`](super::EfcgSolver)).
pub use crate::krylov::Status as FactorizedStatus;

/// A numerical breakdown of a factorized CG solve: the shared
/// [`krylov::Breakdown`](crate::krylov::Breakdown) under its former name.
pub use crate::krylov::Breakdown as FactorizedBreakdown;

/// The outcome of a factorized CG solve of `K̃ x = b` from `x₀` (the solvers see only the
/// initial residual `z₀ = b − K̃ x₀`).
#[derive(Debug, Clone)]
pub struct FactorizedCgResult {
    /// The correction `x − x₀ = W x̂ + c z₀` (for the simplified solver `c = 0`). Expand
    /// it with [`FactorizedVector::expand`] when `W` is at hand.
    pub solution: FactorizedVector,
    /// `Wᵀ(x − x₀) = S x̂ + c g` (length `m`), obtained without `W` and without an extra
    /// product (EFCG tracks `S x̂`; FCG spends one `S` product at the end). The SKI mean
    /// cache is `K_G Wᵀ x`.
    pub solution_wt: Col<f64>,
    /// Why the solve stopped.
    pub status: FactorizedStatus,
    /// Number of completed iterations (step lengths `α` taken).
    pub iterations: usize,
    /// The reference norm of the tolerance test (`‖z₀‖` unless
    /// [`reference_norm`](FactorizedCgOptions::reference_norm) was given).
    pub rhs_norm: f64,
    /// The residual history `‖r_j‖₂ / rhs_norm` (`j = 0..=iterations`, computed by
    /// factorized inner products), the step lengths `α` and the ratios
    /// `β_j = ‖r_j‖² / ‖r_{j−1}‖²`.
    pub record: KrylovRecord,
    /// The iterates `x_j − x₀` for `j = 1..=iterations`, when
    /// [`record_iterates`](FactorizedCgOptions::record_iterates) is set.
    pub iterates: Option<Vec<FactorizedVector>>,
}

impl FactorizedCgResult {
    /// Whether the tolerance was met.
    pub fn converged(&self) -> bool {
        self.status.is_converged()
    }

    /// The Lanczos tridiagonal `T` implied by the CG coefficients (for stochastic Lanczos
    /// quadrature of `log det K̃`, as the paper's §5 uses it); see
    /// [`SymTridiagonal::from_cg_coefficients`].
    pub fn tridiagonal(&self) -> Result<SymTridiagonal> {
        self.record.tridiagonal()
    }

    /// The final relative residual norm.
    pub fn final_residual(&self) -> f64 {
        self.record.final_residual()
    }
}

/// `0` for a negative `value` within the rounding-error bound `bound()`, else `value`.
fn zero_if_rounding_level(value: f64, bound: impl FnOnce() -> f64) -> f64 {
    if value < 0.0 && is_rounding_level(value, bound()) {
        0.0
    } else {
        value
    }
}

/// The per-iteration record shared by the CG variants.
pub(crate) struct Recorder {
    rule: StoppingRule,
    rr: f64,
    rhs_norm: f64,
    iterations: usize,
    residual_norms: Vec<f64>,
    alphas: Vec<f64>,
    betas: Vec<f64>,
    iterates: Option<Vec<FactorizedVector>>,
    status: Option<FactorizedStatus>,
}

impl Recorder {
    /// Starts the record for an initial squared residual norm `rr0 = ‖z₀‖²`.
    ///
    /// `rr0_bound` gives the rounding-error bound of `rr0` (see [`crate::krylov`]); it is
    /// only called when `rr0` came out negative, and a value within it counts as zero.
    pub(crate) fn new(
        options: &FactorizedCgOptions,
        rr0: f64,
        rr0_bound: impl FnOnce() -> f64,
    ) -> Self {
        let rr0 = zero_if_rounding_level(rr0, rr0_bound);
        let norm0 = rr0.max(0.0).sqrt();
        let rhs_norm = options.reference_norm.unwrap_or(norm0);
        let zero = rr0 == 0.0;
        let status = if rr0.is_nan() || rr0.is_infinite() {
            Some(FactorizedStatus::Breakdown(FactorizedBreakdown::NonFinite))
        } else if rr0 < 0.0 {
            Some(FactorizedStatus::Breakdown(
                FactorizedBreakdown::NegativeSquaredNorm { value: rr0 },
            ))
        } else if zero {
            Some(FactorizedStatus::Converged)
        } else if options.max_iterations == 0 {
            Some(FactorizedStatus::MaxIterations)
        } else {
            None
        };
        Self {
            rule: options.stopping_rule(),
            rr: rr0,
            rhs_norm,
            iterations: 0,
            residual_norms: if zero {
                vec![0.0]
            } else if norm0 > 0.0 {
                vec![norm0 / rhs_norm]
            } else {
                Vec::new()
            },
            alphas: Vec::new(),
            betas: Vec::new(),
            iterates: options.record_iterates.then(Vec::new),
            status,
        }
    }

    /// Whether the solve goes on.
    pub(crate) fn running(&self) -> bool {
        self.status.is_none()
    }

    /// The status so far ([`Status::Running`](crate::krylov::Status::Running) while the
    /// solve goes on).
    pub(crate) fn status(&self) -> FactorizedStatus {
        self.status.unwrap_or(FactorizedStatus::Running)
    }

    /// Number of completed steps.
    pub(crate) fn iterations(&self) -> usize {
        self.iterations
    }

    /// Relative residual norms so far.
    pub(crate) fn residual_norms(&self) -> &[f64] {
        &self.residual_norms
    }

    /// `α = ‖r‖² / curvature`, or `None` (and a breakdown status) if the curvature or the
    /// step is unusable.
    pub(crate) fn step_length(&mut self, curvature: f64) -> Option<f64> {
        if !curvature.is_finite() {
            self.status = Some(FactorizedStatus::Breakdown(FactorizedBreakdown::NonFinite));
            return None;
        }
        if curvature <= 0.0 {
            self.status = Some(FactorizedStatus::Breakdown(
                FactorizedBreakdown::NonPositiveCurvature { curvature },
            ));
            return None;
        }
        let alpha = self.rr / curvature;
        if !(alpha.is_finite() && alpha > 0.0) {
            self.status = Some(FactorizedStatus::Breakdown(FactorizedBreakdown::NonFinite));
            return None;
        }
        Some(alpha)
    }

    /// Whether the iterates are recorded.
    pub(crate) fn records_iterates(&self) -> bool {
        self.iterates.is_some()
    }

    /// Records the iterate `x_j − x₀ = W x̂ + c z₀` if requested.
    pub(crate) fn record_iterate(&mut self, x_hat: &[f64], cx: f64) {
        if let Some(it) = self.iterates.as_mut() {
            it.push(FactorizedVector::from_slice(x_hat, cx));
        }
    }

    /// Records a completed step with step length `alpha` and new squared residual norm
    /// `rr_new`; returns `β` if the solve goes on.
    ///
    /// `rr_bound` gives the rounding-error bound of `rr_new` (see [`crate::krylov`]); it is
    /// only called when `rr_new` came out negative. A negative value within it is zero to
    /// working precision (the residual has converged as far as the factorized
    /// representation resolves it) and ends the solve as converged; only a value beyond it
    /// is a [`FactorizedBreakdown::NegativeSquaredNorm`].
    pub(crate) fn complete_step(
        &mut self,
        alpha: f64,
        rr_new: f64,
        rr_bound: impl FnOnce() -> f64,
    ) -> Option<f64> {
        let rr_new = zero_if_rounding_level(rr_new, rr_bound);
        self.alphas.push(alpha);
        self.iterations += 1;
        if !rr_new.is_finite() {
            self.status = Some(FactorizedStatus::Breakdown(FactorizedBreakdown::NonFinite));
            return None;
        }
        if rr_new < 0.0 {
            self.status = Some(FactorizedStatus::Breakdown(
                FactorizedBreakdown::NegativeSquaredNorm { value: rr_new },
            ));
            return None;
        }
        let rel = rr_new.sqrt() / self.rhs_norm;
        self.residual_norms.push(rel);
        let beta = rr_new / self.rr;
        self.betas.push(beta);
        self.rr = rr_new;
        let next = self.iterations;
        if let Some(status) = self.rule.decide(next, rel, rr_new == 0.0) {
            self.status = Some(status);
            return None;
        }
        Some(beta)
    }

    /// The final result.
    pub(crate) fn finish(
        self,
        solution: FactorizedVector,
        solution_wt: Col<f64>,
    ) -> FactorizedCgResult {
        FactorizedCgResult {
            solution,
            solution_wt,
            // A solve finished before it stopped (through a step interface) is still
            // running.
            status: self.status.unwrap_or(FactorizedStatus::Running),
            iterations: self.iterations,
            rhs_norm: self.rhs_norm,
            record: KrylovRecord {
                residual_norms: self.residual_norms,
                alphas: self.alphas,
                betas: self.betas,
            },
            iterates: self.iterates,
        }
    }
}
