//! KMCG driven step by step by a Krylov solver: FOM (CG with complete
//! re-orthogonalisation, the paper's choice) or Lanczos with full re-orthogonalisation (same
//! Krylov space, hence the same estimate, with `N × P` storage only).

use faer::MatRef;
use gp_linalg::LinearOperator;
use gp_solvers::{FomOptions, FomSolver, FomStatus, LanczosSolver, LanczosStatus};

use super::basis::{columns_from_basis, SubsetProducts};
use super::lanczos_columns::LanczosColumns;
use super::state::{KmcgColumns, KmcgState};
use crate::error::{ModelError, Result};

/// `s ↦ Sᵀk(X_M, X*)` for one direction `s`: the new row of `C` at the test points,
/// computed however the kernel's structure allows (a dense `k(X, X*)`, a Kronecker or
/// Toeplitz product). Return an empty vector for no test points.
pub type TestRow<'a> = Box<dyn Fn(&[f64]) -> Vec<f64> + Send + Sync + 'a>;

/// A dense `k(X_M, X*)` (`M × n*`) as a [`TestRow`]: one matrix-vector product
/// `k(X*, X_M) s` (memory-bound: it reads `M n*` numbers per direction).
pub fn dense_test_rows(cross: MatRef<'_, f64>) -> TestRow<'_> {
    Box::new(move |s: &[f64]| {
        let mut out = vec![0.0; cross.ncols()];
        if s.len() == cross.nrows() {
            faer::linalg::matmul::matmul(
                faer::MatMut::from_column_major_slice_mut(&mut out, cross.ncols(), 1),
                faer::Accum::Replace,
                cross.transpose(),
                MatRef::from_column_major_slice(s, s.len(), 1),
                1.0,
                gp_linalg::parallelism(),
            );
        } else {
            // A direction of the wrong length: an empty row, which the estimate refuses
            // with a typed length error.
            out.clear();
        }
        out
    })
}

/// What one KMCG step reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KmcgStep {
    /// Directions in the estimate after this step (`P`).
    pub steps: usize,
    /// The Krylov solver's relative residual (FOM) or the next off-diagonal (Lanczos).
    pub solver_residual: f64,
}

/// Why a [`KmcgRun`] stopped, or `Running`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum KmcgRunStatus {
    /// It can take more steps.
    Running,
    /// The Krylov solver stopped (its own status: converged, step cap, breakdown).
    Solver(String),
    /// The projected Gram or system factor broke down; the estimate is the last valid one.
    Estimate(super::KmcgBreakdown),
}

enum Driver<'a> {
    Fom(FomSolver<'a>),
    Lanczos(LanczosSolver<'a>, LanczosColumns),
}

/// KMCG one direction per [`step`](Self::step), on all `N` points ([`new`](Self::new)) or
/// on a subset `X_M ⊂ X` ([`on_subset`](Self::on_subset)): the caller decides when to stop
/// (a step budget, a time limit, a tolerance) and reads the estimate at any step from
/// [`state`](Self::state).
///
/// The Krylov solver runs on `krylov_op = K_M + cI` with the shift `c` given: `c = 0`
/// (pass `K_M`) is the paper's run; `c = σ²` (pass `K_M + σ²I`) is the same Krylov space
/// (`𝒦(K, y) = 𝒦(K + σ²I, y)`) and the same estimate in exact arithmetic, better
/// conditioned, and FOM's iterate is then CG's own solve of `(K + σ²I)α = y`.
pub struct KmcgRun<'a> {
    driver: Driver<'a>,
    state: KmcgState,
    targets: Targets,
    shift: f64,
    test_row: TestRow<'a>,
    status: KmcgRunStatus,
}

/// The `N` training targets, and, when the directions live on a subset `X_M` (`M < N`), the
/// products `R = k(X, X_M) S` that replace `K S` (they hold the targets themselves).
enum Targets {
    All(Vec<f64>),
    Subset(SubsetProducts),
}

impl std::fmt::Debug for KmcgRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KmcgRun")
            .field("steps", &self.state.steps())
            .field("shift", &self.shift)
            .field("status", &self.status)
            .finish()
    }
}

