//! Minimizers for smooth objectives `x ↦ (f(x), ∇f(x))` over `ℝᵖ`.
//!
//! * [`lbfgs()`]: limited-memory BFGS with a strong-Wolfe line search, for deterministic
//!   objectives such as the exact log marginal likelihood.
//! * [`adam()`]: Adam, for stochastic objectives.
//!
//! Both take the objective as a closure `FnMut(&[f64]) -> Result<(f64, Vec<f64>)>` and
//! return an [`OptimResult`] that records what happened: the final point, value and
//! gradient norm, the iteration and evaluation counts, why the run stopped
//! ([`ConvergenceReason`]) and the trajectory.
//!
//! ```
//! use gp_models::optim::{lbfgs, LbfgsOptions};
//!
//! // f(x) = (x₀ − 1)² + 10 (x₁ + 2)².
//! let res = lbfgs(
//!     |x: &[f64]| Ok(((x[0] - 1.0).powi(2) + 10.0 * (x[1] + 2.0).powi(2),
//!                     vec![2.0 * (x[0] - 1.0), 20.0 * (x[1] + 2.0)])),
//!     &[0.0, 0.0],
//!     &LbfgsOptions::default(),
//! )?;
//! assert!(res.reason.is_converged());
//! assert!((res.x[0] - 1.0).abs() < 1e-5 && (res.x[1] + 2.0).abs() < 1e-5);
//! # Ok::<(), gp_models::ModelError>(())
//! ```

pub mod adam;
mod evaluator;
pub mod lbfgs;
pub mod line_search;
pub mod result;

pub use adam::{
    adam, adam_observed, adam_resumable, AdamOptions, AdamStart, AdamState, MultiStepDecay,
};
pub use lbfgs::{lbfgs, lbfgs_observed, LbfgsOptions};
pub use line_search::LineSearchOptions;
pub use result::{ConvergenceReason, OptimResult, TrajectoryPoint};
