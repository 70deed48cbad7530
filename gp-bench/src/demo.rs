//! `gp-bench demo`: the exact GP on a synthetic data set drawn from a known GP, trained by
//! L-BFGS, with the learned hyperparameters beside the true ones and test metrics.

use faer::{Col, ColRef};
use gp_kernels::{Kernel, SquaredExponential};
use gp_models::{train, ExactGp, TrainOptions, TrainStart};
use gp_models::{GpModel, PredictRequest};

use crate::error::BenchError;
use crate::synthetic::gp_regression;
use crate::table::{fmt_seconds, Table};
use crate::timing::time_once;

/// Settings of the demo.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoOptions {
    /// Training points.
    pub n_train: usize,
    /// Test points.
    pub n_test: usize,
    /// True ARD length scales (their count is the input dimension).
    pub lengthscales: Vec<f64>,
    /// True output variance.
    pub variance: f64,
    /// True noise variance.
    pub noise_variance: f64,
    /// L-BFGS restarts beyond the first run.
    pub restarts: usize,
    /// Seed of the data and of the restarts.
    pub seed: u64,
}

impl Default for DemoOptions {
    fn default() -> Self {
        Self {
            n_train: 1000,
            n_test: 500,
            lengthscales: vec![0.2, 0.4, 0.8],
            variance: 1.0,
            noise_variance: 0.01,
            restarts: 1,
            seed: 0,
        }
    }
}

/// The demo's result: two tables (hyperparameters, metrics) and the raw figures.
#[derive(Debug, Clone)]
pub struct DemoReport {
    /// Truth, initial and learned value of each hyperparameter.
    pub hyperparameters: Table,
    /// LML, test errors, calibration and timing.
    pub metrics: Table,
    /// Test RMSE of the learned model against the noise-free latent function.
    pub latent_rmse: f64,
    /// Fraction of noisy test targets inside the 95% predictive interval.
    pub coverage95: f64,
}

/// Mean negative log predictive density of Gaussian predictions.
fn mean_nlpd(y: ColRef<'_, f64>, mean: ColRef<'_, f64>, var: ColRef<'_, f64>) -> f64 {
    let n = y.nrows() as f64;
    (0..y.nrows())
        .map(|i| {
            let r = y[i] - mean[i];
            0.5 * ((2.0 * std::f64::consts::PI * var[i]).ln() + r * r / var[i])
        })
        .sum::<f64>()
        / n
}

fn rmse(a: ColRef<'_, f64>, b: ColRef<'_, f64>) -> f64 {
    let d: Col<f64> = a - b;
    (d.squared_norm_l2() / a.nrows() as f64).sqrt()
}

/// Draws the data, fits the exact GP from deliberately wrong hyperparameters, trains it and
/// evaluates it on the test points.
pub fn run(options: &DemoOptions) -> Result<DemoReport, BenchError> {
    let d = options.lengthscales.len();
    let truth = SquaredExponential::new(options.lengthscales.clone(), options.variance)?;
    let data = gp_regression(
        &truth,
        options.n_train,
        options.n_test,
        options.noise_variance,
        options.seed,
    )?;
    let x = data.x_train.as_ref();
    let y = data.y_train.as_ref();

    // Start from length scale 1, unit variance and noise 0.1: wrong on purpose.
    let initial = SquaredExponential::isotropic(d, 1.0, 1.0)?;
    let gp0 = ExactGp::fit(initial.clone(), x, y, 0.1)?;
    let at_truth = ExactGp::fit(truth.clone(), x, y, options.noise_variance)?;
    let train_options = TrainOptions {
        restarts: options.restarts,
        seed: options.seed,
        // The demo shows recovery from that wrong start, not from the data-based one.
        start: TrainStart::Model,
        ..TrainOptions::default()
    };
    let (fit_time, trained) = time_once(|| train(&gp0, &train_options));
    let trained = trained?;
    let gp = trained.model;

    let names = gp.param_names();
    let true_p: Vec<f64> = truth
        .log_params()
        .into_iter()
        .chain(std::iter::once(options.noise_variance.ln()))
        .collect();
    let mut hyperparameters = Table::new(["hyperparameter", "truth", "initial", "learned"]);
    for (i, name) in names.iter().enumerate() {
        let natural = name.trim_start_matches("log_").to_string();
        hyperparameters.row([
            natural,
            format!("{:.4}", true_p[i].exp()),
            format!("{:.4}", gp0.log_params()[i].exp()),
            format!("{:.4}", gp.log_params()[i].exp()),
        ]);
    }

    let (predict_time, pred) =
        time_once(|| gp.predict(data.x_test.as_ref(), &PredictRequest::default()));
    let pred = pred?;
    let latent_rmse = rmse(pred.mean.as_ref(), data.f_test.as_ref());
    let inside = (0..options.n_test)
        .filter(|&i| (data.y_test[i] - pred.mean[i]).abs() <= 1.96 * pred.variance[i].sqrt())
        .count();
    let coverage95 = inside as f64 / options.n_test.max(1) as f64;
    let best = trained.report.best();
    let iterations: usize = trained
        .report
        .runs
        .iter()
        .filter_map(|r| r.outcome.as_ref().ok())
        .map(|r| r.iterations)
        .sum();

    let mut metrics = Table::new(["metric", "value"]);
    metrics
        .row(["training points n".to_string(), options.n_train.to_string()])
        .row(["test points".to_string(), options.n_test.to_string()])
        .row(["input dimension d".to_string(), d.to_string()])
        .row([
            "log marginal likelihood: initial / learned / truth".to_string(),
            format!(
                "{:.2} / {:.2} / {:.2}",
                gp0.log_marginal_likelihood(),
                gp.log_marginal_likelihood(),
                at_truth.log_marginal_likelihood()
            ),
        ])
        .row([
            "test RMSE vs noisy y (noise sd)".to_string(),
            format!(
                "{:.4} ({:.4})",
                rmse(pred.mean.as_ref(), data.y_test.as_ref()),
                options.noise_variance.sqrt()
            ),
        ])
        .row([
            "test RMSE vs latent f".to_string(),
            format!("{latent_rmse:.4}"),
        ])
        .row([
            "mean NLPD (noisy y)".to_string(),
            format!(
                "{:.4}",
                mean_nlpd(
                    data.y_test.as_ref(),
                    pred.mean.as_ref(),
                    pred.variance.as_ref()
                )
            ),
        ])
        .row([
            "95% interval coverage".to_string(),
            format!("{:.1}%", 100.0 * coverage95),
        ])
        .row([
            "L-BFGS runs / total iterations".to_string(),
            format!("{} / {iterations}", trained.report.runs.len()),
        ])
        .row([
            "best run stop reason".to_string(),
            best.map(|b| format!("{:?}", b.reason))
                .unwrap_or_else(|| "no run succeeded".into()),
        ])
        .row(["training time".to_string(), fmt_seconds(fit_time)])
        .row(["prediction time".to_string(), fmt_seconds(predict_time)])
        .row(["Cholesky jitter".to_string(), format!("{:e}", gp.jitter())]);
    Ok(DemoReport {
        hyperparameters,
        metrics,
        latent_rmse,
        coverage95,
    })
}
