//! Helpers around the CG runs of the iterative models (`IterativeGp`, `Ski`): breakdown
//! checks, solve reports and per-probe means with standard errors.

use gp_solvers::{CgResult, ColumnStatus, Estimate};

use crate::core::SolveReport;
use crate::error::{ModelError, Result};

/// Errors with [`ModelError::CgBreakdown`] if a column of the solve broke down.
pub(crate) fn check_breakdown(cg: &CgResult, context: &'static str) -> Result<()> {
    for (column, c) in cg.columns.iter().enumerate() {
        if let ColumnStatus::Breakdown(b) = c.status {
            return Err(ModelError::CgBreakdown {
                context,
                column,
                reason: b,
            });
        }
    }
    Ok(())
}

/// The report of a CG run.
pub(crate) fn solve_report(cg: &CgResult) -> SolveReport {
    SolveReport {
        iterations: cg.iterations,
        iterations_per_column: cg.iterations_per_column(),
        converged: cg.all_converged(),
        max_relative_residual: cg
            .columns
            .iter()
            .map(|c| c.final_residual())
            .fold(0.0, f64::max),
    }
}

/// Mean and standard error (`sd/√t`, NaN for fewer than two terms) of per-probe terms, as
/// [`Estimate::from_terms`] defines them.
pub(crate) fn mean_and_std_error(terms: &[f64]) -> (f64, f64) {
    let e = Estimate::from_terms(terms.to_vec(), 0.0);
    (e.value, e.std_error)
}
