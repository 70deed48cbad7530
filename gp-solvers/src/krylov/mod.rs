//! The vocabulary every Krylov method of this crate shares: the [`StoppingRule`], the
//! per-solve [`Status`] and [`Breakdown`], and the [`KrylovRecord`] of residual norms,
//! `α`/`β` and the implied tridiagonal.
//!
//! **Breakdowns are judged against the problem's scale.** A quantity that is non-negative in
//! exact arithmetic (`rᵀP⁻¹r`, a factorized squared residual norm) is only reported as a
//! breakdown when it is negative beyond the rounding-error bound of the computation that
//! produced it, `γₙ Σᵢ|xᵢ yᵢ| + n η` for an inner product of `n` terms (Higham, eq. (3.5);
//! `γₙ = nu/(1 − nu)`, `u = 2⁻⁵³`, `η = 2⁻¹⁰⁷⁴` for underflow), plus `γ ‖S‖ ‖r̂‖²` for the
//! product with `S` inside a factorized norm. Within that bound the value is zero to working
//! precision and the solve has converged (this is what `rᵀP⁻¹r = −5e-324` after the residual
//! has underflowed means). A real indefinite operator or preconditioner gives negative values
//! of the size of the terms themselves and is still a breakdown.

mod record;
pub(crate) mod scale;
mod status;
mod stopping;

pub use record::KrylovRecord;
pub use status::{Breakdown, Status};
pub use stopping::StoppingRule;
