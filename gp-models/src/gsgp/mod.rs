//! GSGP (grid-structured GP; Yadav, Sheldon & Musco, "Faster Kernel Interpolation for
//! Gaussian Processes", AISTATS 2021: §3 and Fact 2 for the model, §4 and App. B for the
//! factorized algorithms, with the corrections to Algorithms 3, 6 and 7 noted where they are
//! implemented).
//!
//! SKI ([`Ski`](crate::Ski)) is exact inference in the Bayesian linear model
//! `θ ~ N(0, K_G)`, `y = Wθ + ε`, so everything it computes is a function of the sufficient
//! statistics `S = WᵀW` (a `7^d`-stencil matrix for cubic weights), `t = Wᵀy`, `q = yᵀy` and
//! `n`, accumulated in one streaming pass
//! ([`SufficientStats`](gp_structured::SufficientStats)). After that pass `W` and `y` are gone
//! and every solve runs the factorized CG/Lanczos of [`gp_solvers::factorized`]: the same
//! iterates as SKI's CG on `K̂ = W K_G Wᵀ + σ²I`, at one `K_G` and one `S` product per
//! iteration (`O(m log m + 7^d m)`, independent of `n`).
//!
//! | quantity | how |
//! |---|---|
//! | mean | EFCG (or FCG) from `z₀ = y` (`g = t`, `ρ = q`) gives `Wᵀα`; grid cache `K_G Wᵀα` |
//! | variance, covariance | prior from the stencils; `(K_G w*)ᵀ Wᵀ K̂⁻¹ W (K_G w*)` by simplified EFCG (Alg. 4) |
//! | low-rank covariance | LOVE caches from Lanczos in `range(W)` (the authors' `bfsla1`) or EFLA (`WᵀQ` without `W`) |
//! | log marginal likelihood | `yᵀα = tᵀx̂ + c q`; `log det K̂ = n log σ² + log det(I + Lᵀ S L/σ²)` by SLQ in `ℝ^r` |
//! | gradient | `Wᵀ K̂⁻¹ W = S Â⁻¹`: Hutchinson in `ℝᵐ`, one Alg.-4 solve per probe |
//!
//! **Log determinant.** The paper estimates `log det K̂` by SLQ with `n`-dimensional probes,
//! which needs `Wᵀz` per probe (a second pass over the data). Here the identity of
//! [`log_det`] (Sylvester's determinant theorem with a factor `L Lᵀ = K_G`, a Kronecker
//! product of square roots of the Toeplitz factors) gives a symmetric positive definite
//! `r × r` operator whose log determinant SLQ estimates with `r`-dimensional probes:
//! statistics only. Each Toeplitz factor's square root is either the truncated dense
//! eigen factor (up to [`GsgpOptions::log_det_dense_factor_max`] points, default 2048:
//! `O(m_l³)` time, `O(m_l²)` memory, `r_l ≤ m_l` columns) or, above, the exact
//! circulant-embedding square root `E C^{1/2}` (`O(m_l)` memory, `r_l = M_l ≥ 2m_l − 1`
//! columns, two real FFTs per product), so 1-D grids of any size work (SOUND's `m = 60 000`).
//! Too much memory is refused with
//! [`ModelError::LogDetFactorTooLarge`](crate::ModelError::LogDetFactorTooLarge), a large
//! factor whose embedding stays indefinite and whose dense factor does not fit with
//! [`ModelError::LogDetEmbeddingIndefinite`](crate::ModelError::LogDetEmbeddingIndefinite).
//!
//! Refusals: a kernel that is not separable into stationary 1-D factors
//! ([`ModelError::UnsupportedKernel`](crate::ModelError::UnsupportedKernel)); a grid whose
//! memory estimate exceeds the limit ([`memory`],
//! [`ModelError::GridTooLarge`](crate::ModelError::GridTooLarge)); training or test points
//! whose stencil does not fit in the grid
//! ([`ModelError::OutsideGrid`](crate::ModelError::OutsideGrid)).
//!
//! * [`model`]: [`Gsgp`], [`Gsgp::fit`], [`Gsgp::from_stats`], hyperparameters;
//! * [`predict`]: mean, variances, covariances;
//! * [`lml`]: log marginal likelihood and gradient; [`log_det`]: the identity it uses;
//! * [`love`]: rank-`k` LOVE caches by factorized Lanczos;
//! * training: [`train`](crate::train()), Adam (default) or L-BFGS on the estimate;
//! * [`options`], [`memory`], `solve`: [`GsgpOptions`], the memory rule, the solves.

mod interface;
pub mod io;
pub mod lml;
pub mod log_det;
pub mod love;
pub mod memory;
pub mod model;
pub mod options;
pub mod predict;
mod range_lanczos;
pub(crate) mod solve;

pub use log_det::LogDetFactorKind;
pub use memory::gsgp_memory;
pub use model::Gsgp;
pub use options::{GsgpOptions, GsgpSolver, DEFAULT_LOG_DET_DENSE_FACTOR_MAX};
