//! # gp-models
//!
//! Gaussian-process models and their training, on the kernels of `gp-kernels` and the
//! factorizations of `gp-linalg`.
//!
//! * [`ExactGp`]: exact GP regression by one dense Cholesky factorization of `K + σ²I`:
//!   posterior mean, latent and predictive variances, full posterior covariance, the log
//!   marginal likelihood and its gradient with respect to every log hyperparameter (noise
//!   included), training by L-BFGS with random restarts, JSON save and load (also for
//!   [`IterativeGp`] and [`Ski`]).
//! * [`IterativeGp`] ([`iterative`]): the same model with every solve by batched,
//!   pivoted-Cholesky-preconditioned conjugate gradients on the matrix-free kernel operator,
//!   the log marginal likelihood and its gradient estimated by stochastic Lanczos quadrature
//!   and Hutchinson traces (GPyTorch's recipe; no `n × n` matrix stored), training by Adam.
//! * [`Ski`] ([`ski`]): structured kernel interpolation (KISS-GP), `K ≈ W K_G Wᵀ` with a
//!   Kronecker-Toeplitz grid kernel and cubic interpolation: mean with an `O(4^d)`-per-point
//!   grid cache, variances by CG, rank-`k` LOVE covariances, the SLQ log marginal
//!   likelihood and its gradient, training by Adam or L-BFGS.
//! * [`Gsgp`] ([`gsgp`]): GSGP (Yadav, Sheldon & Musco 2021), the SKI model computed from
//!   the sufficient statistics `WᵀW`, `Wᵀy`, `yᵀy` of one streaming pass, with factorized
//!   CG/Lanczos whose cost per iteration does not depend on `n`: mean, covariances, LOVE, the
//!   SLQ log marginal likelihood (by a Sylvester identity in grid space) and its gradient.
//! * [`optim`]: L-BFGS with a strong-Wolfe line search and Adam, for any objective
//!   `FnMut(&[f64]) -> Result<(f64, Vec<f64>)>`.
//!
//! Points are rows of an `n × d` faer matrix; targets and predictions are faer columns.
//! Every fallible function returns a [`ModelError`].
//!
//! ```
//! use faer::{Col, Mat};
//! use gp_kernels::SquaredExponential;
//! use gp_models::{train, ExactGp, GpModel, PredictRequest, TrainOptions};
//!
//! // 40 noisy observations of sin(x) on [0, 8].
//! let x = Mat::from_fn(40, 1, |i, _| i as f64 * 0.2);
//! let y = Col::from_fn(40, |i| (i as f64 * 0.2).sin() + 0.05 * ((i * 7 % 11) as f64 - 5.0) / 5.0);
//!
//! // Fit at initial hyperparameters, then maximize the log marginal likelihood.
//! let kernel = SquaredExponential::new(vec![0.5], 1.0)?;
//! let gp = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.1)?;
//! let lml_before = gp.log_marginal_likelihood();
//! let trained = train(&gp, &TrainOptions::default())?;
//! let gp = trained.model;
//! assert!(gp.log_marginal_likelihood() > lml_before);
//! println!("{:?} = {:?}", gp.param_names(), gp.log_params());
//!
//! // Predict.
//! let x_test = Mat::from_fn(3, 1, |i, _| 1.0 + i as f64);
//! let pred = gp.predict(x_test.as_ref(), &PredictRequest::default())?;
//! for i in 0..3 {
//!     let truth = (1.0 + i as f64).sin();
//!     assert!((pred.mean[i] - truth).abs() < 3.0 * pred.variance[i].sqrt());
//! }
//!
//! // The gradient of the log marginal likelihood vanishes at the optimum.
//! let (_lml, grad) = gp.lml_and_grad();
//! assert!(grad.iter().all(|g| g.abs() < 1e-3));
//! # Ok::<(), gp_models::ModelError>(())
//! ```
#![warn(missing_docs)]

mod cg_report;
pub mod core;
pub mod data;
pub mod error;
pub mod exact;
pub mod gsgp;
pub mod iterative;
pub mod optim;
pub mod prelude;
pub mod ski;
mod validate;

/// The matrix crate of the public API (points are `faer::Mat` rows, targets `faer::Col`), so
/// a downstream crate uses the same version without naming it in its own manifest.
pub use faer;

pub use crate::core::{
    train, train_observed, Gaussian, GpModel, LatentPrediction, Likelihood, LmlEstimate,
    LmlRequest, Optimizer, PhaseTimes, PredictOutput, PredictRequest, Prediction, ProbeSource,
    SolveReport, TrainOptions, TrainProgress, TrainReport, TrainResult, TrainRun,
    TrainingObjective, VarianceMethod, VarianceSource, LOVE_AUTO_MIN_TRAIN, LOVE_DEFAULT_RANK,
};
pub use error::{ModelError, Result};
pub use exact::{ExactGp, FitOptions};
pub use gsgp::{Gsgp, GsgpOptions, GsgpSolver};
pub use iterative::{IterativeGp, IterativeOptions, KernelColumns};
pub use optim::{
    adam, adam_observed, lbfgs, lbfgs_observed, AdamOptions, ConvergenceReason, LbfgsOptions,
    OptimResult,
};
pub use ski::{LoveCache, LoveOptions, LoveStart, Ski, SkiMemory, SkiOperator, SkiOptions};
