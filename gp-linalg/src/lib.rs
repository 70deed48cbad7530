//! # gp-linalg
//!
//! Linear operators, operator algebra and dense factorizations for Gaussian-process
//! inference: the bottom layer of the `gpscale` workspace.
//!
//! * [`LinearOperator`]: shape, product with a vector and with a block of columns, optional
//!   diagonal; object safe and `Send + Sync`. [`SharedOperator`] (`Arc<dyn LinearOperator>`)
//!   is what composites hold.
//! * Operators ([`dense`], [`sparse`], [`diagonal`], [`low_rank`]): [`DenseOperator`],
//!   [`SparseOperator`] (sprs CSR, with `Aᵀx`), [`DiagonalOperator`] (inverse, log-det),
//!   [`LowRankOperator`] `U Uᵀ` and [`LowRankPlusDiagonal`] `U Uᵀ + D` with a Woodbury solve
//!   and a determinant-lemma log-det.
//! * Operator algebra ([`scaled`], [`sum`], [`shifted`], [`transpose`]): [`ScaledOperator`]
//!   `c·A`, [`SumOperator`] `A₁ + … + A_m`, [`ShiftedOperator`] `A + σ²I` or `A + D`, and the
//!   transpose: [`TransposeOperator`] (`Aᵀ x` under one name) with the [`Transposed`] wrapper.
//! * [`CountingOperator`] ([`counting`]): counts the products of any operator, so that cost
//!   claims are tested by counting.
//! * Factorizations ([`cholesky`], [`growing_cholesky`], [`eigen`], [`triangular`]): [`Cholesky`] with a
//!   [`JitterLadder`] (the jitter that was needed is reported back, and a matrix that stays
//!   indefinite gives [`LinalgError::NotPositiveDefinite`]); [`GrowingCholesky`], bordered one
//!   row at a time in `O(j²)`; [`SymmetricEigen`]; checked
//!   triangular solves.
//! * Vector kernels ([`vector`]): `dot`, `axpy`, `scale`, `norm2`, `norm_inf`, sequential
//!   below [`vector::PARALLEL_THRESHOLD`] elements and rayon-parallel above; column-wise dots,
//!   column norms and Gram matrices of blocks; [`projection::project_out`], one classical
//!   Gram–Schmidt pass against a stored basis (the Lanczos re-orthogonalization), split over
//!   fixed row blocks so that it runs on all threads with thread-count-independent bits.
//! * Input checks ([`validate`]) and the error type ([`error`]) shared by the workspace.
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
pub mod counting;
pub mod dense;
pub mod diagonal;
pub mod eigen;
pub mod error;
pub mod gram;
pub mod growing_cholesky;
pub mod low_rank;
pub mod operator;
pub mod par;
pub mod projection;
pub mod scaled;
pub mod shifted;
pub mod simd;
pub mod sparse;
pub mod sum;
pub mod transpose;
pub mod triangular;
pub mod validate;
pub mod vector;

/// The README's example, compiled as a doctest so it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use cholesky::{Cholesky, JitterLadder};
pub use counting::CountingOperator;
pub use dense::DenseOperator;
pub use diagonal::DiagonalOperator;
pub use eigen::SymmetricEigen;
pub use error::{LinalgError, Result};
pub use growing_cholesky::GrowingCholesky;
pub use low_rank::{LowRankOperator, LowRankPlusDiagonal};
pub use operator::{LinearOperator, SharedOperator};
pub use par::{
    parallelism, parallelism_for, parallelism_setting, restore_parallelism, set_auto_parallelism,
    set_parallelism, Par, ParallelismSetting, AUTO_MIN_FLOPS,
};
pub use scaled::ScaledOperator;
pub use shifted::ShiftedOperator;
pub use sparse::SparseOperator;
pub use sum::SumOperator;
pub use transpose::{TransposeOperator, Transposed};
pub use triangular::{
    solve_lower_triangular, solve_lower_triangular_in_place, solve_upper_triangular,
    solve_upper_triangular_in_place,
};
