//! Simplified EFCG for an initial residual in `range(W)` (Yadav et al. 2021, App. B, Algorithm 4).

use faer::{Col, ColRef};

use super::cg_result::{FactorizedCgResult, Recorder};
use super::efcg::{update_direction, FactorizedCgStep};
use super::options::FactorizedCgOptions;
use super::system::{check_system, Products, WeightSpaceSystem};
use super::vector::{s_norm_estimate, squared_norm_bound, FactorizedVector};
use crate::cg::kernels::{axpy, dot};
use crate::error::{check_shape, Result};

/// CG on `K̃ = W K_G Wᵀ + σ² I_n` for a right-hand side (initial residual) `r₀ = W r̂₀` in
/// the range of `W`: every Krylov vector is then `W v̂` with no `z₀` part, so neither `W`
/// nor any data-space quantity is needed — only `K_G`, `S` and `r̂₀`.
///
/// One double product `B(r̂) = (Â r̂, S r̂)` per iteration plus one at the start:
///
/// ```text
/// (v̂, û) = B(r̂₀);  p̂ = r̂₀;  ẑ = v̂;  ŝ = û;  ‖r‖² = ûᵀr̂
/// loop:  α = ‖r‖² / ŝᵀẑ;  x̂ += α p̂;  S x̂ += α ŝ;  r̂ −= α ẑ
///        (v̂, û) = B(r̂);  ‖r_new‖² = ûᵀr̂;  β = ‖r_new‖²/‖r‖²
///        p̂ = r̂ + β p̂;  ŝ = û + β ŝ;  ẑ = v̂ + β ẑ
/// ```
///
/// (`p̂` and `x̂` are kept in addition to the paper's `Wᵀx` update so that the solution is
/// also available as `W x̂`.) From `x₀ = 0` the iterates equal those of [`cg`](crate::cg())
/// on `K̃ x = W r̂₀`. Uses:
///
/// * covariance-type solves with right-hand sides `W ŷ` (e.g. `ŷ = K_G w_*`): `r̂₀ = ŷ`;
/// * the posterior mean from `x₀ = y/σ²`: `r₀ = −W K_G Wᵀy/σ²`, so `r̂₀ = −K_G t/σ²`
///   (`t = Wᵀy`) and `Wᵀz̃ = solution_wt + t/σ²`; set
///   [`reference_norm`](FactorizedCgOptions::reference_norm) to `‖y‖` to stop as the
///   reference code does. These iterates differ from CG started at 0 (only the converged
///   answers agree).
///
/// The result's [`solution`](FactorizedCgResult::solution) is `W x̂` (coefficient 0 — any
/// `z₀` passed to [`FactorizedVector::expand`] is ignored) and
/// [`solution_wt`](FactorizedCgResult::solution_wt) is `Wᵀ(x − x₀) = S x̂`. The default
/// reference norm is `‖W r̂₀‖ = √(r̂₀ᵀ S r̂₀)`.
///
/// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `r̂₀`
/// does not have length `m`, a non-finite error for NaN or infinite entries, and
/// [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for bad options or a
/// bad `σ²`.
///
/// A product of the system that fails or returns NaN or infinity ends the solve with that
/// error (or a [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite)), never with a NaN
/// result.
pub fn efcg_simplified(
    system: &dyn WeightSpaceSystem,
    r0_hat: ColRef<'_, f64>,
    options: &FactorizedCgOptions,
) -> Result<FactorizedCgResult> {
    let mut solver = EfcgSimplifiedSolver::new(system, r0_hat, options)?;
    while solver.step()?.is_some() {}
    Ok(solver.finish())
}

/// Simplified EFCG as a step interface, like [`EfcgSolver`](super::EfcgSolver): set up
/// with [`new`](Self::new), advance with [`step`](Self::step), read the state with the
/// accessors and end with [`finish`](Self::finish). Stepping until `step` returns `None`
/// and finishing gives exactly [`efcg_simplified`]'s result (same operations in the same
/// order).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::factorized::{EfcgSimplifiedSolver, FactorizedCgOptions, OperatorSystem};
///
/// let kg = DenseOperator::new(Mat::from_fn(3, 3, |i, j| if i == j { 2.0 } else { 0.5 }));
/// let s = DenseOperator::new(Mat::<f64>::identity(3, 3));
/// let system = OperatorSystem::new(&kg, &s, 0.1)?;
/// let r0 = Col::from_fn(3, |i| i as f64 + 1.0);
/// let opts = FactorizedCgOptions::default();
/// let mut solver = EfcgSimplifiedSolver::new(&system, r0.as_ref(), &opts)?;
/// while solver.step()?.is_some() {}
/// assert!(solver.finish().converged());
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct EfcgSimplifiedSolver<'a> {
    ops: Products<'a>,
    rec: Recorder,
    /// `x̂` and `S x̂` of the iterate `W x̂`.
    x: Vec<f64>,
    sx: Vec<f64>,
    /// Residual `r̂`, direction `p̂`, `ẑ = Â p̂`, `ŝ = S p̂`.
    r: Vec<f64>,
    p: Vec<f64>,
    z: Vec<f64>,
    s: Vec<f64>,
    /// `B(r̂) = (v̂, û)`.
    v: Vec<f64>,
    u: Vec<f64>,
    /// `‖S‖` estimate of the rounding bound of the squared norms.
    s_norm: f64,
}

