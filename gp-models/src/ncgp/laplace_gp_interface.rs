//! [`LaplaceGp`] as a [`GpModel`].

use faer::MatRef;
use gp_kernels::Kernel;

use super::laplace_gp::LaplaceGp;
use super::likelihood::LaplaceLikelihood;
use crate::core::summary::write_summary;
use crate::core::{
    GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, VarianceSource,
};
use crate::error::{ModelError, Result};

impl<K, L> GpModel for LaplaceGp<K, L>
where
    K: Kernel + Clone + Send + Sync,
    L: LaplaceLikelihood,
{
    type Likelihood = L;

    fn model_name(&self) -> &'static str {
        "LaplaceGp"
    }

    fn n_train(&self) -> usize {
        self.y.nrows()
    }

    fn input_dim(&self) -> usize {
        self.x.ncols()
    }

    fn likelihood(&self) -> L {
        self.likelihood.clone()
    }

    fn param_names(&self) -> Vec<String> {
        let mut names = self.kernel.param_names();
        names.extend(self.likelihood.param_names());
        names
    }

    fn log_params(&self) -> Vec<f64> {
        let mut params = self.kernel.log_params();
        params.extend(self.likelihood.log_params());
        params
    }

    /// Finds the mode again at the new hyperparameters (from `f = m`, so that the result
    /// does not depend on the previous evaluation).
    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        let p = self.kernel.n_params();
        let expected = p + self.likelihood.n_params();
        if log_params.len() != expected {
            return Err(ModelError::LengthMismatch {
                context: "LaplaceGp log hyperparameters (the kernel's, then the likelihood's)",
                expected,
                found: log_params.len(),
            });
        }
        let mut kernel = self.kernel.clone();
        kernel.set_log_params(&log_params[..p])?;
        let likelihood = self.likelihood.with_log_params(&log_params[p..])?;
        self.refit(kernel, likelihood)
    }

    /// The Laplace posterior of the latent function, by the factor of `B` at the mode (a
    /// LOVE request is refused: the factor gives exact variances).
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        request.refuse_love(
            "LaplaceGp has no LOVE cache: its Cholesky factor gives exact variances",
        )?;
        let (mean, variance) = self.latent_marginals(x_test, request.wants_variance())?;
        let covariance = if request.wants_covariance() {
            Some(self.latent_covariance(x_test)?)
        } else {
            None
        };
        let source = variance.as_ref().map(|_| VarianceSource::Cholesky);
        Ok(LatentPrediction::new(
            mean, variance, covariance, source, None,
        ))
    }

    /// The Laplace approximation `log q(y | X, θ)` (exact to the mode's tolerance), its
    /// gradient on request; probes are ignored. `data_fit` is `aᵀ(f̂ − m)`, `log_det` is
    /// `log det B`.
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        let (lml, grad) = if request.gradient {
            self.log_evidence_and_grad()?
        } else {
            (self.log_evidence(), Vec::new())
        };
        let m = self.options.prior_mean;
        let data_fit: f64 = self
            .a
            .iter()
            .zip(self.mode.iter())
            .map(|(a, f)| a * (f - m))
            .sum();
        Ok(LmlEstimate::exact(lml, grad, data_fit, self.chol.log_det()))
    }

    fn has_exact_lml(&self) -> bool {
        true
    }
}

impl<K, L> std::fmt::Display for LaplaceGp<K, L>
where
    K: Kernel + Clone + Send + Sync,
    L: LaplaceLikelihood,
{
    /// The summary: data shape, the mode search and the hyperparameters.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let details = vec![format!(
            "Laplace mode after {} Newton steps, prior mean {}, log q(y) = {:.6}",
            self.newton_steps,
            self.options.prior_mean,
            self.log_evidence()
        )];
        write_summary(f, self, &details)
    }
}
