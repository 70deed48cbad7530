//! Kernel-machine conjugate gradients (Bartels & Hennig, "Conjugate Gradients for Kernel
//! Machines", JMLR 21; spec `kmcg.md`).
//!
//! KMCG runs `P` conjugate-gradient steps on `K_M` (or, equivalently, on `K_M + σ²I`: the
//! Krylov spaces coincide), keeps the directions `S` and treats
//! `k̂(x, z) = k(x, X_M) S (SᵀK_M S)⁻¹ Sᵀk(X_M, z)` as a rank-`P` kernel: the GP mean, the
//! DTC-type variance and the evidence then follow from two `P × P` Cholesky factors.
//!
//! * [`KmcgState`]: the incremental estimate, one direction at a time ([`KmcgColumns`]),
//!   `O(j² + j n*)` per direction beyond the products that made it.
//! * [`basis`]: the columns from a stored basis `S`, `Z = (K_M + cI) S` (FOM's, with the
//!   shift `c` removed, so one FOM run on `K + σ²I` serves both CG and KMCG), and from a
//!   subset `X_M ⊂ X` (`R = k(X, X_M) S`).
//! * [`run`]: [`KmcgRun`], KMCG driven one step at a time by FOM or by Lanczos
//!   ([`lanczos_columns`]: the columns from the recurrence's coefficients, `O(1)` each), on
//!   all points ([`KmcgRun::new`]) or a subset ([`KmcgRun::on_subset`]).
//! * [`Kmcg`] ([`model`], [`interface`]): KMCG as a fitted model with predictions at any
//!   point and the [`GpModel`](crate::GpModel) interface, on all points ([`Kmcg::fit`]) or
//!   on a subset `X_M` ([`Kmcg::fit_subset`]; with `P = M` it is SoR with DTC variance).
pub mod basis;
pub mod interface;
pub mod lanczos_columns;
pub mod model;
pub mod run;
pub mod state;

pub use basis::{columns_from_basis, SubsetProducts};
pub use lanczos_columns::LanczosColumns;
pub use model::{Kmcg, KmcgOptions, KrylovMatrix};
pub use run::{dense_test_rows, KmcgBasis, KmcgRun, KmcgRunStatus, KmcgStep, TestRow};
pub use state::{KmcgBreakdown, KmcgColumns, KmcgState};
