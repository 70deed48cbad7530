//! Textbook CG with normalised directions (the KMCG paper's `TextBookCG.m`), recording
//! every direction and its product: no re-orthogonalisation, so in floating point the
//! directions lose `A`-conjugacy (the paper's Figure 15). Use [`FomSolver`](crate::FomSolver)
//! for anything but showing that.

use faer::{ColMut, ColRef, MatRef};
use gp_linalg::LinearOperator;

use crate::cg::kernels::{axpy, dot, norm2};
use crate::error::{invalid, Result};
use crate::fom::start::{start_vector, StartContext};
use crate::fom::{FomBreakdown, FomStatus, FomStep};

/// Options of [`TextbookCg`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextbookCgOptions {
    /// Maximum number of steps. Unlike FOM it is not clamped to `n`: in floating point
    /// textbook CG does not terminate after `n` steps. Default 100.
    pub max_steps: usize,
    /// Stop once the recursive residual has `‖r‖₂ ≤ tolerance · ‖b‖₂`. Default `0.0`
    /// (run to `max_steps`, an exactly zero residual or a breakdown).
    pub tolerance: f64,
}

impl Default for TextbookCgOptions {
    fn default() -> Self {
        Self {
            max_steps: 100,
            tolerance: 0.0,
        }
    }
}

/// Textbook CG with directions scaled by `1/‖r‖` (spec §1.4, "normalised textbook
/// variant"), one step at a time, from `x₀ = 0`:
///
/// ```text
/// x = 0;  r = b;  s = r/‖r‖
/// step:   z = A s;  α = rᵀs / sᵀz;  x += α s;  r −= α z;  s ← r/‖r_new‖ + (‖r_new‖/‖r_old‖) s
/// ```
///
/// Every direction `s` and product `z = A s` is recorded ([`directions`](Self::directions),
/// [`products`](Self::products)). A curvature `sᵀz ≤ 0` or a non-finite product stops the
/// run with [`FomStatus::Breakdown`] and leaves the state of the step before.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::{TextbookCg, TextbookCgOptions};
///
/// let a = Mat::from_fn(4, 4, |i, j| if i == j { 4.0 } else { 1.0 });
/// let op = DenseOperator::new(a.clone());
/// let b = Col::from_fn(4, |i| i as f64 + 1.0);
/// let opts = TextbookCgOptions { max_steps: 4, ..Default::default() };
/// let mut cg = TextbookCg::new(&op, b.as_ref(), &opts)?;
/// while cg.step()?.is_some() {}
/// assert!((&a * cg.solution() - &b).norm_l2() < 1e-12);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct TextbookCg<'a> {
    op: &'a dyn LinearOperator,
    options: TextbookCgOptions,
    n: usize,
    b_norm: f64,
    x: Vec<f64>,
    r: Vec<f64>,
    /// The next direction.
    d: Vec<f64>,
    /// `A d` of the step being taken.
    work: Vec<f64>,
    /// Recorded directions and products, column-major.
    s: Vec<f64>,
    z: Vec<f64>,
    max_rayleigh: f64,
    residual_norm: f64,
    status: FomStatus,
}

impl std::fmt::Debug for TextbookCg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextbookCg")
            .field("n", &self.n)
            .field("steps", &self.steps())
            .field("residual_norm", &self.residual_norm)
            .field("status", &self.status)
            .finish()
    }
}

