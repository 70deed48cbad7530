//! GP-GRIEF weight-space algebra (Evans & Nair 2018, eq. 13 / App. A) against dense
//! function-space references: the Woodbury log marginal likelihood, its gradients (fast
//! `diag(P⁻¹)` form, textbook `P⁻¹A` form, finite differences), the `O(p)` orthogonalised
//! form in both weight meanings, predictions, the streamed θ-gradient, and typed errors.

use faer::{Col, Mat};
use gp_linalg::{Cholesky, JitterLadder};
use gp_models::grief::{GriefStats, OrthoFit, OrthoOptions, OrthoWeights, WoodburyFit};
use gp_models::ModelError;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// A random basis `Φ` (`n × p`, entries `N(0, scale²)`), targets `y` and weights in `[0.3, 3]`.
fn problem(n: usize, p: usize, seed: u64) -> (Mat<f64>, Col<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let scale = 1.0 / (p as f64).sqrt();
    let phi = Mat::from_fn(n, p, |_, _| scale * rng.sample::<f64, _>(StandardNormal));
    let y = Col::from_fn(n, |_| rng.sample::<f64, _>(StandardNormal));
    let w = (0..p).map(|_| rng.random_range(0.3..3.0)).collect();
    (phi, y, w)
}

/// `Φ diag(w) Ψᵀ`.
fn weighted_gram(phi: &Mat<f64>, w: &[f64], psi: &Mat<f64>) -> Mat<f64> {
    let scaled = Mat::from_fn(phi.nrows(), phi.ncols(), |i, j| phi[(i, j)] * w[j]);
    &scaled * psi.transpose()
}

/// Dense `log N(y | 0, Φ diag(w) Φᵀ + σ²I)` by a Cholesky factorization.
fn dense_lml(phi: &Mat<f64>, y: &Col<f64>, w: &[f64], s2: f64) -> f64 {
    let n = phi.nrows();
    let mut k = weighted_gram(phi, w, phi);
    for i in 0..n {
        k[(i, i)] += s2;
    }
    let chol = Cholesky::with_jitter(k.as_ref(), &JitterLadder::none()).unwrap();
    let alpha = chol.solve_col(y.as_ref()).unwrap();
    let fit = y.transpose() * &alpha;
    -0.5 * (fit + chol.log_det() + n as f64 * LN_2PI)
}

/// Dense function-space latent mean and variance at test rows `phi_star` of the kernel
/// `Φ diag(w) Φᵀ` (GPML eq. 2.25–2.26).
fn dense_predict(
    phi: &Mat<f64>,
    y: &Col<f64>,
    w: &[f64],
    s2: f64,
    phi_star: &Mat<f64>,
) -> (Vec<f64>, Vec<f64>) {
    let n = phi.nrows();
    let mut k = weighted_gram(phi, w, phi);
    for i in 0..n {
        k[(i, i)] += s2;
    }
    let chol = Cholesky::with_jitter(k.as_ref(), &JitterLadder::none()).unwrap();
    let k_star = weighted_gram(phi, w, phi_star); // n × m
    let k_ss = weighted_gram(phi_star, w, phi_star);
    let alpha = chol.solve_col(y.as_ref()).unwrap();
    let v = chol.solve_lower(k_star.as_ref()).unwrap();
    let m = phi_star.nrows();
    let mean = (0..m).map(|i| k_star.col(i).transpose() * &alpha).collect();
    let var = (0..m)
        .map(|i| k_ss[(i, i)] - v.col(i).squared_norm_l2())
        .collect();
    (mean, var)
}

fn assert_close(a: f64, b: f64, rel: f64, abs: f64, what: &str) {
    let err = (a - b).abs();
    assert!(
        err <= abs || err <= rel * a.abs().max(b.abs()),
        "{what}: {a} vs {b} (abs err {err:e})"
    );
}

fn woodbury_lml(stats: &GriefStats, w: &[f64], s2: f64) -> f64 {
    WoodburyFit::new(stats, w, s2).unwrap().lml()
}

