//! The FOM step solver: CG as an explicit projection method with complete
//! re-orthogonalisation (Saad 2003, Eq. 5.7; the KMCG paper's `FOM.m`).

use faer::{Col, ColMut, ColRef, Mat, MatRef};
use gp_linalg::{GrowingCholesky, LinalgError, LinearOperator};

use super::options::FomOptions;
use super::start::{start_vector, StartContext};
use super::status::{FomBreakdown, FomStatus};
use super::sweep;
use crate::cg::kernels::{dot, norm2};
use crate::error::Result;

/// What one call of [`FomSolver::step`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FomStep {
    /// The step just completed (1-based): `S` now has `step` columns.
    pub step: usize,
    /// `‖b − A x_step‖₂` of the Galerkin solution on `span S` (computed as `‖b − Z a‖₂`).
    pub residual_norm: f64,
    /// The status after the step ([`FomStatus::Running`] if another step can be taken).
    pub status: FomStatus,
}

/// The outcome of [`fom`](crate::fom()).
#[derive(Debug, Clone)]
pub struct FomResult {
    /// The Galerkin solution `x = S a`.
    pub solution: Col<f64>,
    /// The directions `S` (`n × j`, `A`-conjugate).
    pub directions: Mat<f64>,
    /// Their products `Z = A S`.
    pub products: Mat<f64>,
    /// The coefficients `a = G⁻¹ Sᵀ b`.
    pub coefficients: Vec<f64>,
    /// `‖b − A x‖₂`.
    pub residual_norm: f64,
    /// `‖b‖₂`.
    pub rhs_norm: f64,
    /// Why the run stopped.
    pub status: FomStatus,
}

/// Conjugate gradients as a projection method with complete re-orthogonalisation ("FOM",
/// Saad 2003, Eq. 5.7), the stable CG of the KMCG paper, one step at a time, on an SPD
/// operator `A` and one right-hand side `b`, from `x₀ = 0`:
///
/// ```text
/// s₁ = b/‖b‖
/// step j: z_j = A s_j;  S = [S, s_j];  Z = [Z, z_j]
///         G = SᵀZ bordered with ½(Sᵀz_j + Zᵀs_j) (symmetric), its Cholesky bordered in O(j²)
///         a = G⁻¹ Sᵀb;  x = S a;  r = b − Z a           (Galerkin solution on span S)
///         β = −G⁻¹ Zᵀr;  s_{j+1} = (r + S β)/‖r‖       (r A-orthogonalised against all s_i)
/// ```
///
/// Per step: one product with `A`, one sweep over `S` and `Z` together (`Sᵀz_j`, `Zᵀs_j`),
/// one over `Z` (`r` and `Zᵀr` from the same row blocks) and one over `S` (`S β`); `x` is
/// formed only on request ([`solution`](Self::solution)).
///
/// A numerical breakdown (a direction with Rayleigh quotient
/// `s_{j+1}ᵀAs_{j+1}/‖s_{j+1}‖² ≤ τ·max_i s_iᵀAs_i/‖s_i‖²`,
/// a Gram pivot that is not positive, a non-finite product) is not an error: the state
/// stays that of the last valid step, [`status`](Self::status) says why, and
/// [`step`](Self::step) returns `Ok(None)` from then on.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::{FomOptions, FomSolver, FomStatus};
///
/// let a = Mat::from_fn(5, 5, |i, j| if i == j { 3.0 + i as f64 } else { 0.5 });
/// let b = Col::from_fn(5, |i| 1.0 + i as f64);
/// let op = DenseOperator::new(a.clone());
/// let mut fom = FomSolver::new(&op, b.as_ref(), &FomOptions::default())?;
/// while let Some(step) = fom.step()? {
///     println!("step {}: ‖r‖ = {:e}", step.step, step.residual_norm);
/// }
/// assert!(matches!(fom.status(), FomStatus::Converged | FomStatus::MaxSteps));
/// assert!((&a * fom.solution() - &b).norm_l2() < 1e-12 * b.norm_l2());
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct FomSolver<'a> {
    op: &'a dyn LinearOperator,
    options: FomOptions,
    n: usize,
    max_steps: usize,
    b: Vec<f64>,
    b_norm: f64,
    /// `S` and `Z`, column-major, grown one column at a time.
    s: Vec<f64>,
    z: Vec<f64>,
    /// Upper triangle of `G` packed by columns (column `j` holds `j + 1` entries).
    gram: Vec<f64>,
    factor: GrowingCholesky,
    /// `Sᵀ b`, one entry per step.
    stb: Vec<f64>,
    coefficients: Vec<f64>,
    /// `‖z_i‖`, for the rounding level of the residual.
    z_norms: Vec<f64>,
    max_rayleigh: f64,
    /// The next direction `s_{j+1}` while running (then the residual's storage in a step).
    next: Vec<f64>,
    /// `A s` of the step being taken.
    work: Vec<f64>,
    residual_norm: f64,
    status: FomStatus,
}

