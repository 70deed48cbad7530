//! # gp-kernels
//!
//! Covariance functions for Gaussian processes with hyperparameters in log space and their
//! derivatives, dense kernel matrices built in parallel, a matrix-free kernel operator and
//! random Fourier features.
//!
//! Points are rows of an `n × d` faer matrix; hyperparameters are logarithms
//! (`[log ℓ₀, …, log ℓ_{d−1}, log σ²]` for every kernel of this crate).
//!
//! Modules:
//!
//! * [`kernel`]: the [`Kernel`] trait (evaluation, log hyperparameters and their derivatives,
//!   separable structure, checked dense builders, the unchecked tile filler
//!   [`Kernel::fill_block`]).
//! * [`se`], [`matern`], [`product`]: [`SquaredExponential`], [`Matern`] (ν = 1/2, 3/2, 5/2)
//!   with ARD length scales, and the separable [`ProductKernel`] of 1-D factors.
//! * [`stationary`], [`profile`], [`ard`], [`fastmath`]: shared parameters ([`ArdParams`]),
//!   radial profiles `g(r²)`, the vectorized tile builders and their branch-free `exp`;
//!   [`gp_linalg::simd_dispatch!`] selects an AVX2+FMA build of the tile loops at run time.
//! * [`dense`]: checked, parallel `K(X, Z)`, diagonal, and `K` with all derivatives.
//! * [`operator`]: [`KernelOperator`], the matrix-free `K(X, X) + σ²I` (and `K(X, Z)`) as a
//!   [`gp_linalg::LinearOperator`].
//! * [`rff`]: [`SpectralSampling`] and [`RandomFourierFeatures`].
//! * [`error`]: the error type, [`KernelError`].
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
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod ard;
pub mod dense;
pub mod error;
pub mod fastmath;
pub mod kernel;
pub mod matern;
pub mod operator;
pub mod product;
pub mod profile;
pub mod rff;
pub mod se;
pub mod stationary;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use error::{KernelError, Result};
pub use kernel::{Kernel, SeparableFactors};
pub use matern::{Matern, MaternNu};
pub use operator::KernelOperator;
pub use product::{FactorKind, ProductKernel};
pub use rff::{RandomFourierFeatures, SpectralSampling};
pub use se::SquaredExponential;
pub use stationary::ArdParams;
