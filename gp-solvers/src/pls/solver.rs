//! The probabilistic linear solver, one action per step.

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColRef, Mat, MatRef, Par};
use gp_linalg::LinearOperator;

use super::buffers::{push_column, RecycleBuffers, Recycled};
use super::policy::{Policy, PolicyState};
use crate::error::{check_shape, invalid, Result};

/// Options of a [`ProbabilisticSolver`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlsOptions {
    /// Stop when `‖r‖ < max(abs_tolerance, rel_tolerance · ‖b‖)` (default `1e-5`, as IterGP
    /// and the reference code).
    pub abs_tolerance: f64,
    /// See `abs_tolerance` (default `1e-5`).
    pub rel_tolerance: f64,
    /// Most actions in this solve (default `None`: `10 n`, the reference code's).
    pub max_iterations: Option<usize>,
    /// An action is a breakdown, discarded, when `η ≤ breakdown_tolerance · sᵀK̂s` (default
    /// `1e-12`: an action in the span of the earlier ones gives `η` at rounding level; `0`
    /// is the paper's `η ≤ 0`).
    pub breakdown_tolerance: f64,
    /// Track `K Q` and form `K v = (K Q)(Qᵀ b)` instead of a product with `K` for the
    /// residual: one product with `K` per step instead of two, `n × B` more memory (spec
    /// §2.8; default `false`, the paper's explicit residual).
    pub track_kq: bool,
}

impl Default for PlsOptions {
    fn default() -> Self {
        Self {
            abs_tolerance: 1e-5,
            rel_tolerance: 1e-5,
            max_iterations: None,
            breakdown_tolerance: 1e-12,
            track_kq: false,
        }
    }
}

/// Where a [`ProbabilisticSolver`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlsStatus {
    /// More steps can be taken.
    Running,
    /// The residual met the tolerance.
    Converged,
    /// The iteration budget is spent.
    MaxIterations,
    /// The last action had no positive curvature left after projection (or was zero or
    /// not finite): it was discarded and the solve ended.
    Breakdown,
}

/// The probabilistic linear solver for `(K + W⁻¹) v = b` (see the [module
/// documentation](super)): steps driven by the caller, a belief (`v`, `C = QQᵀ`) valid
/// after every step.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_linalg::DenseOperator;
/// use gp_solvers::pls::{PlsOptions, PlsStatus, ProbabilisticSolver, ResidualPolicy};
///
/// let k = DenseOperator::new(Mat::from_fn(4, 4, |i, j| if i == j { 2.0 } else { 0.5 }));
/// let winv = DenseOperator::new(Mat::from_fn(4, 4, |i, j| if i == j { 0.1 } else { 0.0 }));
/// let b = Col::from_fn(4, |i| i as f64 + 1.0);
/// let mut solver = ProbabilisticSolver::new(&k, &winv, b.as_ref(), None, PlsOptions::default())?;
/// let mut policy = ResidualPolicy;
/// while solver.step(&mut policy)? == PlsStatus::Running {}
/// assert_eq!(solver.status(), PlsStatus::Converged);
/// assert!(solver.residual_norm() < 1e-5);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct ProbabilisticSolver<'a> {
    k: &'a dyn LinearOperator,
    winv: &'a dyn LinearOperator,
    options: PlsOptions,
    b: Col<f64>,
    tolerance: f64,
    max_iterations: usize,
    v: Col<f64>,
    r: Col<f64>,
    root: Mat<f64>,
    k_root: Option<Mat<f64>>,
    buffers: RecycleBuffers,
    iteration: usize,
    k_products: usize,
    status: PlsStatus,
}