impl std::fmt::Debug for FomSolver<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FomSolver")
            .field("n", &self.n)
            .field("steps", &self.steps())
            .field("residual_norm", &self.residual_norm)
            .field("status", &self.status)
            .field("options", &self.options)
            .finish()
    }
}

impl<'a> FomSolver<'a> {
    /// Sets up FOM on `A x = b` from `x₀ = 0` (`s₁ = b/‖b‖`).
    ///
    /// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for
    /// bad options (see [`FomOptions::validate`]) or a zero `b`,
    /// [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `A` is not
    /// square or `b` has the wrong length, and a non-finite error if `b` holds NaN or
    /// infinity.
    pub fn new(
        op: &'a dyn LinearOperator,
        b: ColRef<'_, f64>,
        options: &FomOptions,
    ) -> Result<Self> {
        options.validate()?;
        let (n, b, b_norm) = start_vector(
            op,
            b,
            &StartContext {
                square: "FomSolver::new (the operator must be square)",
                rhs: "FomSolver::new (right-hand side)",
                name: "the FOM right-hand side",
                zero: "the FOM right-hand side is zero",
            },
        )?;
        let max_steps = options.max_steps.min(n);
        let status = if max_steps == 0 {
            FomStatus::MaxSteps
        } else {
            FomStatus::Running
        };
        Ok(Self {
            op,
            options: *options,
            n,
            max_steps,
            next: b.iter().map(|v| v / b_norm).collect(),
            b,
            b_norm,
            s: Vec::new(),
            z: Vec::new(),
            gram: Vec::new(),
            factor: GrowingCholesky::new(),
            stb: Vec::new(),
            coefficients: Vec::new(),
            z_norms: Vec::new(),
            max_rayleigh: 0.0,
            work: vec![0.0; n],
            residual_norm: b_norm,
            status,
        })
    }

