//! The bias of truncated CG / truncated SLQ (RTGPS Theorem 1, spec rtgps.md §4).
//!
//! After `J < n` CG (= Lanczos) steps from `x₀ = 0`:
//!
//! * the data fit is underestimated: `yᵀx_J ≤ yᵀK̂⁻¹y` (the gap is `‖x* − x_J‖²_K̂`), and
//!   `yᵀx_J` is nondecreasing in `J`;
//! * the SLQ log determinant is overestimated **for every probe**: `‖z‖² e₁ᵀ log(T_J) e₁ ≥
//!   zᵀ log(K̂) z` (Gauss quadrature of `log`, whose even derivatives are negative), and it is
//!   nonincreasing in `J`; hence `E[SLQ_J] ≥ log det K̂`.
//!
//! In `log p(y) = −½ yᵀK̂⁻¹y − ½ log det K̂ − …` the two biases have opposite signs: the
//! data-fit term is biased up, the complexity term down. Truncating only the Lanczos
//! quadrature (CG solved to a tight tolerance) therefore biases the log-likelihood estimate
//! downwards; the net sign under full truncation is not fixed by the theorem.
//!
//! Without a preconditioner the probes are Rademacher, so `‖z‖² = n` exactly and the
//! per-probe inequality is deterministic.

use crate::common;

use common::toy_data;
use faer::{Col, Mat};
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::SymmetricEigen;
use gp_models::{EstimatorSettings, KrylovSettings};
use gp_models::{ExactGp, IterativeGp, IterativeOptions, LmlEstimate};
use gp_solvers::{ProbeOptions, Probes};

const N: usize = 250;
const PROBES: usize = 10;

struct Setup {
    x: Mat<f64>,
    y: Col<f64>,
    kernel: SquaredExponential,
    noise: f64,
    exact: ExactGp<SquaredExponential>,
    /// `log K̂` (dense).
    log_k: Mat<f64>,
}

/// An ill-conditioned system (small noise), so that a few CG steps are far from converged.
fn setup() -> Setup {
    let (x, y) = toy_data(N, 2, 3.0, 21);
    let kernel = SquaredExponential::new(vec![0.6, 0.9], 1.3).unwrap();
    let noise = 1e-2;
    let exact = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), noise).unwrap();
    let mut k = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    for i in 0..N {
        k[(i, i)] += noise;
    }
    let eig = SymmetricEigen::new(k.as_ref()).unwrap();
    let log_k = Mat::from_fn(N, N, |i, j| {
        (0..N)
            .map(|m| eig.vectors[(i, m)] * eig.values[m].ln() * eig.vectors[(j, m)])
            .sum()
    });
    Setup {
        x,
        y,
        kernel,
        noise,
        exact,
        log_k,
    }
}

/// Plain CG (no preconditioner, Rademacher probes) stopped after exactly `cg` iterations,
/// SLQ on the first `lanczos` steps.
fn truncated(s: &Setup, cg: usize, lanczos: Option<usize>, seed: u64) -> LmlEstimate {
    let opts = IterativeOptions {
        krylov: KrylovSettings {
            tolerance: 0.0,
            max_iterations: cg,
            min_iterations: 0,
            ..KrylovSettings::default()
        },
        estimator: EstimatorSettings {
            probes: PROBES,
            ..EstimatorSettings::default()
        },
        max_lanczos_iterations: lanczos,
        preconditioner_rank: 0,
        ..IterativeOptions::default()
    };
    let gp =
        IterativeGp::fit_with_options(s.kernel.clone(), s.x.as_ref(), s.y.as_ref(), s.noise, &opts)
            .unwrap();
    gp.lml_and_grad_estimate_with_seed(seed).unwrap()
}

/// CG to a tight tolerance, SLQ capped at `lanczos` steps.
fn lanczos_only(s: &Setup, lanczos: Option<usize>, seed: u64) -> LmlEstimate {
    let opts = IterativeOptions {
        krylov: KrylovSettings {
            tolerance: 1e-11,
            ..KrylovSettings::default()
        },
        estimator: EstimatorSettings {
            probes: PROBES,
            ..EstimatorSettings::default()
        },
        max_lanczos_iterations: lanczos,
        preconditioner_rank: 0,
        ..IterativeOptions::default()
    };
    let gp =
        IterativeGp::fit_with_options(s.kernel.clone(), s.x.as_ref(), s.y.as_ref(), s.noise, &opts)
            .unwrap();
    gp.lml_and_grad_estimate_with_seed(seed).unwrap()
}

fn exact_fit(s: &Setup) -> f64 {
    (0..N).map(|i| s.y[i] * s.exact.alpha()[i]).sum()
}

fn exact_log_det(s: &Setup) -> f64 {
    s.exact.cholesky().log_det()
}

