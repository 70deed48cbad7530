//! IterNCGP (Tatzel, Wenger, Schneider & Hennig): GPs with non-Gaussian likelihoods by
//! computation-aware Newton steps.
//!
//! The Laplace approximation's Newton iteration is a sequence of GP regressions: step `i`
//! solves `(K + W(f_i)⁻¹) v = ŷ(f_i) − m` and moves to `f_{i+1} = m + K v` (Prop. A.1).
//! [`iterncgp`] solves each of them with the probabilistic linear solver of
//! [`gp_solvers::pls`], recycles its actions across steps (no product with `K` to rebuild
//! the belief), and returns a posterior whose variance includes the computational
//! uncertainty of the truncated solves ([`IterNcgpPosterior`]). [`DenseLaplace`] is the dense
//! Newton reference for small problems, and [`LaplaceGp`] (one latent function: Poisson,
//! Bernoulli) and [`SoftmaxLaplaceGp`] (`C` classes sharing one kernel) the dense Laplace
//! approximations as [`GpModel`](crate::GpModel)s (evidence, its gradient, training).
//!
//! * likelihoods ([`LaplaceLikelihood`]): [`Gaussian`](crate::Gaussian), [`Poisson`] (log
//!   link), [`Bernoulli`] (logistic, one latent function), [`Softmax`] (with the `O(NC)`
//!   pseudo-inverse `W†`);
//! * the prior of `C` latent functions sharing one kernel, [`SharedOutputs`] (`K_x ⊗ I_C` in
//!   CN order: entry `n·C + c` is point `n`, class `c`), over any operator `K_x`: dense,
//!   matrix-free, SKI;
//! * predictive maps and metrics ([`predictive`], [`metrics`]).
//!
//! ```
//! use std::ops::ControlFlow;
//! use gp_kernels::{KernelOperator, SquaredExponential};
//! use gp_models::faer::{Col, Mat};
//! use gp_models::ncgp::{iterncgp, Bernoulli, IterNcgpOptions, SharedOutputs};
//! use gp_solvers::pls::ResidualPolicy;
//!
//! // 40 points on a line, labels 1 on the right half.
//! let x = Mat::from_fn(40, 1, |i, _| i as f64 / 10.0);
//! let y = Col::from_fn(40, |i| if i >= 20 { 1.0 } else { 0.0 });
//! let kernel = SquaredExponential::new(vec![1.0], 4.0)?;
//! let kx = KernelOperator::new(kernel.clone(), x.as_ref(), 0.0)?;
//! let k = SharedOutputs::new(&kx, 1)?;
//! let run = iterncgp(&k, Col::zeros(40).as_ref(), y.as_ref(), &Bernoulli,
//!                    &mut ResidualPolicy, &IterNcgpOptions::default(),
//!                    &mut |_| ControlFlow::Continue(()))?;
//! assert!(run.f[0] < 0.0 && run.f[39] > 0.0);
//! // Latent marginals at two test points.
//! let xt = Mat::from_fn(2, 1, |i, _| 0.5 + 3.0 * i as f64);
//! let cross = KernelOperator::cross(kernel, xt.as_ref(), x.as_ref())?;
//! let marg = run.posterior.predict(&cross, Col::from_fn(2, |_| 4.0).as_ref(), None)?;
//! assert!(marg.mean[(0, 0)] < 0.0 && marg.mean[(1, 0)] > 0.0);
//! assert!(marg.variance[(0, 0)] > 0.0 && marg.variance[(0, 0)] < 4.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod iterncgp;
mod laplace;
mod laplace_gp;
mod laplace_gp_interface;
mod likelihood;
mod noise;
mod posterior;
mod shared_outputs;
mod ski_prior;
mod softmax_gp;
mod softmax_gp_interface;
mod step;

pub mod metrics;
pub mod predictive;

pub use iterncgp::{
    iterncgp, InnerProgress, IterNcgpOptions, IterNcgpRun, IterNcgpStop, NewtonStepRecord,
};
pub use laplace::{centring_defect, dense_newton_step, DenseLaplace, LaplaceOptions, NewtonForm};
pub use laplace_gp::{LaplaceGp, LaplaceGpOptions};
pub use likelihood::{Bernoulli, LaplaceLikelihood, LikelihoodParamDerivative, Poisson, Softmax};
pub use noise::InverseCurvature;
pub use posterior::{IterNcgpPosterior, LatentMarginals};
pub use shared_outputs::SharedOutputs;
pub use ski_prior::{SkiCross, SkiPrior};
pub use softmax_gp::{SoftmaxGpOptions, SoftmaxLaplaceGp};
pub use step::StepControl;

pub use metrics::{
    accuracy, buffer_bytes, dense_system_bytes, expected_calibration_error,
    negative_log_likelihood, ECE_BINS,
};
pub use predictive::{
    poisson_log_predictive, poisson_log_predictive_monte_carlo, poisson_rate_band, probit_binary,
    probit_softmax, GaussHermite, RateBand, DEFAULT_GAUSS_HERMITE_NODES,
};