    /// Takes one step: one product with `A`, then the Galerkin solution on the enlarged
    /// space and the next direction. Returns `Ok(None)` when the step breaks down (the
    /// state stays that of the step before and [`status`](Self::status) says why) and,
    /// changing nothing, once the run has stopped.
    ///
    /// Never errors in practice (the `Result` mirrors the other step interfaces); a
    /// numerical breakdown is a status, not an error.
    pub fn step(&mut self) -> Result<Option<FomStep>> {
        if self.status != FomStatus::Running {
            return Ok(None);
        }
        let n = self.n;
        let j = self.steps();
        self.op.matvec(
            ColRef::from_slice(&self.next),
            ColMut::from_slice_mut(&mut self.work),
        );
        let z_norm = norm2(&self.work);
        let curvature = dot(&self.next, &self.work);
        let s_norm_sq = dot(&self.next, &self.next);
        if !(z_norm.is_finite() && curvature.is_finite() && s_norm_sq.is_finite()) {
            return Ok(self.break_down(FomBreakdown::NonFinite));
        }
        // The Rayleigh quotient, not sᵀAs: the directions are not of unit length (‖s_j‖
        // grows when β removes large A-components near the end of the Krylov space), and a
        // long direction of rounding-level curvature must not pass as a genuine one.
        // Checked before the direction joins S, so a rejected direction leaves no trace.
        let rayleigh = curvature / s_norm_sq;
        let genuine =
            rayleigh > 0.0 && rayleigh > self.options.breakdown_tolerance * self.max_rayleigh;
        if !genuine {
            return Ok(self.break_down(FomBreakdown::NonPositiveCurvature {
                rayleigh,
                max_rayleigh: self.max_rayleigh,
            }));
        }
        self.s.extend_from_slice(&self.next);
        self.z.extend_from_slice(&self.work);
        let (stz, zts) = {
            let (s_mat, z_mat) = (self.directions(), self.products());
            sweep::cross_products(
                s_mat,
                z_mat,
                &self.s[j * n..(j + 1) * n],
                &self.z[j * n..(j + 1) * n],
            )
        };
        // G = SᵀZ is symmetric in exact arithmetic; averaging keeps it so in floating point.
        let mut column: Vec<f64> = stz.iter().zip(&zts).map(|(u, v)| 0.5 * (u + v)).collect();
        column[j] = curvature;
        if let Err(e) = self.factor.push(&column) {
            self.truncate_to(j);
            return match e {
                LinalgError::BorderBreakdown { pivot, .. } => {
                    Ok(self.break_down(FomBreakdown::GramNotPositiveDefinite { pivot }))
                }
                other => Err(other.into()),
            };
        }
        let stb_j = dot(&self.s[j * n..(j + 1) * n], &self.b);
        let mut a = self.stb.clone();
        a.push(stb_j);
        if let Err(e) = self.factor.solve_in_place(&mut a) {
            // Unreachable (a has the factor's order); rolled back all the same so an error
            // never leaves a half-taken step.
            self.factor.truncate(j);
            self.truncate_to(j);
            return Err(e.into());
        }
        // `next` held s_j (now copied into S): reuse it for r.
        let ztr = sweep::residual_and_projection(
            MatRef::from_column_major_slice(&self.z, n, j + 1),
            &self.b,
            &a,
            &mut self.next,
        );
        let r_norm = norm2(&self.next);
        if !r_norm.is_finite() || a.iter().chain(&ztr).any(|v| !v.is_finite()) {
            self.next.copy_from_slice(&self.s[j * n..(j + 1) * n]);
            self.factor.truncate(j);
            self.truncate_to(j);
            return Ok(self.break_down(FomBreakdown::NonFinite));
        }
        // Commit step j + 1.
        self.gram.extend_from_slice(&column);
        self.stb.push(stb_j);
        self.z_norms.push(z_norm);
        self.max_rayleigh = self.max_rayleigh.max(rayleigh);
        self.coefficients = a;
        self.residual_norm = r_norm;
        let steps = j + 1;
        if r_norm <= self.options.tolerance * self.b_norm || r_norm <= self.rounding_floor() {
            self.status = FomStatus::Converged;
        } else if steps >= self.max_steps {
            self.status = FomStatus::MaxSteps;
        } else {
            // β = −G⁻¹ Zᵀr;  s_{j+1} = (r + S β)/‖r‖. A non-finite result shows up as a
            // non-finite product at the next step, which then breaks down cleanly.
            let mut beta = ztr;
            self.factor.solve_in_place(&mut beta)?;
            beta.iter_mut().for_each(|v| *v = -*v);
            sweep::add_combination(
                MatRef::from_column_major_slice(&self.s, n, steps),
                &beta,
                &mut self.next,
            );
            let inv = 1.0 / r_norm;
            self.next.iter_mut().for_each(|v| *v *= inv);
        }
        Ok(Some(FomStep {
            step: steps,
            residual_norm: r_norm,
            status: self.status,
        }))
    }

    /// Runs [`step`](Self::step) until the run stops; returns the number of steps taken
    /// by this call.
    pub fn run(&mut self) -> Result<usize> {
        let mut taken = 0;
        while self.step()?.is_some() {
            taken += 1;
        }
        Ok(taken)
    }

