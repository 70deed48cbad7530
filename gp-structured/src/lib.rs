//! # gp-structured
//!
//! Structured linear algebra for Gaussian processes: symmetric Toeplitz and circulant
//! operators (FFT, cached spectrum), Kronecker products (mode products, eigendecomposition from
//! the factors), row-partitioned Khatri-Rao products, regular grids and sparse interpolation
//! weights with their streaming sufficient statistics.
//!
//! * [`SymmetricToeplitz`] (circulant embedding, real FFTs, cached spectrum, allocation-free
//!   apply with a [`ToeplitzWorkspace`]), [`RestrictedToeplitz`] for observations with gaps,
//!   [`Circulant`] with solve and log-determinant, and [`CirculantRoot`], the
//!   circulant-embedding square root `F Fᵀ = T` of a symmetric Toeplitz matrix.
//! * [`MultilevelToeplitz`]: the multilevel (block) Toeplitz kernel matrix of a stationary,
//!   non-separable kernel (e.g. isotropic Matérn) on a d-dimensional grid, by d-dimensional
//!   circulant embedding and FFTs.
//! * [`Kronecker`] products of any operators, applied by mode products (with a transpose,
//!   [`TransposeOperator`], when built by [`Kronecker::transposable`]); [`KroneckerEigen`]
//!   for exact solves and log-determinants of `K₁⊗…⊗K_d + σ²I`; [`top_eigenvalues`] (GP-GRIEF
//!   Algorithm 1, in log space).
//! * [`RowKhatriRao`] products and [`khatri_rao_kronecker_columns`] (GP-GRIEF Theorem 2, with
//!   a log-domain variant).
//! * [`RegularGrid`]s, [`InterpolationWeights`] (linear or Keys cubic convolution, stored
//!   factorized; [`CsrInterpolation`] for the sprs form) and the one-pass
//!   [`SufficientStats`] `WᵀW`, `Wᵀy`, `yᵀy`, n.
//!
//! Flat grid and Kronecker index order: the **last** dimension varies fastest.
//!
//! ```
//! use std::sync::Arc;
//! use faer::{Col, Mat};
//! use gp_structured::{Kronecker, LinearOperator, SymmetricToeplitz};
//!
//! // A 2-D grid kernel K₁ ⊗ K₂ with Toeplitz factors, applied without forming it.
//! let k1 = SymmetricToeplitz::new(&[1.0, 0.5, 0.1])?;
//! let k2 = SymmetricToeplitz::new(&[2.0, 0.3])?;
//! let dense = {
//!     let (a, b) = (k1.to_dense(), k2.to_dense());
//!     Mat::from_fn(6, 6, |i, j| a[(i / 2, j / 2)] * b[(i % 2, j % 2)])
//! };
//! let kron = Kronecker::new(vec![Arc::new(k1), Arc::new(k2)])?;
//! let x = Col::from_fn(6, |i| i as f64);
//! let y = kron.apply(x.as_ref())?;
//! assert!((&y - &dense * &x).norm_max() < 1e-12);
//! # Ok::<(), gp_structured::StructuredError>(())
//! ```
#![warn(missing_docs)]

pub mod circulant;
pub mod error;
pub mod fft;
pub mod grid;
pub mod interpolation;
pub mod khatri_rao;
pub mod kronecker;
pub mod kronecker_eigen;
pub mod multilevel_toeplitz;
pub mod sufficient_stats;
pub mod toeplitz;
pub mod toeplitz_root;
pub mod top_eigen;

pub use error::{Result, StructuredError};
pub use gp_linalg::{LinearOperator, TransposeOperator, Transposed};

mod slice_util;

pub mod interpolation_csr;
pub mod interpolation_weights;
pub mod khatri_rao_kronecker;
pub mod stencil_gram;

pub use circulant::Circulant;
pub use grid::{GridAxis, RegularGrid};
pub use interpolation::{
    cell_order, permute_rows, InterpolationOptions, InterpolationScheme, OutOfGrid,
};
pub use interpolation_csr::CsrInterpolation;
pub use interpolation_weights::InterpolationWeights;
pub use khatri_rao::RowKhatriRao;
pub use khatri_rao_kronecker::{
    khatri_rao_kronecker_columns, khatri_rao_kronecker_columns_log, LogSignMatrix,
};
pub use kronecker::Kronecker;
pub use kronecker_eigen::KroneckerEigen;
pub use multilevel_toeplitz::MultilevelToeplitz;
pub use stencil_gram::StencilGram;
pub use sufficient_stats::{StatsAccumulator, StatsPath, StatsPlan, SufficientStats};
pub use toeplitz::{RestrictedToeplitz, SymmetricToeplitz, ToeplitzWorkspace};
pub use toeplitz_root::CirculantRoot;
pub use top_eigen::{top_eigenvalues, TopEigenOptions, TopEigenvalues};
