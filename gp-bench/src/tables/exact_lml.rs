//! `gp-bench bench exact-lml`: one Cholesky-based log marginal likelihood and gradient of the
//! exact GP (what every L-BFGS iteration costs), and `gp-bench bench exact-fit`: a whole
//! L-BFGS fit.

use gp_kernels::SquaredExponential;
use gp_models::{train, ExactGp, TrainOptions};

use crate::error::BenchError;
use crate::synthetic::smooth_regression;
use crate::table::{fmt_seconds, Table};
use crate::timing::{median_time, time_once};

/// Times `ExactGp::fit` followed by `lml_and_grad` (factor, inverse, one trace per
/// hyperparameter) for an ARD SE kernel at each `n`, with `d`-dimensional inputs.
pub fn lml_and_grad(sizes: &[usize], d: usize, reps: usize) -> Result<Table, BenchError> {
    let mut table = Table::new([
        "n",
        "d",
        "hyperparameters",
        "LML + gradient",
        "n³/3 GFLOP/s",
    ]);
    for &n in sizes {
        let (x, y) = smooth_regression(n, d, 0.01, n as u64);
        let kernel = SquaredExponential::isotropic(d, 0.5, 1.0)?;
        let (t, out) = median_time(reps, || {
            ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.01).map(|gp| gp.lml_and_grad())
        });
        let (_lml, grad) = out?;
        table.row([
            n.to_string(),
            d.to_string(),
            grad.len().to_string(),
            fmt_seconds(t),
            // Normalized by a single Cholesky's flops, as a machine-independent yardstick.
            format!("{:.1}", (n as f64).powi(3) / 3.0 / t / 1e9),
        ]);
    }
    Ok(table)
}

/// Times a full L-BFGS training of the exact GP (ARD SE, default [`TrainOptions`], one run)
/// at each `n` on `d`-dimensional data.
pub fn fit(sizes: &[usize], d: usize) -> Result<Table, BenchError> {
    let mut table = Table::new([
        "n",
        "d",
        "fit time",
        "iterations",
        "evaluations",
        "time / evaluation",
        "stop reason",
    ]);
    for &n in sizes {
        let (x, y) = smooth_regression(n, d, 0.01, n as u64);
        let kernel = SquaredExponential::isotropic(d, 1.0, 1.0)?;
        let (t, trained) = time_once(|| {
            ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.1)
                .and_then(|gp| train(&gp, &TrainOptions::default()))
        });
        let trained = trained?;
        let (iters, evals, reason) = match trained.report.best() {
            Some(b) => (b.iterations, b.evaluations, format!("{:?}", b.reason)),
            None => (0, 0, "no run succeeded".into()),
        };
        table.row([
            n.to_string(),
            d.to_string(),
            fmt_seconds(t),
            iters.to_string(),
            evals.to_string(),
            fmt_seconds(t / evals.max(1) as f64),
            reason,
        ]);
    }
    Ok(table)
}
