//! One batched CG run with Russian-roulette accumulators.

use faer::{ColRef, Mat, MatRef};
use gp_linalg::LinearOperator;
use rand::RngCore;

use crate::cg::{CgColumn, CgOptions, CgSolver};
use crate::error::{invalid, Result};
use crate::precond::Preconditioner;
use crate::truncation::TruncationLaw;

/// Options of [`rr_cg`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrCgOptions {
    /// Relative residual at which a column stops contributing (its remaining increments
    /// are taken as zero). Default `1e-10`.
    ///
    /// Why not 0: past convergence CG's increments are rounding noise, and the weights
    /// `1/P(J ≥ j)` grow like `e^{λ (j − j_min)}`, so a long draw would amplify that noise
    /// by many orders of magnitude. Freezing a converged column keeps the estimator
    /// unbiased for the frozen series (spec §8.5: the accumulators are never replaced by
    /// the plain solution, as the reference code does); the bias left is the tolerance's.
    /// `0.0` runs every column to the largest draw (or an exactly zero residual).
    pub tolerance: f64,
    /// Fully re-orthogonalize CG's residuals (exact-arithmetic behaviour at `O(n j)` cost
    /// per step; see [`CgOptions::reorthogonalize`]). Default `false`.
    pub reorthogonalize: bool,
}

impl Default for RrCgOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-10,
            reorthogonalize: false,
        }
    }
}

/// What [`rr_cg`] returns.
#[derive(Debug, Clone)]
pub struct RrCgResult {
    /// The plain CG iterate after [`iterations`](Self::iterations) steps (the truncated
    /// series `Σ_{j ≤ max J} Δ_j`; the biased solve of truncated CG).
    pub plain: Mat<f64>,
    /// One Russian-roulette estimate `Σ_{j ≤ J_r} Δ_j / P(J ≥ j)` per draw `J_r` (same
    /// shape as the right-hand sides).
    pub estimates: Vec<Mat<f64>>,
    /// The draws `J_r`, in the order given.
    pub draws: Vec<usize>,
    /// Iterations run: the largest draw, or fewer if every column stopped before.
    pub iterations: usize,
    /// Per column: status, `α`/`β` (hence the Lanczos tridiagonal), residual history.
    pub columns: Vec<CgColumn>,
}

impl RrCgResult {
    /// The mean of all estimates: the variance-reduced RR solve (used for the probe solves
    /// of the trace term, spec §2.1).
    pub fn mean_estimate(&self) -> Mat<f64> {
        mean_of(&self.estimates)
    }

    /// Two independent estimates: the mean of the first `⌊r/2⌋` and the mean of the
    /// remaining draws (for a quadratic form `aᵀMa` estimated without bias by `â₁ᵀMâ₂`).
    ///
    /// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for
    /// fewer than two draws: one draw cannot give two independent factors.
    pub fn independent_halves(&self) -> Result<(Mat<f64>, Mat<f64>)> {
        let r = self.estimates.len();
        check_two_draws(r)?;
        let half = r / 2;
        Ok((
            mean_of(&self.estimates[..half]),
            mean_of(&self.estimates[half..]),
        ))
    }
}

/// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for fewer
/// than two draws: one draw cannot give two independent estimates.
pub(super) fn check_two_draws(r: usize) -> Result<()> {
    if r < 2 {
        return Err(invalid(
            "draws",
            format!(
                "two independent RR estimates need at least two draws of J, got {r}; pass two \
                 or more draws"
            ),
        ));
    }
    Ok(())
}

/// The mean of a non-empty list of equally shaped matrices.
fn mean_of(parts: &[Mat<f64>]) -> Mat<f64> {
    let mut mean = parts[0].clone();
    for p in &parts[1..] {
        mean += p;
    }
    mean * faer::Scale(1.0 / parts.len() as f64)
}

/// `count` independent draws of `J` from `law`.
pub fn sample_draws(law: &dyn TruncationLaw, count: usize, rng: &mut dyn RngCore) -> Vec<usize> {
    (0..count).map(|_| law.sample(rng)).collect()
}

/// Runs batched preconditioned CG on `A X = B` for `max(draws)` iterations and returns the
/// plain iterate and one Russian-roulette estimate of `A⁻¹B` per draw, weighted by `law`'s
/// survival probabilities.
///
/// Every draw must lie in `1..=law.max_support()` (a depth the law cannot produce has no
/// finite weight). Columns stop contributing once converged to
/// [`RrCgOptions::tolerance`] or on a CG breakdown.
///
/// Errors: no draws, a draw of 0 or past the law's support
/// ([`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions)), and the errors of
/// [`CgSolver::new`] (shapes, non-finite right-hand sides, a preconditioner that is not
/// SPD).
pub fn rr_cg(
    op: &dyn LinearOperator,
    rhs: MatRef<'_, f64>,
    precond: Option<&dyn Preconditioner>,
    law: &dyn TruncationLaw,
    draws: &[usize],
    options: &RrCgOptions,
) -> Result<RrCgResult> {
    let j_hi = check_draws(law, draws)?;
    if !(options.tolerance.is_finite() && options.tolerance >= 0.0) {
        return Err(invalid(
            "RrCgOptions::tolerance",
            format!("must be finite and non-negative, got {}", options.tolerance),
        ));
    }
    let cg_options = CgOptions {
        tolerance: options.tolerance,
        max_iterations: j_hi,
        min_iterations: 0,
        reorthogonalize: options.reorthogonalize,
        record_directions: false,
    };
    let mut solver = CgSolver::new(op, rhs, precond, &cg_options)?;
    let (n, m) = (rhs.nrows(), rhs.ncols());
    let mut estimates = vec![Mat::<f64>::zeros(n, m); draws.len()];
    while let Some(step) = solver.step()? {
        let j = step.iteration;
        let weight = law.weight(j);
        let increment = solver.increment();
        for (estimate, &draw) in estimates.iter_mut().zip(draws) {
            if j <= draw {
                // In place: no temporary n × m block per draw and step.
                for c in 0..m {
                    accumulate(weight, increment.col(c), estimate.col_as_slice_mut(c))?;
                }
            }
        }
    }
    let iterations = solver.iteration();
    let result = solver.into_result();
    Ok(RrCgResult {
        plain: result.solution,
        estimates,
        draws: draws.to_vec(),
        iterations,
        columns: result.columns,
    })
}

/// `e += w · v` (`gp_linalg`'s `axpy`, parallel in chunks for long vectors; elementwise, so
/// the same bits either way), through a copy when `v` is not contiguous.
fn accumulate(weight: f64, v: ColRef<'_, f64>, e: &mut [f64]) -> Result<()> {
    match v.try_as_col_major() {
        Some(v) => gp_linalg::vector::axpy(weight, v.as_slice(), e)?,
        None => gp_linalg::vector::axpy(weight, &v.iter().copied().collect::<Vec<_>>(), e)?,
    }
    Ok(())
}

/// Checks the draws against the law; returns the largest.
pub(super) fn check_draws(law: &dyn TruncationLaw, draws: &[usize]) -> Result<usize> {
    let top = law.max_support();
    if let Some(&bad) = draws.iter().find(|&&j| j == 0 || j > top) {
        return Err(invalid(
            "draws",
            format!("every truncation depth must lie in 1..={top} (the law's support), got {bad}"),
        ));
    }
    draws
        .iter()
        .copied()
        .max()
        .ok_or_else(|| invalid("draws", "need at least one draw of the truncation depth J"))
}
