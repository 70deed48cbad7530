//! The GP-GRIEF data-space (function-space) evaluation `DualFit` against the weight-space
//! `WoodburyFit`: the same log marginal likelihood and `p + 1` gradients for `p > n` and
//! `p < n`, gradients against finite differences, `refit` against fresh fits, typed errors,
//! the choice of form by flop counts, and GP-GRIEF-I sampling the same chain in either form.

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::grief::dual::{data_space_flops, data_space_is_cheaper, weight_space_flops};
use gp_models::grief::{
    DualFit, GridOptions, Grief, GriefEvaluation, GriefOptions, GriefSamplerOptions, GriefStats,
    WoodburyFit,
};
use gp_models::sampling::MalaOptions;
use gp_models::ModelError;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

/// A random basis `Φ` (`n × p`, entries `N(0, 1/p)`), targets `y` and non-uniform weights
/// log-uniform in `[0.1, 10]`.
fn problem(n: usize, p: usize, seed: u64) -> (Mat<f64>, Col<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let scale = 1.0 / (p as f64).sqrt();
    let phi = Mat::from_fn(n, p, |_, _| scale * rng.sample::<f64, _>(StandardNormal));
    let y = Col::from_fn(n, |_| rng.sample::<f64, _>(StandardNormal));
    let w = (0..p)
        .map(|_| 10f64.powf(rng.random_range(-1.0..1.0)))
        .collect();
    (phi, y, w)
}

fn assert_close(a: f64, b: f64, rel: f64, abs: f64, what: &str) {
    let err = (a - b).abs();
    assert!(
        err <= abs || err <= rel * a.abs().max(b.abs()),
        "{what}: {a} vs {b} (abs err {err:e})"
    );
}

fn dual_lml(phi: &Mat<f64>, y: &Col<f64>, w: &[f64], s2: f64) -> f64 {
    DualFit::new(phi.as_ref(), y.as_ref(), w, s2).unwrap().lml()
}

/// (n, p) cases: p > n (where the data space is the cheaper form) and p < n.
const CASES: [(usize, usize); 2] = [(15, 40), (40, 10)];

#[test]
fn grief_dual_matches_woodbury() {
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (phi, y, w) = problem(n, p, 100 + k as u64);
        let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
        for s2 in [0.02, 0.3, 3.0] {
            let dual = DualFit::new(phi.as_ref(), y.as_ref(), &w, s2).unwrap();
            let wood = WoodburyFit::new(&stats, &w, s2).unwrap();
            let (ld, dwd, dnd) = dual.lml_and_gradients();
            let (lw, dww, dnw) = wood.lml_and_gradients();
            assert_eq!(ld, dual.lml());
            // Both forms are exact, so they differ by rounding only: about ε times the
            // condition numbers of K (n × n) and P (p × p), at most ~1e4 here (weights in
            // [0.1, 10], σ² ≥ 0.02), plus the cancellation of the two terms of each
            // gradient. Measured: at most 3e-14 relative on these cases; 1e-9 bounds
            // ε · cond with a wide margin, so a platform's different summation order cannot
            // fail the test while a wrong formula (an O(1) error) still does.
            let what = format!("n={n} p={p} σ²={s2}");
            assert_close(ld, lw, 1e-9, 0.0, &format!("{what} lml"));
            assert_close(
                dual.log_det_k(),
                wood.log_det_k(),
                1e-9,
                1e-9,
                &format!("{what} log|K|"),
            );
            assert_close(
                dual.data_fit(),
                wood.data_fit(),
                1e-9,
                0.0,
                &format!("{what} yᵀK⁻¹y"),
            );
            // Each ∂/∂w_j is a difference of two terms: compare relative to the largest.
            let scale = dww.iter().fold(0.0_f64, |m, g| m.max(g.abs()));
            assert_eq!(dwd.len(), p);
            for j in 0..p {
                assert_close(
                    dwd[j],
                    dww[j],
                    1e-9,
                    1e-9 * scale,
                    &format!("{what} ∂/∂w[{j}]"),
                );
            }
            assert_close(dnd, dnw, 1e-9, 0.0, &format!("{what} ∂/∂σ²"));
        }
    }
}

