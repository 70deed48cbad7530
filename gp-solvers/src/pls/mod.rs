//! The probabilistic linear solver of IterGP (Wenger et al. 2022; Tatzel et al. 2023,
//! Algorithms 2 and 3) for `K̂ v = b` with `K̂ = K + W⁻¹` given as two operators.
//!
//! The state is a belief over the solution: the iterate `v`, the low-rank precision
//! estimate `C = Q Qᵀ ≈ K̂⁻¹` and the action and product buffers `S`, `T = K S`. Each step
//! asks a [`Policy`] for an action `s`, observes `α = sᵀr` of the residual
//! `r = b − K̂ v`, and conditions the belief on it:
//!
//! ```text
//! z = K̂ s,   d = s − Q (Qᵀ z),   η = zᵀ d
//! v ← v + (α/η) d,   Q ← [Q, d/√η],   S ← [S, s],   T ← [T, K s]
//! ```
//!
//! so that `C_j = S_j (S_jᵀ K̂ S_j)⁻¹ S_jᵀ` (eq. 10). Unit-vector actions give subset of data
//! (a partial Cholesky), residual actions give conjugate gradients.
//!
//! **Recycling** ([`virtual_solver_run`], Algorithm 3): for a new `W⁻¹` with the same `K`,
//! the belief of all earlier actions is rebuilt from `S` and `T` alone (`M = Sᵀ(T + W⁻¹S)`,
//! its eigendecomposition, `Q₀ = S U Λ^{-1/2}`), with no product with `K`; optionally
//! compressed to the `R` largest eigenvalues of `M`.
//!
//! **Breakdown**: an action whose projected curvature `η` is not positive beyond rounding
//! (`η ≤ breakdown_tolerance · sᵀK̂s`, an action already in the span of `S`) ends the solve
//! with [`PlsStatus::Breakdown`]; it is discarded, never appended.

mod buffers;
mod policy;
mod solver;

pub use buffers::{virtual_solver_run, RecycleBuffers, RecycleOptions, Recycled};
pub use policy::{Policy, PolicyState, ResidualPolicy, UnitVectorPolicy};
pub use solver::{PlsOptions, PlsStatus, ProbabilisticSolver};
