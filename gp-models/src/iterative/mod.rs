//! The iterative exact GP: the model of [`ExactGp`](crate::ExactGp) with every solve by
//! batched conjugate gradients on the matrix-free kernel operator and the log marginal
//! likelihood and its gradient estimated stochastically (GPyTorch's default recipe, Gardner
//! et al. 2018, §3–4; the estimator as analysed by Potapczynski et al. 2021, §2).
//!
//! With `K̂ = K(X, X) + σ²I`, `α = K̂⁻¹(y − m)`, probes `z ~ N(0, P)` for the
//! pivoted-Cholesky preconditioner `P = L Lᵀ + σ²I` and `uᵢ = K̂⁻¹zᵢ`, all from one batched
//! CG solve:
//!
//! ```text
//! log p(y) ≈ −½ (y−m)ᵀα − ½ [log det P + (1/t) Σᵢ ‖P^{-1/2}zᵢ‖² e₁ᵀ log(Tᵢ) e₁] − (n/2) log 2π
//! ∂/∂θ     ≈ ½ αᵀ(∂K̂/∂θ)α − ½ (1/t) Σᵢ uᵢᵀ (∂K̂/∂θ) (P⁻¹zᵢ)
//! ```
//!
//! (`Tᵢ` the Lanczos tridiagonal CG recorded for probe `i`). The kernel derivative
//! contractions come from one tiled, parallel pass over the lower triangle of the kernel
//! matrix ([`Kernel::eval_with_grad`](gp_kernels::Kernel::eval_with_grad), all
//! hyperparameters at once); `∂K̂/∂ log σ² = σ²I`.
//!
//! **Bias of truncated CG** (RTGPS Theorem 1). When CG stops after `J < n` iterations
//! (a loose tolerance or an iteration cap), the two terms of the estimate are biased in
//! opposite directions: the data fit `yᵀx_J ≤ yᵀK̂⁻¹y` is underestimated (the gap is
//! `‖x* − x_J‖²_K̂ ≥ 0`), and the log determinant is overestimated, for every probe:
//! `‖z‖² e₁ᵀ log(T_J) e₁ ≥ zᵀ log(K̂) z`, since the Gauss-quadrature error of `log` (whose
//! `2J`-th derivative is negative) is positive. In the log marginal likelihood the data-fit
//! bias therefore raises the estimate (`−½ yᵀx_J ≥ −½ yᵀK̂⁻¹y`) and the log-determinant
//! bias lowers it: truncation under-weights the data fit and over-penalizes complexity,
//! which pushes training towards underfitting (long length scales, large noise). The sign of
//! the total depends on which gap is larger and is not fixed by the theorem. Both biases
//! decay like `ρ^{−2J}` with `ρ = (√κ + 1)/(√κ − 1)` for the condition number `κ` of the
//! (preconditioned) operator, which is why [`IterativeOptions::krylov.min_iterations`](crate::KrylovSettings::min_iterations) defaults
//! to GPyTorch's 20.
//!
//! * [`model`]: [`IterativeGp`], fitting, hyperparameters, the estimate;
//! * [`predict`]: mean (cached `α`) and variances by CG;
//! * training: [`train`](crate::train()), Adam with fresh probes (default) or L-BFGS with
//!   fixed probes;
//! * [`options`], [`estimate`]: [`IterativeOptions`], [`LmlEstimate`];
//! * [`columns`]: [`KernelColumns`], the kernel matrix by columns for the pivoted Cholesky;
//! * [`io`]: JSON save and load.

pub mod columns;
pub(crate) mod derivatives;
pub mod estimate;
mod interface;
pub mod io;
mod lml;
pub mod model;
pub mod options;
pub mod predict;

pub use columns::KernelColumns;
pub use estimate::{LmlEstimate, PhaseTimes, SolveReport};
pub use io::{ITERATIVE_GP_FORMAT, ITERATIVE_GP_FORMAT_VERSION};
pub use model::IterativeGp;
pub use options::IterativeOptions;
pub use predict::VARIANCE_BLOCK;