#[test]
fn grief_dual_gradients_match_finite_differences() {
    let h = 1e-6;
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (phi, y, w) = problem(n, p, 200 + k as u64);
        let s2 = 0.2;
        let fit = DualFit::new(phi.as_ref(), y.as_ref(), &w, s2).unwrap();
        let (_, dw, dnoise) = fit.lml_and_gradients();
        for j in 0..p {
            let (mut wp, mut wm) = (w.clone(), w.clone());
            wp[j] += h;
            wm[j] -= h;
            let fd = (dual_lml(&phi, &y, &wp, s2) - dual_lml(&phi, &y, &wm, s2)) / (2.0 * h);
            assert_close(dw[j], fd, 1e-5, 1e-6, &format!("n={n} p={p} ∂/∂w[{j}]"));
        }
        let fd = (dual_lml(&phi, &y, &w, s2 + h) - dual_lml(&phi, &y, &w, s2 - h)) / (2.0 * h);
        assert_close(dnoise, fd, 1e-5, 1e-6, &format!("n={n} p={p} ∂/∂σ²"));
    }
}

#[test]
fn grief_dual_refit_equals_new_fit() {
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (phi, y, w) = problem(n, p, 300 + k as u64);
        let w2: Vec<f64> = w.iter().map(|x| 1.0 / x).collect();
        let mut fit = DualFit::new(phi.as_ref(), y.as_ref(), &w, 0.3).unwrap();
        let first = fit.lml_and_gradients();
        // The reused buffers give bit-identical results to fresh fits, back and forth.
        for (weights, s2) in [(&w2, 0.1), (&w, 0.3), (&w2, 0.1)] {
            fit = fit.refit(weights, s2).unwrap();
            let fresh = DualFit::new(phi.as_ref(), y.as_ref(), weights, s2).unwrap();
            assert_eq!(fit.lml_and_gradients(), fresh.lml_and_gradients());
            assert_eq!(fit.clone().lml_and_gradients(), fresh.lml_and_gradients());
            assert_eq!(fit.weights(), &weights[..]);
            assert_eq!(fit.noise(), s2);
        }
        let fit = fit.refit(&w, 0.3).unwrap();
        assert_eq!(fit.lml_and_gradients(), first);
        assert!(matches!(
            fit.refit(&w2, -1.0),
            Err(ModelError::InvalidNoise { .. })
        ));
    }
}