/// (n, p) cases: p < n and p > n.
const CASES: [(usize, usize); 2] = [(80, 25), (40, 60)];

#[test]
fn grief_weight_woodbury_lml_matches_dense() {
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (phi, y, w) = problem(n, p, 10 + k as u64);
        let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
        for s2 in [0.05, 0.3, 2.0] {
            let fit = WoodburyFit::new(&stats, &w, s2).unwrap();
            let dense = dense_lml(&phi, &y, &w, s2);
            let err = (fit.lml() - dense).abs();
            assert!(
                err <= 1e-9,
                "n={n} p={p} σ²={s2}: {} vs {dense} ({err:e})",
                fit.lml()
            );
            // The gradient call returns the same value.
            assert_eq!(fit.lml_and_gradients().0, fit.lml());
        }
    }
}

#[test]
fn grief_weight_streamed_stats_match_whole() {
    let (phi, y, _) = problem(53, 12, 3);
    let whole = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
    let mut streamed = GriefStats::new(12);
    for start in (0..53).step_by(10) {
        let b = (53 - start).min(10);
        streamed
            .accumulate(phi.as_ref().subrows(start, b), y.as_ref().subrows(start, b))
            .unwrap();
    }
    assert_eq!(streamed.n, 53);
    assert!((&streamed.a - &whole.a).norm_max() <= 1e-13);
    assert!((&streamed.r - &whole.r).norm_max() <= 1e-13);
    assert_close(streamed.yty, whole.yty, 1e-14, 0.0, "yᵀy");
}

#[test]
fn grief_weight_woodbury_gradients_match_finite_differences() {
    let h = 1e-6;
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (phi, y, w) = problem(n, p, 20 + k as u64);
        let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
        let s2 = 0.2;
        let fit = WoodburyFit::new(&stats, &w, s2).unwrap();
        let (_, dw, dnoise) = fit.lml_and_gradients();
        for j in 0..p {
            let (mut wp, mut wm) = (w.clone(), w.clone());
            wp[j] += h;
            wm[j] -= h;
            let fd = (woodbury_lml(&stats, &wp, s2) - woodbury_lml(&stats, &wm, s2)) / (2.0 * h);
            assert_close(dw[j], fd, 1e-5, 1e-6, &format!("n={n} p={p} ∂/∂w[{j}]"));
        }
        let fd = (woodbury_lml(&stats, &w, s2 + h) - woodbury_lml(&stats, &w, s2 - h)) / (2.0 * h);
        assert_close(dnoise, fd, 1e-5, 1e-6, &format!("n={n} p={p} ∂/∂σ²"));
    }
}

#[test]
fn grief_weight_fast_gradients_match_plain_formula() {
    for (k, &(n, p)) in CASES.iter().chain(&[(300, 120)]).enumerate() {
        let (phi, y, w) = problem(n, p, 30 + k as u64);
        let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
        for s2 in [0.01, 0.2, 5.0] {
            let fit = WoodburyFit::new(&stats, &w, s2).unwrap();
            let (lf, dwf, dnf) = fit.lml_and_gradients();
            let (lp, dwp, dnp) = fit.lml_and_gradients_plain();
            assert_eq!(lf, lp);
            // Each form cancels in a different regime: compare relative to the largest
            // weight-gradient term.
            let scale = dwp.iter().fold(0.0_f64, |m, g| m.max(g.abs()));
            for j in 0..p {
                assert_close(
                    dwf[j],
                    dwp[j],
                    1e-10,
                    1e-10 * scale,
                    &format!("∂/∂w[{j}], σ²={s2}"),
                );
            }
            assert_close(dnf, dnp, 1e-10, 0.0, &format!("∂/∂σ², σ²={s2}"));
        }
    }
}

