//! What the factorized CG solvers return, and the bookkeeping they share (which mirrors
//! [`CgSolver::step`](crate::CgSolver::step) so that iteration counts and statuses agree with
//! plain CG).

use faer::Col;

use super::options::FactorizedCgOptions;
use super::vector::FactorizedVector;
use crate::error::Result;
use crate::krylov::scale::is_rounding_level;
use crate::tridiagonal::SymTridiagonal;

/// Why a factorized CG solve stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FactorizedStatus {
    /// The tolerance was met (or the squared residual norm became exactly zero).
    Converged,
    /// `max_iterations` was reached without meeting the tolerance.
    MaxIterations,
    /// The iteration broke down; the solution holds the last iterate.
    Breakdown(FactorizedBreakdown),
}

impl FactorizedStatus {
    /// Whether the tolerance was met.
    pub fn is_converged(&self) -> bool {
        matches!(self, Self::Converged)
    }

    /// Whether the iteration broke down.
    pub fn is_breakdown(&self) -> bool {
        matches!(self, Self::Breakdown(_))
    }
}

/// A numerical breakdown of a factorized CG solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FactorizedBreakdown {
    /// The curvature `pᵀ K̃ p` of a search direction, computed by the factorized inner
    /// product, was zero or negative: `K_G` or `S` is not positive semi-definite (with
    /// `σ² = 0`: `K̃` is singular on the Krylov space).
    NonPositiveCurvature {
        /// The curvature found.
        curvature: f64,
    },
    /// The factorized squared residual norm `r̂ᵀS r̂ + 2 c η + c² ρ` came out negative. It is
    /// a sum of terms that cancel as the residual shrinks, so this means that the residual
    /// fell below what the representation resolves (roughly `√ε` times the size of its two
    /// parts, which happens when `z₀` lies almost in `range(W)`), or that `S` is not
    /// positive semi-definite or `(g, ρ)` do not come from one `z₀`.
    NegativeSquaredNorm {
        /// The value found.
        value: f64,
    },
    /// A NaN or infinite value appeared.
    NonFinite,
}

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
    /// Relative residual norms `‖r_j‖₂ / rhs_norm` for `j = 0..=iterations`, computed by
    /// factorized inner products. A step that ended in a non-finite or negative squared
    /// norm adds no entry.
    pub residual_norms: Vec<f64>,
    /// Step lengths `α_1..α_J`.
    pub alphas: Vec<f64>,
    /// Ratios `β_j = ‖r_j‖² / ‖r_{j−1}‖²`, one per completed step with a valid residual.
    pub betas: Vec<f64>,
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
    /// quadrature of `log det K̃`, GSGP spec §3.10); see
    /// [`SymTridiagonal::from_cg_coefficients`].
    pub fn tridiagonal(&self) -> Result<SymTridiagonal> {
        SymTridiagonal::from_cg_coefficients(&self.alphas, &self.betas)
    }

    /// The final relative residual norm.
    pub fn final_residual(&self) -> f64 {
        self.residual_norms.last().copied().unwrap_or(f64::NAN)
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
    options: FactorizedCgOptions,
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
            options: *options,
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
        if rr_new == 0.0 || (next >= self.options.min_iterations && rel <= self.options.tolerance) {
            self.status = Some(FactorizedStatus::Converged);
            return None;
        }
        if next >= self.options.max_iterations {
            self.status = Some(FactorizedStatus::MaxIterations);
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
            // A record always ends with a status; `running` here is a solver bug, reported
            // as the iteration cap rather than a panic.
            status: self.status.unwrap_or(FactorizedStatus::MaxIterations),
            iterations: self.iterations,
            rhs_norm: self.rhs_norm,
            residual_norms: self.residual_norms,
            alphas: self.alphas,
            betas: self.betas,
            iterates: self.iterates,
        }
    }
}
