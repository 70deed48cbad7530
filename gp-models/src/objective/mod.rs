//! Training objectives: estimators of the log marginal likelihood and its gradient
//! (Potapczynski et al. 2021, spec `rtgps.md`).
//!
//! Every estimator returns an estimate of `log p(y | X, θ)` (where it has one) and of its
//! gradient with respect to the kernel's log hyperparameters followed by `log σ²`.

pub mod rff;