impl<'a> TextbookCg<'a> {
    /// Sets up textbook CG on `A x = b` from `x₀ = 0`.
    ///
    /// Errors with [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) for a
    /// negative or non-finite tolerance or a zero `b`,
    /// [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `A` is not
    /// square or `b` has the wrong length, and a non-finite error if `b` holds NaN or
    /// infinity.
    pub fn new(
        op: &'a dyn LinearOperator,
        b: ColRef<'_, f64>,
        options: &TextbookCgOptions,
    ) -> Result<Self> {
        let tol = options.tolerance;
        if !(tol.is_finite() && tol >= 0.0) {
            return Err(invalid(
                "tolerance",
                format!("must be finite and non-negative, got {tol}"),
            ));
        }
        let (n, r, b_norm) = start_vector(
            op,
            b,
            &StartContext {
                square: "TextbookCg::new (the operator must be square)",
                rhs: "TextbookCg::new (right-hand side)",
                name: "the CG right-hand side",
                zero: "the CG right-hand side is zero",
            },
        )?;
        Ok(Self {
            op,
            options: *options,
            n,
            b_norm,
            x: vec![0.0; n],
            d: r.iter().map(|v| v / b_norm).collect(),
            r,
            work: vec![0.0; n],
            s: Vec::new(),
            z: Vec::new(),
            max_rayleigh: 0.0,
            residual_norm: b_norm,
            status: if options.max_steps == 0 {
                FomStatus::MaxSteps
            } else {
                FomStatus::Running
            },
        })
    }

    /// Takes one step. Returns `Ok(None)` when the step breaks down (the state stays that
    /// of the step before, [`status`](Self::status) says why) and, changing nothing, once
    /// the run has stopped.
    pub fn step(&mut self) -> Result<Option<FomStep>> {
        if self.status != FomStatus::Running {
            return Ok(None);
        }
        self.op.matvec(
            ColRef::from_slice(&self.d),
            ColMut::from_slice_mut(&mut self.work),
        );
        let curvature = dot(&self.d, &self.work);
        let z_norm = norm2(&self.work);
        if !(curvature.is_finite() && z_norm.is_finite()) {
            return Ok(self.break_down(FomBreakdown::NonFinite));
        }
        let rayleigh = curvature / dot(&self.d, &self.d);
        if rayleigh.is_nan() || rayleigh <= 0.0 {
            return Ok(self.break_down(FomBreakdown::NonPositiveCurvature {
                rayleigh,
                max_rayleigh: self.max_rayleigh,
            }));
        }
        let alpha = dot(&self.r, &self.d) / curvature;
        // |α|‖z‖ finite keeps the updates of x and r finite, so the state is never left
        // half-updated.
        if !(alpha.abs() * z_norm).is_finite() {
            return Ok(self.break_down(FomBreakdown::NonFinite));
        }
        self.s.extend_from_slice(&self.d);
        self.z.extend_from_slice(&self.work);
        self.max_rayleigh = self.max_rayleigh.max(rayleigh);
        axpy(alpha, &self.d, &mut self.x);
        axpy(-alpha, &self.work, &mut self.r);
        let r_old = self.residual_norm;
        let r_new = norm2(&self.r);
        self.residual_norm = r_new;
        let steps = self.steps();
        if r_new <= self.options.tolerance * self.b_norm {
            self.status = FomStatus::Converged;
        } else if steps >= self.options.max_steps {
            self.status = FomStatus::MaxSteps;
        } else {
            let ratio = r_new / r_old;
            let inv = 1.0 / r_new;
            for (d, r) in self.d.iter_mut().zip(&self.r) {
                *d = r * inv + ratio * *d;
            }
        }
        Ok(Some(FomStep {
            step: steps,
            residual_norm: r_new,
            status: self.status,
        }))
    }

    fn break_down(&mut self, reason: FomBreakdown) -> Option<FomStep> {
        self.status = FomStatus::Breakdown {
            step: self.steps() + 1,
            reason,
        };
        None
    }

    /// Number of steps taken.
    pub fn steps(&self) -> usize {
        self.s.len() / self.n.max(1)
    }

    /// The recorded directions `S` (`n × j`).
    pub fn directions(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.s, self.n, self.steps())
    }

    /// Their products `Z = A S` (`n × j`).
    pub fn products(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.z, self.n, self.steps())
    }

    /// The iterate `x_j`.
    pub fn solution(&self) -> ColRef<'_, f64> {
        ColRef::from_slice(&self.x)
    }

    /// The recursively updated residual `r_j` (drifts from `b − A x_j` in floating point).
    pub fn residual(&self) -> ColRef<'_, f64> {
        ColRef::from_slice(&self.r)
    }

    /// `‖r_j‖₂` of the recursive residual.
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
}