#[test]
fn grief_weight_refit_equals_new_fit() {
    let (phi, y, w) = problem(50, 30, 35);
    let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
    let w2: Vec<f64> = w.iter().map(|x| 1.0 / x).collect();
    let mut fit = WoodburyFit::new(&stats, &w, 0.3).unwrap();
    let first = fit.lml_and_gradients();
    // The reused buffers give bit-identical results to fresh fits, back and forth.
    for (weights, s2) in [(&w2, 0.1), (&w, 0.3), (&w2, 0.1)] {
        fit = fit.refit(weights, s2).unwrap();
        let fresh = WoodburyFit::new(&stats, weights, s2).unwrap();
        assert_eq!(fit.lml_and_gradients(), fresh.lml_and_gradients());
        assert_eq!(fit.clone().lml_and_gradients(), fresh.lml_and_gradients());
    }
    let fit = fit.refit(&w, 0.3).unwrap();
    assert_eq!(fit.lml_and_gradients(), first);
    assert!(matches!(
        fit.refit(&w2, -1.0),
        Err(ModelError::InvalidNoise { .. })
    ));
}

#[test]
fn grief_weight_woodbury_predictions_match_function_space() {
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (phi, y, w) = problem(n, p, 40 + k as u64);
        let (phi_star, _, _) = problem(7, p, 50 + k as u64);
        let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
        let s2 = 0.15;
        let fit = WoodburyFit::new(&stats, &w, s2).unwrap();
        let (mean, var) = fit.predict(phi_star.as_ref()).unwrap();
        let (dm, dv) = dense_predict(&phi, &y, &w, s2, &phi_star);
        for i in 0..7 {
            assert_close(mean[i], dm[i], 0.0, 1e-9, "Woodbury mean");
            assert_close(var[i], dv[i], 0.0, 1e-9, "Woodbury variance");
        }
        // Posterior weights: E f_* = φ_*ᵀ P⁻¹r.
        let u = fit.posterior_weights();
        assert_close(
            mean[0],
            phi_star.row(0) * u,
            0.0,
            1e-12,
            "posterior weights",
        );
    }
}

#[test]
fn grief_weight_ortho_lml_matches_dense_normalised_basis() {
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (phi, y, _) = problem(n, p, 60 + k as u64);
        let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
        let fit = OrthoFit::new(&stats, &OrthoOptions::default()).unwrap();
        assert_eq!(fit.rank(), p.min(n), "rank (relative cutoff)");
        let u = fit.transform_basis(phi.as_ref()).unwrap();
        // Ũ has orthonormal columns.
        let gram = u.transpose() * &u;
        assert!((&gram - Mat::<f64>::identity(fit.rank(), fit.rank())).norm_max() < 1e-9);
        let mut rng = StdRng::seed_from_u64(70 + k as u64);
        let wt: Vec<f64> = (0..fit.rank())
            .map(|_| rng.random_range(0.1..5.0))
            .collect();
        for s2 in [0.05, 0.5] {
            let lml = fit.lml(&wt, s2).unwrap();
            let dense = dense_lml(&u, &y, &wt, s2);
            assert_close(lml, dense, 0.0, 1e-9, &format!("n={n} p={p} O(p) LML"));
        }
    }
}

#[test]
fn grief_weight_ortho_gradients_match_finite_differences() {
    let h = 1e-6;
    for mode in [OrthoWeights::Normalised, OrthoWeights::ScaleConsistent] {
        for (k, &(n, p)) in CASES.iter().enumerate() {
            let (phi, y, _) = problem(n, p, 80 + k as u64);
            let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
            let options = OrthoOptions {
                weights: mode,
                ..OrthoOptions::default()
            };
            let fit = OrthoFit::new(&stats, &options).unwrap();
            let mut rng = StdRng::seed_from_u64(90 + k as u64);
            let w: Vec<f64> = (0..fit.rank())
                .map(|_| rng.random_range(0.3..3.0))
                .collect();
            let s2 = 0.3;
            let (lml, dw, dnoise) = fit.lml_and_gradients(&w, s2).unwrap();
            assert_eq!(lml, fit.lml(&w, s2).unwrap());
            for j in 0..w.len() {
                let (mut wp, mut wm) = (w.clone(), w.clone());
                wp[j] += h;
                wm[j] -= h;
                let fd = (fit.lml(&wp, s2).unwrap() - fit.lml(&wm, s2).unwrap()) / (2.0 * h);
                assert_close(dw[j], fd, 1e-5, 1e-6, &format!("{mode:?} ∂/∂w[{j}]"));
            }
            let fd = (fit.lml(&w, s2 + h).unwrap() - fit.lml(&w, s2 - h).unwrap()) / (2.0 * h);
            assert_close(dnoise, fd, 1e-5, 1e-6, &format!("{mode:?} ∂/∂σ²"));
        }
    }
}

