//! Training objectives: estimators of the log marginal likelihood and its gradient, and
//! training with them (Potapczynski et al. 2021, "Bias-Free Scalable Gaussian Processes
//! via Randomized Truncations"; spec `rtgps.md`).
//!
//! Every estimator returns an estimate of `log p(y | X, θ)` (where it has one), of its two
//! terms `yᵀK̂⁻¹y` and `log det K̂`, and of its gradient with respect to the kernel's log
//! hyperparameters followed by `log σ²` ([`ObjectiveEstimate`]). The gradient is always
//! assembled from solves by the trace formula
//! `∂ log p/∂θ = ½ αᵀ ∂K̂ α − ½ tr(K̂⁻¹ ∂K̂)`, never by differentiating through CG.
//!
//! * [`Estimator::Cholesky`] is exact.
//! * [`Estimator::Cg`] is truncated preconditioned CG with `J` iterations (biased: the data
//!   fit is under-, the log-determinant over-estimated; Theorem 1).
//! * [`Estimator::RrCg`] is Russian-roulette CG ([`gp_solvers::rr_cg`](mod@gp_solvers::rr_cg)), unbiased.
//! * [`krylov_estimate`] runs CG or RR-CG on any [`KrylovCovariance`] (dense, SKI);
//!   [`gsgp_krylov_estimate`] runs them in grid space on a [`Gsgp`](crate::Gsgp) model.
//! * [`train_objective`] ([`train_objective_ski`] on a SKI model, [`train_objective_gsgp`] on a
//!   GSGP model) runs Adam with a multi-step schedule on GPyTorch's softplus parameters
//!   ([`SoftplusParameterization`]), every step recorded, the exact loss on request.

mod cholesky;
mod dense;
mod estimator;
mod evaluate;
mod groups;
mod gsgp;
mod krylov;
pub mod rff;
mod se_contraction;
mod ski;
mod softplus;
mod stored_kernel;
mod train;

pub use cholesky::{cholesky_estimate, exact_loss};
pub use dense::DenseKernelCovariance;
pub use estimator::{Estimator, KrylovObjectiveOptions, ObjectiveEstimate};
pub use evaluate::estimate;
pub use groups::ParameterGroups;
pub use gsgp::{gsgp_krylov_estimate, GsgpProbes};
pub use krylov::{krylov_estimate, KrylovCovariance, KrylovDepth};
pub use ski::SkiCovariance;
pub use softplus::{inverse_softplus, softplus, SoftplusParameterization};
pub use stored_kernel::SymmetricStored;
pub use train::{
    train_objective, train_objective_checkpointed, train_objective_gsgp, train_objective_ski,
    Checkpointing, ObjectiveTrainOptions, ObjectiveTrainResult, SaveCheckpoint, TrainingCheckpoint,
    TrainingStep,
};
