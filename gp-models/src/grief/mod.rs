//! GP-GRIEF (Evans & Nair 2018): Gaussian processes with a re-weighted eigenfunction
//! (Nyström) kernel `k̃_w(x, z) = Σ_j w_j φ_j(x) φ_j(z)` made of the `p` leading
//! eigenfunctions on a Cartesian grid of `m = Π m̄_i` inducing points, evaluated without
//! forming the grid (§3–4 of the paper); `m` may be `10^300`. The training cost does not
//! depend on `m`, and, for fixed length scales, not on `n`.
//!
//! * [`Grief`] (GP-GRIEF-II): the model with an SE-ARD base kernel, a [`GpModel`]
//!   trained by [`train`](crate::train()) over the length scales, the signal variance and
//!   the noise; [`Grief::sample_weights`] (GP-GRIEF-I, [`type_one`]) samples the `p`
//!   eigenfunction weights and the noise by MALA with the paper's log-normal priors.
//! * The basis: [`grid`] ([`InducingGrid`], the per-axis grids built from the training
//!   inputs), [`axis`] ([`AxisBasis`], one 1-D kernel eigendecomposition and its scaled
//!   eigenfunctions), [`basis`] ([`GriefBasis`]: the Algorithm-1 selection, `Φ` by
//!   Theorem 2, its length-scale derivatives and the streamed statistics).
//! * The weight-space linear algebra on the sufficient statistics `A = ΦᵀΦ`, `r = Φᵀy`,
//!   `yᵀy`, `n` alone ([`GriefStats`]): [`woodbury`] (`O(p³)` per evaluation, eq. 13 /
//!   App. A, with the streamed gradient with respect to the basis hyperparameters) and
//!   [`ortho`] (`O(p)` per evaluation on the orthogonalised basis, App. A end).
//! * The data-space (function-space) form from the whole training basis `Φ`: [`dual`]
//!   ([`DualFit`], `O(n²p + n³)` per evaluation, the cheaper one when `n` is below about
//!   `0.53 p`, as in the paper's GP-GRIEF-I runs with `p = 1000`).
//! * [`io`]: saving and loading a [`Grief`] model as JSON ([`Grief::save_json`],
//!   [`Grief::load_json`]).
//!
//! [`GpModel`]: crate::GpModel

pub mod axis;
pub mod basis;
pub mod dual;
pub mod grid;
mod interface;
pub mod io;
pub mod model;
pub mod options;
pub mod ortho;
pub mod reselect;
pub mod stats;
pub mod type_one;
pub mod woodbury;

pub use axis::{AxisBasis, AXIS_JITTER, EIGENVALUE_FLOOR};
pub use basis::{GriefBasis, GriefBasisOptions, LOG_FORM_MIN_DIMS};
pub use dual::DualFit;
pub use grid::{GridOptions, InducingGrid, DEFAULT_POINTS_PER_AXIS};
pub use io::{GRIEF_FORMAT, GRIEF_FORMAT_VERSION};
pub use model::Grief;
pub use options::{GriefOptions, DEFAULT_BLOCK_ROWS, DEFAULT_EIGENFUNCTIONS};
pub use ortho::{OrthoFit, OrthoOptions, OrthoWeights};
pub use reselect::{train_reselecting, ReselectingOutcome, ReselectingReport};
pub use stats::GriefStats;
pub use type_one::{GriefEvaluation, GriefPosterior, GriefSamplerOptions};
pub use woodbury::{ThetaGradient, WoodburyFit};
