//! What the experiments share: softmax metrics through the probit approximation (the
//! multi-class experiments), and IterNCGP runs that evaluate the belief at the end of every
//! Newton step (per-step metrics, untimed as in the paper; Fig. 2's per-step posteriors).

use std::ops::ControlFlow;
use std::time::Instant;

use faer::{Col, ColRef, MatRef};
use gp_kernels::{Kernel, KernelOperator};
use gp_linalg::{DenseOperator, LinearOperator};
use gp_models::ncgp::{
    accuracy, expected_calibration_error, iterncgp, negative_log_likelihood, probit_softmax,
    IterNcgpOptions, IterNcgpPosterior, IterNcgpRun, LaplaceLikelihood, SharedOutputs, ECE_BINS,
};
use gp_solvers::pls::{Policy, ResidualPolicy};

use crate::error::BenchError;

/// Accuracy, NLL and ECE (15 bins) of class probabilities.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Metrics {
    pub accuracy: f64,
    pub nll: f64,
    pub ece: f64,
}

/// Dense kernel matrices up to this many bytes (the machine has 24 GiB; a dense `K_x` is
/// read once per product, which beats re-evaluating the kernel); matrix-free above.
const DENSE_BYTES: f64 = 3.3e9;

/// `K_x(A, B)`: dense when it fits in [`DENSE_BYTES`], else the matrix-free kernel operator
/// (tiles evaluated per product, `O(|A|·|B|)` time and no `|A| × |B|` storage).
pub(super) fn kernel_operator<K: Kernel + Clone + 'static>(
    kernel: &K,
    a: MatRef<'_, f64>,
    b: MatRef<'_, f64>,
) -> Result<Box<dyn LinearOperator>, BenchError> {
    if (a.nrows() as f64) * (b.nrows() as f64) * 8.0 <= DENSE_BYTES {
        Ok(Box::new(DenseOperator::new(kernel.matrix(a, b)?)))
    } else {
        Ok(Box::new(KernelOperator::cross(kernel.clone(), a, b)?))
    }
}

/// Test metrics of a softmax posterior with a shared kernel: latent marginals from the
/// cross-covariance `K_x(X⋄, X)` and the (constant) prior variance, probabilities by the
/// probit approximation (spec §3.6).
pub(super) fn softmax_metrics(
    posterior: &IterNcgpPosterior,
    cross: &dyn LinearOperator,
    prior_variance: f64,
    labels: &[usize],
) -> Result<Metrics, BenchError> {
    let prior = Col::from_fn(cross.nrows(), |_| prior_variance);
    softmax_metrics_with_prior(posterior, cross, prior.as_ref(), labels)
}

/// [`softmax_metrics`] with a prior variance per test point (a SKI prior's).
pub(super) fn softmax_metrics_with_prior(
    posterior: &IterNcgpPosterior,
    cross: &dyn LinearOperator,
    prior_variances: ColRef<'_, f64>,
    labels: &[usize],
) -> Result<Metrics, BenchError> {
    let marg = posterior.predict(cross, prior_variances, None)?;
    let probs = probit_softmax(marg.mean.as_ref(), marg.variance.as_ref())?;
    Ok(Metrics {
        accuracy: accuracy(probs.as_ref(), labels)?,
        nll: negative_log_likelihood(probs.as_ref(), labels)?,
        ece: expected_calibration_error(probs.as_ref(), labels, ECE_BINS)?,
    })
}

/// An IterNCGP run with what the caller evaluated at the end of every Newton step.
pub(super) struct SteppedRun<T> {
    /// The run.
    pub run: IterNcgpRun,
    /// The evaluation of the posterior at the end of each Newton step (the last is
    /// `run.posterior`'s).
    pub per_step: Vec<T>,
    /// Wall time of the run without the observer's bookkeeping and the evaluations.
    pub seconds: f64,
    /// The widest belief (columns of Q or of the buffers) seen.
    pub peak_width: usize,
}

/// Runs IterNCGP-CG (residual actions) from `f₀ = 0` with `options`, evaluating `at_step_end`
/// on the belief at the end of every Newton step (see [`run_stepped_with`]).
///
/// Errors: the run's, and the first error of `at_step_end`.
pub(super) fn run_stepped<L: LaplaceLikelihood, T>(
    k: &SharedOutputs<'_>,
    y: ColRef<'_, f64>,
    likelihood: &L,
    options: &IterNcgpOptions,
    at_step_end: &mut dyn FnMut(&IterNcgpPosterior) -> Result<T, BenchError>,
) -> Result<SteppedRun<T>, BenchError> {
    run_stepped_with(k, y, likelihood, &mut ResidualPolicy, options, at_step_end)
}

/// [`run_stepped`] with the actions of `policy` (unit vectors for Fig. 2's exact steps).
/// `at_step_end` runs on the belief at the end of each Newton step as soon as the next step
/// starts (untimed, as in the paper). Only the latest belief is copied, so the memory of the
/// run is the algorithm's plus one copy of `Q`, not one per step.
///
/// Errors: the run's, and the first error of `at_step_end`.
pub(super) fn run_stepped_with<L: LaplaceLikelihood, T>(
    k: &SharedOutputs<'_>,
    y: ColRef<'_, f64>,
    likelihood: &L,
    policy: &mut dyn Policy,
    options: &IterNcgpOptions,
    at_step_end: &mut dyn FnMut(&IterNcgpPosterior) -> Result<T, BenchError>,
) -> Result<SteppedRun<T>, BenchError> {
    let classes = likelihood.latent_outputs();
    let mut per_step = Vec::new();
    let mut failure: Option<BenchError> = None;
    let mut last: Option<(usize, Col<f64>, faer::Mat<f64>)> = None;
    let mut bookkeeping = 0.0;
    let mut peak_width = 0;
    let start = Instant::now();
    let run = iterncgp(
        k,
        Col::zeros(y.nrows() * classes).as_ref(),
        y,
        likelihood,
        policy,
        options,
        &mut |p| {
            let t = Instant::now();
            peak_width = peak_width.max(p.buffer_width).max(p.root.ncols());
            if let Some((outer, w, q)) = last.take() {
                if outer != p.outer {
                    let evaluated = IterNcgpPosterior::new(w, q, classes)
                        .map_err(BenchError::from)
                        .and_then(|post| at_step_end(&post));
                    match evaluated {
                        Ok(v) => per_step.push(v),
                        Err(e) => failure = Some(e),
                    }
                }
            }
            last = Some((p.outer, p.weights.to_owned(), p.root.to_owned()));
            bookkeeping += t.elapsed().as_secs_f64();
            if failure.is_some() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    )?;
    let seconds = start.elapsed().as_secs_f64() - bookkeeping;
    if let Some(e) = failure {
        return Err(e);
    }
    drop(last);
    per_step.push(at_step_end(&run.posterior)?);
    Ok(SteppedRun {
        run,
        per_step,
        seconds,
        peak_width,
    })
}