/// Which Krylov solver builds the basis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KmcgBasis {
    /// FOM, CG with complete re-orthogonalisation (spec §1.4): stores `S` and `Z = AS`
    /// (`2 N P` numbers); its iterate is CG's solution. The paper's choice; the default.
    #[default]
    Fom,
    /// Lanczos with full re-orthogonalisation: stores `Q` only (`N P` numbers);
    /// `SᵀKS = T` and `RᵀR = T² + β²e eᵀ` come from the recurrence's coefficients.
    Lanczos,
}

impl<'a> KmcgRun<'a> {
    /// Sets up the run on all `N` points (`krylov_op` is `K + cI`, `N × N`).
    /// `prior_variance` are `k(x*, x*)` at the test points (their number must match what
    /// `test_row` returns), `max_steps` caps the Krylov solver.
    ///
    /// Errors: a noise variance that is not positive, `y` of the wrong length, zero or
    /// non-finite `y`, a non-square operator.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        krylov_op: &'a dyn LinearOperator,
        shift: f64,
        y: &[f64],
        noise_variance: f64,
        prior_variance: &[f64],
        test_row: TestRow<'a>,
        basis: KmcgBasis,
        max_steps: usize,
    ) -> Result<Self> {
        Self::start(
            krylov_op,
            shift,
            y,
            Targets::All(y.to_vec()),
            noise_variance,
            prior_variance,
            test_row,
            basis,
            max_steps,
        )
    }

    /// Sets up the run on a subset `X_M ⊂ X` (spec §1.5, Algorithm 2 with `M < N`): the
    /// Krylov solver runs on `krylov_op = K_M + cI` (`M × M`) from the subset's targets
    /// `y_M` (`subset_targets`), and every direction `s_j` costs one more product
    /// `r_j = k(X, X_M) s_j` with the `N × M` matrix `products` holds, which also holds all
    /// `N` targets. `test_row` maps a direction (`M` entries) to `s_jᵀk(X_M, X*)`.
    ///
    /// Errors: as [`new`](Self::new), and `subset_targets` or `products` whose sizes do not
    /// match the operator (`M`).
    #[allow(clippy::too_many_arguments)]
    pub fn on_subset(
        krylov_op: &'a dyn LinearOperator,
        shift: f64,
        subset_targets: &[f64],
        products: SubsetProducts,
        noise_variance: f64,
        prior_variance: &[f64],
        test_row: TestRow<'a>,
        basis: KmcgBasis,
        max_steps: usize,
    ) -> Result<Self> {
        if products.subset_size() != krylov_op.nrows() {
            return Err(ModelError::LengthMismatch {
                context: "KmcgRun::on_subset: columns of k(X, X_M) against the operator's order",
                expected: krylov_op.nrows(),
                found: products.subset_size(),
            });
        }
        Self::start(
            krylov_op,
            shift,
            subset_targets,
            Targets::Subset(products),
            noise_variance,
            prior_variance,
            test_row,
            basis,
            max_steps,
        )
    }

    /// The estimate after the steps taken.
    pub fn state(&self) -> &KmcgState {
        &self.state
    }

    /// Why the run stopped, or `Running`.
    pub fn status(&self) -> &KmcgRunStatus {
        &self.status
    }

    /// FOM's solver (for CG's own iterate and residual), if the basis is FOM.
    pub fn fom(&self) -> Option<&FomSolver<'a>> {
        match &self.driver {
            Driver::Fom(f) => Some(f),
            Driver::Lanczos(..) => None,
        }
    }

    /// The directions so far (`S` of FOM, or Lanczos' `Q`; one more column than the
    /// estimate holds if the last one broke the estimate down).
    pub fn directions(&self) -> MatRef<'_, f64> {
        match &self.driver {
            Driver::Fom(f) => f.directions(),
            Driver::Lanczos(l, _) => l.basis(),
        }
    }

    /// Takes one direction. `Ok(None)` once the run has stopped ([`status`](Self::status)
    /// says why).
    ///
    /// Errors: a failure of the operator's product the solver reports as an error, a test
    /// row of the wrong length.
    pub fn step(&mut self) -> Result<Option<KmcgStep>> {
        if self.status != KmcgRunStatus::Running {
            return Ok(None);
        }
        let (columns, residual) = match &mut self.driver {
            Driver::Fom(fom) => {
                let Some(step) = fom.step()? else {
                    self.status = KmcgRunStatus::Solver(format!("{:?}", fom.status()));
                    return Ok(None);
                };
                let (s, z) = (fom.directions(), fom.products());
                let j = s.ncols() - 1;
                let sj: Vec<f64> = (0..s.nrows()).map(|i| s[(i, j)]).collect();
                let row = (self.test_row)(&sj);
                let cols = match &mut self.targets {
                    Targets::Subset(subset) => subset.columns(s, z, self.shift, row)?,
                    Targets::All(y) => columns_from_basis(s, z, self.shift, y, row)?,
                };
                if !matches!(fom.status(), FomStatus::Running) {
                    // The step was taken; the solver stops after it.
                    self.status = KmcgRunStatus::Solver(format!("{:?}", fom.status()));
                }
                (cols, step.residual_norm / fom.rhs_norm())
            }
            Driver::Lanczos(lz, cols) => {
                let Some(it) = lz.step()? else {
                    self.status = KmcgRunStatus::Solver(format!("{:?}", lz.status()));
                    return Ok(None);
                };
                let q = lz.basis();
                let j = q.ncols() - 1;
                let qj: Vec<f64> = (0..q.nrows()).map(|i| q[(i, j)]).collect();
                let row = (self.test_row)(&qj);
                let mut c: KmcgColumns = cols.next(it.alpha, it.beta, row);
                if let Targets::Subset(subset) = &mut self.targets {
                    // `R = k(X, X_M) Q` is not `K Q`: its Gram and `Rᵀy` come from the
                    // products, the recurrence gives `QᵀK_M Q` only.
                    let (product_gram, product_dot_y) = subset.push_direction(j, &qj)?;
                    c.product_gram = product_gram;
                    c.product_dot_y = product_dot_y;
                }
                if !matches!(it.status, LanczosStatus::Running) {
                    self.status = KmcgRunStatus::Solver(format!("{:?}", it.status));
                }
                (c, it.beta)
            }
        };
        if !self.state.push(&columns)? {
            if let Some((_, why)) = self.state.breakdown() {
                self.status = KmcgRunStatus::Estimate(why);
            }
            return Ok(None);
        }
        Ok(Some(KmcgStep {
            steps: self.state.steps(),
            solver_residual: residual,
        }))
    }
}

