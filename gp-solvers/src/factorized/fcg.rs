//! Factorized CG (FCG, Yadav et al. 2021, §4 and App. B, Algorithm 2).

use super::cg_result::{FactorizedCgResult, Recorder};
use super::efcg::{update_direction, FactorizedCgStep};
use super::options::FactorizedCgOptions;
use super::system::{check_system, Products, StartVector, WeightSpaceSystem};
use super::vector::{inner_with_s, squared_norm_bound, w_transpose_from, FactorizedVector};
use crate::cg::kernels::axpy;
use crate::error::Result;

/// Factorized conjugate gradients: plain CG on `K̃ = W K_G Wᵀ + σ² I_n` for the right-hand
/// side `z₀` (from `x = 0`), with every iterate kept as `W v̂ + c z₀`.
///
/// Products with `K̃` become `𝒜(v̂, c) = (Â v̂ + c h, σ² c)` (`Â = K_G S + σ² I`,
/// `h = K_G g`) and inner products go through `S` (Claims 3 and 4 of the paper). In exact
/// arithmetic the iterates, step lengths and iteration counts equal those of
/// [`cg`](crate::cg()) on `K̃` (Proposition 1). This is the straightforward version: every
/// factorized inner product makes its own `S` product, so an iteration costs one `K_G` and
/// three `S` products, plus one `K_G` product of set-up (`h`) and one `S` product at the end
/// (`Wᵀx`). [`efcg`](super::efcg()) needs one of each per iteration.
///
/// To start from `x₀ ≠ 0`, pass the data of `z₀ = b − K̃ x₀`, set
/// [`reference_norm`](FactorizedCgOptions::reference_norm) to `‖b‖` and add `x₀` to the
/// expanded solution.
///
/// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for bad
/// options or a bad `σ²`, and [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch)
/// if `g` does not have length `m`. Numerical breakdowns end the solve with a
/// [`FactorizedStatus::Breakdown`](super::FactorizedStatus::Breakdown).
///
/// A product of the system that fails or returns NaN or infinity ends the solve with that
/// error (or a [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite)), never with a NaN
/// result.
pub fn fcg(
    system: &dyn WeightSpaceSystem,
    start: &StartVector,
    options: &FactorizedCgOptions,
) -> Result<FactorizedCgResult> {
    let mut solver = FcgSolver::new(system, start, options)?;
    while solver.step()?.is_some() {}
    solver.finish()
}

/// FCG as a step interface, like [`EfcgSolver`](super::EfcgSolver): set up with
/// [`new`](Self::new), advance with [`step`](Self::step), read the state with the accessors
/// and end with [`finish`](Self::finish). Stepping until `step` returns `None` and finishing
/// gives exactly [`fcg`]'s result (same operations in the same order).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::factorized::{FactorizedCgOptions, FcgSolver, OperatorSystem, StartVector};
///
/// let kg = DenseOperator::new(Mat::from_fn(3, 3, |i, j| if i == j { 2.0 } else { 0.5 }));
/// let s = DenseOperator::new(Mat::<f64>::identity(3, 3));
/// let system = OperatorSystem::new(&kg, &s, 0.1)?;
/// let start = StartVector::new(Col::from_fn(3, |i| i as f64 + 1.0), 20.0)?;
/// let mut solver = FcgSolver::new(&system, &start, &FactorizedCgOptions::default())?;
/// while solver.step()?.is_some() {}
/// let res = solver.finish()?;
/// assert!(res.converged());
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct FcgSolver<'a> {
    ops: Products<'a>,
    rec: Recorder,
    /// `g = Wᵀz₀` and `ρ = ‖z₀‖²`.
    g: Vec<f64>,
    rho: f64,
    /// Iterate `W x̂ + c_x z₀`, residual `W r̂ + c_r z₀`, direction `W p̂ + c_p z₀`.
    x: Vec<f64>,
    cx: f64,
    r: Vec<f64>,
    cr: f64,
    p: Vec<f64>,
    cp: f64,
    /// `h = K_G g`, the hat part `â` of `K̃ p`, and the work space for `S` products.
    h: Vec<f64>,
    a: Vec<f64>,
    s_tmp: Vec<f64>,
}

