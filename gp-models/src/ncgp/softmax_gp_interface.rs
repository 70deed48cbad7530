//! [`SoftmaxLaplaceGp`] as a [`GpModel`].

use faer::{Col, MatRef};
use gp_kernels::Kernel;

use super::likelihood::Softmax;
use super::softmax_gp::SoftmaxLaplaceGp;
use crate::core::summary::write_summary;
use crate::core::{
    GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, VarianceSource,
};
use crate::error::{ModelError, Result};

impl<K> GpModel for SoftmaxLaplaceGp<K>
where
    K: Kernel + Clone + Send + Sync,
{
    type Likelihood = Softmax;

    fn model_name(&self) -> &'static str {
        "SoftmaxLaplaceGp"
    }

    fn n_train(&self) -> usize {
        self.y.nrows()
    }

    fn input_dim(&self) -> usize {
        self.x.ncols()
    }

    fn likelihood(&self) -> Softmax {
        self.likelihood
    }

    /// The kernel's (softmax has no hyperparameters).
    fn param_names(&self) -> Vec<String> {
        self.kernel.param_names()
    }

    fn log_params(&self) -> Vec<f64> {
        self.kernel.log_params()
    }

    /// Finds the mode again at the new kernel hyperparameters (from `f = 0`, so that the
    /// result does not depend on the previous evaluation).
    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        let expected = self.kernel.n_params();
        if log_params.len() != expected {
            return Err(ModelError::LengthMismatch {
                context: "SoftmaxLaplaceGp log hyperparameters (the kernel's)",
                expected,
                found: log_params.len(),
            });
        }
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(log_params)?;
        self.refit(kernel)
    }

    /// The Laplace posterior of the `C` latent functions, laid out point by point: entry
    /// `i·C + c` of the mean and the variances is `f_c` at test point `i` (as
    /// [`Softmax`] lays out latents). The joint covariance is refused (the classes are
    /// coupled; ask for variances), and so is LOVE (the factors give exact variances).
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        request.refuse_love(
            "SoftmaxLaplaceGp has no LOVE cache: its Cholesky factors give exact variances",
        )?;
        if request.wants_covariance() {
            return Err(ModelError::InvalidOption {
                name: "PredictRequest (covariance)",
                reason: "SoftmaxLaplaceGp gives the latent marginal variances, not the joint \
                         covariance of the coupled classes; ask for variances"
                    .into(),
            });
        }
        let (mean, variance) = self.latent_marginals(x_test, request.wants_variance())?;
        let c = self.classes();
        let stacked = |m: &faer::Mat<f64>| Col::from_fn(m.nrows() * c, |k| m[(k / c, k % c)]);
        let variance = variance.as_ref().map(stacked);
        let source = variance.as_ref().map(|_| VarianceSource::Cholesky);
        Ok(LatentPrediction::new(
            stacked(&mean),
            variance,
            None,
            source,
            None,
        ))
    }

    /// The Laplace approximation `log q(y | X, θ)` (exact to the mode's tolerance), its
    /// gradient on request; probes are ignored. `data_fit` is `Σ_c a_cᵀ f̂_c`, `log_det` is
    /// `log det(I + K̄W)`.
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        let (lml, grad) = if request.gradient {
            self.log_evidence_and_grad()?
        } else {
            (self.log_evidence(), Vec::new())
        };
        let (data_fit, log_det) = self.evidence_parts();
        Ok(LmlEstimate::exact(lml, grad, data_fit, log_det))
    }

    fn has_exact_lml(&self) -> bool {
        true
    }
}

impl<K> std::fmt::Display for SoftmaxLaplaceGp<K>
where
    K: Kernel + Clone + Send + Sync,
{
    /// The summary: data shape, classes, the mode search and the hyperparameters.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let details = vec![format!(
            "{} classes, Laplace mode after {} Newton steps, log q(y) = {:.6}",
            self.classes(),
            self.newton_steps,
            self.log_evidence()
        )];
        write_summary(f, self, &details)
    }
}
