//! [`Kmcg`] as a [`GpModel`].

use faer::MatRef;
use gp_kernels::Kernel;

use super::model::{unsupported, Kmcg};
use crate::core::summary::write_summary;
use crate::core::{
    Gaussian, GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, VarianceMethod,
};
use crate::error::{ModelError, Result};

impl<K: Kernel + Clone + Send + Sync> GpModel for Kmcg<K> {
    type Likelihood = Gaussian;

    fn model_name(&self) -> &'static str {
        "Kmcg"
    }

    fn n_train(&self) -> usize {
        self.train_x().nrows()
    }

    fn input_dim(&self) -> usize {
        self.train_x().ncols()
    }

    fn likelihood(&self) -> Gaussian {
        Gaussian::validated(self.noise_variance())
    }

    fn param_names(&self) -> Vec<String> {
        Kmcg::param_names(self)
    }

    fn log_params(&self) -> Vec<f64> {
        Kmcg::log_params(self)
    }

    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        Kmcg::with_log_params(self, log_params)
    }

    /// The KMCG mean and DTC variance; a covariance or a LOVE request is refused.
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        if request.wants_covariance() || matches!(request.variance, VarianceMethod::Love { .. }) {
            return Err(ModelError::InvalidOption {
                name: "PredictRequest",
                reason: "Kmcg gives the mean and the pointwise (DTC) variance only".into(),
            });
        }
        let (mean, variance) = self.predict_mean_variance(x_test)?;
        let variance = request.wants_variance().then_some(variance);
        Ok(LatentPrediction::new(mean, variance, None, None, None))
    }

    /// `−nlZ_hat`, the KMCG evidence estimate (no gradient: see [`Kmcg`]).
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        if request.gradient {
            return Err(unsupported("log-evidence gradient"));
        }
        Ok(LmlEstimate::exact(
            -self.neg_log_evidence(),
            Vec::new(),
            f64::NAN,
            f64::NAN,
        ))
    }

    fn has_exact_lml(&self) -> bool {
        true
    }
}

impl<K: Kernel + Clone + Send + Sync> std::fmt::Display for Kmcg<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on = match self.subset() {
            Some(rows) => format!("a subset of {} training points", rows.len()),
            None => "all training points".to_string(),
        };
        let details = vec![format!(
            "{} Krylov directions ({:?} on {:?}, {on}), stopped: {:?}",
            self.steps(),
            self.options().basis,
            self.options().krylov_matrix,
            self.status()
        )];
        write_summary(f, self, &details)
    }
}
