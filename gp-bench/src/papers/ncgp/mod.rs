//! IterNCGP: computation-aware Newton for non-conjugate GPs (Tatzel, Wenger, Schneider &
//! Hennig), spec `shared/specs/ncgp.md`. The paper has no result tables: its results are
//! figures and statements in the text, which the experiments here check (spec §5.2).

use std::time::{Duration, Instant};

use faer::Col;
use gp_linalg::LinearOperator;
use gp_models::ncgp::{InnerProgress, IterNcgpPosterior};

use super::Paper;
use crate::error::BenchError;

// Experiment modules (one file each).
pub mod binary;
mod common;
mod gmm;
pub mod illustration;
mod mnist;
pub mod poisson;
mod ski;

/// The paper and its experiments.
pub fn paper() -> Paper {
    let experiments: Vec<Box<dyn crate::experiment::Experiment>> = vec![
        // Registered experiments.
        Box::new(illustration::NewtonIllustration),
        Box::new(binary::BinaryClassification),
        Box::new(poisson::PoissonSchedules),
        Box::new(gmm::GaussianMixture),
        Box::new(mnist::MnistClassification),
        Box::new(ski::SkiClassification),
    ];
    Paper {
        key: "ncgp",
        title: "IterNCGP — Tatzel, Wenger, Schneider & Hennig, Accelerating Non-Conjugate Gaussian Processes by Trading Off Computation for Uncertainty",
        spec: "shared/specs/ncgp.md",
        pending: "the SVGP baseline (no peer script yet)",
        quick_budget_seconds: 15.0, // 12.2 s measured (2-core machine, quiet)
        experiments,
    }
}

/// Latent means and variances at the training inputs of the belief an observer sees:
/// `m + K v` and `diag K − diag(K Q Qᵀ K)`, with `K` the training covariance (which is also
/// the cross-covariance, since the points are the training points) and zero prior mean.
fn training_marginals(
    kx: &dyn LinearOperator,
    prior_variance: &Col<f64>,
    progress: &InnerProgress<'_>,
) -> Result<(Vec<f64>, Vec<f64>), BenchError> {
    let posterior =
        IterNcgpPosterior::new(progress.weights.to_owned(), progress.root.to_owned(), 1)?;
    let marg = posterior.predict(kx, prior_variance.as_ref(), None)?;
    let n = marg.mean.nrows();
    Ok((
        (0..n).map(|i| marg.mean[(i, 0)]).collect(),
        (0..n).map(|i| marg.variance[(i, 0)]).collect(),
    ))
}

/// The median (the mean of the two middle values for even lengths; `+∞` entries sort last,
/// so a majority of diverged runs gives `+∞`); `NaN` for an empty slice.
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

/// Wall time of a run minus the time its observer spent on metrics (the paper does not time
/// the NLL evaluation either): start it, add every observer call with [`Self::observe`].
struct MetricClock {
    start: Instant,
    in_observer: Duration,
}

impl MetricClock {
    fn start() -> Self {
        Self {
            start: Instant::now(),
            in_observer: Duration::ZERO,
        }
    }

    /// Runs `f` and books its time as observer time.
    fn observe<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.in_observer += t.elapsed();
        out
    }

    /// Seconds since the start, observer time excluded.
    fn solver_seconds(&self) -> f64 {
        self.start
            .elapsed()
            .saturating_sub(self.in_observer)
            .as_secs_f64()
    }
}

/// `yes`/`no` for tables.
fn yes_no(met: bool) -> &'static str {
    if met {
        "yes"
    } else {
        "no"
    }
}