impl<'a> ProbabilisticSolver<'a> {
    /// Starts a solve of `(K + W⁻¹) v = b`, from the recycled belief (`v₀ = Q₀Q₀ᵀ b`, the
    /// buffers carried on) or from the prior (`v₀ = 0`, empty buffers).
    ///
    /// Errors: operators that are not `n × n` or a recycled belief of another order
    /// ([`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch)), a non-finite
    /// `b` ([`SolverError::Linalg`](crate::SolverError::Linalg)), negative or non-finite
    /// tolerances, a breakdown tolerance outside `[0, 1)`
    /// ([`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions)).
    pub fn new(
        k: &'a dyn LinearOperator,
        winv: &'a dyn LinearOperator,
        b: ColRef<'_, f64>,
        recycled: Option<Recycled>,
        options: PlsOptions,
    ) -> Result<Self> {
        let n = k.nrows();
        check_shape(k.shape(), (n, n), "K of the probabilistic solver (square)")?;
        check_shape(
            winv.shape(),
            (n, n),
            "W⁻¹ of the probabilistic solver (that of K)",
        )?;
        check_shape(
            (b.nrows(), 1),
            (n, 1),
            "right-hand side b (one entry per row of K)",
        )?;
        gp_linalg::validate::check_finite_col(b, "the right-hand side b")?;
        for (name, value) in [
            ("PlsOptions::abs_tolerance", options.abs_tolerance),
            ("PlsOptions::rel_tolerance", options.rel_tolerance),
        ] {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(invalid(
                    name,
                    format!("must be finite and ≥ 0, got {value}"),
                ));
            }
        }
        if !(options.breakdown_tolerance >= 0.0 && options.breakdown_tolerance < 1.0) {
            return Err(invalid(
                "PlsOptions::breakdown_tolerance",
                format!("must lie in [0, 1), got {}", options.breakdown_tolerance),
            ));
        }
        let (root, k_root, buffers) = match recycled {
            Some(rec) => {
                check_shape(
                    (rec.root.nrows(), rec.buffers.n()),
                    (n, n),
                    "recycled belief (rows of Q₀ and of the buffers: the order of K)",
                )?;
                (rec.root, rec.k_root, rec.buffers)
            }
            None => (Mat::zeros(n, 0), Mat::zeros(n, 0), RecycleBuffers::empty(n)),
        };
        let b = b.to_owned();
        let b_norm = b.norm_l2();
        let mut solver = Self {
            k,
            winv,
            options,
            tolerance: options.abs_tolerance.max(options.rel_tolerance * b_norm),
            max_iterations: options.max_iterations.unwrap_or(10 * n),
            v: Col::zeros(n),
            r: b.clone(),
            b,
            root,
            k_root: options.track_kq.then_some(k_root),
            buffers,
            iteration: 0,
            k_products: 0,
            status: PlsStatus::Running,
        };
        if solver.root.ncols() > 0 {
            // v₀ = Q₀(Q₀ᵀ b), consistent with the recycled belief.
            let qtb = solver.root.transpose() * &solver.b;
            solver.v = &solver.root * &qtb;
            solver.update_residual(qtb.as_ref());
        }
        solver.status = solver.stop_status();
        Ok(solver)
    }

    /// Takes one action from `policy` and conditions the belief on it; returns the status
    /// after the step (a finished solve returns its status without taking an action).
    ///
    /// Errors: an action of the wrong length
    /// ([`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch)).
    pub fn step(&mut self, policy: &mut dyn Policy) -> Result<PlsStatus> {
        if self.status != PlsStatus::Running {
            return Ok(self.status);
        }
        let n = self.b.nrows();
        let s = policy.action(&PolicyState {
            residual: self.r.as_ref(),
            iteration: self.iteration,
            rank: self.root.ncols(),
        });
        check_shape(
            (s.nrows(), 1),
            (n, 1),
            "policy action (one entry per row of K)",
        )?;
        if s.iter().any(|x| !x.is_finite()) || s.norm_l2() == 0.0 {
            self.status = PlsStatus::Breakdown;
            return Ok(self.status);
        }
        let alpha = s.transpose() * &self.r;
        let mut t = Col::<f64>::zeros(n);
        self.k.matvec(s.as_ref(), t.as_mut());
        self.k_products += 1;
        let mut z = Col::<f64>::zeros(n);
        self.winv.matvec(s.as_ref(), z.as_mut());
        z += &t;
        // d = s − Q (Qᵀ z), η = zᵀd.
        let qtz = self.root.transpose() * &z;
        let d = &s - &self.root * &qtz;
        let eta = z.transpose() * &d;
        let curvature = s.transpose() * &z;
        if !(eta.is_finite() && eta > self.options.breakdown_tolerance * curvature.abs()) {
            self.status = PlsStatus::Breakdown;
            return Ok(self.status);
        }
        let scale = eta.sqrt().recip();
        if let Some(kq) = self.k_root.as_mut() {
            // K d = K s − (K Q)(Qᵀ z).
            let kd = &t - &*kq * &qtz;
            push_column(kq, (&kd * scale).as_ref());
        }
        push_column(&mut self.root, (&d * scale).as_ref());
        self.buffers.push(s.as_ref(), t.as_ref());
        self.v += &d * (alpha / eta);
        self.iteration += 1;
        let qtb = self.root.transpose() * &self.b;
        self.update_residual(qtb.as_ref());
        self.status = self.stop_status();
        Ok(self.status)
    }

    /// `r = b − K v − W⁻¹ v`, with `K v` from a product with `K` or, when `K Q` is tracked,
    /// as `(K Q)(Qᵀ b)` (`v = Q Qᵀ b` in exact arithmetic).
    fn update_residual(&mut self, qtb: ColRef<'_, f64>) {
        let n = self.b.nrows();
        let mut kv = Col::<f64>::zeros(n);
        match &self.k_root {
            Some(kq) => matmul(
                kv.as_mat_mut(),
                Accum::Replace,
                kq.as_ref(),
                qtb.as_mat(),
                1.0,
                Par::Seq,
            ),
            None => {
                self.k.matvec(self.v.as_ref(), kv.as_mut());
                self.k_products += 1;
            }
        }
        let mut wv = Col::<f64>::zeros(n);
        self.winv.matvec(self.v.as_ref(), wv.as_mut());
        self.r = &self.b - &kv - &wv;
    }

    fn stop_status(&self) -> PlsStatus {
        if self.r.norm_l2() < self.tolerance {
            PlsStatus::Converged
        } else if self.iteration >= self.max_iterations {
            PlsStatus::MaxIterations
        } else {
            PlsStatus::Running
        }
    }

    /// Steps until the solve ends; returns the final status.
    ///
    /// Errors: as [`step`](Self::step).
    pub fn run(&mut self, policy: &mut dyn Policy) -> Result<PlsStatus> {
        while self.step(policy)? == PlsStatus::Running {}
        Ok(self.status)
    }

    /// The status.
    pub fn status(&self) -> PlsStatus {
        self.status
    }

    /// The iterate `v = C b`.
    pub fn solution(&self) -> ColRef<'_, f64> {
        self.v.as_ref()
    }

    /// The residual `r = b − K̂ v`.
    pub fn residual(&self) -> ColRef<'_, f64> {
        self.r.as_ref()
    }

    /// `‖r‖`.
    pub fn residual_norm(&self) -> f64 {
        self.r.norm_l2()
    }

    /// The root `Q` of the precision estimate `C = QQᵀ` (`n × rank`).
    pub fn root(&self) -> MatRef<'_, f64> {
        self.root.as_ref()
    }

    /// The recycling buffers `S`, `T = K S` (the recycled ones and this solve's actions).
    pub fn buffers(&self) -> &RecycleBuffers {
        &self.buffers
    }

    /// Actions taken in this solve (recycled ones not counted).
    pub fn iteration(&self) -> usize {
        self.iteration
    }

    /// Products with `K` taken so far by this solver (one per action, one more per
    /// residual unless `K Q` is tracked).
    pub fn k_products(&self) -> usize {
        self.k_products
    }

    /// `K v` without a product with `K` when `K Q` is tracked: `(K Q)(Qᵀ b)` (equal to `K v`
    /// in exact arithmetic, `v = Q Qᵀ b`); `None` when it is not tracked.
    pub fn k_solution(&self) -> Option<Col<f64>> {
        self.k_root.as_ref().map(|kq| {
            let qtb = self.root.transpose() * &self.b;
            kq * &qtb
        })
    }

    /// The iterate, the root `Q` and the buffers, for the next solve.
    pub fn into_parts(self) -> (Col<f64>, Mat<f64>, RecycleBuffers) {
        (self.v, self.root, self.buffers)
    }
}
