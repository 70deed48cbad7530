//! [`ExactGp`] as a [`GpModel`].

use faer::MatRef;
use gp_kernels::Kernel;

use crate::core::summary::write_summary;
use crate::core::{
    Gaussian, GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest,
    TrainingObjective, VarianceSource,
};
use crate::error::Result;
use crate::exact::model::ExactGp;
use crate::exact::predict::Want;

impl<K: Kernel + Clone + Send + Sync> GpModel for ExactGp<K> {
    type Likelihood = Gaussian;

    fn model_name(&self) -> &'static str {
        "ExactGp"
    }

    fn n_train(&self) -> usize {
        ExactGp::n_train(self)
    }

    fn input_dim(&self) -> usize {
        ExactGp::input_dim(self)
    }

    fn likelihood(&self) -> Gaussian {
        Gaussian::validated(self.noise_variance)
    }

    fn param_names(&self) -> Vec<String> {
        ExactGp::param_names(self)
    }

    fn log_params(&self) -> Vec<f64> {
        ExactGp::log_params(self)
    }

    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        ExactGp::with_log_params(self, log_params)
    }

    /// Exact: the mean and variances from the Cholesky factor (one cross-covariance per
    /// block of test points), the covariance by a triangular solve. A LOVE request is
    /// refused: the factor already gives exact variances at `O(n²)` per point.
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        request
            .refuse_love("ExactGp has no LOVE cache: its Cholesky factor gives exact variances")?;
        if !request.wants_variance() {
            let mean = self.predict_mean(x_test)?;
            return Ok(LatentPrediction::new(mean, None, None, None, None));
        }
        let (mean, variance) = self.predict_blocks(x_test, Want::Both)?;
        let covariance = if request.wants_covariance() {
            Some(self.predict_covariance(x_test)?)
        } else {
            None
        };
        Ok(LatentPrediction::new(
            mean,
            Some(variance),
            covariance,
            Some(VarianceSource::Cholesky),
            None,
        ))
    }

    /// The exact value from the cached factor, the gradient by one inverse and a fused
    /// derivative pass when requested; probes are ignored.
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        let (lml, grad) = if request.gradient {
            self.lml_and_grad()
        } else {
            (self.log_marginal_likelihood(), Vec::new())
        };
        let data_fit = self.yc.transpose() * self.alpha();
        Ok(LmlEstimate::exact(
            lml,
            grad,
            data_fit,
            self.cholesky().log_det(),
        ))
    }

    fn has_exact_lml(&self) -> bool {
        true
    }

    fn data_scales(&self) -> Option<crate::core::start::DataScales> {
        crate::core::start::DataScales::from_data(self.train_x(), self.y.as_ref()).ok()
    }

    /// Reuses the factorization and gradient buffers across evaluations.
    fn training_objective(&self) -> TrainingObjective<'_> {
        let mut objective = self.neg_lml_objective();
        Box::new(move |params: &[f64], _seed: u64| objective.eval(params))
    }
}

impl<K: Kernel + Clone + Send + Sync> std::fmt::Display for ExactGp<K> {
    /// The summary: data shape, hyperparameters, prior mean and jitter.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let details = vec![format!(
            "Cholesky factor, jitter {:e}, prior mean {}",
            self.jitter(),
            self.prior_mean()
        )];
        write_summary(f, self, &details)
    }
}
