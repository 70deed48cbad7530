//! Russian-roulette accumulators for a series given iterate by iterate: the RR estimate of
//! any solver whose iterates converge to the solve (factorized CG, for example), not only
//! of [`rr_cg`](super::rr_cg)'s batched CG.

use crate::error::{invalid, Result};
use crate::truncation::TruncationLaw;

use super::run::{check_draws, check_two_draws};

/// One Russian-roulette accumulator per draw `J_r` of the series `Σ_j Δ_j` whose partial
/// sums are the iterates `x_1, x_2, …` of a solver started from `x_0 = 0`
/// (`Δ_j = x_j − x_{j−1}`):
///
/// ```text
/// estimate_r = Σ_{j ≤ J_r} Δ_j / P(J ≥ j)
/// ```
///
/// Feed the iterates in order with [`push_iterate`](Self::push_iterate); any fixed-length
/// flat representation of the iterate works (e.g. the grid part and the coefficient of a
/// factorized vector, one after the other), because the estimate is linear in it. A solver
/// that stops before the largest draw leaves the later terms zero, as
/// [`rr_cg`](super::rr_cg) does for a converged column.
///
/// ```
/// use gp_solvers::rr_cg::RrSeries;
/// use gp_solvers::truncation::{ExpDecay, TruncationLaw};
///
/// // The partial sums of Σ_j 2^{-j}; draws J = 2 and J = 4.
/// let law = ExpDecay::new(0.5, 1, 6)?;
/// let mut series = RrSeries::new(&law, &[2, 4], 1)?;
/// let mut x = 0.0;
/// for j in 1..=series.max_draw() {
///     x += 0.5f64.powi(j as i32);
///     series.push_iterate(&[x])?;
/// }
/// let by_hand = 0.5 * law.weight(1) + 0.25 * law.weight(2);
/// assert!((series.estimates()[0][0] - by_hand).abs() < 1e-15);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RrSeries<'a> {
    law: &'a dyn TruncationLaw,
    draws: Vec<usize>,
    max_draw: usize,
    /// Terms taken so far.
    terms: usize,
    previous: Vec<f64>,
    sums: Vec<Vec<f64>>,
}

impl<'a> RrSeries<'a> {
    /// Accumulators of length `len` for the draws `draws` of `law` (each in
    /// `1..=law.max_support()`).
    ///
    /// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for no
    /// draws or a draw outside the law's support.
    pub fn new(law: &'a dyn TruncationLaw, draws: &[usize], len: usize) -> Result<Self> {
        let max_draw = check_draws(law, draws)?;
        Ok(Self {
            law,
            draws: draws.to_vec(),
            max_draw,
            terms: 0,
            previous: vec![0.0; len],
            sums: vec![vec![0.0; len]; draws.len()],
        })
    }

    /// The largest draw: the iterations a solver needs to run.
    pub fn max_draw(&self) -> usize {
        self.max_draw
    }

    /// The draws, in the order given.
    pub fn draws(&self) -> &[usize] {
        &self.draws
    }

    /// Terms taken so far (iterates pushed).
    pub fn terms(&self) -> usize {
        self.terms
    }

    /// Takes the next iterate `x_j` (`j` = [`terms`](Self::terms)` + 1`): adds
    /// `(x_j − x_{j−1}) / P(J ≥ j)` to every accumulator whose draw is at least `j`.
    ///
    /// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for an
    /// iterate of the wrong length or past the largest draw (no accumulator could use it).
    pub fn push_iterate(&mut self, iterate: &[f64]) -> Result<()> {
        if iterate.len() != self.previous.len() {
            return Err(invalid(
                "RrSeries iterate",
                format!(
                    "length {} where the accumulators have length {}",
                    iterate.len(),
                    self.previous.len()
                ),
            ));
        }
        let j = self.terms + 1;
        if j > self.max_draw {
            return Err(invalid(
                "RrSeries iterate",
                format!(
                    "term {j} is past the largest draw {}; stop the solver there",
                    self.max_draw
                ),
            ));
        }
        let weight = self.law.weight(j);
        for (sum, &draw) in self.sums.iter_mut().zip(&self.draws) {
            if j <= draw {
                for ((s, &x), &x_prev) in sum.iter_mut().zip(iterate).zip(&self.previous) {
                    *s += weight * (x - x_prev);
                }
            }
        }
        self.previous.copy_from_slice(iterate);
        self.terms = j;
        Ok(())
    }

    /// The last iterate pushed (the plain truncated solve; zeros before the first).
    pub fn plain(&self) -> &[f64] {
        &self.previous
    }

    /// One estimate per draw, in the order of the draws.
    pub fn estimates(&self) -> &[Vec<f64>] {
        &self.sums
    }

    /// The mean of all estimates (the variance-reduced RR solve).
    pub fn mean_estimate(&self) -> Vec<f64> {
        mean_of(&self.sums)
    }

    /// Two independent estimates: the mean of the first `⌊r/2⌋` draws' estimates and the
    /// mean of the rest, as [`RrCgResult::independent_halves`](super::RrCgResult::independent_halves).
    ///
    /// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for
    /// fewer than two draws.
    pub fn independent_halves(&self) -> Result<(Vec<f64>, Vec<f64>)> {
        let r = self.sums.len();
        check_two_draws(r)?;
        let half = r / 2;
        Ok((mean_of(&self.sums[..half]), mean_of(&self.sums[half..])))
    }
}

/// The entrywise mean of a non-empty list of equally long vectors.
fn mean_of(parts: &[Vec<f64>]) -> Vec<f64> {
    let mut mean = parts[0].clone();
    for p in &parts[1..] {
        for (m, v) in mean.iter_mut().zip(p) {
            *m += v;
        }
    }
    let scale = 1.0 / parts.len() as f64;
    for m in &mut mean {
        *m *= scale;
    }
    mean
}
