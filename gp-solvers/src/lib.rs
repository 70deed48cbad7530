//! # gp-solvers
//!
//! Iterative solvers for Gaussian-process linear algebra. The solvers know
//! [`LinearOperator`]s only (never kernels or grids).
//!
//! * [`cg`](mod@cg): batched preconditioned conjugate gradients (GPyTorch-style mBCG): every
//!   right-hand side converges on its own and is frozen once it stops, with a relative
//!   tolerance, minimum and maximum iteration counts, optional full re-orthogonalization
//!   and typed breakdown statuses. [`CgSolver`] is the step interface (read each step's
//!   increment `Δ_j`, direction `d` and `A d`; stop whenever you like); [`cg()`](cg()) runs it to
//!   the end. The result records the residual histories, the `α`/`β` coefficients, the
//!   Lanczos tridiagonals and, on request, the search directions and their products.
//! * [`krylov`]: what every Krylov method shares: the [`StoppingRule`], the per-solve
//!   [`Status`] and [`Breakdown`] (judged against the problem's scale: a rounding-level
//!   negative squared norm is convergence) and the [`KrylovRecord`] of residual norms,
//!   `α`/`β` and the implied tridiagonal.
//! * [`lanczos`](mod@lanczos): Lanczos with full re-orthogonalization (`Q`, `T`).
//! * [`lanczos_steps`]: [`LanczosSolver`], the step interface of that Lanczos process
//!   (one vector per step; `Q`, `α_j`, `β_j` and `T` after each), which
//!   [`lanczos()`](lanczos()) runs to the end.
//! * [`fom`](mod@fom): CG as a projection method with complete re-orthogonalisation
//!   ([`FomSolver`], Saad's FOM; the stable CG of the KMCG paper): `A`-conjugate
//!   directions `S`, their products `Z = AS`, the Gram matrix `SᵀAS` and its Cholesky
//!   factor grown by bordering, the Galerkin solution; breakdowns freeze the last valid
//!   state. [`fom()`](fom()) runs it to the end.
//! * [`textbook_cg`]: [`TextbookCg`], textbook CG with normalised directions, recording
//!   `S` and `Z` without re-orthogonalisation (it loses `A`-conjugacy: the paper's
//!   Figure 15).
//! * [`pls`]: the probabilistic linear solver of IterGP for `(K + W⁻¹) v = b`
//!   ([`ProbabilisticSolver`](pls::ProbabilisticSolver): a belief `v`, `C = QQᵀ` after
//!   every action; [`Policy`](pls::Policy) with residual (CG) and unit-vector (subset of
//!   data) actions; breakdown as a status, the action discarded), and recycling across
//!   systems that share `K` ([`virtual_solver_run`](pls::virtual_solver_run), Algorithm 3,
//!   with compression, no product with `K`).
//! * [`tridiagonal`]: [`SymTridiagonal`], its eigen-decomposition and Gauss quadrature
//!   `e₁ᵀ f(T) e₁`; the tridiagonal implied by CG coefficients.
//! * [`truncation`] and [`rr_cg`](mod@rr_cg): truncation laws ([`TruncationLaw`]: exponential
//!   decay, 1/J, fixed) and Russian-roulette truncated CG ([`rr_cg()`]): unbiased solves from
//!   one batched CG run (one estimate per draw of the depth `J`), and the unbiased
//!   RR-SLQ log-determinant ([`rr_slq_log_det`]).
//! * [`slq`] and [`trace`]: stochastic Lanczos quadrature for `log det A` (with
//!   preconditioning: `log det P + SLQ(P^{-1/2} A P^{-1/2})`) and Hutchinson estimators,
//!   from [`Probes`] drawn from a seed ([`probes`]).
//! * [`probe_solve`]: [`solve_with_probes`], one batched CG call on `[y | z₁..z_t]` that
//!   returns the solves, the per-probe tridiagonals, the SLQ log-determinant and the traces
//!   `tr(A⁻¹ ∂A)` — what an iterative exact GP needs per likelihood evaluation.
//! * [`factorized`]: the GSGP solvers for interpolated (SKI) systems `W K_G Wᵀ + σ²I`:
//!   factorized CG ([`fcg()`]), efficiently factorized CG ([`efcg()`], one `K_G` and one
//!   `S = WᵀW` product per iteration; [`EfcgSolver`] is its step interface, [`FcgSolver`] and [`EfcgSimplifiedSolver`] those of
//!   FCG and simplified EFCG), simplified EFCG for right-hand sides in `range(W)`
//!   ([`efcg_simplified()`]), factorized Lanczos ([`fla()`], [`efla()`]; step interfaces
//!   [`FlaSolver`] and [`EflaSolver`]): the iterates of
//!   CG/Lanczos on the `n×n` system at a cost per iteration independent of `n`, behind the
//!   [`WeightSpaceSystem`] trait.
//! * [`precond`]: the [`Preconditioner`] trait (`P⁻¹`, `log det P`, samples of `N(0, P)`),
//!   pivoted Cholesky from a [`ColumnAccess`] matrix and the preconditioner `L Lᵀ + σ²I`.
//!
//! ```
//! use faer::Mat;
//! use gp_linalg::DenseOperator;
//! use gp_solvers::{solve_with_probes, CgOptions, ProbeOptions, Probes, SlqScaling};
//!
//! // A small SPD system: K + σ²I for a smooth kernel matrix.
//! let n = 30;
//! let k = Mat::from_fn(n, n, |i, j| {
//!     let d = (i as f64 - j as f64) / 5.0;
//!     (-0.5 * d * d).exp() + if i == j { 0.1 } else { 0.0 }
//! });
//! let a = DenseOperator::new(k.clone());
//! let y = Mat::from_fn(n, 1, |i, _| (i as f64 / 3.0).sin());
//! let probes = Probes::generate(n, None, &ProbeOptions { count: 20, seed: 7, ..Default::default() })?;
//! let opts = CgOptions { tolerance: 1e-10, ..Default::default() };
//! let out = solve_with_probes(&a, y.as_ref(), None, probes, &opts)?;
//!
//! // The target solve is accurate, and the SLQ log-determinant is close to the exact one.
//! assert!((&k * out.target_solutions() - &y).norm_max() < 1e-8);
//! let exact = gp_linalg::Cholesky::new(k.as_ref())?.log_det();
//! let est = out.log_det(SlqScaling::ProbeNorm)?;
//! assert!((est.value - exact).abs() < 4.0 * est.std_error + 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cg;
pub mod error;
pub mod estimate;
pub mod factorized;
pub mod fom;
pub mod gauss_rule;
pub mod krylov;
pub mod lanczos;
pub mod lanczos_steps;
pub mod pls;
pub mod precond;
pub mod probe_solve;
pub mod probes;
pub mod rr_cg;
pub mod slq;
pub mod textbook_cg;
pub mod trace;
pub mod tridiagonal;
pub mod truncation;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use cg::{
    cg, Breakdown, CgColumn, CgOptions, CgResult, CgSolver, CgStep, ColumnStatus, Directions,
};
pub use error::{Result, SolverError};
pub use estimate::Estimate;
pub use factorized::{
    efcg, efcg_simplified, efla, fcg, fla, EfcgSimplifiedSolver, EfcgSolver, EfcgStep, EflaSolver,
    FactorizedBreakdown, FactorizedCgOptions, FactorizedCgResult, FactorizedCgStep,
    FactorizedLanczos, FactorizedStatus, FactorizedVector, FcgSolver, FlaSolver, LanczosStep,
    OperatorSystem, StartVector, WeightSpaceSystem,
};
pub use fom::{fom, FomBreakdown, FomOptions, FomResult, FomSolver, FomStatus, FomStep};
pub use gauss_rule::GaussRule;
pub use gp_linalg::LinearOperator;
pub use krylov::{KrylovRecord, Status, StoppingRule};
pub use lanczos::{lanczos, Lanczos, LanczosOptions, LanczosStatus};
pub use lanczos_steps::{LanczosIteration, LanczosSolver};
pub use precond::pivoted_cholesky::{
    pivoted_cholesky_preconditioner, ColumnAccess, PivotedCholesky, PivotedCholeskyOptions,
};
pub use precond::{IdentityPreconditioner, Preconditioner, WoodburyParts};
pub use probe_solve::{solve_with_probes, ProbeSolve};
pub use probes::{ProbeDistribution, ProbeOptions, Probes};
pub use rr_cg::{rr_cg, rr_slq_log_det, sample_draws, RrCgOptions, RrCgResult, RrSeries};
pub use slq::{slq_log_det, slq_log_det_from_cg, SlqScaling};
pub use textbook_cg::{TextbookCg, TextbookCgOptions};
pub use trace::{hutchinson_from_products, hutchinson_inverse_trace, hutchinson_trace};
pub use tridiagonal::SymTridiagonal;
pub use truncation::{Categorical, ExpDecay, Fixed, TruncationLaw};