step_interface_accessors!(FcgSolver);

impl<'a> FcgSolver<'a> {
    /// Sets up FCG for the start vector `start` (`h = K_G g`: one `K_G` product, none if
    /// the solve is already over).
    ///
    /// Errors as [`fcg`].
    pub fn new(
        system: &'a dyn WeightSpaceSystem,
        start: &StartVector,
        options: &FactorizedCgOptions,
    ) -> Result<Self> {
        options.validate()?;
        let m = check_system(system, Some(start), "fcg (g = Wᵀz₀)")?;
        let ops = Products::new(system);
        let rho = start.rho();
        // ρ ≥ 0 is checked by `StartVector::new`.
        let rec = Recorder::new(options, rho, || 0.0);
        let mut solver = Self {
            ops,
            rec,
            g: start.g_slice().to_vec(),
            rho,
            x: vec![0.0; m],
            cx: 0.0,
            r: vec![0.0; m],
            cr: 1.0,
            p: vec![0.0; m],
            cp: 1.0,
            h: vec![0.0; m],
            a: vec![0.0; m],
            s_tmp: vec![0.0; m],
        };
        if solver.rec.running() {
            solver.ops.kg(&solver.g, &mut solver.h)?;
        }
        Ok(solver)
    }

    /// Takes one step (one `K_G` and three `S` products). Returns `None` (and does nothing)
    /// once the solve has stopped.
    ///
    /// Errors when a product of the system fails or returns NaN or infinity; the solver's
    /// state is then part-way through the step and it should be dropped.
    pub fn step(&mut self) -> Result<Option<FactorizedCgStep>> {
        if !self.rec.running() {
            return Ok(None);
        }
        let (g, rho) = (&self.g[..], self.rho);
        // (â, c_a) = 𝒜(p̂, c_p): one K_G and one S product.
        let ca = self
            .ops
            .factorized(&self.p, self.cp, &self.h, &mut self.a, &mut self.s_tmp)?;
        // pᵀK̃p = ⟨p, K̃p⟩ with its own S product.
        self.ops.s(&self.a, &mut self.s_tmp)?;
        let curvature = inner_with_s(&self.p, self.cp, &self.a, &self.s_tmp, ca, g, rho);
        let Some(alpha) = self.rec.step_length(curvature) else {
            return Ok(Some(self.step_report()));
        };
        axpy(alpha, &self.p, &mut self.x);
        self.cx += alpha * self.cp;
        axpy(-alpha, &self.a, &mut self.r);
        self.cr -= alpha * ca;
        self.rec.record_iterate(&self.x, self.cx);
        // ‖r‖² = ⟨r, r⟩.
        self.ops.s(&self.r, &mut self.s_tmp)?;
        let (r, cr, s_tmp) = (&self.r, self.cr, &self.s_tmp);
        let rr_new = inner_with_s(r, cr, r, s_tmp, cr, g, rho);
        // No ‖S‖ estimate: FCG keeps no product of a known vector with S at hand.
        let bound = || squared_norm_bound(r, cr, s_tmp, g, rho, 0.0);
        let Some(beta) = self.rec.complete_step(alpha, rr_new, bound) else {
            return Ok(Some(self.step_report()));
        };
        update_direction(&mut self.p, &self.r, beta);
        self.cp = self.cr + beta * self.cp;
        Ok(Some(self.step_report()))
    }

    /// The current iterate `x_j − x₀ = W x̂ + c z₀`.
    pub fn solution(&self) -> FactorizedVector {
        FactorizedVector::from_slice(&self.x, self.cx)
    }

    /// The outcome so far: the result [`fcg`] returns when the solve ran to the end (a solve
    /// stopped early keeps [`Status::Running`](crate::krylov::Status::Running)). Costs one `S`
    /// product (`Wᵀx = S x̂ + c g`).
    ///
    /// Errors when that product fails or returns NaN or infinity.
    pub fn finish(mut self) -> Result<FactorizedCgResult> {
        self.ops.s(&self.x, &mut self.s_tmp)?;
        let wt = w_transpose_from(&self.s_tmp, self.cx, &self.g);
        Ok(self
            .rec
            .finish(FactorizedVector::from_slice(&self.x, self.cx), wt))
    }
}
