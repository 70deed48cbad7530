//! # gp-linalg
//!
//! Linear operators, operator algebra and dense factorizations for Gaussian-process
//! inference: the bottom layer of the `gpscale` workspace.
//!
//! * [`LinearOperator`]: shape, product with a vector and with a block of columns, optional
//!   diagonal; object safe and `Send + Sync`.
//! * [`Cholesky`] with a [`JitterLadder`]: the jitter that was needed is reported back, and a
//!   matrix that stays indefinite gives [`LinalgError::NotPositiveDefinite`].
//! * The parallelism of dense routines is a setting ([`set_parallelism`]), sequential by
//!   default.
//!
//! ```
//! use faer::Mat;
//! use gp_linalg::{Cholesky, DenseOperator, LinearOperator};
//!
//! // A small SPD matrix, its operator and its factor agree.
//! let a = Mat::from_fn(3, 3, |i, j| if i == j { 2.0 } else { 0.5 });
//! let op = DenseOperator::new(a.clone());
//! let chol = Cholesky::new(a.as_ref())?;
//! let b = Mat::from_fn(3, 1, |i, _| i as f64);
//! let x = chol.solve(b.as_ref())?;
//! let back = op.apply_block(x.as_ref())?;
//! assert!((&back - &b).norm_max() < 1e-14);
//! # Ok::<(), gp_linalg::LinalgError>(())
//! ```
#![warn(missing_docs)]

pub mod cholesky;
pub mod dense;
pub mod error;
pub mod operator;
pub mod par;
pub mod validate;

pub use cholesky::{Cholesky, JitterLadder};
pub use dense::DenseOperator;
pub use error::{LinalgError, Result};
pub use operator::LinearOperator;
pub use par::{parallelism, set_parallelism, Par};
