//! The unbiased (Russian-roulette) stochastic Lanczos quadrature of Appendix C.

use super::run::check_draws;
use crate::cg::CgColumn;
use crate::error::{Result, SolverError};
use crate::estimate::Estimate;
use crate::slq::SlqScaling;
use crate::truncation::TruncationLaw;

/// The SLQ values of one probe at every Lanczos depth `j = 1..=depth`:
/// `ℓ_j = c · e₁ᵀ log(T^{(j)}) e₁` from the leading `j × j` blocks of the column's
/// tridiagonal (`c` = `‖w‖²` or `n` by `scaling`). Past the column's own depth (it
/// converged or broke down) the value stays at the last one: the remaining increments are
/// zero.
///
/// Cost `O(depth³)`: the `O(j²)` Gauss rule ([`SymTridiagonal::gauss_rule`](crate::SymTridiagonal::gauss_rule))
/// of every leading block.
///
/// Errors with [`SolverError::NonPositiveRitzValue`](crate::SolverError::NonPositiveRitzValue)
/// if a leading block is not positive definite.
pub fn slq_depth_values(
    column: &CgColumn,
    n: usize,
    depth: usize,
    scaling: SlqScaling,
) -> Result<Vec<f64>> {
    let c = scaling.factor(column, n);
    let t = column.tridiagonal()?;
    let own = t.dim();
    let mut values = Vec::with_capacity(depth);
    let mut last = 0.0;
    for j in 1..=depth {
        if j <= own && c != 0.0 {
            let rule = t.leading(j).gauss_rule()?;
            if let Some((index, &value)) = rule.nodes.iter().enumerate().find(|(_, &l)| l <= 0.0) {
                return Err(SolverError::NonPositiveRitzValue {
                    dim: j,
                    index,
                    value,
                });
            }
            last = c * rule.apply(f64::ln);
        }
        values.push(last);
    }
    Ok(values)
}

/// The RR-SLQ log-determinant (spec §2.4): per probe column,
/// `ℓ̂ = ℓ₁ + Σ_{j=2}^{J} (ℓ_j − ℓ_{j−1}) / P(J ≥ j)`, averaged over the draws (each draw
/// gives an unbiased estimate of the depth-`J_max` SLQ term), then over the probes, plus
/// `log det P`.
///
/// `columns` are the probe columns of an [`rr_cg`](super::rr_cg) run (or any CG run at least
/// `max(draws)` deep, or converged), `n` the order of the system.
///
/// Errors: the draws' errors of [`rr_cg`](super::rr_cg) and those of
/// [`slq_depth_values`].
pub fn rr_slq_log_det(
    columns: &[CgColumn],
    law: &dyn TruncationLaw,
    draws: &[usize],
    n: usize,
    preconditioner_log_det: f64,
    scaling: SlqScaling,
) -> Result<Estimate> {
    let depth = check_draws(law, draws)?;
    let weights: Vec<f64> = (1..=depth).map(|j| law.weight(j)).collect();
    let per_probe = columns
        .iter()
        .map(|column| {
            let values = slq_depth_values(column, n, depth, scaling)?;
            let total: f64 = draws
                .iter()
                .map(|&big_j| {
                    let mut est = values[0];
                    for j in 2..=big_j {
                        let delta = values[j - 1] - values[j - 2];
                        if delta != 0.0 {
                            est += delta * weights[j - 1];
                        }
                    }
                    est
                })
                .sum();
            Ok(total / draws.len() as f64)
        })
        .collect::<Result<Vec<f64>>>()?;
    Ok(Estimate::from_terms(per_probe, preconditioner_log_det))
}
