//! [`IterativeGp`] as a [`GpModel`].

use faer::MatRef;
use gp_kernels::Kernel;

use crate::core::summary::write_summary;
use crate::core::{
    Gaussian, GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, ProbeSource,
    VarianceSource,
};
use crate::error::{ModelError, Result};
use crate::iterative::model::IterativeGp;

impl<K: Kernel + Clone + Send + Sync> GpModel for IterativeGp<K> {
    type Likelihood = Gaussian;

    fn model_name(&self) -> &'static str {
        "IterativeGp"
    }

    fn n_train(&self) -> usize {
        IterativeGp::n_train(self)
    }

    fn input_dim(&self) -> usize {
        IterativeGp::input_dim(self)
    }

    fn likelihood(&self) -> Gaussian {
        Gaussian::validated(self.noise_variance)
    }

    fn param_names(&self) -> Vec<String> {
        IterativeGp::param_names(self)
    }

    fn log_params(&self) -> Vec<f64> {
        IterativeGp::log_params(self)
    }

    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        IterativeGp::with_log_params(self, log_params)
    }

    /// The mean from the cached `α`; variances by batched preconditioned CG solves (one per
    /// test point, to [`IterativeOptions::krylov.prediction_tolerance`](crate::KrylovSettings::prediction_tolerance)).
    /// There is no LOVE cache and no covariance path yet: those requests are refused.
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        request.refuse_love(
            "IterativeGp has no LOVE cache yet; exact variances take one CG solve per test point",
        )?;
        if request.wants_covariance() {
            return Err(ModelError::InvalidOption {
                name: "PredictRequest::output",
                reason: "IterativeGp does not compute latent covariances yet: request \
                         PredictOutput::MeanAndVariance, or use ExactGp for small n"
                    .into(),
            });
        }
        let mean = self.predict_mean(x_test)?;
        let mean_solve = if x_test.nrows() > 0 {
            Some(self.alpha_report()?.clone())
        } else {
            None
        };
        let variance = if request.wants_variance() {
            Some(self.predict_latent_variance(x_test)?)
        } else {
            None
        };
        let source = variance.as_ref().map(|_| VarianceSource::Solves);
        Ok(LatentPrediction::new(
            mean, variance, None, source, mean_solve,
        ))
    }

    /// The SLQ + Hutchinson estimate; the gradient comes with the value whether requested
    /// or not (one derivative pass; the value alone has no cheaper path). The probes are
    /// `N(0, P)` for the model's own preconditioner `P`, so caller-given probes are
    /// refused: give a seed.
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        let seed = match &request.probes {
            ProbeSource::OptionsSeed => self.options.estimator.seed,
            ProbeSource::Seed(s) => *s,
            ProbeSource::Given { .. } => {
                return Err(ModelError::InvalidOption {
                    name: "LmlRequest::probes",
                    reason: "IterativeGp draws its probes from N(0, P) of its pivoted-Cholesky \
                             preconditioner; pass ProbeSource::Seed instead"
                        .into(),
                })
            }
        };
        self.lml_and_grad_estimate_with_seed(seed)
    }

    fn has_exact_lml(&self) -> bool {
        false
    }

    fn data_scales(&self) -> Option<crate::core::start::DataScales> {
        crate::core::start::DataScales::from_data(self.x.as_ref(), self.y.as_ref()).ok()
    }

    fn probe_seed(&self) -> u64 {
        self.options.estimator.seed
    }
}

impl<K: Kernel + Clone + Send + Sync> std::fmt::Display for IterativeGp<K> {
    /// The summary: data shape, solver settings, hyperparameters.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = &self.options;
        let details = vec![format!(
            "CG (pivoted-Cholesky rank {}), {} probes, tolerance {:e} (likelihood) / {:e} (mean) / {:e} (variances), prior mean {}",
            o.preconditioner_rank, o.estimator.probes, o.krylov.tolerance, o.krylov.prediction_tolerance, o.krylov.variance_tolerance, self.prior_mean()
        )];
        write_summary(f, self, &details)
    }
}