step_interface_accessors!(EfcgSimplifiedSolver);

impl<'a> EfcgSimplifiedSolver<'a> {
    /// Sets up simplified EFCG for the initial residual `W r̂₀` (one double product
    /// `B(r̂₀)`).
    ///
    /// Errors as [`efcg_simplified`].
    pub fn new(
        system: &'a dyn WeightSpaceSystem,
        r0_hat: ColRef<'_, f64>,
        options: &FactorizedCgOptions,
    ) -> Result<Self> {
        options.validate()?;
        let m = check_system(system, None, "efcg_simplified")?;
        check_shape((r0_hat.nrows(), 1), (m, 1), "efcg_simplified (r̂₀)")?;
        gp_linalg::validate::check_finite_col(r0_hat, "the initial residual r̂₀")?;
        let ops = Products::new(system);
        let r: Vec<f64> = r0_hat.iter().copied().collect();
        let (mut v, mut u) = (vec![0.0; m], vec![0.0; m]);
        ops.b(&r, &mut v, &mut u)?;
        let rr0 = dot(&u, &r);
        // ‖S‖ estimate for the rounding bound of the squared norms (no extra product).
        let s_norm = s_norm_estimate(&r, &u);
        let rec = Recorder::new(options, rr0, || {
            squared_norm_bound(&r, 0.0, &u, &[], 0.0, s_norm)
        });
        Ok(Self {
            ops,
            rec,
            x: vec![0.0; m],
            sx: vec![0.0; m],
            p: r.clone(),
            z: v.clone(),
            s: u.clone(),
            r,
            v,
            u,
            s_norm,
        })
    }

    /// Takes one step (one double product `B(r̂)`: one `K_G` and one `S` product). Returns
    /// `None` (and does nothing) once the solve has stopped.
    ///
    /// Errors when a product of the system fails or returns NaN or infinity; the solver's
    /// state is then part-way through the step and it should be dropped.
    pub fn step(&mut self) -> Result<Option<FactorizedCgStep>> {
        if !self.rec.running() {
            return Ok(None);
        }
        let curvature = dot(&self.s, &self.z);
        let Some(alpha) = self.rec.step_length(curvature) else {
            return Ok(Some(self.step_report()));
        };
        axpy(alpha, &self.p, &mut self.x);
        axpy(alpha, &self.s, &mut self.sx);
        axpy(-alpha, &self.z, &mut self.r);
        self.rec.record_iterate(&self.x, 0.0);
        self.ops.b(&self.r, &mut self.v, &mut self.u)?;
        let (r, u, s_norm) = (&self.r, &self.u, self.s_norm);
        let rr_new = dot(u, r);
        let bound = || squared_norm_bound(r, 0.0, u, &[], 0.0, s_norm);
        let Some(beta) = self.rec.complete_step(alpha, rr_new, bound) else {
            return Ok(Some(self.step_report()));
        };
        update_direction(&mut self.p, &self.r, beta);
        update_direction(&mut self.s, &self.u, beta);
        update_direction(&mut self.z, &self.v, beta);
        Ok(Some(self.step_report()))
    }

    /// The current iterate `x_j − x₀ = W x̂` (coefficient 0).
    pub fn solution(&self) -> FactorizedVector {
        FactorizedVector::from_slice(&self.x, 0.0)
    }

    /// The outcome so far: the result [`efcg_simplified`] returns when the solve ran to the
    /// end (a solve stopped early keeps [`Status::Running`](crate::krylov::Status::Running)).
    pub fn finish(self) -> FactorizedCgResult {
        let wt = Col::from_fn(self.sx.len(), |i| self.sx[i]);
        self.rec
            .finish(FactorizedVector::from_slice(&self.x, 0.0), wt)
    }
}
