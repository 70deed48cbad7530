//! The KMCG metrics and run schedule (spec `kmcg.md` §3.1–3.2, §5 items 5 and 9, §6 items
//! 8–9): relative errors of the mean, the noisy predictive variance and the evidence against
//! the exact GP, SMSE for SOUND, the inducing-count rules, the recording schedule and the
//! repetition seeds.

use faer::Col;

use crate::error::BenchError;

/// Floor of the denominators of [`eps_f`] and [`eps_var`] (the authors' code).
pub const DENOMINATOR_FLOOR: f64 = 1e-8;

/// Seed of the first repetition; repetition `r` uses `12345 + r`.
pub const FIRST_SEED: u64 = 12_345;

/// Repetitions per (data set, kernel, method) in the paper.
pub const REPETITIONS: usize = 10;

/// Training-time budget in seconds after which a run stops (once `P > 100`).
pub const TIME_LIMIT_S: f64 = 120.0;

/// The step after which the time limit applies (`P > 100`).
pub const TIME_LIMIT_MIN_STEP: usize = 100;

fn check_lengths(what: &'static str, a: usize, b: usize) -> Result<(), BenchError> {
    if a != b || a == 0 {
        return Err(BenchError::InvalidArgument {
            name: what,
            reason: format!("need two non-empty vectors of equal length, got {a} and {b}"),
        });
    }
    Ok(())
}

/// Mean relative error `(1/n) Σ |exact_k − approx_k| / max(|exact_k|, 1e-8)`.
///
/// Errors: [`BenchError::InvalidArgument`] for empty or unequal lengths.
pub fn mean_relative_error(exact: &Col<f64>, approx: &Col<f64>) -> Result<f64, BenchError> {
    check_lengths("approx", exact.nrows(), approx.nrows())?;
    let n = exact.nrows();
    Ok((0..n)
        .map(|k| (exact[k] - approx[k]).abs() / exact[k].abs().max(DENOMINATOR_FLOOR))
        .sum::<f64>()
        / n as f64)
}

/// `ε_f` (Eq. 17): the mean relative error of the predictive mean against the exact mean.
///
/// Errors: as [`mean_relative_error`].
pub fn eps_f(exact_mean: &Col<f64>, approx_mean: &Col<f64>) -> Result<f64, BenchError> {
    mean_relative_error(exact_mean, approx_mean)
}

/// `ε_var`: the mean relative error of the predictive variance **including σ²**
/// (`v̄ = c̄ + σ²` and `v̂ = ĉ + σ²`; pass both with the noise added).
///
/// Errors: as [`mean_relative_error`].
pub fn eps_var(exact_var: &Col<f64>, approx_var: &Col<f64>) -> Result<f64, BenchError> {
    mean_relative_error(exact_var, approx_var)
}

/// `ε_ev = |nlZ_hat − nlZ| / |nlZ|` for the negative log evidences (no floor: the paper's
/// values are far from 0; a zero `nlz` gives infinity).
pub fn eps_ev(exact_nlz: f64, approx_nlz: f64) -> f64 {
    (approx_nlz - exact_nlz).abs() / exact_nlz.abs()
}

/// SMSE against the true targets: `mean_j (y_j − ŷ_j)² / var(y)` with the `N − 1` sample
/// variance (MATLAB `var`, §3.2).
///
/// Errors: [`BenchError::InvalidArgument`] for unequal lengths or fewer than two targets.
pub fn smse(y: &Col<f64>, pred: &Col<f64>) -> Result<f64, BenchError> {
    check_lengths("pred", y.nrows(), pred.nrows())?;
    let n = y.nrows();
    if n < 2 {
        return Err(BenchError::InvalidArgument {
            name: "y",
            reason: "SMSE needs at least two targets for the N − 1 variance".into(),
        });
    }
    let mse = (0..n).map(|j| (y[j] - pred[j]).powi(2)).sum::<f64>() / n as f64;
    let mean = y.iter().sum::<f64>() / n as f64;
    let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Ok(mse / var)
}

/// Inducing points of the baselines at step `p` on a dense set of `n` training points:
/// `m = ⌈√(n p)⌉`, capped at `n` (the authors' `DenseMatrix` rule).
pub fn inducing_count_dense(n: usize, p: usize) -> usize {
    let np = n as u128 * p as u128;
    // Integer ceil-sqrt, exact for every size (f64 sqrt then correction).
    let mut m = (np as f64).sqrt() as u128;
    while m * m < np {
        m += 1;
    }
    while m > 0 && (m - 1) * (m - 1) >= np {
        m -= 1;
    }
    (m as usize).min(n)
}

/// Inducing points of the baselines at step `p` on a structured set (grids, SOUND): `m = p`.
pub fn inducing_count_structured(p: usize) -> usize {
    p
}

/// Largest step of a run on `n` training points: `min(5000, n)`, or 500 when `n > 10⁵`.
pub fn max_steps(n: usize) -> usize {
    if n > 100_000 {
        500
    } else {
        n.min(5000)
    }
}

/// Whether step `p` (1-based) is recorded: every step below 200, then every 25th.
pub fn is_recorded(p: usize) -> bool {
    p < 200 || p.is_multiple_of(25)
}

/// The recorded steps `1..=p_max` ([`is_recorded`]).
pub fn recording_schedule(p_max: usize) -> Vec<usize> {
    (1..=p_max).filter(|&p| is_recorded(p)).collect()
}

/// The seeds of `count` repetitions: `12345, 12346, …` (the paper's ten are
/// `12345 … 12354`). Each repetition permutes the training set with its seed.
pub fn repetition_seeds(count: usize) -> Vec<u64> {
    (0..count as u64).map(|r| FIRST_SEED + r).collect()
}

/// Whether a run should stop on the time budget: more than [`TIME_LIMIT_S`] seconds of
/// measured training time after step [`TIME_LIMIT_MIN_STEP`].
pub fn time_limit_reached(p: usize, elapsed_s: f64) -> bool {
    p > TIME_LIMIT_MIN_STEP && elapsed_s > TIME_LIMIT_S
}
