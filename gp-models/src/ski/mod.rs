//! Structured kernel interpolation (SKI / KISS-GP, Wilson & Nickisch 2015; in the notation of
//! Yadav et al. 2021, §2.2 and Def. 1).
//!
//! The kernel matrix of the training points is approximated by `W K_G Wᵀ`: `K_G` is the
//! kernel on a regular grid of `m = Π m_l` points, a Kronecker product `s · T_1 ⊗ … ⊗ T_d`
//! of symmetric Toeplitz factors (first columns `k_l(g_0, g_j)`, applied by circulant
//! embedding and FFTs), and `W` holds cubic interpolation weights (`4^d` per point). One
//! product with `K̂ = W K_G Wᵀ + σ²I` costs `O(4^d n + m log m)`, memory `O(n + m)`.
//!
//! | quantity | how |
//! |---|---|
//! | mean | `α = K̂⁻¹y` by CG, grid cache `a = K_G Wᵀ α`; `μ(x*) = w*ᵀ a` in `O(4^d)` |
//! | variance, covariance | prior `w*ᵀ K_G w*` from the stencils; `k̃*ᵀ K̂⁻¹ k̃*` by batched CG |
//! | low-rank covariance | LOVE: `k` Lanczos steps on `K̂`, caches `R = K_G Wᵀ Q`, `R T⁻¹` |
//! | log marginal likelihood | one batched CG on `[y | z₁..z_t]`, SLQ from its tridiagonals |
//! | gradient | Hutchinson with `∂K̂/∂θ = W (∂K_G/∂θ) Wᵀ`, contracted on the grid |
//!
//! Requirements and refusals: the kernel must be separable into 1-D factors
//! ([`Kernel::separable_factors`](gp_kernels::Kernel::separable_factors)) that are
//! stationary on the grid, else [`ModelError::UnsupportedKernel`](crate::ModelError::UnsupportedKernel);
//! the grid's memory estimate must fit the limit ([`memory`]), else
//! [`ModelError::GridTooLarge`](crate::ModelError::GridTooLarge); every point must have its
//! full interpolation stencil in the grid, else
//! [`ModelError::OutsideGrid`](crate::ModelError::OutsideGrid) (by default the grid covers
//! the data with two cells of padding per side, so only test points more than one cell
//! outside the training range or explicit bounds trigger it).
//!
//! * [`model`]: [`Ski`], fitting, hyperparameters, the operator;
//! * [`predict`]: mean (grid cache), variances and covariances by solves;
//! * [`love`]: the rank-`k` LOVE cache;
//! * [`columns`]: `W K_G Wᵀ` column by column, for a pivoted-Cholesky preconditioner;
//! * [`lml`]: the SLQ log marginal likelihood and its gradient;
//! * training: [`train`](crate::train()), Adam (default) or L-BFGS on the estimate;
//! * [`operator`], [`options`], [`memory`]: `W M Wᵀ + cI`, [`SkiOptions`], the memory rule;
//! * what SKI shares with GSGP ([`GridKernel`] `K_G`, the LOVE cache, the memory limit, the
//!   grid of the options) lives in [`grid`](crate::grid);
//! * [`io`]: JSON save and load (with the resolved grid).

pub mod columns;
pub(crate) mod interface;
pub mod io;
pub mod lml;
pub mod love;
pub mod memory;
pub mod model;
pub mod operator;
pub mod options;
pub mod predict;

/// The grid kernel, shared with GSGP; it lives in [`grid::kernel`](crate::grid::kernel).
pub use crate::grid::kernel as grid_kernel;

pub use crate::grid::GridKernel;
pub use columns::SkiKernelColumns;
pub use io::{SKI_FORMAT, SKI_FORMAT_VERSION};
pub use love::{LoveCache, LoveOptions, LoveStart};
pub use memory::{SkiMemory, DEFAULT_MEMORY_CAP};
pub use model::Ski;
pub use operator::SkiOperator;
pub use options::SkiOptions;
