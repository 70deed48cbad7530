//! The factorized solves of a [`Gsgp`] model: from the data-space start vector `y`
//! (EFCG or FCG) and with right-hand sides `W r̂₀` in the range of `W` (simplified EFCG, or
//! FCG from `g = S r̂₀`), with breakdowns turned into errors.

use faer::{Col, ColRef};
use gp_kernels::Kernel;
use gp_linalg::LinearOperator;
use gp_solvers::factorized::{
    efcg, efcg_simplified, fcg, FactorizedCgOptions, FactorizedCgResult, FactorizedStatus,
    StartVector,
};

use crate::core::SolveReport;
use crate::error::{ModelError, Result};
use crate::gsgp::model::Gsgp;
use crate::gsgp::options::GsgpSolver;

/// Errors with [`ModelError::CgBreakdown`] if the solve broke down.
pub(crate) fn check_factorized(
    res: &FactorizedCgResult,
    context: &'static str,
    column: usize,
) -> Result<()> {
    if let FactorizedStatus::Breakdown(b) = res.status {
        return Err(ModelError::CgBreakdown {
            context,
            column,
            reason: b,
        });
    }
    Ok(())
}

/// The report of several factorized solves (one per column).
pub(crate) fn factorized_report<'a>(
    runs: impl IntoIterator<Item = &'a FactorizedCgResult>,
) -> SolveReport {
    let mut report = SolveReport {
        iterations: 0,
        iterations_per_column: Vec::new(),
        converged: true,
        max_relative_residual: 0.0,
    };
    for r in runs {
        report.iterations = report.iterations.max(r.iterations);
        report.iterations_per_column.push(r.iterations);
        report.converged &= r.converged();
        report.max_relative_residual = report.max_relative_residual.max(r.final_residual());
    }
    report
}

impl<K: Kernel> Gsgp<K> {
    /// Factorized CG options with `tolerance`, the model's iteration cap and `min_iterations`.
    pub(crate) fn factorized_options(
        &self,
        tolerance: f64,
        min_iterations: usize,
    ) -> FactorizedCgOptions {
        FactorizedCgOptions {
            tolerance,
            max_iterations: self.options.krylov.max_iterations,
            min_iterations: min_iterations.min(self.options.krylov.max_iterations),
            ..FactorizedCgOptions::default()
        }
    }

    /// `K̂ x = z₀` from `x = 0` for the start vector `start`, by the solver of the options
    /// (iterates identical to CG on `K̂`).
    pub(crate) fn solve_start(
        &self,
        start: &StartVector,
        options: &FactorizedCgOptions,
        context: &'static str,
    ) -> Result<FactorizedCgResult> {
        let system = self.system()?;
        let res = match self.options.solver {
            GsgpSolver::Efcg => efcg(&system, start, options)?,
            GsgpSolver::Fcg => fcg(&system, start, options)?,
        };
        check_factorized(&res, context, 0)?;
        Ok(res)
    }

    /// `Wᵀ K̂⁻¹ W r̂₀` (length `m`) and the solve's record, for a right-hand side in
    /// `range(W)`: the simplified EFCG with [`GsgpSolver::Efcg`], FCG from `g = S r̂₀`,
    /// `ρ = r̂₀ᵀ S r̂₀` with [`GsgpSolver::Fcg`]. Both stop at `‖r‖ ≤ tol · ‖W r̂₀‖`, as CG on
    /// `K̂` with the right-hand side `W r̂₀`.
    pub(crate) fn solve_range_w(
        &self,
        r0_hat: ColRef<'_, f64>,
        options: &FactorizedCgOptions,
        context: &'static str,
        column: usize,
    ) -> Result<(Col<f64>, FactorizedCgResult)> {
        let system = self.system()?;
        let res = match self.options.solver {
            GsgpSolver::Efcg => efcg_simplified(&system, r0_hat, options)?,
            GsgpSolver::Fcg => {
                let g = self.stats.gram().apply(r0_hat)?;
                let rho = (r0_hat.transpose() * &g).max(0.0);
                let g = if rho == 0.0 { Col::zeros(g.nrows()) } else { g };
                fcg(&system, &StartVector::new(g, rho)?, options)?
            }
        };
        check_factorized(&res, context, column)?;
        Ok((res.solution_wt.clone(), res))
    }
}