/// `zᵀ log(K̂) z` for each probe of `seed` (the probes the model draws: Rademacher,
/// ChaCha8 from the seed).
fn exact_probe_terms(s: &Setup, seed: u64) -> Vec<f64> {
    let probes = Probes::generate(
        N,
        None,
        &ProbeOptions {
            count: PROBES,
            seed,
            ..ProbeOptions::default()
        },
    )
    .unwrap();
    let z = probes.matrix();
    (0..PROBES)
        .map(|i| z.col(i).transpose() * &s.log_k * z.col(i))
        .collect()
}

#[test]
fn data_fit_is_underestimated_and_increases_with_iterations() {
    let s = setup();
    let exact = exact_fit(&s);
    let mut previous = 0.0;
    for j in 1..=15 {
        let fit = truncated(&s, j, None, 0).data_fit;
        assert!(
            fit <= exact * (1.0 + 1e-10),
            "J = {j}: {fit} > exact {exact}"
        );
        assert!(
            fit >= previous * (1.0 - 1e-12),
            "J = {j}: {fit} < {previous}"
        );
        previous = fit;
    }
    // Far from converged at J = 5: a clear gap.
    let fit5 = truncated(&s, 5, None, 0).data_fit;
    assert!(exact - fit5 > 1e-3 * exact, "gap {}", exact - fit5);
}

#[test]
fn slq_overestimates_every_probe_and_decreases_with_lanczos_steps() {
    let s = setup();
    for seed in 0..3 {
        let exact = exact_probe_terms(&s, seed);
        let mut previous: Option<Vec<f64>> = None;
        for j in 1..=12 {
            // One CG run of 12 iterations, quadrature on its first j steps.
            let est = truncated(&s, 12, Some(j), seed);
            let terms = &est.log_det.per_probe;
            for (i, (v, e)) in terms.iter().zip(&exact).enumerate() {
                assert!(
                    *v >= e - 1e-9 * e.abs(),
                    "seed {seed}, J = {j}, probe {i}: quadrature {v} < zᵀ log(K̂) z = {e}"
                );
            }
            if let Some(prev) = &previous {
                for (i, (v, p)) in terms.iter().zip(prev).enumerate() {
                    assert!(
                        *v <= p + 1e-9 * p.abs(),
                        "seed {seed}, J = {j}, probe {i}: {v} > previous {p}"
                    );
                }
            }
            previous = Some(terms.clone());
        }
    }
}

/// Mean over seeds of `value − exact` and the standard error of that mean (from the
/// reported per-seed standard errors).
fn seed_average(runs: &[(f64, f64)], exact: f64) -> (f64, f64) {
    let m = runs.len() as f64;
    let mean = runs.iter().map(|(v, _)| v - exact).sum::<f64>() / m;
    let se = runs.iter().map(|(_, se)| se * se).sum::<f64>().sqrt() / m;
    (mean, se)
}

#[test]
fn truncated_log_det_is_biased_up_and_the_likelihood_down() {
    let s = setup();
    let seeds = 0..8u64;
    let log_det = exact_log_det(&s);
    let lml = s.exact.log_marginal_likelihood();

    // Control: converged CG, no cap — unbiased within a few standard errors.
    let full: Vec<LmlEstimate> = seeds.clone().map(|k| lanczos_only(&s, None, k)).collect();
    let (bias, se) = seed_average(
        &full
            .iter()
            .map(|e| (e.log_det.value, e.log_det.std_error))
            .collect::<Vec<_>>(),
        log_det,
    );
    assert!(bias.abs() < 4.0 * se, "converged: bias {bias}, se {se}");

    // Full truncation (5 CG steps): log det biased up by many standard errors.
    let runs: Vec<LmlEstimate> = seeds.clone().map(|k| truncated(&s, 5, None, k)).collect();
    let (bias, se) = seed_average(
        &runs
            .iter()
            .map(|e| (e.log_det.value, e.log_det.std_error))
            .collect::<Vec<_>>(),
        log_det,
    );
    assert!(bias > 6.0 * se, "5 CG steps: log det bias {bias}, se {se}");
    // Net effect on the log likelihood under full truncation: not fixed by the theorem (the
    // data-fit gap pushes the other way), but here — as typically — the log-determinant
    // gap dominates (about 330 against 21), so the estimate is biased down as well.
    let (lml_bias, lml_se) = seed_average(
        &runs
            .iter()
            .map(|e| (e.lml, e.lml_std_error))
            .collect::<Vec<_>>(),
        lml,
    );
    assert!(
        lml_bias < -6.0 * lml_se,
        "5 CG steps: LML bias {lml_bias}, se {lml_se}"
    );

    // Lanczos truncation only (data fit exact): the log likelihood is biased down.
    let runs: Vec<LmlEstimate> = seeds.map(|k| lanczos_only(&s, Some(5), k)).collect();
    for e in &runs {
        assert!((e.data_fit - exact_fit(&s)).abs() < 1e-8 * exact_fit(&s));
    }
    let (bias, se) = seed_average(
        &runs
            .iter()
            .map(|e| (e.lml, e.lml_std_error))
            .collect::<Vec<_>>(),
        lml,
    );
    assert!(
        bias < -6.0 * se,
        "5 Lanczos steps: LML bias {bias}, se {se}"
    );
}
