//! The step-by-step conjugate-gradient solver (GPyTorch-style mBCG).

use std::sync::OnceLock;

use faer::{Mat, MatRef};
use gp_linalg::vector::norm2_from_sum_of_squares;
use gp_linalg::LinearOperator;

use super::columns::{select_columns_mut, ColumnBlock};
use super::kernels::{dot, norm2};
use super::options::CgOptions;
use super::passes::{self, Advance};
use super::reorth::ReorthBasis;
use super::result::{CgColumn, CgResult, Directions};
use super::{Breakdown, ColumnStatus};
use crate::error::{check_shape, Result, SolverError};
use crate::krylov::scale::{abs_dot, is_rounding_level, rounding_bound};
use crate::krylov::{KrylovRecord, StoppingRule};
use crate::precond::{Preconditioner, WoodburyParts};

/// What one call of [`CgSolver::step`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct CgStep {
    /// The iteration just completed (1-based: the first step returns 1).
    pub iteration: usize,
    /// The columns that took a step (their increment is non-zero unless a breakdown was
    /// detected on the curvature, in which case they are also in
    /// [`stopped`](Self::stopped)).
    pub advanced: Vec<usize>,
    /// The columns that stopped during this step (converged, reached the iteration cap or
    /// broke down).
    pub stopped: Vec<usize>,
}

/// Preconditioned conjugate gradients on an SPD operator for several right-hand sides at
/// once, one step at a time.
///
/// Each column runs its own CG (its own `α`, `β`, tolerance test) and is frozen once it
/// stops; the operator is applied to the block of active columns in one
/// [`matmat`](LinearOperator::matmat) per step. From `x₀ = 0`, step `j` of column `c` is
///
/// ```text
/// v = A d;  α_j = rᵀs / dᵀv;  Δ_j = α_j d;  x += Δ_j;  r −= α_j v;
/// s = P⁻¹ r  [re-orthogonalized];  β_j = r_newᵀs_new / rᵀs;  d = s + β_j d
/// ```
///
/// so `A⁻¹b = Σ_j Δ_j` (the series that randomized truncation re-weights). A
/// diagonal-plus-low-rank preconditioner ([`Preconditioner::woodbury_parts`], e.g. the
/// pivoted-Cholesky `L Lᵀ + σ²I`) is applied inside the step's own passes over the
/// residuals, without a call to its solve, unless re-orthogonalization is on. After each
/// [`step`](Self::step) the state exposes the increment [`increment`](Self::increment) (zero
/// in frozen columns), the direction used and its product with `A`
/// ([`direction`](Self::direction), [`operator_direction`](Self::operator_direction)), the
/// iterate, the residual, and the per-column record (`α`, `β`, residual history, status).
///
/// ```
/// use faer::Mat;
/// use gp_linalg::DenseOperator;
/// use gp_solvers::{CgOptions, CgSolver};
///
/// let a = DenseOperator::new(Mat::from_fn(4, 4, |i, j| if i == j { 4.0 } else { 1.0 }));
/// let b = Mat::from_fn(4, 2, |i, j| (i + j) as f64);
/// let opts = CgOptions { tolerance: 0.0, ..Default::default() };
/// let mut solver = CgSolver::new(&a, b.as_ref(), None, &opts)?;
/// // A "random" truncation: stop after two steps, summing the increments by hand.
/// let mut sum = Mat::<f64>::zeros(4, 2);
/// for _ in 0..2 {
///     if solver.step()?.is_none() { break; }
///     sum += solver.increment();
/// }
/// assert!((&sum - solver.solution()).norm_max() < 1e-15);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub struct CgSolver<'a> {
    op: &'a dyn LinearOperator,
    precond: Option<&'a dyn Preconditioner>,
    options: CgOptions,
    rule: StoppingRule,
    n: usize,
    x: ColumnBlock,
    r: ColumnBlock,
    /// `P⁻¹ r`; not stored (empty) when it equals `r` (no preconditioner and no
    /// re-orthogonalization), where `r` serves for it.
    s: ColumnBlock,
    s_is_r: bool,
    d: ColumnBlock,
    ad: ColumnBlock,
    /// The increments `α d` of the last step, formed only when asked for
    /// ([`increment`](Self::increment)): the step itself adds them to the iterate and the
    /// caller's sums without storing them.
    delta: OnceLock<ColumnBlock>,
    /// `α` of the last step per column (zero in columns that did not advance).
    step_alphas: Vec<f64>,
    /// Direction used by the last step. Each step writes the next direction into this
    /// buffer and swaps it with `d`, so no copy is made.
    last_d: ColumnBlock,
    /// Whether a stopped column's increment and directions (in both direction buffers) are
    /// already zero: they are zeroed once, not at every later step.
    cleared: Vec<bool>,
    rz: Vec<f64>,
    columns: Vec<CgColumn>,
    bases: Vec<ReorthBasis>,
    iteration: usize,
}

