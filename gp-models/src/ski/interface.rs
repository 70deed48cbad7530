//! [`Ski`] as a [`GpModel`].

use faer::{Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_solvers::Probes;

use crate::core::summary::write_summary;
use crate::core::{
    Gaussian, GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, ProbeSource,
};
use crate::error::Result;
use crate::grid::love::{grid_latent_prediction, GridVariances, LoveCache, LoveMemo, LoveOptions};
use crate::ski::lml::ProbeInput;
use crate::ski::model::Ski;

/// The one set of probes of a SKI-style estimate (log determinant and traces alike).
pub(crate) fn single_probe_set(probes: &ProbeSource) -> Option<&Probes> {
    match probes {
        ProbeSource::Given { log_det, .. } => Some(log_det),
        _ => None,
    }
}

impl<K: Kernel + Clone + Send + Sync> GpModel for Ski<K> {
    type Likelihood = Gaussian;

    fn model_name(&self) -> &'static str {
        "Ski"
    }

    fn n_train(&self) -> usize {
        Ski::n_train(self)
    }

    fn input_dim(&self) -> usize {
        Ski::input_dim(self)
    }

    fn likelihood(&self) -> Gaussian {
        Gaussian::validated(self.noise_variance)
    }

    fn param_names(&self) -> Vec<String> {
        Ski::param_names(self)
    }

    fn log_params(&self) -> Vec<f64> {
        Ski::log_params(self)
    }

    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        Ski::with_log_params(self, log_params)
    }

    /// The mean from the grid cache (`O(4^d)` per point); variances and the covariance by
    /// CG solves or, for [`VarianceMethod::Auto`](crate::VarianceMethod::Auto) above
    /// [`LOVE_AUTO_MIN_TRAIN`](crate::LOVE_AUTO_MIN_TRAIN) points and for
    /// [`VarianceMethod::Love`](crate::VarianceMethod::Love), from a LOVE cache built for
    /// the call.
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        let mean = self.predict_mean(x_test)?;
        let mean_solve = if x_test.nrows() > 0 {
            Some(self.alpha_report()?.clone())
        } else {
            None
        };
        grid_latent_prediction(self, self.n_train(), x_test, request, mean, mean_solve)
    }

    /// The SLQ estimate (one batched CG on `[y | z₁..z_t]`) and, if requested, the
    /// Hutchinson gradient from the same probes; given probes are `n × t`.
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        let input = match (&request.probes, single_probe_set(&request.probes)) {
            (_, Some(given)) => ProbeInput::Given(given.clone()),
            (ProbeSource::Seed(seed), None) => ProbeInput::Seed(*seed),
            _ => ProbeInput::Seed(self.options.estimator.seed),
        };
        self.estimate(input, request.gradient)
    }

    fn has_exact_lml(&self) -> bool {
        false
    }

    fn probe_seed(&self) -> u64 {
        self.options.estimator.seed
    }
}

impl<K: Kernel + Clone + Send + Sync> GridVariances for Ski<K> {
    fn love_cache(&self, options: &LoveOptions) -> Result<LoveCache> {
        self.love(options)
    }

    fn love_memo(&self) -> &LoveMemo {
        &self.love_memo
    }

    fn solved_variance(&self, x_test: MatRef<'_, f64>) -> Result<Col<f64>> {
        self.predict_latent_variance(x_test)
    }

    fn solved_covariance(&self, x_test: MatRef<'_, f64>) -> Result<Mat<f64>> {
        self.predict_latent_covariance(x_test)
    }
}

impl<K: Kernel + Clone + Send + Sync> std::fmt::Display for Ski<K> {
    /// The summary: data shape, grid, solver settings, hyperparameters.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = &self.options;
        let details = vec![
            format!(
                "grid {:?} ({} points), {} interpolation",
                self.grid().sizes(),
                self.grid().num_points(),
                o.grid.scheme.name()
            ),
            format!(
                "CG{}, {} probes, tolerance {:e} (likelihood) / {:e} (mean) / {:e} (variances)",
                match o.preconditioner_rank {
                    0 => String::new(),
                    k => format!(" (pivoted-Cholesky rank {k})"),
                },
                o.estimator.probes,
                o.krylov.tolerance,
                o.krylov.prediction_tolerance,
                o.krylov.variance_tolerance
            ),
        ];
        write_summary(f, self, &details)
    }
}
