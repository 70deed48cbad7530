//! One evaluation of any estimator at given hyperparameters.

use faer::{ColRef, MatRef};
use gp_kernels::Kernel;
use rand::RngCore;

use std::any::Any;

use gp_kernels::{Matern, SquaredExponential};

use crate::error::{ModelError, Result};
use crate::exact::ExactEvaluator;
use crate::objective::cholesky::cholesky_estimate_reusing;
use crate::objective::dense::DenseKernelCovariance;
use crate::objective::estimator::{Estimator, KrylovObjectiveOptions, ObjectiveEstimate};
use crate::objective::krylov::krylov_estimate;
use crate::objective::rff::{Compute, RffKernel, RffObjective, SpectralDraws, SsRff};

/// Evaluates `estimator` for the kernel, noise and data given (zero prior mean): the
/// estimate of `log p(y | X, θ)`, its terms and its gradient with respect to the kernel's
/// log hyperparameters followed by `log σ²`. Random draws (probes, depths) come from
/// `rng`. CG and RR-CG store `K̂` densely ([`DenseKernelCovariance`]); RFF and SS-RFF
/// need a squared-exponential or Matérn kernel.
///
/// ```
/// use faer::{Col, Mat};
/// use gp_kernels::SquaredExponential;
/// use gp_models::objective::{estimate, Estimator, KrylovObjectiveOptions};
/// use rand::SeedableRng;
///
/// let x = Mat::from_fn(40, 1, |i, _| i as f64 / 10.0);
/// let y = Col::from_fn(40, |i| (i as f64 / 7.0).sin());
/// let kernel = SquaredExponential::isotropic(1, 0.8, 1.0)?;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let opts = KrylovObjectiveOptions::default();
/// let exact = estimate(&kernel, 0.1, x.as_ref(), y.as_ref(), &Estimator::Cholesky, &opts, &mut rng)?;
/// // 40 CG iterations on a 40 × 40 system: the exact answer up to rounding and probes.
/// let cg = estimate(&kernel, 0.1, x.as_ref(), y.as_ref(), &Estimator::Cg { iterations: 40 }, &opts, &mut rng)?;
/// assert!((exact.data_fit.unwrap() - cg.data_fit.unwrap()).abs() < 1e-6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn estimate<K: Kernel + Clone + 'static>(
    kernel: &K,
    noise_variance: f64,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    estimator: &Estimator,
    options: &KrylovObjectiveOptions,
    rng: &mut dyn RngCore,
) -> Result<ObjectiveEstimate> {
    estimate_reusing(
        &mut ExactEvaluator::new(),
        kernel,
        noise_variance,
        x,
        y,
        estimator,
        options,
        rng,
    )
}

/// [`estimate`] whose Cholesky estimator keeps its `n × n` buffers in `exact` between calls
/// (training holds one for all its steps); the values are the same bit for bit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn estimate_reusing<K: Kernel + Clone + 'static>(
    exact: &mut ExactEvaluator,
    kernel: &K,
    noise_variance: f64,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    estimator: &Estimator,
    options: &KrylovObjectiveOptions,
    rng: &mut dyn RngCore,
) -> Result<ObjectiveEstimate> {
    if let Some(depth) = estimator.krylov_depth() {
        let cov = DenseKernelCovariance::new(kernel, x, noise_variance, options)?;
        return krylov_estimate(&cov, y.as_mat(), depth, options, None, rng);
    }
    match estimator {
        Estimator::Rff { .. } | Estimator::SsRff(_) => {
            let any = kernel as &dyn Any;
            if let Some(se) = any.downcast_ref::<SquaredExponential>() {
                rff_estimate(se, noise_variance, x, y, estimator, rng)
            } else if let Some(matern) = any.downcast_ref::<Matern>() {
                rff_estimate(matern, noise_variance, x, y, estimator, rng)
            } else {
                Err(ModelError::UnsupportedKernel {
                    model: "random Fourier features",
                    reason: format!(
                        "{} needs a squared-exponential or Matérn kernel (a spectral density \
                         to sample)",
                        estimator.label()
                    ),
                })
            }
        }
        // Cholesky (CG and RR-CG returned above).
        _ => cholesky_estimate_reusing(exact, kernel, x, y, noise_variance),
    }
}

/// The RFF and SS-RFF estimates with fresh frequencies from `rng`.
fn rff_estimate<K: RffKernel>(
    kernel: &K,
    noise_variance: f64,
    x: MatRef<'_, f64>,
    y: ColRef<'_, f64>,
    estimator: &Estimator,
    rng: &mut dyn RngCore,
) -> Result<ObjectiveEstimate> {
    let objective = RffObjective::new(kernel.clone(), x, y, noise_variance)?;
    let (terms, work) = match estimator {
        Estimator::Rff { num_freqs } => {
            let draws = SpectralDraws::sample(kernel, *num_freqs, rng)?;
            let terms = objective.rff(&draws, *num_freqs, Compute::ValueAndGradient)?;
            (terms, *num_freqs)
        }
        Estimator::SsRff(options) => {
            let e = SsRff::new(*options)?.estimate(&objective, rng, Compute::ValueAndGradient)?;
            (e.terms, e.num_freqs)
        }
        other => {
            return Err(ModelError::InvalidOption {
                name: "estimator",
                reason: format!(
                    "{} is not a random-Fourier-feature estimator",
                    other.label()
                ),
            })
        }
    };
    Ok(ObjectiveEstimate {
        lml: Some(terms.lml),
        data_fit: Some(terms.data_fit),
        log_det: Some(terms.log_det),
        gradient: terms.grad.unwrap_or_default(),
        work,
    })
}