impl<'a> KmcgRun<'a> {
    /// What [`new`](Self::new) and [`on_subset`](Self::on_subset) share: the Krylov solver
    /// on `krylov_op` from `rhs`, and the estimate of all `N` targets.
    #[allow(clippy::too_many_arguments)]
    fn start(
        krylov_op: &'a dyn LinearOperator,
        shift: f64,
        rhs: &[f64],
        targets: Targets,
        noise_variance: f64,
        prior_variance: &[f64],
        test_row: TestRow<'a>,
        basis: KmcgBasis,
        max_steps: usize,
    ) -> Result<Self> {
        let m = krylov_op.nrows();
        if rhs.len() != m {
            return Err(ModelError::LengthMismatch {
                context: "KmcgRun: targets of the Krylov run against the operator's order",
                expected: m,
                found: rhs.len(),
            });
        }
        if !shift.is_finite() {
            return Err(ModelError::InvalidOption {
                name: "shift",
                reason: format!("must be finite, got {shift}"),
            });
        }
        let y = match &targets {
            Targets::All(y) => y.as_slice(),
            Targets::Subset(products) => products.targets(),
        };
        let yty = y.iter().map(|v| v * v).sum::<f64>();
        let state = KmcgState::new(y.len(), noise_variance, yty, prior_variance)?;
        let b = faer::ColRef::from_slice(rhs);
        let driver = match basis {
            KmcgBasis::Fom => {
                let opts = FomOptions {
                    max_steps,
                    ..FomOptions::default()
                };
                Driver::Fom(FomSolver::new(krylov_op, b, &opts)?)
            }
            KmcgBasis::Lanczos => {
                let opts = gp_solvers::LanczosOptions {
                    max_iterations: max_steps,
                    ..Default::default()
                };
                let rhs_norm = rhs.iter().map(|v| v * v).sum::<f64>().sqrt();
                Driver::Lanczos(
                    LanczosSolver::new(krylov_op, b, &opts)?,
                    LanczosColumns::new(rhs_norm, shift),
                )
            }
        };
        Ok(Self {
            driver,
            state,
            targets,
            shift,
            test_row,
            status: KmcgRunStatus::Running,
        })
    }
}
