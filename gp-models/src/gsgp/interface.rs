//! [`Gsgp`] as a [`GpModel`].

use faer::{Col, Mat, MatRef};
use gp_kernels::Kernel;

use crate::core::summary::write_summary;
use crate::core::{
    Gaussian, GpModel, LatentPrediction, LmlEstimate, LmlRequest, PredictRequest, ProbeSource,
};
use crate::error::{ModelError, Result};
use crate::grid::love::{grid_latent_prediction, GridVariances, LoveCache, LoveMemo, LoveOptions};
use crate::gsgp::model::Gsgp;

impl<K: Kernel + Clone + Send + Sync> GpModel for Gsgp<K> {
    type Likelihood = Gaussian;

    fn model_name(&self) -> &'static str {
        "Gsgp"
    }

    fn n_train(&self) -> usize {
        Gsgp::n_train(self)
    }

    fn input_dim(&self) -> usize {
        Gsgp::input_dim(self)
    }

    fn likelihood(&self) -> Gaussian {
        Gaussian::validated(self.noise_variance)
    }

    fn param_names(&self) -> Vec<String> {
        Gsgp::param_names(self)
    }

    fn log_params(&self) -> Vec<f64> {
        Gsgp::log_params(self)
    }

    fn with_log_params(&self, log_params: &[f64]) -> Result<Self> {
        Gsgp::with_log_params(self, log_params)
    }

    /// The mean from the grid cache; variances and the covariance by range-`W` factorized
    /// solves or, for [`VarianceMethod::Auto`](crate::VarianceMethod::Auto) above
    /// [`LOVE_AUTO_MIN_TRAIN`](crate::LOVE_AUTO_MIN_TRAIN) points and for
    /// [`VarianceMethod::Love`](crate::VarianceMethod::Love), from a LOVE cache (factorized
    /// Lanczos, no pass over the data) built for the call.
    fn predict_latent(
        &self,
        x_test: MatRef<'_, f64>,
        request: &PredictRequest,
    ) -> Result<LatentPrediction> {
        let mean = self.predict_mean(x_test)?;
        let mean_solve = if x_test.nrows() > 0 {
            Some(self.mean_solve_report()?)
        } else {
            None
        };
        grid_latent_prediction(self, self.n_train(), x_test, request, mean, mean_solve)
    }

    /// The SLQ estimate in the `r`-dimensional space of the log-determinant identity and,
    /// if requested, the gradient with `m`-dimensional trace probes. Given probes: `log_det`
    /// of dimension [`log_det_dim`](Gsgp::log_det_dim), and `trace` (`m` rows, required for
    /// a gradient).
    fn lml(&self, request: &LmlRequest) -> Result<LmlEstimate> {
        match (&request.probes, request.gradient) {
            (ProbeSource::Given { log_det, trace }, true) => match trace {
                Some(trace) => {
                    self.lml_and_grad_estimate_with_probes(log_det.clone(), trace.clone())
                }
                None => Err(ModelError::InvalidOption {
                    name: "LmlRequest::probes",
                    reason: "a GSGP gradient needs grid-space trace probes (m rows) besides \
                             the log-determinant probes: give ProbeSource::Given { trace: \
                             Some(..), .. } or a seed"
                        .into(),
                }),
            },
            (ProbeSource::Given { log_det, .. }, false) => {
                self.lml_estimate_with_probes(log_det.clone())
            }
            (ProbeSource::Seed(seed), true) => self.lml_and_grad_estimate_with_seed(*seed),
            (ProbeSource::Seed(seed), false) => {
                let probes = self.draw(self.log_det_dim()?, *seed)?;
                self.estimate(probes, None)
            }
            (_, true) => self.lml_and_grad_estimate(),
            (_, false) => self.lml_estimate(),
        }
    }

    fn has_exact_lml(&self) -> bool {
        false
    }

    fn probe_seed(&self) -> u64 {
        self.options.estimator.seed
    }
}

impl<K: Kernel + Clone + Send + Sync> GridVariances for Gsgp<K> {
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

impl<K: Kernel + Clone + Send + Sync> std::fmt::Display for Gsgp<K> {
    /// The summary: data shape, grid, solver settings, hyperparameters.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = &self.options;
        let details = vec![
            format!(
                "grid {:?} ({} points), {} interpolation, sufficient statistics of {} points",
                self.grid().sizes(),
                self.grid().num_points(),
                o.grid.scheme.name(),
                self.n_train()
            ),
            format!(
                "{:?}, {} probes, tolerance {:e} (likelihood) / {:e} (mean) / {:e} (variances)",
                o.solver,
                o.estimator.probes,
                o.krylov.tolerance,
                o.krylov.prediction_tolerance,
                o.krylov.variance_tolerance
            ),
        ];
        write_summary(f, self, &details)
    }
}
