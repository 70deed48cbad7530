//! GP-GRIEF (Evans & Nair 2018): Gaussian processes with a re-weighted eigenfunction
//! (Nyström) kernel `k̃_w(x, z) = Σ_j w_j φ_j(x) φ_j(z)` whose training cost does not depend
//! on the number of inducing points.
//!
//! This part holds the weight-space linear algebra, which works on the sufficient statistics
//! `A = ΦᵀΦ`, `r = Φᵀy`, `yᵀy` and `n` alone ([`stats::GriefStats`]), not on the basis:
//!
//! * [`woodbury`]: the log marginal likelihood, its gradients with respect to the weights `w`
//!   and the noise variance `σ²`, and predictions, in `O(p³)` per evaluation by the Woodbury
//!   identity (Evans & Nair 2018, eq. 13 / App. A), plus the streamed gradient with respect to
//!   basis hyperparameters θ (GP-GRIEF-II).
//! * [`ortho`]: the same quantities in `O(p)` per evaluation on the orthogonalised basis
//!   (Evans & Nair 2018, App. A end).

pub mod ortho;
pub mod stats;
pub mod woodbury;

pub use ortho::{OrthoFit, OrthoOptions, OrthoWeights};
pub use stats::GriefStats;
pub use woodbury::{ThetaGradient, WoodburyFit};