#[test]
fn grief_weight_ortho_reproduces_grief_kernel() {
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (phi, y, _) = problem(n, p, 100 + k as u64);
        let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
        let ones = vec![1.0; p];
        for s2 in [0.05, 0.4] {
            let reference = woodbury_lml(&stats, &ones, s2);
            // (a) normalised basis with w̃ = Σ̃².
            let a = OrthoFit::new(&stats, &OrthoOptions::default()).unwrap();
            let sigma2: Vec<f64> = a.singular_values().iter().map(|s| s * s).collect();
            assert_eq!(a.grief_kernel_weights(), sigma2);
            assert_close(a.lml(&sigma2, s2).unwrap(), reference, 0.0, 1e-9, "w̃ = Σ̃²");
            // (b) scale-consistent basis with w = 1.
            let b = OrthoFit::new(
                &stats,
                &OrthoOptions {
                    weights: OrthoWeights::ScaleConsistent,
                    ..OrthoOptions::default()
                },
            )
            .unwrap();
            let ones_b = vec![1.0; b.rank()];
            assert_close(
                b.lml(&ones_b, s2).unwrap(),
                reference,
                0.0,
                1e-9,
                "(b) with w = 1",
            );
            // Its gradient sums back to the gradient of a common scale on the GRIEF weights:
            // d/dt LML(t·1) = Σ_j ∂LML/∂w_j, the same in both parametrisations.
            let (_, gb, nb) = b.lml_and_gradients(&ones_b, s2).unwrap();
            let (_, gw, nw) = WoodburyFit::new(&stats, &ones, s2)
                .unwrap()
                .lml_and_gradients();
            assert_close(
                gb.iter().sum(),
                gw.iter().sum::<f64>(),
                1e-8,
                1e-9,
                "common scale",
            );
            assert_close(nb, nw, 1e-8, 1e-9, "∂/∂σ² at the GRIEF kernel");
        }
    }
}

#[test]
fn grief_weight_ortho_predictions_match_function_space() {
    for mode in [OrthoWeights::Normalised, OrthoWeights::ScaleConsistent] {
        for (k, &(n, p)) in CASES.iter().enumerate() {
            let (phi, y, _) = problem(n, p, 110 + k as u64);
            let (phi_star, _, _) = problem(6, p, 120 + k as u64);
            let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
            let fit = OrthoFit::new(
                &stats,
                &OrthoOptions {
                    weights: mode,
                    ..OrthoOptions::default()
                },
            )
            .unwrap();
            let mut rng = StdRng::seed_from_u64(130 + k as u64);
            let w: Vec<f64> = (0..fit.rank())
                .map(|_| rng.random_range(0.3..3.0))
                .collect();
            let s2 = 0.25;
            let (mean, var) = fit.predict(phi_star.as_ref(), &w, s2).unwrap();
            // Function space with the model's own basis (Ũ or ΦṼ) and weights.
            let basis = fit.transform_basis(phi.as_ref()).unwrap();
            let basis_star = fit.transform_basis(phi_star.as_ref()).unwrap();
            let (dm, dv) = dense_predict(&basis, &y, &w, s2, &basis_star);
            for i in 0..6 {
                assert_close(mean[i], dm[i], 0.0, 1e-9, &format!("{mode:?} mean"));
                assert_close(var[i], dv[i], 0.0, 1e-9, &format!("{mode:?} variance"));
            }
        }
    }
    // With the GRIEF-kernel weights both forms equal the Woodbury predictions at w = 1.
    let (phi, y, _) = problem(70, 20, 140);
    let (phi_star, _, _) = problem(5, 20, 141);
    let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
    let (wm, wv) = WoodburyFit::new(&stats, &[1.0; 20], 0.1)
        .unwrap()
        .predict(phi_star.as_ref())
        .unwrap();
    for mode in [OrthoWeights::Normalised, OrthoWeights::ScaleConsistent] {
        let fit = OrthoFit::new(
            &stats,
            &OrthoOptions {
                weights: mode,
                ..OrthoOptions::default()
            },
        )
        .unwrap();
        let (m, v) = fit
            .predict(phi_star.as_ref(), &fit.grief_kernel_weights(), 0.1)
            .unwrap();
        for i in 0..5 {
            assert_close(m[i], wm[i], 0.0, 1e-9, "mean vs Woodbury");
            assert_close(v[i], wv[i], 0.0, 1e-9, "variance vs Woodbury");
        }
    }
}

