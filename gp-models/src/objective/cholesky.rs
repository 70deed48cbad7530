//! The exact estimator: Cholesky.

use faer::{ColRef, MatRef};
use gp_kernels::Kernel;

use crate::error::Result;
use crate::exact::ExactGp;
use crate::objective::estimator::ObjectiveEstimate;

/// The exact `log p(y | X, θ)`, its two terms and its gradient (zero prior mean), by one
/// Cholesky factorization of `K + σ²I`.
pub fn cholesky_estimate<K: Kernel + Clone>(
    kernel: &K,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
) -> Result<ObjectiveEstimate> {
    let gp = ExactGp::fit(kernel.clone(), x, y, noise_variance)?;
    let (lml, gradient) = gp.lml_and_grad();
    let data_fit = y.transpose() * gp.alpha();
    Ok(ObjectiveEstimate {
        lml: Some(lml),
        data_fit: Some(data_fit),
        log_det: Some(gp.cholesky().log_det()),
        gradient,
        work: 0,
    })
}

/// The exact loss `−log p(y | X, θ) / n` alone (zero prior mean): one Cholesky
/// factorization, no gradient (the value [`cholesky_estimate`] returns, without its `n³`
/// inverse and derivative pass). Used for the "exact loss" along training.
pub fn exact_loss<K: Kernel + Clone>(
    kernel: &K,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
) -> Result<f64> {
    let gp = ExactGp::fit(kernel.clone(), x, y, noise_variance)?;
    Ok(-gp.log_marginal_likelihood() / y.nrows() as f64)
}
