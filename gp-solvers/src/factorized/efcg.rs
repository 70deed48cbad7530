//! Efficiently factorized CG (EFCG, Yadav et al. 2021, App. B, Algorithm 3, corrected).

use super::cg_result::{FactorizedCgResult, Recorder};
use super::options::FactorizedCgOptions;
use super::split::split_start;
use super::system::{check_system, Products, StartVector, WeightSpaceSystem};
use super::vector::{s_norm_estimate, squared_norm_bound, w_transpose_from, FactorizedVector};
use crate::cg::kernels::{axpy, dot};
use crate::error::Result;
use crate::krylov::Status;

/// Efficiently factorized conjugate gradients: the iterates of [`cg`](crate::cg()) on
/// `K̃ = W K_G Wᵀ + σ² I_n` for the right-hand side `z₀` (from `x = 0`), at one `K_G` and
/// one `S` product per iteration (plus two `K_G` and one `S` product of set-up: the
/// start-vector split below and `h = K_G g₀`).
///
/// Besides `r̂`, `p̂` and `x̂` it keeps the by-products of the double product
/// `B(r̂) = (Â r̂, S r̂)`: `ẑ = Â p̂`, `ŝ = S p̂`, `γ = gᵀp̂`, and `S x̂` (for `Wᵀx`). With
/// `â = ẑ + c_p h` and `c_a = σ² c_p` (the two parts of `K̃ p`), one iteration is
///
/// ```text
/// pᵀK̃p = ŝᵀâ + c_p gᵀâ + c_a γ + c_a c_p ρ;   α = ‖r‖² / pᵀK̃p
/// x̂ += α p̂;  c_x += α c_p;  r̂ −= α â;  c_r −= α c_a
/// (v̂, û) = B(r̂);  η = gᵀr̂;  ‖r‖² = r̂ᵀû + 2 c_r η + c_r² ρ
/// β = ‖r_new‖² / ‖r‖²;  p̂ = r̂ + β p̂;  c_p = c_r + β c_p;  ŝ = û + β ŝ;  ẑ = v̂ + β ẑ;  γ = η + β γ
/// ```
///
/// This is the corrected form of the paper's Algorithm 3: the paper's
/// curvature drops the terms with `h` (it uses `ẑ` where `â = ẑ + c_p h` is needed) and uses
/// `gᵀr̂` where `gᵀp̂` is needed, writes `‖r₀‖` for `‖r₀‖²`, leaves a coefficient `c^z`
/// undefined (it is `σ² c_p`) and omits `ρ` in the numerator of `β`.
///
/// **Start-vector split.** Before iterating, `z₀` is split as `z₀ = W ŷ₀ + z₀'` with
/// `ŷ₀ = α g`, `α = gᵀg / gᵀS g`, and the iteration runs on `g₀ = Wᵀz₀' = g − S ŷ₀` and
/// `ρ₀ = ‖z₀'‖² = ρ − 2ŷ₀ᵀg + ŷ₀ᵀS ŷ₀` (in place of `g` and `ρ` above) from
/// `r₀ = W ŷ₀ + 1·z₀'` (`r̂ = p̂ = ŷ₀`, `ẑ = Â ŷ₀`, `ŝ = S ŷ₀`, `γ = g₀ᵀŷ₀` at the start).
/// The iterates are the same in exact arithmetic; in floating point the split avoids a
/// cancellation between `W p̂` and `c_p z₀` when `z₀` lies mostly in `range(W)` (the
/// posterior mean's `z₀ = y`), which made EFCG take up to 25% more iterations than CG on
/// large `n` (measured on the sine data of GSGP Figure 3). The solution is returned in the unsplit form
/// (`x̂ − c_x ŷ₀`, `c_x`); `Wᵀx = S x̂ + c_x g₀` is formed before, without the cancellation.
///
/// Options, starting from `x₀ ≠ 0` and errors as for [`fcg`](super::fcg()).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::factorized::{efcg, FactorizedCgOptions, OperatorSystem, StartVector};
///
/// // W: 6 data points on a 3-point grid (linear interpolation); K_G: a small SPD matrix.
/// let w = Mat::from_fn(6, 3, |i, j| {
///     let t = i as f64 * 0.4;
///     (1.0 - (t - j as f64).abs()).max(0.0)
/// });
/// let kg = Mat::from_fn(3, 3, |i, j| (-0.5 * ((i as f64 - j as f64) / 1.5).powi(2)).exp());
/// let s = w.transpose() * &w;
/// let sigma2 = 0.1;
/// let y = Col::from_fn(6, |i| (i as f64).sin());
///
/// let (kg_op, s_op) = (DenseOperator::new(kg.clone()), DenseOperator::new(s));
/// let system = OperatorSystem::new(&kg_op, &s_op, sigma2)?;
/// let start = StartVector::new(w.transpose() * &y, y.squared_norm_l2())?;
/// let opts = FactorizedCgOptions { tolerance: 1e-12, ..Default::default() };
/// let res = efcg(&system, &start, &opts)?;
///
/// // Expand x = W x̂ + c y and compare with the dense solve.
/// let x = res.solution.expand(&DenseOperator::new(w.clone()), y.as_ref())?;
/// let a = &w * &kg * w.transpose() + Mat::<f64>::identity(6, 6) * sigma2;
/// assert!((&a * &x - &y).norm_l2() < 1e-10);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub fn efcg(
    system: &dyn WeightSpaceSystem,
    start: &StartVector,
    options: &FactorizedCgOptions,
) -> Result<FactorizedCgResult> {
    let mut solver = EfcgSolver::new(system, start, options)?;
    while solver.step()?.is_some() {}
    Ok(solver.finish())
}