/// `Φ(θ) = Φ₀ + θ₀Φ₁ + θ₁²Φ₂` and its derivatives.
fn theta_family(base: &[Mat<f64>; 3], theta: [f64; 2]) -> (Mat<f64>, [Mat<f64>; 2]) {
    let [p0, p1, p2] = base;
    let phi = p0 + p1 * faer::Scale(theta[0]) + p2 * faer::Scale(theta[1] * theta[1]);
    (phi, [p1.clone(), p2 * faer::Scale(2.0 * theta[1])])
}

#[test]
fn grief_weight_theta_gradient_matches_finite_differences() {
    let h = 1e-6;
    for (k, &(n, p)) in CASES.iter().enumerate() {
        let (p0, y, w) = problem(n, p, 150 + k as u64);
        let (p1, _, _) = problem(n, p, 160 + k as u64);
        let (p2, _, _) = problem(n, p, 170 + k as u64);
        let base = [p0, p1, p2];
        let theta = [0.3, 0.7];
        let s2 = 0.2;
        let (phi, dphi) = theta_family(&base, theta);
        let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
        let fit = WoodburyFit::new(&stats, &w, s2).unwrap();
        // Whole matrix in one block.
        let mut whole = fit.theta_gradient(2);
        whole
            .add_block(
                phi.as_ref(),
                y.as_ref(),
                &[dphi[0].as_ref(), dphi[1].as_ref()],
            )
            .unwrap();
        let whole = whole.finish().unwrap();
        // Streamed in blocks of 7 rows.
        let mut acc = fit.theta_gradient(2);
        for start in (0..n).step_by(7) {
            let b = (n - start).min(7);
            acc.add_block(
                phi.as_ref().subrows(start, b),
                y.as_ref().subrows(start, b),
                &[
                    dphi[0].as_ref().subrows(start, b),
                    dphi[1].as_ref().subrows(start, b),
                ],
            )
            .unwrap();
        }
        assert_eq!(acc.rows(), n);
        let streamed = acc.finish().unwrap();
        for t in 0..2 {
            assert_close(streamed[t], whole[t], 1e-12, 1e-12, "streamed vs whole");
            let lml_at = |value: f64| {
                let mut th = theta;
                th[t] = value;
                let (phi, _) = theta_family(&base, th);
                let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
                woodbury_lml(&stats, &w, s2)
            };
            let fd = (lml_at(theta[t] + h) - lml_at(theta[t] - h)) / (2.0 * h);
            assert_close(whole[t], fd, 1e-5, 1e-6, &format!("n={n} p={p} ∂/∂θ[{t}]"));
        }
    }
}

