//! # gp-solvers
//!
//! Iterative solvers for Gaussian-process linear algebra: batched preconditioned conjugate
//! gradients with Lanczos coefficients, Lanczos with full re-orthogonalization, stochastic
//! Lanczos quadrature and trace estimation, the pivoted-Cholesky preconditioner, factorized
//! CG and Lanczos for interpolated systems, the probabilistic linear solver and randomized
//! truncation. The solvers know operators only (never kernels or grids).
//!
//! **Status:** scaffolding. The solvers land with the gp-solvers issue; until then this crate
//! only re-exports the operator trait the solvers work on.
//!
//! ```
//! use faer::Mat;
//! use gp_solvers::LinearOperator;
//!
//! let a = gp_linalg::DenseOperator::new(Mat::<f64>::identity(2, 2));
//! assert_eq!(a.nrows(), 2);
//! ```
#![warn(missing_docs)]

pub use gp_linalg::LinearOperator;
