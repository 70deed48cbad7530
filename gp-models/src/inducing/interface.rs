//! [`SparseGp`] as a [`GpModel`]: trained by L-BFGS on its method's objective.

use faer::MatRef;
use gp_kernels::Kernel;

use crate::core::summary::write_summary;
use crate::core::{
    Gaussian, GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, VarianceSource,
};
use crate::error::Result;
use crate::inducing::model::SparseGp;

impl<K: Kernel + Clone + Send + Sync> GpModel for SparseGp<K> {
    type Likelihood = Gaussian;

    fn model_name(&self) -> &'static str {
        "SparseGp"
    }

    fn n_train(&self) -> usize {
        SparseGp::n_train(self)
    }

    fn input_dim(&self) -> usize {
        SparseGp::input_dim(self)
    }

    fn likelihood(&self) -> Gaussian {
        Gaussian::validated(self.noise_variance)
    }

    fn param_names(&self) -> Vec<String> {
        SparseGp::param_names(self)
    }

    fn log_params(&self) -> Vec<f64> {
        SparseGp::log_params(self)
    }

    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        SparseGp::with_log_params(self, log_params)
    }

    /// From the factors (`O(m²)` per test point); a LOVE request is refused: the `m × m`
    /// factors already give the variances cheaply.
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        request.refuse_love(
            "SparseGp has no LOVE cache: its m × m factors give its variances directly",
        )?;
        if !request.wants_variance() {
            let mean = self.predict_mean(x_test)?;
            return Ok(LatentPrediction::new(mean, None, None, None, None));
        }
        let (mean, variance) = self.predict_blocks(x_test, true)?;
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

    /// The log evidence the method is trained by: `−nlZ` (SoR, DTC, FITC) or the ELBO
    /// (VFE, whose `lml` is below `−½ data_fit − ½ log_det − (N/2) ln 2π` by the trace
    /// penalty). The gradient is analytic ([`SparseGp::objective_grad`]).
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        let grad = if request.gradient {
            self.objective_grad()?.into_iter().map(|g| -g).collect()
        } else {
            Vec::new()
        };
        let ev = self.evidence();
        Ok(LmlEstimate::exact(
            -ev.objective,
            grad,
            ev.data_fit,
            ev.log_det,
        ))
    }

    fn has_exact_lml(&self) -> bool {
        true
    }

    fn data_scales(&self) -> Option<crate::core::start::DataScales> {
        crate::core::start::DataScales::from_data(self.train_x(), self.y.as_ref()).ok()
    }
}

impl<K: Kernel + Clone + Send + Sync> std::fmt::Display for SparseGp<K> {
    /// The summary: data shape, method, inducing count, jitters, evidence and
    /// hyperparameters.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ev = self.evidence();
        let details = vec![format!(
            "{} on {} inducing points, jitter {:e} (K_UU) and {:e} (system), objective {}, \
             trace penalty {}",
            self.method(),
            self.inducing.len(),
            self.jitter(),
            self.system_jitter(),
            ev.objective,
            ev.trace_penalty
        )];
        write_summary(f, self, &details)
    }
}
