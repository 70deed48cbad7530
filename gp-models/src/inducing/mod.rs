//! Sparse Gaussian processes on inducing inputs: SoR, DTC, VFE and FITC
//! (Quiñonero-Candela & Rasmussen 2005; Titsias 2009; Snelson & Ghahramani 2006), the
//! baselines of the KMCG paper, computed as its reference code does (`FITC.m`, `DTC.m`).
//!
//! * [`selection`]: the inducing inputs ([`InducingPoints`]): nested random subsets of
//!   the training rows ([`NestedSubsets`]), a regular grid, or given points;
//! * [`options`]: [`SparseMethod`] and [`SparseOptions`] (jitter: none by default, as the
//!   paper);
//! * [`model`]: [`SparseGp`], fitted in `O(N m²)` ([`fit`]: the stable factorization and
//!   the evidence, [`SparseEvidence`]);
//! * [`predict`]: mean, latent and predictive variances, covariance;
//! * [`nested`]: every size of a nested sequence of inducing sets from one pass
//!   ([`NestedSparsePath`]), as a refit at each size gives, at a fraction of the cost;
//! * the gradient of each method's objective (`objective.rs`) and training with
//!   [`train`](crate::train()) (the model implements [`GpModel`](crate::GpModel)).

pub mod factor;
pub mod fit;
mod interface;
pub mod model;
pub mod nested;
mod objective;
pub mod options;
pub mod predict;
pub mod selection;

pub use factor::InducingFactor;
pub use fit::SparseEvidence;
pub use model::SparseGp;
pub use nested::{NestedCrash, NestedSparsePath, NestedSparseStep};
pub use options::{SparseMethod, SparseOptions};
pub use selection::{InducingPoints, NestedSubsets};
