//! [`Grief`] as a [`GpModel`] (GP-GRIEF-II: trained by [`train`](crate::train())).

use faer::MatRef;

use crate::core::start::DataScales;
use crate::core::summary::write_summary;
use crate::core::{
    Gaussian, GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, VarianceSource,
};
use crate::error::{ModelError, Result};
use crate::grief::model::Grief;

impl GpModel for Grief {
    type Likelihood = Gaussian;

    fn model_name(&self) -> &'static str {
        "Grief"
    }

    fn n_train(&self) -> usize {
        self.x.nrows()
    }

    fn input_dim(&self) -> usize {
        self.x.ncols()
    }

    fn likelihood(&self) -> Gaussian {
        Gaussian::validated(self.noise_variance)
    }

    fn param_names(&self) -> Vec<String> {
        Grief::param_names(self)
    }

    fn log_params(&self) -> Vec<f64> {
        Grief::log_params(self)
    }

    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        Grief::with_log_params(self, log_params)
    }

    /// Weight space: `O(d p)` features and `O(p²)` per test point (the Cholesky factor of
    /// the `p × p` matrix `P`); exact for this kernel, so a LOVE request is refused, and so
    /// is a covariance (not implemented: use variances).
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        request.refuse_love("Grief has no LOVE cache: its p × p factor gives exact variances")?;
        if request.wants_covariance() {
            return Err(ModelError::InvalidOption {
                name: "PredictRequest::output",
                reason: "Grief predicts means and variances, not the joint covariance \
                         (use PredictRequest::default())"
                    .into(),
            });
        }
        let (mean, variance) = self.predict_mean_variance(x_test)?;
        if !request.wants_variance() {
            return Ok(LatentPrediction::new(mean, None, None, None, None));
        }
        Ok(LatentPrediction::new(
            mean,
            Some(variance),
            None,
            Some(VarianceSource::Cholesky),
            None,
        ))
    }

    /// Exact (the Woodbury form on the `p × p` statistics); the gradient with respect to
    /// the length scales streams over the data once more.
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        let fit = self.woodbury()?;
        let (lml, grad) = self.lml_and_grad_with(&fit, request.gradient)?;
        let log_det = fit.log_det_k();
        Ok(LmlEstimate::exact(lml, grad, fit.data_fit(), log_det))
    }

    fn has_exact_lml(&self) -> bool {
        true
    }

    fn data_scales(&self) -> Option<DataScales> {
        DataScales::from_data(self.x.as_ref(), self.y.as_ref()).ok()
    }
}

impl std::fmt::Display for Grief {
    /// The summary: data shape, hyperparameters, grid and basis sizes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let grid = self.basis.grid();
        let details = vec![format!(
            "{} eigenfunctions of a grid of 10^{:.1} points ({} per axis at most), {} eigenvalues floored",
            self.basis.len(),
            self.basis.log_grid_size() / std::f64::consts::LN_10,
            grid.sizes().into_iter().max().unwrap_or(0),
            self.basis.floored()
        )];
        write_summary(f, self, &details)
    }
}
