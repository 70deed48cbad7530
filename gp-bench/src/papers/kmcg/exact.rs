//! The exact-GP reference every KMCG metric is measured against (spec `kmcg.md` §1.1, §3.3,
//! §5 item 4): test mean, noisy predictive variance and negative log evidence at fixed
//! hyperparameters, from one dense Cholesky of `K + σ²I` (no jitter, as the authors).

use std::time::Instant;

use faer::{Col, MatRef};
use gp_kernels::Kernel;
use gp_linalg::JitterLadder;
use gp_models::{ExactGp, FitOptions};

use crate::error::BenchError;

/// The exact posterior at the test points and the exact evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactReference {
    /// Exact posterior mean `f̄(x*) = k(x*, X) α` (the dense sets' test targets, §3.3).
    pub mean: Col<f64>,
    /// Exact predictive variance of `y*`, **including** the noise: `v̄ = c̄ + σ²`.
    pub variance: Col<f64>,
    /// Exact `nlZ = −log p(y) = ½ yᵀα + ½ ln|K + σ²I| + (N/2) ln 2π`.
    pub nlz: f64,
    /// Wall-clock seconds of the exact computation (factorisation and test predictions).
    pub time_s: f64,
}

/// [`ExactReference`] by one dense Cholesky ([`gp_models::ExactGp`], zero prior mean, no
/// jitter) at the given kernel and noise variance.
///
/// Errors: the model's (shape mismatch, non-finite values, an indefinite `K + σ²I`, or a
/// Gram matrix over the memory limit).
pub fn exact_reference<K: Kernel + Clone>(
    kernel: K,
    noise_variance: f64,
    x_train: MatRef<'_, f64>,
    y_train: &Col<f64>,
    x_test: MatRef<'_, f64>,
) -> Result<ExactReference, BenchError> {
    let start = Instant::now();
    let options = FitOptions {
        jitter: JitterLadder::none(),
        ..FitOptions::default()
    };
    let gp =
        ExactGp::fit_with_options(kernel, x_train, y_train.as_ref(), noise_variance, &options)?;
    let mean = gp.predict_mean(x_test)?;
    let variance = gp.predict_variance(x_test)?;
    let nlz = -gp.log_marginal_likelihood();
    Ok(ExactReference {
        mean,
        variance,
        nlz,
        time_s: start.elapsed().as_secs_f64(),
    })
}