/// What one step of a factorized CG step interface ([`EfcgSolver::step`],
/// [`FcgSolver::step`](super::FcgSolver::step),
/// [`EfcgSimplifiedSolver::step`](super::EfcgSimplifiedSolver::step)) did.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct FactorizedCgStep {
    /// The number of the step just taken (1-based).
    pub iteration: usize,
    /// The solver's status after the step ([`Status::Running`] if it goes on).
    pub status: Status,
}

/// The step report of [`EfcgSolver`] (the name it had before FCG and simplified EFCG got
/// step interfaces).
pub type EfcgStep = FactorizedCgStep;

/// EFCG as a step interface, like [`CgSolver`](crate::CgSolver): set up with
/// [`new`](Self::new), advance with [`step`](Self::step) (stop whenever you like, e.g. to
/// truncate the solve or observe each iterate), read the state with the accessors and end
/// with [`finish`](Self::finish). Stepping until `step` returns `None` and finishing gives
/// exactly [`efcg`]'s result (same operations in the same order).
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::factorized::{EfcgSolver, FactorizedCgOptions, OperatorSystem, StartVector};
///
/// let kg = DenseOperator::new(Mat::from_fn(3, 3, |i, j| if i == j { 2.0 } else { 0.5 }));
/// let s = DenseOperator::new(Mat::<f64>::identity(3, 3));
/// let system = OperatorSystem::new(&kg, &s, 0.1)?;
/// let start = StartVector::new(Col::from_fn(3, |i| i as f64 + 1.0), 20.0)?;
/// let mut solver = EfcgSolver::new(&system, &start, &FactorizedCgOptions::default())?;
/// // Take at most two steps, then stop.
/// for _ in 0..2 {
///     if solver.step()?.is_none() {
///         break;
///     }
/// }
/// assert!(solver.iteration() <= 2);
/// let truncated = solver.finish();
/// assert_eq!(truncated.iterations, truncated.record.alphas.len());
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct EfcgSolver<'a> {
    ops: Products<'a>,
    rec: Recorder,
    /// `x̂`, `S x̂` and `c_x` of the iterate in the split representation.
    x: Vec<f64>,
    sx: Vec<f64>,
    cx: f64,
    /// `g₀ = Wᵀz₀'` and `ρ₀ = ‖z₀'‖²` of the split, and `ŷ₀` (if a split was made).
    g0: Vec<f64>,
    rho0: f64,
    y0: Option<Vec<f64>>,
    /// Residual `W r̂ + c_r z₀'` and direction `W p̂ + c_p z₀'`.
    r: Vec<f64>,
    cr: f64,
    p: Vec<f64>,
    cp: f64,
    /// `ẑ = Â p̂`, `ŝ = S p̂`, `γ = g₀ᵀp̂`, `h = K_G g₀`.
    z: Vec<f64>,
    s: Vec<f64>,
    gamma: f64,
    h: Vec<f64>,
    /// `‖S‖` estimate of the rounding bound of the squared norms.
    s_norm: f64,
    /// Work space: `B(r̂) = (v̂, û)` and the hat part `â` of `K̃ p`.
    v: Vec<f64>,
    u: Vec<f64>,
    a: Vec<f64>,
}

