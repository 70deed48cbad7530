//! # gp-models
//!
//! Gaussian-process models and their training, on the kernels of `gp-kernels`, the solvers
//! of `gp-solvers` and the structured algebra of `gp-structured`.
//!
//! Every model implements one interface, [`GpModel`] ([`core`]): hyperparameters as one
//! vector of logarithms (the kernel's, then the likelihood's), [`predict`](GpModel::predict)
//! with a [`PredictRequest`] (mean only, variances, covariance; exact solves or a LOVE cache),
//! one [`lml`](GpModel::lml) call returning an [`LmlEstimate`] with its standard error (zero
//! for exact models) and, on request, its gradient, and one generic [`train()`] with an
//! observer ([`train_observed`]). Code written against the trait works with every model:
//!
//! ```
//! use gp_kernels::SquaredExponential;
//! use gp_models::faer::{Col, Mat};
//! use gp_models::prelude::*;
//!
//! /// Trains any model and returns its predictive means and variances at `x_test`.
//! fn fit_and_predict<M: GpModel>(model: &M, x_test: &Mat<f64>) -> Result<Prediction> {
//!     let trained = train(model, &TrainOptions::default())?;
//!     println!("{trained}");
//!     trained.model.predict(x_test.as_ref(), &PredictRequest::default())
//! }
//!
//! // 100 noisy observations of sin(x) on [0, 10].
//! let x = Mat::from_fn(100, 1, |i, _| i as f64 * 0.1);
//! let y = Col::from_fn(100, |i| (i as f64 * 0.1).sin() + 0.05 * ((i * 7 % 11) as f64 - 5.0) / 5.0);
//! let kernel = SquaredExponential::new(vec![0.5], 1.0)?;
//! let x_test = Mat::from_fn(3, 1, |i, _| 2.0 + 3.0 * i as f64);
//!
//! // The exact GP (Cholesky, L-BFGS) and SKI (structured interpolation, Adam) through the
//! // same function.
//! let exact = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.1)?;
//! let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.1,
//!                    &SkiOptions { grid: GridSettings { sizes: vec![200], ..Default::default() },
//!                                  ..SkiOptions::default() })?;
//! let a = fit_and_predict(&exact, &x_test)?;
//! let b = fit_and_predict(&ski, &x_test)?;
//! for i in 0..3 {
//!     let truth = x_test[(i, 0)].sin();
//!     assert!((a.mean[i] - truth).abs() < 3.0 * a.variance[i].sqrt());
//!     assert!((b.mean[i] - truth).abs() < 3.0 * b.variance[i].sqrt());
//! }
//! # Ok::<(), gp_models::ModelError>(())
//! ```
//!
//! The models:
//!
//! * [`ExactGp`]: exact GP regression by one dense Cholesky factorization of `K + σ²I`:
//!   posterior mean, latent and predictive variances, full posterior covariance, the log
//!   marginal likelihood and its gradient with respect to every log hyperparameter (noise
//!   included), JSON save and load (also for [`IterativeGp`] and [`Ski`]).
//! * [`IterativeGp`] ([`iterative`]): the same model with every solve by batched,
//!   pivoted-Cholesky-preconditioned conjugate gradients on the matrix-free kernel operator,
//!   the log marginal likelihood and its gradient estimated by stochastic Lanczos quadrature
//!   and Hutchinson traces (GPyTorch's recipe; no `n × n` matrix stored).
//! * [`Ski`] ([`ski`]): structured kernel interpolation (KISS-GP), `K ≈ W K_G Wᵀ` with a
//!   Kronecker-Toeplitz grid kernel and cubic interpolation: mean with an `O(4^d)`-per-point
//!   grid cache, variances by CG or rank-`k` LOVE, the SLQ log marginal likelihood and its
//!   gradient.
//! * [`Gsgp`] ([`gsgp`]): GSGP (Yadav, Sheldon & Musco 2021), the SKI model computed from
//!   the sufficient statistics `WᵀW`, `Wᵀy`, `yᵀy` of one streaming pass, with factorized
//!   CG/Lanczos whose cost per iteration does not depend on `n`: mean, covariances, LOVE, the
//!   SLQ log marginal likelihood (by a Sylvester identity in grid space) and its gradient.
//! * [`SparseGp`] ([`inducing`]): the inducing-point approximations SoR, DTC, VFE and
//!   FITC on `m` inducing inputs (nested random subsets, a grid, or given points) in
//!   `O(N m²)`, in the reference code's stable form with no jitter by default (a failed
//!   factor is a typed error naming it): mean, variances, the negative log evidence (VFE's
//!   −ELBO with its trace penalty separately) and its analytic gradient for training.
//! * [`kmcg`]: kernel-machine conjugate gradients (Bartels & Hennig 2019): the GP on the
//!   rank-`P` kernel projected onto the Krylov space `𝒦_P(K, y)`, its mean, DTC variance and
//!   evidence updated in `O(j² + j n*)` per direction ([`kmcg::KmcgState`]), driven step by
//!   step by FOM or Lanczos on any operator ([`kmcg::KmcgRun`]), and the fitted model
//!   [`kmcg::Kmcg`].
//! * [`ncgp`]: IterNCGP (Tatzel et al. 2023): GPs with Poisson, Bernoulli and softmax
//!   likelihoods by Newton steps solved with the probabilistic linear solver, its actions
//!   recycled across steps; a posterior whose variance includes the computational
//!   uncertainty, on dense, matrix-free or SKI priors ([`ncgp::SkiPrior`]); the dense Laplace
//!   reference, [`ncgp::LaplaceGp`] (the Laplace approximation as a [`GpModel`], trained by
//!   [`train()`]), probit predictions and the paper's metrics.
//! * [`sampling`]: a Metropolis-adjusted Langevin sampler and log-normal priors, for fully
//!   Bayesian treatment of hyperparameters.
//! * [`grief`]: GP-GRIEF (Evans & Nair 2018): the `p` leading Nyström eigenfunctions on a
//!   Cartesian grid of `m = Π m̄_i` inducing points (`m` may be `10^300`); GP-GRIEF-II
//!   ([`grief::Grief`], a [`GpModel`] trained over its hyperparameters) and GP-GRIEF-I
//!   (the eigenfunction weights sampled by MALA).
//! * [`objective`]: estimators of the log marginal likelihood and its gradient for training
//!   (Potapczynski et al. 2021): Cholesky, truncated CG, Russian-roulette CG (unbiased), on a
//!   stored kernel or the SKI operator; random Fourier features and single-sample RFF; Adam
//!   on GPyTorch's softplus parameters with every step's exact loss on request.
//! * [`optim`]: L-BFGS with a strong-Wolfe line search and Adam, for any objective
//!   `FnMut(&[f64]) -> Result<(f64, Vec<f64>)>`; [`data`]: standardisation with its inverse
//!   and seeded splits.
//!
//! Points are rows of an `n × d` faer matrix ([`faer`] is re-exported); targets and
//! predictions are faer columns. Every fallible function returns a [`ModelError`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// The README's example, compiled and run as a doctest so it cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod cg_report;
pub mod core;
pub mod data;
pub mod error;
pub mod exact;
pub mod grid;
pub mod grief;
pub mod gsgp;
pub mod inducing;
pub mod iterative;
pub mod kmcg;
pub mod ncgp;
pub mod objective;
pub mod optim;
pub mod prelude;
pub mod sampling;
pub mod ski;
mod validate;