    /// The residual norm below which `r` is rounding noise (the computed `r = b − Z a`
    /// and `a` carry errors of about `(√N + j) ε (‖b‖ + Σ|a_i|‖z_i‖)`): the Krylov space
    /// is invariant to working precision and further directions would be noise.
    fn rounding_floor(&self) -> f64 {
        let scale = self.b_norm
            + self
                .coefficients
                .iter()
                .zip(&self.z_norms)
                .map(|(a, z)| a.abs() * z)
                .sum::<f64>();
        ((self.n as f64).sqrt() + self.steps() as f64) * f64::EPSILON * scale
    }

    fn truncate_to(&mut self, j: usize) {
        self.s.truncate(j * self.n);
        self.z.truncate(j * self.n);
    }

    fn break_down(&mut self, reason: FomBreakdown) -> Option<FomStep> {
        self.status = FomStatus::Breakdown {
            step: self.steps() + 1,
            reason,
        };
        None
    }

    /// Order `n` of the system.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The options in use.
    pub fn options(&self) -> &FomOptions {
        &self.options
    }

    /// Number of steps taken (columns of `S`).
    pub fn steps(&self) -> usize {
        self.stb.len()
    }

    /// The directions `S = [s_1 … s_j]` (`n × j`; `A`-conjugate, `s_1 = b/‖b‖`).
    pub fn directions(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.s, self.n, self.s.len() / self.n.max(1))
    }

    /// The products `Z = A S` (`n × j`).
    pub fn products(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.z, self.n, self.z.len() / self.n.max(1))
    }

    /// The Gram matrix `G = SᵀAS` (`j × j`, symmetric; formed from the packed storage).
    pub fn gram(&self) -> Mat<f64> {
        let packed = |i: usize, k: usize| {
            let (lo, hi) = if i <= k { (i, k) } else { (k, i) };
            self.gram[hi * (hi + 1) / 2 + lo]
        };
        Mat::from_fn(self.steps(), self.steps(), packed)
    }

    /// The Cholesky factor of [`gram`](Self::gram), grown by bordering.
    pub fn gram_factor(&self) -> &GrowingCholesky {
        &self.factor
    }

    /// The coefficients `a = G⁻¹ Sᵀ b` of the Galerkin solution `x = S a`.
    pub fn coefficients(&self) -> &[f64] {
        &self.coefficients
    }

    /// `Sᵀ b`.
    pub fn projected_rhs(&self) -> &[f64] {
        &self.stb
    }

    /// The Galerkin solution `x = S a` (formed on each call: one pass over `S`).
    pub fn solution(&self) -> Col<f64> {
        let mut x = vec![0.0; self.n];
        if self.steps() > 0 {
            sweep::add_combination(self.directions(), &self.coefficients, &mut x);
        }
        Col::from_fn(self.n, |i| x[i])
    }

    /// `‖b − A x‖₂` after the last step (`‖b‖₂` before the first).
    pub fn residual_norm(&self) -> f64 {
        self.residual_norm
    }

    /// `‖b‖₂`.
    pub fn rhs_norm(&self) -> f64 {
        self.b_norm
    }

    /// The status.
    pub fn status(&self) -> FomStatus {
        self.status
    }

    /// The largest Rayleigh quotient `s_iᵀ A s_i / s_iᵀ s_i` of the directions so far
    /// (the scale of the breakdown test).
    pub fn max_rayleigh(&self) -> f64 {
        self.max_rayleigh
    }

    /// The final state as a [`FomResult`] (forms `x`).
    pub fn into_result(self) -> FomResult {
        FomResult {
            solution: self.solution(),
            directions: self.directions().to_owned(),
            products: self.products().to_owned(),
            coefficients: self.coefficients,
            residual_norm: self.residual_norm,
            rhs_norm: self.b_norm,
            status: self.status,
        }
    }
}

/// Runs [`FomSolver`] on `A x = b` until it stops (converged, `max_steps`, breakdown).
/// Errors as [`FomSolver::new`].
pub fn fom(op: &dyn LinearOperator, b: ColRef<'_, f64>, options: &FomOptions) -> Result<FomResult> {
    let mut solver = FomSolver::new(op, b, options)?;
    solver.run()?;
    Ok(solver.into_result())
}
