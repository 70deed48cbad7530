//! Russian-roulette truncated conjugate gradients (RR-CG, Potapczynski et al. 2021; spec
//! `rtgps.md` §2) and the unbiased log-determinant of its Appendix C.
//!
//! CG from `x₀ = 0` writes the solve as a series, `A⁻¹b = Σ_j Δ_j` (the increments of
//! [`CgSolver`](crate::CgSolver)). Truncating it after `J` terms biases every quantity built
//! from the solve (Theorem 1: the data fit is under-, the log-determinant over-estimated).
//! RR-CG draws `J` from a [`TruncationLaw`](crate::truncation::TruncationLaw) and re-weights
//! the kept terms,
//!
//! ```text
//! A⁻¹b ≈ Σ_{j ≤ J} Δ_j / P(J ≥ j),
//! ```
//!
//! which is unbiased for the series truncated at the law's largest depth. [`rr_cg`] runs
//! one batched CG of `max(J₁, …, J_r)` iterations and returns one such estimate per draw
//! (the gradient of the log marginal likelihood needs two independent estimates of
//! `K⁻¹y`, spec §2.1), besides the plain iterate and the CG coefficients. The estimates are
//! prefixes of one weighted series, so the run keeps a single running sum, added to inside
//! the CG step ([`CgSolver::step_accumulating`](crate::CgSolver::step_accumulating)), and
//! takes a copy of it at each draw.
//! [`RrSeries`] keeps the same accumulators for any solver fed iterate by iterate (the
//! factorized CG of GSGP). [`rr_slq_log_det`] re-weights the telescoping series of stochastic Lanczos quadrature
//! over the Lanczos depth in the same way.
//!
//! The draws are an argument, so a caller may fix them (tests enumerate every `J` to check
//! `Σ_J P(J) ψ̄_J = ψ`); [`sample_draws`] draws them from a law.
//!
//! ```
//! use faer::Mat;
//! use gp_linalg::DenseOperator;
//! use gp_solvers::rr_cg::{rr_cg, RrCgOptions};
//! use gp_solvers::truncation::{ExpDecay, TruncationLaw};
//!
//! let n = 40;
//! let a = Mat::from_fn(n, n, |i, j| {
//!     let d = (i as f64 - j as f64) / 6.0;
//!     (-0.5 * d * d).exp() + if i == j { 0.05 } else { 0.0 }
//! });
//! let b = Mat::from_fn(n, 1, |i, _| (i as f64 / 4.0).cos());
//! let law = ExpDecay::new(0.3, 2, n)?;
//! let op = DenseOperator::new(a.clone());
//! let opts = RrCgOptions { tolerance: 0.0, ..RrCgOptions::default() };
//!
//! // The expectation over J of the RR estimate is the depth-n CG solution: enumerate J.
//! let mut expectation = Mat::<f64>::zeros(n, 1);
//! for j in law.min_support()..=law.max_support() {
//!     let out = rr_cg(&op, b.as_ref(), None, &law, &[j], &opts)?;
//!     expectation += law.pmf(j) * &out.estimates[0];
//! }
//! let plain = rr_cg(&op, b.as_ref(), None, &law, &[n], &opts)?.plain;
//! assert!((&expectation - &plain).norm_max() < 1e-8 * plain.norm_max());
//! # Ok::<(), gp_solvers::SolverError>(())
//! ```

mod log_det;
mod run;
mod series;

pub use log_det::{rr_slq_log_det, slq_depth_values};
pub use run::{rr_cg, sample_draws, RrCgOptions, RrCgResult};
pub use series::RrSeries;
