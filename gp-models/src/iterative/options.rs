//! Options of the iterative exact GP.

use gp_solvers::SlqScaling;

use crate::error::{ModelError, Result};

/// How an [`IterativeGp`](crate::IterativeGp) solves and estimates.
///
/// The defaults follow GPyTorch's recipe (10 probes, a rank-15 pivoted-Cholesky
/// preconditioner, CG capped at 1000 iterations and run for at least 20, as many as its
/// Lanczos quadrature uses) with two deliberate changes, both towards accuracy:
/// the training tolerance is `1e-2` (GPyTorch trains with a relative residual of 1 and relies
/// on the 20-iteration floor) and predictions solve to `1e-6` (GPyTorch evaluates with
/// `1e-2`), so that predicted means agree with the Cholesky model to about six digits.
///
/// ```
/// use gp_models::IterativeOptions;
///
/// let opts = IterativeOptions { probes: 20, seed: 7, ..IterativeOptions::default() };
/// assert_eq!(opts.preconditioner_rank, 15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterativeOptions {
    /// Number of probe vectors `t` for the SLQ log-determinant and the Hutchinson traces
    /// (default 10, GPyTorch's `num_trace_samples`). At least 1; the standard errors need 2.
    pub probes: usize,
    /// Relative residual tolerance `‖b − K̂x‖ / ‖b‖` of the batched CG solve on
    /// `[y | z₁..z_t]` behind the log marginal likelihood and its gradient (default `1e-2`).
    pub cg_tolerance: f64,
    /// Maximum CG iterations of every solve (default 1000, GPyTorch's `max_cg_iterations`).
    pub max_cg_iterations: usize,
    /// Minimum CG iterations of the likelihood solve before a column may stop on the
    /// tolerance (default 20, GPyTorch's floor: its Lanczos quadrature always uses 20
    /// steps). Clamped to `min(n, max_cg_iterations)`. Early CG iterates make the log
    /// determinant biased upwards (see the module documentation), so this floor matters more
    /// than the residual tolerance for the SLQ estimate.
    pub min_cg_iterations: usize,
    /// Cap on the order of the Lanczos tridiagonals used by SLQ: only the first
    /// `max_lanczos_iterations` CG coefficients of each probe enter the quadrature
    /// (GPyTorch: 20). Default `None`: every CG iteration is used (the tridiagonals come
    /// for free from CG, so a cap saves nothing here; it exists for comparisons).
    pub max_lanczos_iterations: Option<usize>,
    /// Rank `k` of the pivoted-Cholesky preconditioner `P = L Lᵀ + σ²I` (default 15,
    /// GPyTorch's later default; the RTGPS paper uses 5). `0` disables preconditioning; then
    /// the probes are Rademacher (`±1`) instead of `N(0, P)`.
    pub preconditioner_rank: usize,
    /// Relative residual tolerance of the prediction solves: `α = K̂⁻¹(y − m)` for the mean
    /// (computed once and reused) and `K̂⁻¹ K(X, x*)` for the variances (default `1e-6`).
    pub prediction_tolerance: f64,
    /// The factor in front of each probe's quadrature term (default
    /// [`SlqScaling::ProbeNorm`], `zᵀP⁻¹z`, unbiased for the quadrature value;
    /// [`SlqScaling::Dimension`] is GPyTorch's `n`, identical for Rademacher probes).
    pub slq_scaling: SlqScaling,
    /// Seed of the probes (ChaCha8, see [`Probes::generate`](gp_solvers::Probes::generate)).
    /// The same seed gives the same estimate. Default 0.
    pub seed: u64,
    /// Use the sample mean of the targets as a constant prior mean (default `false`: zero
    /// prior mean), as [`FitOptions::constant_mean`](crate::FitOptions::constant_mean).
    pub constant_mean: bool,
}

impl Default for IterativeOptions {
    fn default() -> Self {
        Self {
            probes: 10,
            cg_tolerance: 1e-2,
            max_cg_iterations: 1000,
            min_cg_iterations: 20,
            max_lanczos_iterations: None,
            preconditioner_rank: 15,
            prediction_tolerance: 1e-6,
            slq_scaling: SlqScaling::ProbeNorm,
            seed: 0,
            constant_mean: false,
        }
    }
}

impl IterativeOptions {
    /// Checks the options: at least one probe, finite non-negative tolerances, at least
    /// one CG iteration and a Lanczos cap of at least 1.
    ///
    /// Errors with [`ModelError::InvalidOption`].
    pub fn validate(&self) -> Result<()> {
        let bad = |name, reason: String| Err(ModelError::InvalidOption { name, reason });
        if self.probes == 0 {
            return bad(
                "IterativeOptions::probes",
                "need at least one probe vector (two for standard errors)".into(),
            );
        }
        for (name, tol) in [
            ("IterativeOptions::cg_tolerance", self.cg_tolerance),
            (
                "IterativeOptions::prediction_tolerance",
                self.prediction_tolerance,
            ),
        ] {
            if !(tol.is_finite() && tol >= 0.0) {
                return bad(name, format!("must be finite and non-negative, got {tol}"));
            }
        }
        if self.max_cg_iterations == 0 {
            return bad(
                "IterativeOptions::max_cg_iterations",
                "must be at least 1".into(),
            );
        }
        if self.max_lanczos_iterations == Some(0) {
            return bad(
                "IterativeOptions::max_lanczos_iterations",
                "must be at least 1 (or None for no cap)".into(),
            );
        }
        Ok(())
    }
}