impl std::fmt::Debug for CgSolver<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CgSolver")
            .field("n", &self.n)
            .field("columns", &self.columns.len())
            .field("iteration", &self.iteration)
            .field("options", &self.options)
            .finish()
    }
}

impl<'a> CgSolver<'a> {
    /// Sets up CG on `A X = B` from `X₀ = 0` with an optional preconditioner (`None` means
    /// `P = I`).
    ///
    /// Errors with [`SolverError::InvalidOptions`] (see [`CgOptions::validate`]),
    /// [`SolverError::ShapeMismatch`] if `A` is not square, `B` does not have `n` rows or
    /// `P` is not of order `n`, a [`LinalgError::NonFinite`](gp_linalg::LinalgError::NonFinite)
    /// if `B` holds NaN or infinity, and [`SolverError::PreconditionerNotSpd`] if
    /// `bᵀP⁻¹b` is not positive and finite for a non-zero column `b`.
    pub fn new(
        op: &'a dyn LinearOperator,
        rhs: MatRef<'_, f64>,
        precond: Option<&'a dyn Preconditioner>,
        options: &CgOptions,
    ) -> Result<Self> {
        options.validate()?;
        let n = op.nrows();
        check_shape(
            op.shape(),
            (n, n),
            "CgSolver::new (the operator must be square)",
        )?;
        check_shape(
            (rhs.nrows(), rhs.ncols()),
            (n, rhs.ncols()),
            "CgSolver::new (right-hand sides)",
        )?;
        if let Some(p) = precond {
            check_shape((p.dim(), p.dim()), (n, n), "CgSolver::new (preconditioner)")?;
        }
        gp_linalg::validate::check_finite_mat(rhs, "the right-hand sides")?;
        let m = rhs.ncols();
        let r = ColumnBlock::from_mat(rhs);
        let s = match precond {
            Some(p) => ColumnBlock::from_mat(p.solve_block(rhs)?.as_ref()),
            None => r.clone(),
        };
        let mut rz = Vec::with_capacity(m);
        let mut columns = Vec::with_capacity(m);
        let mut bases = Vec::new();
        for c in 0..m {
            let rc = r.col(c);
            let sc = s.col(c);
            let bnorm = norm2(rc);
            let z = dot(rc, sc);
            let zero = bnorm == 0.0;
            let spd = z.is_finite() && z > 0.0;
            if !zero && !spd {
                return Err(SolverError::PreconditionerNotSpd {
                    reason: format!("bᵀP⁻¹b = {z} for right-hand side {c}"),
                });
            }
            rz.push(z);
            let status = if zero {
                ColumnStatus::Converged
            } else if options.max_iterations == 0 {
                ColumnStatus::MaxIterations
            } else {
                ColumnStatus::Running
            };
            columns.push(CgColumn {
                status,
                iterations: 0,
                rhs_norm: bnorm,
                rhs_precond_norm_sq: if zero { 0.0 } else { z },
                record: KrylovRecord {
                    residual_norms: vec![if zero { 0.0 } else { 1.0 }],
                    alphas: Vec::new(),
                    betas: Vec::new(),
                },
                directions: options.record_directions.then(|| Directions::new(n)),
            });
            if options.reorthogonalize {
                let mut basis = ReorthBasis::new(n);
                if !zero {
                    basis.push(rc, sc, z);
                }
                bases.push(basis);
            }
        }
        let s_is_r = precond.is_none() && !options.reorthogonalize;
        Ok(Self {
            op,
            precond,
            options: *options,
            rule: options.stopping_rule(),
            n,
            d: s.clone(),
            x: ColumnBlock::zeros(n, m),
            r,
            s: if s_is_r { ColumnBlock::zeros(0, 0) } else { s },
            s_is_r,
            ad: ColumnBlock::zeros(n, m),
            delta: OnceLock::new(),
            step_alphas: vec![0.0; m],
            last_d: ColumnBlock::zeros(n, m),
            cleared: vec![false; m],
            rz,
            columns,
            bases,
            iteration: 0,
        })
    }

