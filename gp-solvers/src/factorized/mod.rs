//! Factorized CG and Lanczos for interpolated (SKI) systems: the GSGP solvers of Yadav,
//! Sheldon and Musco, "Faster Kernel Interpolation for Gaussian Processes" (AISTATS 2021).
//!
//! SKI solves with `K̃ = W K_G Wᵀ + σ² I_n` (`W` the sparse `n×m` interpolation matrix,
//! `K_G` the grid kernel matrix). `K̃` maps `range(W)` into itself, so every Krylov vector
//! from a start vector `z₀` is `W v̂ + c z₀` with `v̂ ∈ ℝᵐ` ([`FactorizedVector`]): products
//! with `K̃` and inner products can be done with `K_G` and `S = WᵀW` alone, given
//! `g = Wᵀz₀` and `ρ = ‖z₀‖²` ([`StartVector`]). The solvers produce the same iterates as
//! CG/Lanczos on `K̃` (in exact arithmetic) at a cost per iteration that does not depend on
//! `n`. They see the system in weight space through the [`WeightSpaceSystem`] trait
//! (products with the prior covariance `K_G` and the Gram matrix `S`, and `σ²`; a failing or
//! non-finite product ends the solve with an error); [`OperatorSystem`] builds one from two
//! [`LinearOperator`](gp_linalg::LinearOperator)s.
//!
//! | solver | paper | products per iteration |
//! |---|---|---|
//! | [`fcg`](fcg()) | Alg. 2 | 1 `K_G` + 3 `S` |
//! | [`efcg`](efcg()) | Alg. 3 (corrected) | 1 `K_G` + 1 `S` |
//! | [`efcg_simplified`](efcg_simplified()) (`z₀ = W r̂₀`, no `W`, no `g`) | Alg. 4 | 1 `K_G` + 1 `S` |
//! | [`fla`](fla()) | Alg. 6 (corrected) | 1 `K_G` + 4 `S` |
//! | [`efla`](efla()) | Alg. 7 (corrected) | 1 `K_G` + 1 `S` |
//!
//! Plain Lanczos with full re-orthogonalization on `K̃` (Alg. 5) is [`lanczos`](crate::lanczos())
//! applied to an operator for `K̃`; it already includes the corrections the factorized versions need (normalized
//! start, `w − α q`, distinct off-diagonal entries).
//!
//! The CG solvers return a [`FactorizedCgResult`] (the solution `W x̂ + c z₀`, `Wᵀx`, the
//! residual history, `α`/`β` and the implied Lanczos tridiagonal for log-determinants, a
//! [`FactorizedStatus`]); the Lanczos solvers a [`FactorizedLanczos`] (`Q̂`, `d`, `T`,
//! `WᵀQ`). Every solver also has a step interface ([`FcgSolver`], [`EfcgSolver`],
//! [`EfcgSimplifiedSolver`], [`FlaSolver`], [`EflaSolver`]) that the function runs to the
//! end, so a caller can observe each step or stop early. Stopping rules, statuses and iteration counts follow [`cg`](crate::cg()) and
//! [`lanczos`](crate::lanczos()), so a factorized run can be compared with the plain one
//! step by step. Numbers agree with the plain methods to rounding only: CG iterates are
//! sensitive to any change of rounding.

/// The accessors the factorized CG step interfaces share (all read the solver's `rec`, a
/// `cg_result::Recorder`, and `x`), and its `Debug` impl: written once so that the three
/// solvers report their state the same way.
macro_rules! step_interface_accessors {
    ($solver:ident) => {
        impl std::fmt::Debug for $solver<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($solver))
                    .field("m", &self.x.len())
                    .field("iteration", &self.rec.iterations())
                    .field("status", &self.rec.status())
                    .finish()
            }
        }

        impl $solver<'_> {
            fn step_report(&self) -> $crate::factorized::FactorizedCgStep {
                $crate::factorized::FactorizedCgStep {
                    iteration: self.rec.iterations(),
                    status: self.rec.status(),
                }
            }

            /// Number of completed steps (step lengths taken).
            pub fn iteration(&self) -> usize {
                self.rec.iterations()
            }

            /// The status so far ([`Status::Running`](crate::krylov::Status::Running) while
            /// the solve goes on).
            pub fn status(&self) -> $crate::krylov::Status {
                self.rec.status()
            }

            /// Whether the solve has stopped.
            pub fn is_finished(&self) -> bool {
                !self.rec.running()
            }

            /// Relative residual norms so far (`‖r_j‖ / ref`, `j = 0..=iteration`).
            pub fn residual_norms(&self) -> &[f64] {
                self.rec.residual_norms()
            }
        }
    };
}

/// The accessors and `Debug` impl of the factorized Lanczos step interfaces (both keep a
/// `lanczos_state::LanczosState` in `state`).
macro_rules! lanczos_step_accessors {
    ($solver:ident) => {
        impl std::fmt::Debug for $solver<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($solver))
                    .field("m", &self.state.setup.m)
                    .field("steps", &self.state.steps())
                    .field("status", &self.state.status())
                    .finish()
            }
        }

        impl $solver<'_> {
            /// Number of Lanczos vectors so far with an entry in `T` (the steps that
            /// returned a report).
            pub fn steps(&self) -> usize {
                self.state.steps()
            }

            /// The status so far ([`LanczosStatus::Running`](crate::LanczosStatus::Running)
            /// while the process goes on).
            pub fn status(&self) -> $crate::lanczos::LanczosStatus {
                self.state.status()
            }

            /// Whether the process has stopped.
            pub fn is_finished(&self) -> bool {
                !self.state.running()
            }
        }
    };
}

mod cg_result;
mod efcg;
mod efcg_simplified;
mod efla;
mod fcg;
mod fla;
mod lanczos_basis;
mod lanczos_state;
mod options;
mod split;
mod system;
mod vector;

pub use cg_result::{FactorizedBreakdown, FactorizedCgResult, FactorizedStatus};
pub use efcg::{efcg, EfcgSolver, EfcgStep, FactorizedCgStep};
pub use efcg_simplified::{efcg_simplified, EfcgSimplifiedSolver};
pub use efla::{efla, EflaSolver};
pub use fcg::{fcg, FcgSolver};
pub use fla::{fla, FlaSolver};
pub use lanczos_basis::FactorizedLanczos;
pub use lanczos_state::LanczosStep;
pub use options::FactorizedCgOptions;
pub use system::{OperatorSystem, StartVector, WeightSpaceSystem};
pub use vector::FactorizedVector;