step_interface_accessors!(EfcgSolver);

impl<'a> EfcgSolver<'a> {
    /// Sets up EFCG for the start vector `start` (the split of `z₀` and `h = K_G g₀`: two
    /// `K_G` and one `S` product, none if the solve is already over).
    ///
    /// Errors as [`efcg`].
    pub fn new(
        system: &'a dyn WeightSpaceSystem,
        start: &StartVector,
        options: &FactorizedCgOptions,
    ) -> Result<Self> {
        options.validate()?;
        let m = check_system(system, Some(start), "efcg (g = Wᵀz₀)")?;
        let ops = Products::new(system);
        let sigma2 = ops.sigma2;
        let g = start.g_slice();
        let rho = start.rho();
        // ρ ≥ 0 is checked by `StartVector::new`.
        let rec = Recorder::new(options, rho, || 0.0);
        let mut solver = Self {
            ops,
            rec,
            x: vec![0.0; m],
            sx: vec![0.0; m],
            cx: 0.0,
            // The split z₀ = W ŷ₀ + z₀': the iteration runs on g₀ = Wᵀz₀' and ρ₀ = ‖z₀'‖².
            g0: g.to_vec(),
            rho0: rho,
            y0: None,
            r: vec![0.0; m],
            cr: 1.0,
            p: vec![0.0; m],
            cp: 1.0,
            // Â p̂, S p̂ and g₀ᵀp̂ (p̂ = r̂ = ŷ₀ at the start, 0 without a split).
            z: vec![0.0; m],
            s: vec![0.0; m],
            gamma: 0.0,
            h: vec![0.0; m],
            s_norm: 0.0,
            v: vec![0.0; m],
            u: vec![0.0; m],
            a: vec![0.0; m],
        };
        if !solver.rec.running() {
            return Ok(solver);
        }
        // ‖S‖ estimate for the rounding bound of the squared norms, from the split's
        // product (0 without a split).
        if let Some(split) = split_start(&solver.ops, g)? {
            solver.s_norm = s_norm_estimate(&split.y_hat, &split.s_y_hat);
            let yh = split.y_hat;
            solver.s.copy_from_slice(&split.s_y_hat);
            // Â ŷ₀ = K_G S ŷ₀ + σ² ŷ₀.
            solver.ops.kg(&solver.s, &mut solver.z)?;
            axpy(sigma2, &yh, &mut solver.z);
            axpy(-1.0, &solver.s, &mut solver.g0);
            solver.rho0 = (rho - 2.0 * dot(&yh, g) + dot(&yh, &solver.s)).max(0.0);
            solver.r.copy_from_slice(&yh);
            solver.p.copy_from_slice(&yh);
            solver.gamma = dot(&solver.g0, &yh);
            solver.y0 = Some(yh);
        }
        solver.ops.kg(&solver.g0, &mut solver.h)?;
        Ok(solver)
    }