    /// Order `n` of the system.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Number of right-hand sides `m`.
    pub fn ncols(&self) -> usize {
        self.columns.len()
    }

    /// The options the solver runs with.
    pub fn options(&self) -> &CgOptions {
        &self.options
    }

    /// Number of steps taken so far.
    pub fn iteration(&self) -> usize {
        self.iteration
    }

    /// Whether every column has stopped.
    pub fn is_finished(&self) -> bool {
        self.columns.iter().all(|c| !c.status.is_running())
    }

    /// The current iterate `X_j` (`n×m`).
    pub fn solution(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The current (recursively updated) residual `B − A X_j`.
    pub fn residual(&self) -> MatRef<'_, f64> {
        self.r.as_ref()
    }

    /// The preconditioned residual `P⁻¹ (B − A X_j)` (re-orthogonalized if requested).
    pub fn preconditioned_residual(&self) -> MatRef<'_, f64> {
        if self.s_is_r {
            self.r.as_ref()
        } else {
            self.s.as_ref()
        }
    }

    /// The increment `Δ_j = α_j d_{j−1}` of the last step (`X_j = X_{j−1} + Δ_j`); zero in
    /// columns that did not advance. Zero before the first step.
    pub fn increment(&self) -> MatRef<'_, f64> {
        self.delta
            .get_or_init(|| {
                let mut delta = ColumnBlock::zeros(self.n, self.ncols());
                for (c, &alpha) in self.step_alphas.iter().enumerate() {
                    if alpha != 0.0 {
                        for (o, &d) in delta.col_mut(c).iter_mut().zip(self.last_d.col(c)) {
                            *o = alpha * d;
                        }
                    }
                }
                delta
            })
            .as_ref()
    }

    /// The search direction `d_{j−1}` used by the last step (zero in columns that did not
    /// advance).
    pub fn direction(&self) -> MatRef<'_, f64> {
        self.last_d.as_ref()
    }

    /// `A d_{j−1}` for the direction of the last step (zero in columns that did not
    /// advance).
    pub fn operator_direction(&self) -> MatRef<'_, f64> {
        self.ad.as_ref()
    }

    /// The record of column `c` so far (status, `α`, `β`, residual history, ...), or
    /// `None` if `c ≥ m`.
    pub fn column(&self, c: usize) -> Option<&CgColumn> {
        self.columns.get(c)
    }

    /// The records of all columns.
    pub fn columns(&self) -> &[CgColumn] {
        &self.columns
    }

    /// Takes one step in every running column. Returns `None` (and does nothing) once every
    /// column has stopped.
    ///
    /// Errors only if the preconditioner rejects its input (a shape error, which cannot
    /// happen for a preconditioner of the right order).
    pub fn step(&mut self) -> Result<Option<CgStep>> {
        self.step_accumulating(0.0, &mut [])
    }

    /// [`step`](Self::step), also adding `weight · Δ_j` (the step's
    /// [`increment`](Self::increment)) to every target in the same pass over memory that
    /// forms `Δ_j`: the Russian-roulette sums of [`rr_cg`](crate::rr_cg::rr_cg) without a
    /// pass of their own. Each target is an `n × m` block stored column-major with column
    /// stride `n` (length `n·m`); columns that do not advance are left unchanged. The sums
    /// are bit for bit those of `axpy(weight, increment, target)` after the step.
    ///
    /// Errors as [`step`](Self::step), and with [`SolverError::ShapeMismatch`] (before
    /// anything is done) if a target's length is not `n·m`.
    pub fn step_accumulating(
        &mut self,
        weight: f64,
        targets: &mut [&mut [f64]],
    ) -> Result<Option<CgStep>> {
        let n = self.n;
        let m = self.ncols();
        for t in targets.iter() {
            check_shape(
                (t.len(), 1),
                (n * m, 1),
                "CgSolver::step_accumulating (a target, n·m values column-major)",
            )?;
        }
        let active: Vec<usize> = (0..m)
            .filter(|&c| self.columns[c].status.is_running())
            .collect();
        if active.is_empty() {
            return Ok(None);
        }
        let curvatures = self.apply_operator(&active);
        let mut stopped = Vec::new();
        let (moved, alphas) = self.step_lengths(&active, curvatures, &mut stopped);
        self.delta = OnceLock::new();
        self.step_alphas.fill(0.0);
        for (&c, &alpha) in moved.iter().zip(&alphas) {
            self.step_alphas[c] = alpha;
        }
        // A column that does not move has stopped for good: its direction is zero from now
        // on (both direction buffers, which the steps swap).
        for c in (0..m).filter(|c| !moved.contains(c)) {
            if !self.cleared[c] {
                self.last_d.col_mut(c).fill(0.0);
                self.d.col_mut(c).fill(0.0);
                self.cleared[c] = true;
            }
        }
        let woodbury = self.woodbury();
        let sums = passes::advance(
            Advance {
                alphas: &alphas,
                d: self.d.cols(&moved),
                ad: self.ad.cols(&moved),
                x: self.x.cols_mut(&moved),
                r: self.r.cols_mut(&moved),
                targets: targets
                    .iter_mut()
                    .map(|t| (weight, select_columns_mut(t, n, &moved)))
                    .collect(),
                projection: woodbury.as_ref().map(|w| w.1.clone()).unwrap_or_default(),
            },
            n,
            self.s_is_r || woodbury.is_some(),
        );
        let (rs, rr) = match (woodbury, sums.squares) {
            (Some((parts, v)), Some(rr)) => {
                // `t = C⁻¹ Vᵀr` per column, then `s = D⁻¹r − V t` and `rᵀs` in one pass.
                let mut t = Mat::from_fn(v.len(), moved.len(), |k, j| sums.projections[j][k]);
                parts.capacitance.solve_in_place(t.as_mut())?;
                let t: Vec<Vec<f64>> = (0..moved.len())
                    .map(|j| t.col_as_slice(j).to_vec())
                    .collect();
                let rs = passes::woodbury_residuals(
                    parts.diagonal,
                    v,
                    &t,
                    self.r.cols(&moved),
                    self.s.cols_mut(&moved),
                    n,
                );
                (rs, rr)
            }
            (_, squares) => {
                self.precondition(&moved)?;
                for &c in &moved {
                    if let Some(basis) = self.bases.get(c) {
                        basis.orthogonalize(self.r.col_mut(c), self.s.col_mut(c));
                    }
                }
                match squares {
                    Some(rr) => (rr.clone(), rr),
                    None => passes::residual_dots(self.r.cols(&moved), self.s.cols(&moved), n),
                }
            }
        };
        let next = self.iteration + 1;
        let mut continuing = Vec::with_capacity(moved.len());
        let mut betas = Vec::with_capacity(moved.len());
        for (k, &c) in moved.iter().enumerate() {
            let r = self.r.col(c);
            let s = if self.s_is_r { r } else { self.s.col(c) };
            let mut rz_new = rs[k];
            let rnorm = norm2_from_sum_of_squares(rr[k], r);
            // A negative rᵀP⁻¹r within the rounding error of its own terms (after the
            // residual has underflowed, −5e-324 is typical) is zero to working precision:
            // the column has converged, as for an exactly zero value. Only a value beyond
            // that bound shows an indefinite preconditioner. The bound costs a pass over
            // `r` and `s`, made only on this rare path.
            if rz_new < 0.0 && is_rounding_level(rz_new, rounding_bound(n, abs_dot(r, s))) {
                rz_new = 0.0;
            }
            let column = &mut self.columns[c];
            column.record.alphas.push(alphas[k]);
            column.iterations += 1;
            if !(rz_new.is_finite() && rnorm.is_finite()) {
                column.status = ColumnStatus::Breakdown(Breakdown::NonFinite);
                stopped.push(c);
                continue;
            }
            let rel = rnorm / column.rhs_norm;
            column.record.residual_norms.push(rel);
            let beta = rz_new / self.rz[c];
            column.record.betas.push(beta);
            if rz_new < 0.0 {
                column.status =
                    ColumnStatus::Breakdown(Breakdown::IndefinitePreconditioner { value: rz_new });
                stopped.push(c);
                continue;
            }
            self.rz[c] = rz_new;
            let exact = rnorm == 0.0 || rz_new == 0.0;
            if let Some(status) = self.rule.decide(next, rel, exact) {
                column.status = status;
                stopped.push(c);
                continue;
            }
            if let Some(basis) = self.bases.get_mut(c) {
                basis.push(r, s, rz_new);
            }
            continuing.push(c);
            betas.push(beta);
        }
        let s = if self.s_is_r { &self.r } else { &self.s };
        passes::next_directions(
            &betas,
            s.cols(&continuing),
            self.d.cols(&continuing),
            self.last_d.cols_mut(&continuing),
            n,
        );
        // `d` now holds the directions this step used, `last_d` the next ones.
        std::mem::swap(&mut self.d, &mut self.last_d);
        self.iteration = next;
        stopped.sort_unstable();
        Ok(Some(CgStep {
            iteration: next,
            advanced: active,
            stopped,
        }))
    }

    /// `v = A d` on the active block (which `matmat` overwrites; the columns that do not
    /// advance are zeroed, as `increment`, `direction` and `product` promise). When every
    /// column is active, also the curvatures `dᵀA d` from the operator
    /// ([`LinearOperator::matmat_with_dots`], the bits of the passes' `column_dots`).
    fn apply_operator(&mut self, active: &[usize]) -> Option<Vec<f64>> {
        let (n, m) = (self.n, self.ncols());
        if active.len() == m {
            return Some(self.op.matmat_with_dots(self.d.as_ref(), self.ad.as_mut()));
        }
        let mut ad = self.ad.as_mut();
        ad.fill(0.0);
        let block = Mat::from_fn(n, active.len(), |i, k| self.d.col(active[k])[i]);
        let mut out = Mat::<f64>::zeros(n, active.len());
        self.op.matmat(block.as_ref(), out.as_mut());
        for (k, &c) in active.iter().enumerate() {
            self.ad.col_mut(c).copy_from_slice(out.col_as_slice(k));
        }
        None
    }

    /// The curvatures `dᵀA d` (the operator's, or summed here) and step lengths
    /// `α = rᵀs / dᵀA d` of the active columns:
    /// the columns that can move and their `α`, the others marked broken down (added to
    /// `stopped`). Records the directions of the moving columns when asked to.
    fn step_lengths(
        &mut self,
        active: &[usize],
        curvatures: Option<Vec<f64>>,
        stopped: &mut Vec<usize>,
    ) -> (Vec<usize>, Vec<f64>) {
        let curvatures = curvatures.unwrap_or_else(|| {
            passes::column_dots(self.d.cols(active), self.ad.cols(active), self.n)
        });
        let mut moved = Vec::with_capacity(active.len());
        let mut alphas = Vec::with_capacity(active.len());
        for (&c, &curvature) in active.iter().zip(&curvatures) {
            let alpha = self.rz[c] / curvature;
            let column = &mut self.columns[c];
            let breakdown = if !curvature.is_finite() {
                Some(Breakdown::NonFinite)
            } else if curvature <= 0.0 {
                Some(Breakdown::NonPositiveCurvature { curvature })
            } else if !(alpha.is_finite() && alpha > 0.0) {
                Some(Breakdown::NonFinite)
            } else {
                None
            };
            if let Some(b) = breakdown {
                column.status = ColumnStatus::Breakdown(b);
                stopped.push(c);
                continue;
            }
            if let Some(dirs) = column.directions.as_mut() {
                dirs.push(self.d.col(c), self.ad.col(c));
            }
            moved.push(c);
            alphas.push(alpha);
        }
        (moved, alphas)
    }

    /// The preconditioner's Woodbury parts and the columns of its `V = D⁻¹U`, when the step
    /// forms `s = P⁻¹ r` in its own passes: a diagonal-plus-low-rank preconditioner
    /// ([`Preconditioner::woodbury_parts`]) and no re-orthogonalization (which changes `s`
    /// after the solve).
    fn woodbury(&self) -> Option<(WoodburyParts<'a>, Vec<&'a [f64]>)> {
        if self.options.reorthogonalize {
            return None;
        }
        let parts = self.precond?.woodbury_parts()?;
        let v = parts.factor_over_diagonal;
        if parts.diagonal.len() != self.n || v.nrows() != self.n {
            return None;
        }
        let columns = (0..v.ncols())
            .map(|k| v.col(k).try_as_col_major().map(|c| c.as_slice()))
            .collect::<Option<Vec<_>>>()?;
        Some((parts, columns))
    }

    /// `s = P⁻¹ r` on the columns that moved (a copy of `r` without a preconditioner; nothing
    /// when `r` serves as `s`).
    fn precondition(&mut self, moved: &[usize]) -> Result<()> {
        if moved.is_empty() || self.s_is_r {
            return Ok(());
        }
        let n = self.n;
        match self.precond {
            None => {
                for &c in moved {
                    self.s.col_mut(c).copy_from_slice(self.r.col(c));
                }
            }
            Some(p) if moved.len() == self.ncols() => {
                p.solve_into(self.r.as_ref(), self.s.as_mut())?;
            }
            Some(p) => {
                let block = Mat::from_fn(n, moved.len(), |i, k| self.r.col(moved[k])[i]);
                let out = p.solve_block(block.as_ref())?;
                for (k, &c) in moved.iter().enumerate() {
                    self.s.col_mut(c).copy_from_slice(out.col_as_slice(k));
                }
            }
        }
        Ok(())
    }

    /// Takes up to `steps` steps (fewer if every column stops first); returns the number
    /// taken.
    pub fn run_steps(&mut self, steps: usize) -> Result<usize> {
        let mut taken = 0;
        while taken < steps {
            if self.step()?.is_none() {
                break;
            }
            taken += 1;
        }
        Ok(taken)
    }

    /// Steps until every column has stopped.
    pub fn run(&mut self) -> Result<()> {
        while self.step()?.is_some() {}
        Ok(())
    }

    /// The outcome so far. Columns that are still running keep
    /// [`ColumnStatus::Running`].
    pub fn into_result(self) -> CgResult {
        CgResult {
            solution: self.x.to_mat(),
            columns: self.columns,
            iterations: self.iteration,
        }
    }
}

/// Solves `A X = B` by batched preconditioned CG (every column to its own tolerance);
/// `CgSolver::new(..)?.run()` and [`CgSolver::into_result`].
///
/// ```
/// use faer::Mat;
/// use gp_linalg::DenseOperator;
/// use gp_solvers::{cg, CgOptions};
///
/// let a = Mat::from_fn(3, 3, |i, j| if i == j { 3.0 } else { 1.0 });
/// let b = Mat::from_fn(3, 1, |i, _| i as f64 + 1.0);
/// let res = cg(&DenseOperator::new(a.clone()), b.as_ref(), None, &CgOptions::default())?;
/// assert!(res.all_converged());
/// assert!((&a * &res.solution - &b).norm_max() < 1e-5);
/// assert_eq!(res.columns[0].tridiagonal()?.dim(), res.columns[0].iterations);
/// # Ok::<(), gp_solvers::SolverError>(())
/// ```
pub fn cg(
    op: &dyn LinearOperator,
    rhs: MatRef<'_, f64>,
    precond: Option<&dyn Preconditioner>,
    options: &CgOptions,
) -> Result<CgResult> {
    let mut solver = CgSolver::new(op, rhs, precond, options)?;
    solver.run()?;
    Ok(solver.into_result())
}
