//! The exact Gaussian-process regression model, fitted by a dense Cholesky factorization.
//!
//! * [`model`]: [`ExactGp`], fitting and hyperparameters, the log marginal likelihood and
//!   its gradient;
//! * [`predict`]: posterior mean, variances and covariance;
//! * [`train`](mod@train): maximizing the log marginal likelihood with L-BFGS and restarts;
//! * [`io`]: JSON save and load.

pub mod io;
mod lml;
pub mod model;
pub mod options;
pub mod predict;
pub mod train;

pub use io::{EXACT_GP_FORMAT, EXACT_GP_FORMAT_VERSION};
pub use model::{ExactGp, LOG_NOISE_NAME};
pub use options::FitOptions;
pub use predict::{Prediction, PREDICT_BLOCK};
pub use train::{train, TrainOptions, TrainReport, TrainRun, Trained};