/// The matrix crate of the public API (points are `faer::Mat` rows, targets `faer::Col`), so
/// a downstream crate uses the same version without naming it in its own manifest.
pub use faer;

pub use crate::core::{
    train, train_observed, DataScales, EstimatorSettings, Gaussian, GpModel, KrylovSettings,
    LatentPrediction, Likelihood, LmlEstimate, LmlRequest, Optimizer, PhaseTimes, PredictOutput,
    PredictRequest, Prediction, ProbeSource, SolveReport, StartUsed, TrainOptions, TrainProgress,
    TrainReport, TrainResult, TrainRun, TrainStart, TrainingObjective, UnconvergedSolve,
    VarianceMethod, VarianceSource, DEFAULT_PREDICTION_TOLERANCE, DEFAULT_VARIANCE_TOLERANCE,
    LOVE_AUTO_MIN_TRAIN, LOVE_DEFAULT_RANK,
};
pub use error::{ModelError, Result};
pub use exact::{ExactGp, FitOptions};
pub use gsgp::{Gsgp, GsgpOptions, GsgpSolver};
pub use inducing::{
    InducingFactor, InducingPoints, NestedCrash, NestedSparsePath, NestedSparseStep, NestedSubsets,
    SparseEvidence, SparseGp, SparseMethod, SparseOptions,
};
pub use iterative::{IterativeGp, IterativeOptions, KernelColumns};
pub use optim::{
    adam, adam_observed, lbfgs, lbfgs_observed, AdamOptions, ConvergenceReason, LbfgsOptions,
    OptimResult,
};
pub use ski::{LoveCache, LoveOptions, LoveStart, Ski, SkiMemory, SkiOperator, SkiOptions};
