//! Markov chain Monte Carlo over hyperparameters: a Metropolis-adjusted Langevin sampler
//! ([`mala()`]), log-normal priors ([`LogNormal`]) and a log-space target for positive
//! parameters with log-normal priors ([`LogSpaceTarget`]).
//!
//! This is what a fully Bayesian ("type-I") treatment such as GP-GRIEF-I (Evans & Nair 2018,
//! §5) needs: sample the positive parameters `x` (kernel weights, noise variance) by MALA in
//! `u = ln x`, with independent log-normal priors, then average per-sample predictions (see
//! [`mala_with`] for a callback that avoids storing the samples, and [`MixtureMoments`] for
//! the mixture's mean and variance by the law of total variance).
//!
//! ```
//! use gp_models::sampling::{mala, LogNormal, LogSpaceTarget, MalaOptions};
//!
//! // Posterior of a variance x with a log-normal prior (mode 1, variance 100) and the
//! // likelihood of 20 zero-mean observations with Σ y² = 25.
//! let prior = LogNormal::from_mode_variance(1.0, 100.0)?;
//! let mut target = LogSpaceTarget::new(vec![prior], |x: &[f64]| {
//!     let (n, ss) = (20.0, 25.0);
//!     Ok((-0.5 * n * x[0].ln() - 0.5 * ss / x[0], vec![-0.5 * n / x[0] + 0.5 * ss / (x[0] * x[0])]))
//! });
//! let options = MalaOptions { iterations: 3000, burn_in: 500, thin: 5, ..MalaOptions::default() };
//! let start = target.prior_mode(); // u = ln(mode): start at the prior mode
//! let run = mala(|u: &[f64]| target.evaluate(u), &start, &options)?;
//! assert_eq!(run.samples.len(), options.kept_samples());
//! let mean_x = run.samples.iter().map(|u| u[0].exp()).sum::<f64>() / run.samples.len() as f64;
//! assert!(mean_x > 0.5 && mean_x < 3.0);
//! # Ok::<(), gp_models::ModelError>(())
//! ```

pub mod lognormal;
pub mod mala;
pub mod mixture;

pub use lognormal::LogNormal;
pub use mala::{mala, mala_with, AdaptPolicy, KeptSample, MalaOptions, MalaRun};
pub use mixture::MixtureMoments;

use crate::error::{ModelError, Result};

/// The log posterior of positive parameters `x = e^u` with independent log-normal priors, as
/// a function of `u` (Evans & Nair 2018, §5, sample the GRIEF weights and noise variance this
/// way):
///
/// ```text
/// ℓ(u) = ln p(y | x) + Σᵢ ln LogNormalᵢ(xᵢ) + Σᵢ uᵢ,                 x = e^u,
/// ∂ℓ/∂uᵢ = xᵢ ∂ ln p(y | x)/∂xᵢ − (uᵢ − μᵢ)/sᵢ²,
/// ```
///
/// the last sum being the log-Jacobian `ln |dx/du|`, so that `u` is sampled from the density
/// that makes `x` follow the stated posterior. (The prior terms plus the Jacobian are the
/// normal `N(μᵢ, sᵢ²)` log density of `uᵢ`.)
///
/// [`without_jacobian`](Self::without_jacobian) drops `Σ uᵢ`, as the GP-GRIEF reference code
/// does (it samples in a softplus space and evaluates log-likelihood plus log-prior at the
/// untransformed values); the effective prior on `x` is then not the stated log-normal (its
/// `ln x` is centred on `ln mode` instead of `μ`). Use it only to compare with that code.
#[derive(Debug, Clone)]
pub struct LogSpaceTarget<F> {
    priors: Vec<LogNormal>,
    log_likelihood: F,
    jacobian: bool,
}

impl<F> LogSpaceTarget<F>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    /// The target with one prior per parameter and `log_likelihood(x) = (ln p(y | x),
    /// ∇ₓ ln p(y | x))` in the natural parameters `x`. The Jacobian term is included.
    pub fn new(priors: Vec<LogNormal>, log_likelihood: F) -> Self {
        Self {
            priors,
            log_likelihood,
            jacobian: true,
        }
    }

    /// The same target without the log-Jacobian `Σ uᵢ` (the reference code's, for
    /// comparisons only; see the type's documentation).
    pub fn without_jacobian(mut self) -> Self {
        self.jacobian = false;
        self
    }

    /// Whether the log-Jacobian term is included.
    pub fn includes_jacobian(&self) -> bool {
        self.jacobian
    }

    /// The priors, one per parameter.
    pub fn priors(&self) -> &[LogNormal] {
        &self.priors
    }

    /// The prior modes in log space, `uᵢ = ln modeᵢ = μᵢ − sᵢ²`: the usual starting point.
    pub fn prior_mode(&self) -> Vec<f64> {
        self.priors.iter().map(|p| p.mu - p.s * p.s).collect()
    }

    /// `(ℓ(u), ∇ℓ(u))`. A log-likelihood error is returned unchanged (a sampler counts it as
    /// a rejection).
    ///
    /// # Errors
    /// [`ModelError::LengthMismatch`] if `u` or the log-likelihood's gradient has a length other
    /// than the number of priors; the log-likelihood's own errors.
    pub fn evaluate(&mut self, u: &[f64]) -> Result<(f64, Vec<f64>)> {
        let p = self.priors.len();
        if u.len() != p {
            return Err(ModelError::LengthMismatch {
                context: "log-space parameters (one per log-normal prior)",
                expected: p,
                found: u.len(),
            });
        }
        let x: Vec<f64> = u.iter().map(|v| v.exp()).collect();
        let (ll, grad_x) = (self.log_likelihood)(&x)?;
        if grad_x.len() != p {
            return Err(ModelError::LengthMismatch {
                context: "the log-likelihood's gradient (one entry per parameter)",
                expected: p,
                found: grad_x.len(),
            });
        }
        let mut value = ll;
        let mut grad = Vec::with_capacity(p);
        for ((prior, &ui), (&xi, &gi)) in self.priors.iter().zip(u).zip(x.iter().zip(&grad_x)) {
            // ln prior(xᵢ) + uᵢ is the normal log density of uᵢ.
            let mut lp = prior.ln_pdf_log_space(ui);
            let mut dlp = prior.d_ln_pdf_log_space(ui);
            if !self.jacobian {
                lp -= ui;
                dlp -= 1.0;
            }
            value += lp;
            grad.push(xi * gi + dlp);
        }
        Ok((value, grad))
    }
}
