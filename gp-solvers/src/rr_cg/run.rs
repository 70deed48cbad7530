//! One batched CG run with Russian-roulette accumulators.

use faer::{Mat, MatRef};
use gp_linalg::LinearOperator;
use rand::RngCore;

use crate::cg::columns::column_major;
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
    // Every estimate is a prefix of one series: estimate_r = S_{J_r} with
    // S_j = Σ_{i ≤ j} w_i Δ_i. So one running sum (added to in the pass that forms each
    // increment) and a snapshot at each draw give every estimate with the additions, in
    // the order, of one accumulator per draw. While every weight so far is 1 (j ≤ J_min),
    // S_j is the CG iterate itself (`x += 1·Δ`, the same bits), and no sum is kept.
    let mut sum: Option<Vec<f64>> = None;
    let mut estimates: Vec<Option<Mat<f64>>> = vec![None; draws.len()];
    loop {
        let j = solver.iteration() + 1;
        if j > j_hi {
            break; // the solver stops there (its iteration cap)
        }
        let weight = law.weight(j);
        if sum.is_none() && weight != 1.0 {
            sum = Some(column_major(solver.solution()));
        }
        let step = match sum.as_mut() {
            Some(sum) => solver.step_accumulating(weight, &mut [sum.as_mut_slice()])?,
            None => solver.step()?,
        };
        if step.is_none() {
            break;
        }
        snapshot(&solver, sum.as_deref(), draws, &mut estimates, |draw| {
            draw == j
        });
    }
    // Draws past the last iteration (every column stopped first) end with the full sum.
    snapshot(&solver, sum.as_deref(), draws, &mut estimates, |_| true);
    let estimates = estimates.into_iter().flatten().collect();
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

/// Takes the running sum (the iterate while no sum is kept) as the estimate of every draw
/// that `due` selects and that has none yet.
fn snapshot(
    solver: &CgSolver<'_>,
    sum: Option<&[f64]>,
    draws: &[usize],
    estimates: &mut [Option<Mat<f64>>],
    due: impl Fn(usize) -> bool,
) {
    for (estimate, &draw) in estimates.iter_mut().zip(draws) {
        if estimate.is_none() && due(draw) {
            let x = solver.solution();
            *estimate = Some(match sum {
                Some(sum) => MatRef::from_column_major_slice(sum, x.nrows(), x.ncols()).to_owned(),
                None => x.to_owned(),
            });
        }
    }
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