#[test]
fn grief_weight_bad_input_is_typed() {
    let (phi, y, w) = problem(30, 8, 200);
    let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
    // Weights: non-positive, NaN, wrong length.
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let mut wb = w.clone();
        wb[3] = bad;
        let err = WoodburyFit::new(&stats, &wb, 0.1).unwrap_err();
        assert!(
            matches!(err, ModelError::InvalidOption { name: "w", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("weight 3"), "{err}");
    }
    assert!(matches!(
        WoodburyFit::new(&stats, &w[..7], 0.1),
        Err(ModelError::LengthMismatch {
            expected: 8,
            found: 7,
            ..
        })
    ));
    // Noise.
    for bad in [0.0, -0.1, f64::NAN] {
        assert!(matches!(
            WoodburyFit::new(&stats, &w, bad),
            Err(ModelError::InvalidNoise { .. })
        ));
    }
    // Statistics of inconsistent shape, non-finite, not a Gram matrix.
    let mut short = stats.clone();
    short.r = Col::zeros(7);
    assert!(matches!(
        WoodburyFit::new(&short, &w[..7], 0.1),
        Err(ModelError::LengthMismatch { .. })
    ));
    let mut nan = stats.clone();
    nan.a[(5, 2)] = f64::NAN;
    let err = WoodburyFit::new(&nan, &w, 0.1).unwrap_err();
    assert!(
        matches!(err, ModelError::NonFinite { row: 5, col: 2, .. }),
        "{err}"
    );
    let mut nan_r = stats.clone();
    nan_r.r[1] = f64::INFINITY;
    assert!(matches!(
        WoodburyFit::new(&nan_r, &w, 0.1),
        Err(ModelError::NonFinite { .. })
    ));
    let mut indefinite = stats.clone();
    indefinite.a[(4, 4)] = -100.0;
    let err = WoodburyFit::new(&indefinite, &w, 0.1).unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::WeightSpaceNotPositiveDefinite { p: 8, pivot: 4 }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("noise variance"), "{err}");
    // Predictions and θ-gradient blocks of the wrong shape.
    let fit = WoodburyFit::new(&stats, &w, 0.1).unwrap();
    assert!(matches!(
        fit.predict(Mat::<f64>::zeros(3, 9).as_ref()),
        Err(ModelError::LengthMismatch {
            expected: 8,
            found: 9,
            ..
        })
    ));
    let mut acc = fit.theta_gradient(1);
    assert!(matches!(
        acc.add_block(phi.as_ref(), y.as_ref(), &[]),
        Err(ModelError::LengthMismatch {
            expected: 1,
            found: 0,
            ..
        })
    ));
    assert!(matches!(
        acc.add_block(phi.as_ref(), y.as_ref().subrows(0, 29), &[phi.as_ref()]),
        Err(ModelError::LengthMismatch { .. })
    ));
    acc.add_block(
        phi.as_ref().subrows(0, 10),
        y.as_ref().subrows(0, 10),
        &[phi.as_ref().subrows(0, 10)],
    )
    .unwrap();
    assert!(matches!(
        acc.finish(),
        Err(ModelError::LengthMismatch {
            expected: 30,
            found: 10,
            ..
        })
    ));
    // Streaming statistics.
    let mut s = GriefStats::new(8);
    assert!(matches!(
        s.accumulate(
            Mat::<f64>::zeros(2, 7).as_ref(),
            Col::<f64>::zeros(2).as_ref()
        ),
        Err(ModelError::LengthMismatch { .. })
    ));
    let mut bad_phi = phi.clone();
    bad_phi[(0, 0)] = f64::NAN;
    assert!(matches!(
        GriefStats::from_phi(bad_phi.as_ref(), y.as_ref()),
        Err(ModelError::NonFinite { .. })
    ));
    // Orthogonalised fit: cutoff, weights, noise.
    for cutoff in [-1e-7, 1.0, f64::NAN] {
        let err = OrthoFit::new(
            &stats,
            &OrthoOptions {
                relative_cutoff: cutoff,
                ..OrthoOptions::default()
            },
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                ModelError::InvalidOption {
                    name: "relative_cutoff",
                    ..
                }
            ),
            "{err}"
        );
    }
    let ortho = OrthoFit::new(&stats, &OrthoOptions::default()).unwrap();
    assert!(matches!(
        ortho.lml(&w[..5], 0.1),
        Err(ModelError::LengthMismatch { .. })
    ));
    let mut wb = w.clone();
    wb[0] = -2.0;
    assert!(matches!(
        ortho.lml(&wb, 0.1),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        ortho.lml_and_gradients(&w, 0.0),
        Err(ModelError::InvalidNoise { .. })
    ));
    assert!(matches!(
        ortho.predict(Mat::<f64>::zeros(2, 3).as_ref(), &w, 0.1),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        OrthoFit::new(&nan, &OrthoOptions::default()),
        Err(ModelError::NonFinite { .. })
    ));
}

