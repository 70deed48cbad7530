//! Helpers around the CG runs of the iterative models (`IterativeGp`, `Ski`): breakdown
//! checks, solve reports and per-probe means with standard errors.

use gp_solvers::{CgResult, ColumnStatus};

use crate::error::{ModelError, Result};
use crate::iterative::SolveReport;

/// Errors with [`ModelError::CgBreakdown`] if a column of the solve broke down.
pub(crate) fn check_breakdown(cg: &CgResult, context: &'static str) -> Result<()> {
    for (column, c) in cg.columns.iter().enumerate() {
        if let ColumnStatus::Breakdown(b) = c.status {
            return Err(ModelError::CgBreakdown {
                context,
                column,
                reason: format!("{b:?}"),
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

/// Mean and standard error (`sd/√t`, NaN for fewer than two terms) of per-probe terms.
pub(crate) fn mean_and_std_error(terms: &[f64]) -> (f64, f64) {
    if terms.is_empty() {
        return (0.0, f64::NAN);
    }
    let t = terms.len() as f64;
    let mean = terms.iter().sum::<f64>() / t;
    if terms.len() < 2 {
        return (mean, f64::NAN);
    }
    let var = terms.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (t - 1.0);
    (mean, (var / t).sqrt())
}
