//! IterNCGP predictive maps and metrics (spec §3.6, §3.7, U14, U15): torchmetrics' ECE example
//! and its binning rule, NLL and accuracy by hand, probit-softmax limits, the binary probit
//! against its formula, Gauss–Hermite exactness, the Poisson log predictive against the pmf,
//! a brute-force integral and Monte Carlo, the rate band, the memory arithmetic, and errors.

use gp_models::faer::{col, mat, Col, Mat};
use gp_models::ncgp::{
    accuracy, buffer_bytes, dense_system_bytes, expected_calibration_error,
    negative_log_likelihood, poisson_log_predictive, poisson_log_predictive_monte_carlo,
    poisson_rate_band, probit_binary, probit_softmax, GaussHermite, DEFAULT_GAUSS_HERMITE_NODES,
    ECE_BINS,
};
use gp_models::{ModelError, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

fn torchmetrics_example() -> (Mat<f64>, Vec<usize>) {
    (
        mat![
            [0.25, 0.20, 0.55],
            [0.55, 0.05, 0.40],
            [0.10, 0.30, 0.60],
            [0.90, 0.05, 0.05]
        ],
        vec![0, 1, 2, 0],
    )
}

#[test]
fn u14_ece_matches_the_torchmetrics_example() -> Result<()> {
    let (p, y) = torchmetrics_example();
    let ece = expected_calibration_error(p.as_ref(), &y, 3)?;
    assert!((ece - 0.2).abs() < 1e-6, "ECE = {ece}");
    assert_eq!(ECE_BINS, 15);
    // With 15 bins: .55, .55 share [8/15, 9/15) (acc 0), .60 is in [9/15, 10/15) (acc 1),
    // .90 in [13/15, 14/15) (acc 1): (2·.55 + .40 + .10) / 4.
    let ece15 = expected_calibration_error(p.as_ref(), &y, ECE_BINS)?;
    assert!(
        (ece15 - (1.1 + 0.4 + 0.1) / 4.0).abs() < 1e-12,
        "ECE15 = {ece15}"
    );
    Ok(())
}

#[test]
fn ece_bins_are_left_closed_and_confidence_one_has_its_own_bucket() -> Result<()> {
    // Bins of width 1/4. Confidence 0.5 is on a boundary: it goes to [0.5, 0.75) together with
    // 0.7 (left-closed), not to [0.25, 0.5) with 0.3.
    let p = mat![[0.5, 0.5], [0.3, 0.7], [1.0, 0.0], [0.45, 0.55]];
    // Predictions (ties to the lowest index): 0, 1, 0, 1; labels make 0.5 wrong, 0.7 right,
    // 1.0 right, 0.55 wrong.
    let y = [1, 1, 0, 0];
    let ece = expected_calibration_error(p.as_ref(), &y, 4)?;
    // Bucket [0.5, 0.75): {0.5 ✗, 0.7 ✓, 0.55 ✗}: acc 1/3, conf 1.75/3.
    // Bucket "1.0": {1.0 ✓}: acc 1, conf 1 → 0.
    let expected = 0.75 * (1.0 / 3.0 - 1.75 / 3.0f64).abs();
    assert!((ece - expected).abs() < 1e-15, "{ece} vs {expected}");

    // If 1.0 were merged into the last bin [0.75, 1] with 0.8 (✗), it would contribute
    // 0.5·|0.5 − 0.9|; in its own bucket only 0.8 contributes: 0.5·|0 − 0.8|.
    let p = mat![[0.8, 0.2], [1.0, 0.0]];
    let ece = expected_calibration_error(p.as_ref(), &[1, 0], 4)?;
    assert!((ece - 0.4).abs() < 1e-15, "{ece}");

    // Which side of a boundary: with 2 bins, 0.49 is in [0, 0.5) and 0.5 in [0.5, 1).
    let p = mat![[0.49, 0.26, 0.25], [0.5, 0.25, 0.25]];
    // 0.49 right (label 0): ½·|1 − 0.49|; 0.5 wrong (label 1): ½·|0 − 0.5|. Were the bins
    // right-closed, both would share [0, 0.5] and give |½ − 0.495| = 0.005.
    let ece = expected_calibration_error(p.as_ref(), &[0, 1], 2)?;
    assert!((ece - 0.505).abs() < 1e-15, "{ece}");
    Ok(())
}

#[test]
fn nll_and_accuracy_by_hand() -> Result<()> {
    let (p, y) = torchmetrics_example();
    let nll = negative_log_likelihood(p.as_ref(), &y)?;
    let by_hand = -(0.25f64.ln() + 0.05f64.ln() + 0.60f64.ln() + 0.90f64.ln()) / 4.0;
    assert!(nll > 0.0);
    assert!((nll - by_hand).abs() < 1e-15, "{nll} vs {by_hand}");
    assert_eq!(accuracy(p.as_ref(), &y)?, 0.5);

    // Ties go to the lowest index.
    let p = mat![
        [0.4, 0.4, 0.2],
        [0.2, 0.4, 0.4],
        [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]
    ];
    assert_eq!(accuracy(p.as_ref(), &[0, 1, 0])?, 1.0);
    assert_eq!(accuracy(p.as_ref(), &[1, 2, 2])?, 0.0);

    // A zero probability of the label gives +∞.
    let p = mat![[1.0, 0.0], [0.5, 0.5]];
    assert_eq!(negative_log_likelihood(p.as_ref(), &[1, 0])?, f64::INFINITY);
    assert_eq!(
        negative_log_likelihood(p.as_ref(), &[0, 0])?,
        0.5 * 2f64.ln()
    );
    Ok(())
}

#[test]
fn u14_probit_softmax_limits() -> Result<()> {
    let m = mat![[3.0, -2.0, 0.5], [700.0, -700.0, 0.0], [0.0, 0.0, 0.0]];
    let p = probit_softmax(m.as_ref(), Mat::zeros(3, 3).as_ref())?;
    for i in 0..3 {
        let max = (0..3).map(|k| m[(i, k)]).fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = (0..3).map(|k| (m[(i, k)] - max).exp()).sum();
        for k in 0..3 {
            let softmax = (m[(i, k)] - max).exp() / z;
            assert!((p[(i, k)] - softmax).abs() < 1e-15, "({i}, {k})");
        }
        let row: f64 = (0..3).map(|k| p[(i, k)]).sum();
        assert!((row - 1.0).abs() < 1e-15);
    }
    // The variance shrinks each logit by 1/sqrt(1 + πv/8).
    let v = mat![[1.0, 2.0, 0.5]];
    let p = probit_softmax(m.as_ref().subrows(0, 1), v.as_ref())?;
    let z: Vec<f64> = (0..3)
        .map(|k| m[(0, k)] / (1.0 + std::f64::consts::PI / 8.0 * v[(0, k)]).sqrt())
        .collect();
    let total: f64 = z.iter().map(|t| t.exp()).sum();
    for k in 0..3 {
        assert!((p[(0, k)] - z[k].exp() / total).abs() < 1e-15);
    }
    // Huge variance: uniform.
    let p = probit_softmax(m.as_ref().subrows(0, 1), Mat::full(1, 3, 1e9).as_ref())?;
    for k in 0..3 {
        assert!((p[(0, k)] - 1.0 / 3.0).abs() < 1e-3, "{}", p[(0, k)]);
    }
    // No points: an empty result.
    let p = probit_softmax(Mat::zeros(0, 4).as_ref(), Mat::zeros(0, 4).as_ref())?;
    assert_eq!(p.shape(), (0, 4));
    Ok(())
}

#[test]
fn probit_binary_matches_mackay_and_is_symmetric() -> Result<()> {
    let means = [-700.0, -40.0, -3.0, -0.5, 0.0, 0.25, 2.0, 37.0, 800.0];
    let vars = [0.0, 0.1, 1.0, 4.0, 100.0, 0.0, 2.5, 0.3, 1e6];
    let m = Col::from_fn(means.len(), |i| means[i]);
    let v = Col::from_fn(vars.len(), |i| vars[i]);
    let p = probit_binary(m.as_ref(), v.as_ref())?;
    let neg = probit_binary((-&m).as_ref(), v.as_ref())?;
    for i in 0..means.len() {
        let t = means[i] / (1.0 + std::f64::consts::PI * vars[i] / 8.0).sqrt();
        let direct = 1.0 / (1.0 + (-t).exp());
        assert!((p[(i, 1)] - direct).abs() < 1e-15, "p({})", means[i]);
        // Column 0 is accurate in relative terms even when p ≈ 1.
        let lower = 1.0 / (1.0 + t.exp());
        assert!(
            (p[(i, 0)] - lower).abs() <= 1e-14 * lower,
            "1 − p({})",
            means[i]
        );
        assert_eq!(p[(i, 0)], neg[(i, 1)]);
        assert_eq!(p[(i, 1)], neg[(i, 0)]);
        assert!(p[(i, 0)].is_finite() && p[(i, 1)].is_finite());
    }
    assert!(p[(0, 1)] > 0.0 && p[(8, 0)] > 0.0);
    Ok(())
}

/// `E[(μ + σZ)^k]` by the binomial expansion with `E Z^j = (j − 1)!!` for even `j`.
fn normal_moment(mu: f64, sigma: f64, k: u32) -> f64 {
    let mut total = 0.0;
    let mut binom = 1.0;
    let mut double_fact = 1.0; // (j − 1)!! for even j
    for j in 0..=k {
        if j > 0 {
            binom = binom * f64::from(k - j + 1) / f64::from(j);
        }
        if j % 2 == 0 {
            if j > 0 {
                double_fact *= f64::from(j - 1);
            }
            total += binom * mu.powi((k - j) as i32) * sigma.powi(j as i32) * double_fact;
        }
    }
    total
}

#[test]
fn gauss_hermite_is_exact_for_polynomials_up_to_degree_2n_minus_1() -> Result<()> {
    for &n in &[1usize, 2, 5, 10, 20] {
        let gh = GaussHermite::new(n)?;
        assert_eq!(gh.nodes().len(), n);
        let sum: f64 = gh.weights().iter().sum();
        assert!((sum - 1.0).abs() < 1e-14, "n = {n}: Σw = {sum}");
        for &(mu, sigma) in &[(0.0, 1.0), (0.7, 1.3), (-2.0, 0.5)] {
            for k in 0..(2 * n as u32) {
                let exact = normal_moment(mu, sigma, k);
                let quad = gh.expectation(mu, sigma * sigma, |f| f.powi(k as i32));
                if exact == 0.0 {
                    // Odd moments of a centred normal: relative to E|F|^k.
                    let scale = gh.expectation(mu, sigma * sigma, |f| f.abs().powi(k as i32));
                    assert!(quad.abs() <= 1e-12 * scale, "n = {n}, k = {k}: {quad}");
                } else {
                    let rel = (quad - exact).abs() / exact.abs();
                    assert!(
                        rel < 1e-12,
                        "n = {n}, μ = {mu}, σ = {sigma}, k = {k}: rel {rel:e}"
                    );
                }
            }
        }
    }
    // Many nodes: weights still sum to one, the log weights stay finite and agree.
    for &n in &[DEFAULT_GAUSS_HERMITE_NODES, 200] {
        let gh = GaussHermite::new(n)?;
        let sum: f64 = gh.weights().iter().sum();
        assert!((sum - 1.0).abs() < 1e-14, "n = {n}: Σw = {sum}");
        assert!(gh.log_weights().iter().all(|lw| lw.is_finite()));
        for (w, lw) in gh.weights().iter().zip(gh.log_weights()) {
            assert!((w - lw.exp()).abs() <= 1e-15 * w.max(1e-300));
        }
        let var = gh.expectation(0.0, 1.0, |f| f * f);
        assert!((var - 1.0).abs() < 1e-13, "n = {n}: {var}");
        // E cos(Z) = e^{−1/2}: a smooth non-polynomial.
        let c = gh.expectation(0.0, 1.0, f64::cos);
        assert!((c - (-0.5f64).exp()).abs() < 1e-14, "n = {n}: {c}");
    }
    // E exp(a Z) = e^{a²/2}, also in log space where exp would overflow.
    let gh = GaussHermite::new(DEFAULT_GAUSS_HERMITE_NODES)?;
    let lme = gh.log_expectation_of_exp(0.0, 1.0, |f| 3.0 * f);
    assert!((lme - 4.5).abs() < 1e-12, "{lme}");
    let lme = gh.log_expectation_of_exp(1.0, 4.0, |f| -800.0 + 0.5 * f);
    assert!((lme - (-800.0 + 0.5 + 0.5)).abs() < 1e-12, "{lme}");
    assert_eq!(
        gh.log_expectation_of_exp(0.0, 1.0, |_| f64::NEG_INFINITY),
        f64::NEG_INFINITY
    );
    Ok(())
}

fn ln_poisson(f: f64, count: u64) -> f64 {
    let ln_fact: f64 = (2..=count).map(|k| (k as f64).ln()).sum();
    count as f64 * f - f.exp() - ln_fact
}

#[test]
fn poisson_log_predictive_against_pmf_integral_and_monte_carlo() -> Result<()> {
    let gh = GaussHermite::new(DEFAULT_GAUSS_HERMITE_NODES)?;
    // Zero (or negligible) variance: the log pmf at rate e^mean.
    for &(m, count) in &[
        (1.5, 4u64),
        (-2.0, 0),
        (0.3, 17),
        (4.0, 170),
        (5.0, 171),
        (3.0, 500),
    ] {
        let exact = ln_poisson(m, count);
        for &v in &[0.0, 1e-300] {
            let lp = poisson_log_predictive(m, v, count, &gh);
            assert!(
                (lp - exact).abs() < 1e-12 * exact.abs().max(1.0),
                "m = {m}, count = {count}, v = {v}: {lp} vs {exact}"
            );
        }
    }
    // Brute force: a fine trapezoid rule over f ∈ μ ± 14σ.
    let (m, v, count) = (1.5, 0.3, 4u64);
    let sd = f64::sqrt(v);
    let steps = 200_000;
    let (lo, hi) = (m - 14.0 * sd, m + 14.0 * sd);
    let h = (hi - lo) / steps as f64;
    let mut integral = 0.0;
    for i in 0..=steps {
        let f = lo + h * i as f64;
        let density =
            (-0.5 * (f - m) * (f - m) / v).exp() / (2.0 * std::f64::consts::PI * v).sqrt();
        let weight = if i == 0 || i == steps { 0.5 } else { 1.0 };
        integral += weight * ln_poisson(f, count).exp() * density;
    }
    let brute = (integral * h).ln();
    let quad = poisson_log_predictive(m, v, count, &gh);
    assert!((quad - brute).abs() < 1e-9, "{quad} vs {brute}");

    // Tiny probabilities stay finite in log space.
    let tiny = poisson_log_predictive(-5.0, 0.01, 150, &gh);
    assert!(tiny.is_finite() && tiny < -700.0, "{tiny}");

    // Monte Carlo with the paper's 10⁵ samples: within 4 standard errors of the quadrature.
    let samples = 100_000;
    let mut rng = ChaCha8Rng::seed_from_u64(20_240_517);
    let mc = poisson_log_predictive_monte_carlo(m, v, count, samples, &mut rng);
    // The standard error of the log of a sample mean of p = Poisson(count; e^F), by the
    // delta method, from an independent draw.
    let normal = Normal::new(m, sd).map_err(|e| ModelError::InvalidOption {
        name: "test normal",
        reason: e.to_string(),
    })?;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let draws: Vec<f64> = (0..samples)
        .map(|_| ln_poisson(normal.sample(&mut rng), count).exp())
        .collect();
    let mean = draws.iter().sum::<f64>() / samples as f64;
    let var = draws.iter().map(|p| (p - mean) * (p - mean)).sum::<f64>() / (samples - 1) as f64;
    let se = var.sqrt() / (mean * (samples as f64).sqrt());
    assert!(
        (mc - quad).abs() < 4.0 * se,
        "MC {mc} vs quadrature {quad} (se {se:e})"
    );
    assert!(se < 1e-2);
    // Degenerate inputs give NaN, not a panic.
    assert!(poisson_log_predictive_monte_carlo(m, v, count, 0, &mut rng).is_nan());
    assert!(poisson_log_predictive_monte_carlo(m, -1.0, count, 10, &mut rng).is_nan());
    Ok(())
}

#[test]
fn poisson_rate_band_is_the_exponential_of_normal_percentiles() {
    let band = poisson_rate_band(0.5, 0.25);
    assert!((band.lower - (0.5f64 - 0.98).exp()).abs() < 1e-15);
    assert!((band.median - 0.5f64.exp()).abs() < 1e-15);
    assert!((band.upper - (0.5f64 + 0.98).exp()).abs() < 1e-15);
    let point = poisson_rate_band(1.0, 0.0);
    assert_eq!(
        (point.lower, point.median, point.upper),
        (1f64.exp(), 1f64.exp(), 1f64.exp())
    );
}

#[test]
fn u15_memory_arithmetic() {
    assert_eq!(dense_system_bytes(100_000, 10), 8.0e12);
    assert_eq!(dense_system_bytes(2000, 10), 3.2e9);
    // 8 MB per buffer column at N = 10⁵, C = 10; three buffers of 50 columns.
    assert_eq!(buffer_bytes(100_000, 10, 1, 1), 8.0e6);
    assert_eq!(buffer_bytes(100_000, 10, 50, 3), 1.2e9);
}

#[test]
fn bad_inputs_are_errors() {
    let (p, y) = torchmetrics_example();
    let short = [0usize, 1, 2];
    assert!(matches!(
        accuracy(p.as_ref(), &short),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        negative_log_likelihood(p.as_ref(), &[0, 1, 3, 0]),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        expected_calibration_error(p.as_ref(), &y, 0),
        Err(ModelError::InvalidOption { .. })
    ));
    let empty = Mat::<f64>::zeros(0, 3);
    assert!(accuracy(empty.as_ref(), &[]).is_err());
    assert!(expected_calibration_error(empty.as_ref(), &[], 15).is_err());
    let mut bad = p.clone();
    bad[(1, 2)] = f64::NAN;
    assert!(matches!(
        expected_calibration_error(bad.as_ref(), &y, 15),
        Err(ModelError::NonFinite { row: 1, col: 2, .. })
    ));
    bad[(1, 2)] = -0.1;
    assert!(negative_log_likelihood(bad.as_ref(), &y).is_err());

    let m = mat![[0.0, 1.0]];
    assert!(matches!(
        probit_softmax(m.as_ref(), mat![[0.0, 1.0, 2.0]].as_ref()),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        probit_softmax(m.as_ref(), mat![[0.0, 1.0], [0.0, 1.0]].as_ref()),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        probit_softmax(m.as_ref(), mat![[0.0, -1.0]].as_ref()),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        probit_softmax(m.as_ref(), mat![[0.0, f64::INFINITY]].as_ref()),
        Err(ModelError::NonFinite { .. })
    ));
    assert!(matches!(
        probit_softmax(mat![[f64::NAN, 0.0]].as_ref(), mat![[0.0, 0.0]].as_ref()),
        Err(ModelError::NonFinite { .. })
    ));
    assert!(probit_softmax(Mat::zeros(2, 0).as_ref(), Mat::zeros(2, 0).as_ref()).is_err());
    assert!(probit_binary(col![0.0, 1.0].as_ref(), col![0.0].as_ref()).is_err());
    assert!(probit_binary(col![0.0].as_ref(), col![-1e-3].as_ref()).is_err());
    assert!(probit_binary(col![f64::NAN].as_ref(), col![0.0].as_ref()).is_err());
    assert!(GaussHermite::new(0).is_err());
    assert!(GaussHermite::new(201).is_err());
    assert!(GaussHermite::new(200).is_ok());
}