    /// Takes one step (one `K_G` and one `S` product). Returns `None` (and does nothing)
    /// once the solve has stopped.
    ///
    /// Errors when a product of the system fails or returns NaN or infinity; the solver's
    /// state is then part-way through the step and it should be dropped.
    pub fn step(&mut self) -> Result<Option<FactorizedCgStep>> {
        if !self.rec.running() {
            return Ok(None);
        }
        let sigma2 = self.ops.sigma2;
        let (g, rho) = (&self.g0[..], self.rho0);
        // K̃ p = W â + c_a z₀' with â = ẑ + c_p h, c_a = σ² c_p: no product.
        self.a.copy_from_slice(&self.z);
        axpy(self.cp, &self.h, &mut self.a);
        let (cp, a) = (self.cp, &self.a);
        let ca = sigma2 * cp;
        let curvature = dot(&self.s, a) + cp * dot(g, a) + ca * self.gamma + ca * cp * rho;
        let Some(alpha) = self.rec.step_length(curvature) else {
            return Ok(Some(self.step_report()));
        };
        axpy(alpha, &self.p, &mut self.x);
        axpy(alpha, &self.s, &mut self.sx);
        self.cx += alpha * cp;
        axpy(-alpha, a, &mut self.r);
        self.cr -= alpha * ca;
        if self.rec.records_iterates() {
            let it = unsplit(&self.x, self.cx, self.y0.as_deref());
            self.rec.record_iterate(&it, self.cx);
        }
        // The only products of the iteration.
        self.ops.b(&self.r, &mut self.v, &mut self.u)?;
        let (r, u, cr) = (&self.r, &self.u, self.cr);
        let eta = dot(g, r);
        let rr_new = dot(r, u) + 2.0 * cr * eta + cr * cr * rho;
        let s_norm = self.s_norm;
        let bound = || squared_norm_bound(r, cr, u, g, rho, s_norm);
        let Some(beta) = self.rec.complete_step(alpha, rr_new, bound) else {
            return Ok(Some(self.step_report()));
        };
        update_direction(&mut self.p, &self.r, beta);
        update_direction(&mut self.s, &self.u, beta);
        update_direction(&mut self.z, &self.v, beta);
        self.cp = self.cr + beta * self.cp;
        self.gamma = eta + beta * self.gamma;
        Ok(Some(self.step_report()))
    }

    /// The current iterate `x_j − x₀ = W x̂ + c z₀` (one pass over `m` numbers).
    pub fn solution(&self) -> FactorizedVector {
        FactorizedVector::from_slice(&unsplit(&self.x, self.cx, self.y0.as_deref()), self.cx)
    }

    /// The outcome so far: the result [`efcg`] returns when the solve ran to the end (a
    /// solve stopped early keeps [`Status::Running`]).
    pub fn finish(self) -> FactorizedCgResult {
        // Wᵀx = S x̂ + c_x g₀ in the split representation (its two parts do not cancel).
        let wt = w_transpose_from(&self.sx, self.cx, &self.g0);
        let x = unsplit(&self.x, self.cx, self.y0.as_deref());
        self.rec
            .finish(FactorizedVector::from_slice(&x, self.cx), wt)
    }
}

/// `x̂ − c ŷ₀`: the grid part of `W x̂ + c z₀'` in the representation `W x̂' + c z₀` with
/// `z₀ = W ŷ₀ + z₀'`.
fn unsplit(x: &[f64], c: f64, y0: Option<&[f64]>) -> Vec<f64> {
    let mut out = x.to_vec();
    if let Some(y0) = y0 {
        axpy(-c, y0, &mut out);
    }
    out
}

/// `p = r + β p`.
pub(crate) fn update_direction(p: &mut [f64], r: &[f64], beta: f64) {
    gp_linalg::vector::scale(beta, p);
    axpy(1.0, r, p);
}
