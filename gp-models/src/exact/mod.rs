//! The exact Gaussian-process regression model, fitted by a dense Cholesky factorization.
//!
//! * [`model`]: [`ExactGp`], fitting and hyperparameters, the log marginal likelihood and
//!   its gradient;
//! * [`predict`]: posterior mean, variances and covariance;
//! * training: [`train`](crate::train()) with L-BFGS and restarts (the model implements
//!   [`GpModel`](crate::GpModel));
//! * [`io`]: JSON save and load.

mod evaluator;
mod interface;
pub mod io;
mod lml;
mod memory;
pub mod model;
pub mod options;
pub mod predict;

pub(crate) use evaluator::ExactEvaluator;
pub use io::{EXACT_GP_FORMAT, EXACT_GP_FORMAT_VERSION};
pub use model::{ExactGp, LOG_NOISE_NAME};
pub use options::FitOptions;
pub use predict::{Prediction, PREDICT_BLOCK};
