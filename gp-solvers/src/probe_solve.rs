//! One batched CG call for the quantities of a GP marginal likelihood: the solves of
//! `K̂ = K + σ²I` for the targets and the probes, the per-probe Lanczos tridiagonals (SLQ
//! log-determinant without a second pass) and Hutchinson traces from the same solves.

use faer::{Mat, MatRef};
use gp_linalg::LinearOperator;

use crate::cg::{cg, CgColumn, CgOptions, CgResult};
use crate::error::{check_shape, Result};
use crate::estimate::Estimate;
use crate::precond::Preconditioner;
use crate::probes::Probes;
use crate::slq::{slq_log_det_from_cg, SlqScaling};
use crate::trace::hutchinson_inverse_trace;
use crate::tridiagonal::SymTridiagonal;

/// The outcome of [`solve_with_probes`]: CG on `[Y | Z]` (targets first, then probes).
#[derive(Debug, Clone)]
pub struct ProbeSolve {
    /// The batched CG run; columns `0..k` are the targets, `k..k+t` the probes.
    pub cg: CgResult,
    /// The probes (and `P⁻¹Z`).
    pub probes: Probes,
    /// The targets `Y` (`n×k`).
    pub targets: Mat<f64>,
    /// Number of target columns `k`.
    pub n_targets: usize,
    /// `log det P` (0 without preconditioner).
    pub preconditioner_log_det: f64,
}

impl ProbeSolve {
    /// `A⁻¹ Y` (`n×k`).
    pub fn target_solutions(&self) -> MatRef<'_, f64> {
        self.cg.solution.as_ref().subcols(0, self.n_targets)
    }

    /// `A⁻¹ Z` (`n×t`).
    pub fn probe_solutions(&self) -> MatRef<'_, f64> {
        self.cg
            .solution
            .as_ref()
            .subcols(self.n_targets, self.probes.count())
    }

    /// The CG records of the targets.
    pub fn target_columns(&self) -> &[CgColumn] {
        &self.cg.columns[..self.n_targets]
    }

    /// The CG records of the probes.
    pub fn probe_columns(&self) -> &[CgColumn] {
        &self.cg.columns[self.n_targets..]
    }

    /// The Lanczos tridiagonal of every probe (of `P^{-1/2} A P^{-1/2}` started at the
    /// whitened probe).
    pub fn probe_tridiagonals(&self) -> Result<Vec<SymTridiagonal>> {
        self.probe_columns()
            .iter()
            .map(CgColumn::tridiagonal)
            .collect()
    }

    /// `yᵢᵀ x_i` for every target, with `x_i ≈ A⁻¹ yᵢ` the CG solution (the data-fit
    /// term of the marginal likelihood).
    pub fn target_quadratic_forms(&self) -> Vec<f64> {
        (0..self.n_targets)
            .map(|j| {
                let x = self.cg.solution.col_as_slice(j);
                self.targets
                    .col_as_slice(j)
                    .iter()
                    .zip(x)
                    .map(|(a, b)| a * b)
                    .sum()
            })
            .collect()
    }

    /// The SLQ estimate of `log det A`: `log det P + (1/t) Σ_i c_i e₁ᵀ log(T_i) e₁`.
    pub fn log_det(&self, scaling: SlqScaling) -> Result<Estimate> {
        slq_log_det_from_cg(
            self.probe_columns(),
            self.probes.dim(),
            self.preconditioner_log_det,
            scaling,
        )
    }

    /// The Hutchinson estimate of `tr(A⁻¹ ∂A) = E[(A⁻¹z)ᵀ ∂A (P⁻¹z)]` from the probe solves.
    pub fn inverse_trace(&self, derivative: &dyn LinearOperator) -> Result<Estimate> {
        hutchinson_inverse_trace(self.probe_solutions(), derivative, &self.probes)
    }
}

/// Runs batched (preconditioned) CG on `A [Y | Z]` in one call and keeps what the GP
/// marginal likelihood and its gradient need.
///
/// `targets` is `n×k` (typically `k = 1`, the centred observations), `probes` were drawn
/// with the same preconditioner (see [`Probes::generate`]). Errors as
/// [`CgSolver::new`](crate::CgSolver::new), with a shape mismatch if the probes or
/// targets do not have `n` rows, and with the preconditioner's error for `log det P`.
pub fn solve_with_probes(
    op: &dyn LinearOperator,
    targets: MatRef<'_, f64>,
    precond: Option<&dyn Preconditioner>,
    probes: Probes,
    options: &CgOptions,
) -> Result<ProbeSolve> {
    let n = op.nrows();
    check_shape((targets.nrows(), 1), (n, 1), "solve_with_probes (targets)")?;
    check_shape((probes.dim(), 1), (n, 1), "solve_with_probes (probes)")?;
    let (k, t) = (targets.ncols(), probes.count());
    let mut rhs = Mat::<f64>::zeros(n, k + t);
    rhs.as_mut().subcols_mut(0, k).copy_from(targets);
    rhs.as_mut().subcols_mut(k, t).copy_from(probes.matrix());
    let preconditioner_log_det = match precond {
        Some(p) => p.log_det()?,
        None => 0.0,
    };
    let cg = cg(op, rhs.as_ref(), precond, options)?;
    Ok(ProbeSolve {
        cg,
        probes,
        targets: targets.to_owned(),
        n_targets: k,
        preconditioner_log_det,
    })
}
