//! # gp-kernels
//!
//! Covariance functions for Gaussian processes with hyperparameters in log space and their
//! derivatives, dense kernel matrices built in parallel, and (in later modules) matrix-free
//! kernel operators and random Fourier features.
//!
//! Points are rows of an `n × d` faer matrix.
//!
//! ```
//! use faer::Mat;
//! use gp_kernels::{Kernel, SquaredExponential};
//!
//! let k = SquaredExponential::new(vec![0.5, 2.0], 1.0)?;
//! let x = Mat::from_fn(4, 2, |i, j| (i + j) as f64 * 0.1);
//! let kxx = k.matrix(x.as_ref(), x.as_ref())?;
//! assert_eq!(kxx.nrows(), 4);
//! assert!((kxx[(1, 1)] - 1.0).abs() < 1e-15);
//! # Ok::<(), gp_kernels::KernelError>(())
//! ```
#![warn(missing_docs)]

pub mod dense;
pub mod error;
pub mod kernel;
pub mod se;
pub mod stationary;

pub use error::{KernelError, Result};
pub use kernel::{Kernel, SeparableFactors};
pub use se::SquaredExponential;
pub use stationary::ArdParams;