#[test]
fn grief_weight_ortho_cutoff_is_relative() {
    // A rank-deficient basis (p > n) at two very different scales keeps the same rank.
    let (phi, y, _) = problem(15, 40, 210);
    for scale in [1e-6, 1.0, 1e6] {
        let scaled = &phi * faer::Scale(scale);
        let stats = GriefStats::from_phi(scaled.as_ref(), y.as_ref()).unwrap();
        let fit = OrthoFit::new(&stats, &OrthoOptions::default()).unwrap();
        assert_eq!(fit.rank(), 15, "scale {scale}");
    }
}

#[test]
fn grief_weight_empty_basis_is_the_noise_model() {
    // p = 0: K = σ²I, for both forms.
    let y = Col::from_fn(5, |i| i as f64 - 2.0);
    let stats = GriefStats::from_phi(Mat::<f64>::zeros(5, 0).as_ref(), y.as_ref()).unwrap();
    let s2: f64 = 0.7;
    let expected = -0.5 * (10.0 / s2 + 5.0 * s2.ln() + 5.0 * LN_2PI);
    let fit = WoodburyFit::new(&stats, &[], s2).unwrap();
    let (lml, dw, dnoise) = fit.lml_and_gradients();
    assert_close(lml, expected, 0.0, 1e-12, "p = 0 LML");
    assert!(dw.is_empty());
    assert_close(
        dnoise,
        0.5 * 10.0 / (s2 * s2) - 2.5 / s2,
        0.0,
        1e-12,
        "p = 0 ∂/∂σ²",
    );
    let (mean, var) = fit.predict(Mat::<f64>::zeros(2, 0).as_ref()).unwrap();
    assert_eq!((mean[1], var[1]), (0.0, 0.0));
    let ortho = OrthoFit::new(&stats, &OrthoOptions::default()).unwrap();
    assert_eq!(ortho.rank(), 0);
    assert_close(
        ortho.lml(&[], s2).unwrap(),
        expected,
        0.0,
        1e-12,
        "p̃ = 0 LML",
    );
    // A zero basis keeps no direction either.
    let zero = GriefStats::from_phi(Mat::<f64>::zeros(5, 3).as_ref(), y.as_ref()).unwrap();
    let ortho = OrthoFit::new(&zero, &OrthoOptions::default()).unwrap();
    assert_eq!(ortho.rank(), 0);
    let fit = WoodburyFit::new(&zero, &[1.0; 3], s2).unwrap();
    assert_close(fit.lml(), expected, 0.0, 1e-12, "Φ = 0 LML");
}

/// Prints the agreement measured by the checks above (run with `--nocapture`; no timing).
#[test]
fn grief_weight_report_errors() {
    let (n, p) = (40, 60);
    let (phi, y, w) = problem(n, p, 300);
    let stats = GriefStats::from_phi(phi.as_ref(), y.as_ref()).unwrap();
    let fit = WoodburyFit::new(&stats, &w, 0.2).unwrap();
    let lml_err = (fit.lml() - dense_lml(&phi, &y, &w, 0.2)).abs();
    let (_, dwf, dnf) = fit.lml_and_gradients();
    let (_, dwp, dnp) = fit.lml_and_gradients_plain();
    let scale = dwp.iter().fold(0.0_f64, |m, g| m.max(g.abs()));
    let grad_err = dwf
        .iter()
        .zip(&dwp)
        .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs() / scale));
    eprintln!(
        "n={n} p={p}: |LML − dense| = {lml_err:.1e}; fast vs plain ∂/∂w max rel {grad_err:.1e}, \
         ∂/∂σ² rel {:.1e}",
        (dnf - dnp).abs() / dnp.abs()
    );
}
