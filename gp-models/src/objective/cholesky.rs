//! The exact estimator: Cholesky.

use faer::{ColRef, MatRef};
use gp_kernels::Kernel;

use crate::error::Result;
use crate::exact::{ExactEvaluator, ExactGp};
use crate::objective::estimator::ObjectiveEstimate;

/// The exact `log p(y | X, θ)`, its two terms and its gradient (zero prior mean), by one
/// Cholesky factorization of `K + σ²I`.
pub fn cholesky_estimate<K: Kernel + Clone>(
    kernel: &K,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
) -> Result<ObjectiveEstimate> {
    cholesky_estimate_reusing(&mut ExactEvaluator::new(), kernel, x, y, noise_variance)
}

/// [`cholesky_estimate`] with the `n × n` buffers of `exact` (training keeps one evaluator
/// for all its steps): the same values, bit for bit.
pub(crate) fn cholesky_estimate_reusing<K: Kernel>(
    exact: &mut ExactEvaluator,
    kernel: &K,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    noise_variance: f64,
) -> Result<ObjectiveEstimate> {
    let terms = exact.evaluate(kernel, x, y, noise_variance)?;
    Ok(ObjectiveEstimate {
        lml: Some(terms.lml),
        data_fit: Some(terms.data_fit),
        log_det: Some(terms.log_det),
        gradient: terms.gradient,
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
