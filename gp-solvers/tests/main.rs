//! The integration tests of `gp-solvers`, one module per file, compiled into one test binary
//! (one link instead of one per file: faster builds and a smaller `target/`).

mod common;
mod factorized_support;

mod bad_estimator_input;
mod breakdown;
mod cg;
mod cg_fused;
mod cg_woodbury;
mod factorized_cg;
mod factorized_errors;
mod factorized_lanczos;
mod factorized_lanczos_steps;
mod factorized_simplified;
mod fom;
mod lanczos;
mod pls;
mod precond;
mod properties;
mod rr_cg;
mod slq;
mod trace;
mod truncation;