#[test]
fn grief_dual_bad_input_is_a_typed_error() {
    let (phi, y, w) = problem(6, 9, 400);
    // Weights of the wrong length, non-positive or non-finite.
    assert!(matches!(
        DualFit::new(phi.as_ref(), y.as_ref(), &w[..8], 0.1),
        Err(ModelError::LengthMismatch {
            expected: 9,
            found: 8,
            ..
        })
    ));
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut wb = w.clone();
        wb[3] = bad;
        let err = DualFit::new(phi.as_ref(), y.as_ref(), &wb, 0.1).unwrap_err();
        assert!(
            matches!(err, ModelError::InvalidOption { name: "w", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("weight 3"), "{err}");
    }
    // Bad noise variance.
    for bad in [0.0, -0.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            DualFit::new(phi.as_ref(), y.as_ref(), &w, bad),
            Err(ModelError::InvalidNoise { .. })
        ));
    }
    // Targets of the wrong length, non-finite basis or targets.
    let short = Col::<f64>::zeros(5);
    assert!(matches!(
        DualFit::new(phi.as_ref(), short.as_ref(), &w, 0.1),
        Err(ModelError::LengthMismatch {
            expected: 6,
            found: 5,
            ..
        })
    ));
    let mut nan = phi.clone();
    nan[(4, 2)] = f64::NAN;
    let err = DualFit::new(nan.as_ref(), y.as_ref(), &w, 0.1).unwrap_err();
    assert!(
        matches!(err, ModelError::NonFinite { row: 4, col: 2, .. }),
        "{err}"
    );
    let mut inf_y = y.clone();
    inf_y[1] = f64::INFINITY;
    assert!(matches!(
        DualFit::new(phi.as_ref(), inf_y.as_ref(), &w, 0.1),
        Err(ModelError::NonFinite { .. })
    ));
    // Weights so large that ΦWΦᵀ overflows: a typed error, not a NaN likelihood.
    let huge = vec![1e308; 9];
    let big_phi = Mat::from_fn(6, 9, |i, j| 1e3 * phi[(i, j)]);
    let err = DualFit::new(big_phi.as_ref(), y.as_ref(), &huge, 0.1).unwrap_err();
    assert!(
        matches!(err, ModelError::DataSpaceNotPositiveDefinite { n: 6, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("noise variance"), "{err}");
    // refit checks the weights too.
    let fit = DualFit::new(phi.as_ref(), y.as_ref(), &w, 0.1).unwrap();
    assert!(matches!(
        fit.refit(&w[..3], 0.1),
        Err(ModelError::LengthMismatch { .. })
    ));
}

#[test]
fn grief_dual_choice_by_flop_counts() {
    assert_eq!(weight_space_flops(1000), 2e9 / 3.0);
    assert_eq!(
        data_space_flops(90, 1000),
        2.0 * 8100.0 * 1000.0 + 2.0 * 729e3 / 3.0
    );
    // The paper's GP-GRIEF-I data sets (p = 1000, n = 20…500): the data space.
    for n in [20, 90, 500] {
        assert!(data_space_is_cheaper(n, 1000), "n = {n}");
    }
    // Break-even near n = 0.53 p; the weight space for more data or fewer functions.
    assert!(data_space_is_cheaper(530, 1000));
    assert!(!data_space_is_cheaper(540, 1000));
    assert!(!data_space_is_cheaper(40, 10));
    assert_eq!(
        GriefSamplerOptions::default().evaluation,
        GriefEvaluation::Auto
    );
}

/// A small GRIEF model with more basis functions than training points (n = 12, p = 30 on a
/// 6 × 6 grid), where `Auto` picks the data space.
fn small_model() -> Grief {
    let n = 12;
    let x = Mat::from_fn(n, 2, |i, j| ((i * (2 * j + 3)) as f64 * 0.611).sin() * 1.5);
    let y = Col::from_fn(n, |i| {
        (x[(i, 0)] * 1.3).sin() + 0.4 * x[(i, 1)] * x[(i, 1)] - 0.2
    });
    let options = GriefOptions {
        p: 30,
        grid: GridOptions {
            points_per_axis: 6,
            ..GridOptions::default()
        },
        ..GriefOptions::default()
    };
    Grief::fit(
        SquaredExponential::new(vec![0.8, 1.3], 1.7).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.05,
        &options,
    )
    .unwrap()
}

#[test]
fn grief_dual_sampler_gives_the_same_chain_in_both_forms() {
    let m = small_model();
    assert_eq!(m.eigenfunctions(), 30);
    let options = |evaluation| GriefSamplerOptions {
        mala: MalaOptions {
            iterations: 300,
            burn_in: 100,
            thin: 10,
            seed: 5,
            ..MalaOptions::default()
        },
        evaluation,
        ..GriefSamplerOptions::default()
    };
    let data = m
        .sample_weights(&options(GriefEvaluation::DataSpace))
        .unwrap();
    let weight = m
        .sample_weights(&options(GriefEvaluation::WeightSpace))
        .unwrap();
    let auto = m.sample_weights(&options(GriefEvaluation::Auto)).unwrap();
    // Auto picks the data space here (n = 12 < 0.53 p): bit-identical to it.
    assert_eq!(auto.run.samples, data.run.samples);
    // Same seed, same proposals: the targets differ by rounding only (~1e-13 relative),
    // so every accept/reject decision coincides (a flip would need a uniform draw within
    // ~1e-13 of the acceptance ratio) and the chains agree to rounding, amplified along
    // the chain by the drift of the proposals.
    assert_eq!(data.run.samples.len(), 20);
    assert_eq!(data.run.samples.len(), weight.run.samples.len());
    assert_eq!(data.run.acceptance_rate, weight.run.acceptance_rate);
    for (k, (a, b)) in data.run.samples.iter().zip(&weight.run.samples).enumerate() {
        for (i, (u, v)) in a.iter().zip(b).enumerate() {
            assert_close(*u, *v, 1e-8, 1e-8, &format!("sample {k}, entry {i}"));
        }
    }
}
