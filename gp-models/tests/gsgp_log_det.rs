//! The GSGP log determinant with circulant-embedding square roots of the Toeplitz factors
//! (`GsgpOptions::log_det_dense_factor_max`): against the dense `log det(W K_G Wᵀ + σ²I)`,
//! against the dense eigen factor, with mixed factor kinds, on a 60 000-node 1-D grid, and
//! the fallbacks when an embedding stays indefinite.

use crate::gsgp_support;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_linalg::Cholesky;
use gp_models::grid::GridSettings;
use gp_models::gsgp::LogDetFactorKind;
use gp_models::{EstimatorSettings, KrylovSettings};
use gp_models::{Gsgp, GsgpOptions, GsgpSolver, ModelError, Ski, SkiOptions};
use gp_solvers::Probes;
use gsgp_support::{data, problem, tight, DenseSki};

/// `√k e_i` for all `i`: probes that make SLQ exact up to the CG tolerance.
fn complete(k: usize) -> Probes {
    Probes::from_matrix(Mat::<f64>::identity(k, k) * (k as f64).sqrt(), None).unwrap()
}

/// The same model with other options (same kernel, noise and data).
fn refit(
    gsgp: &Gsgp<SquaredExponential>,
    x: &Mat<f64>,
    y: &Col<f64>,
    opts: &GsgpOptions,
) -> Gsgp<SquaredExponential> {
    Gsgp::fit(
        gsgp.kernel().clone(),
        x.as_ref(),
        y.as_ref(),
        gsgp.noise_variance(),
        opts,
    )
    .unwrap()
}

/// A small SKI/GSGP problem with tight solves: `n` points in `[0, width]^d`, grid `sizes`.
fn small(
    n: usize,
    sizes: Vec<usize>,
    lengths: Vec<f64>,
    width: f64,
    seed: u64,
) -> (
    Ski<SquaredExponential>,
    Gsgp<SquaredExponential>,
    Mat<f64>,
    Col<f64>,
) {
    let d = sizes.len();
    let (x, y) = data(n, d, width, seed);
    let kernel = SquaredExponential::new(lengths, 1.1).unwrap();
    let ski_opts = tight(sizes);
    let ski = Ski::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.05, &ski_opts).unwrap();
    let gsgp = Gsgp::fit(
        kernel,
        x.as_ref(),
        y.as_ref(),
        0.05,
        &crate::gsgp_support::gsgp_options(&ski_opts),
    )
    .unwrap();
    (ski, gsgp, x, y)
}

fn all_circulant(kinds: &[LogDetFactorKind]) -> bool {
    kinds
        .iter()
        .all(|k| matches!(k, LogDetFactorKind::Circulant { .. }))
}

/// Random probes with circulant factors in every dimension (`d = 1`: 40 points, `d = 2`:
/// 20 × 25): the SLQ estimate is within its standard error of the dense log determinant.
///
/// Tolerance: `4` standard errors (a false failure has probability below 1e-4 for a normal
/// estimate; the SLQ average of 30 probes is close to normal) plus `1e-6` relative for the
/// quadrature and the CG tolerance `1e-8` (whose bias is far smaller).
#[test]
fn circulant_slq_is_within_its_standard_error_of_the_dense_log_det() {
    for d in 1..=2 {
        let p = problem(d, GsgpSolver::Efcg);
        let mut opts = p.gsgp.options().clone();
        opts.estimator.probes = 30;
        opts.krylov.tolerance = 1e-8;
        opts.log_det_dense_factor_max = 0;
        let gsgp = refit(&p.gsgp, &p.x, &p.y, &opts);
        let kinds = gsgp.log_det_factor_kinds().unwrap();
        assert!(all_circulant(&kinds), "d={d}: {kinds:?}");
        let r = gsgp.log_det_dim().unwrap();
        assert_eq!(
            r,
            kinds.iter().map(LogDetFactorKind::rank).product::<usize>()
        );
        assert!(
            r >= gsgp
                .grid()
                .sizes()
                .iter()
                .map(|&s| 2 * s - 1)
                .product::<usize>()
        );
        let est = gsgp.lml_estimate().unwrap();
        let dense = DenseSki::new(&p.ski);
        let exact = dense.chol.log_det();
        let se = est.log_det.std_error;
        assert!(se.is_finite() && se > 0.0);
        assert!(
            (est.log_det.value - exact).abs() < 4.0 * se + 1e-6 * exact.abs(),
            "d={d}: {} ± {se} vs dense {exact}",
            est.log_det.value
        );
        // The whole likelihood too (the data fit is the mean solve's, to 1e-11).
        let lml = dense.lml();
        assert!((est.lml - lml).abs() < 2.0 * se + 1e-6 * lml.abs());
    }
}

/// Complete probes (`√r e_i`, exact SLQ up to the CG tolerance `1e-11`): the circulant, the
/// dense eigen and a mixed (dense × circulant) factor give the same log determinant as the
/// dense computation, at `d = 1` (40 points) and `d = 2` (8 × 11, small enough for `r`
/// complete probes).
///
/// Tolerance: `1e-7` relative, as the dense-factor test in `gsgp_vs_ski.rs`. With complete
/// probes and CG to `1e-11` the quadrature of `log` on `H` (condition number ≲ 10⁴ here) is
/// exact to about `1e-9` relative; both factors are exact square roots (`F Fᵀ = T` to
/// ~1e-15, see gp-structured's `toeplitz_root` tests), so what remains is round-off.
#[test]
fn complete_probes_agree_across_factor_kinds_and_with_the_dense_log_det() {
    let (ski1, gsgp1, x1, y1) = small(150, vec![40], vec![0.6], 4.0, 1);
    let (ski2, gsgp2, x2, y2) = small(120, vec![8, 11], vec![0.5, 0.7], 2.0, 2);
    let cases = [(&ski1, &gsgp1, &x1, &y1), (&ski2, &gsgp2, &x2, &y2)];
    for (ski, gsgp, x, y) in cases {
        let d = x.ncols();
        let exact = DenseSki::new(ski).chol.log_det();
        // Dense everywhere (the default for these sizes), circulant everywhere, and for
        // d = 2 dense in the first dimension (8 points) and circulant in the second (11).
        let mut thresholds = vec![usize::MAX, 0];
        if d == 2 {
            thresholds.push(9);
        }
        let mut values = Vec::new();
        for max in thresholds {
            let mut opts = gsgp.options().clone();
            opts.log_det_dense_factor_max = max;
            let model = refit(gsgp, x, y, &opts);
            let kinds = model.log_det_factor_kinds().unwrap();
            for (k, &size) in kinds.iter().zip(model.grid().sizes()) {
                match *k {
                    LogDetFactorKind::DenseEigen {
                        size: s,
                        rank,
                        fallback,
                    } => {
                        assert!(size <= max && s == size && rank <= size && !fallback);
                    }
                    LogDetFactorKind::Circulant { size: s, embedding } => {
                        assert!(size > max && s == size && embedding >= 2 * size - 1);
                    }
                }
            }
            let r = model.log_det_dim().unwrap();
            let est = model.lml_estimate_with_probes(complete(r)).unwrap();
            assert!(
                (est.log_det.value - exact).abs() < 1e-7 * exact.abs(),
                "d={d}, dense max {max} ({kinds:?}): {} vs dense {exact}",
                est.log_det.value
            );
            values.push(est.log_det.value);
        }
        for v in &values[1..] {
            assert!((v - values[0]).abs() < 1e-7 * values[0].abs(), "{values:?}");
        }
    }
}

/// The default threshold keeps the dense eigen factor for small grids, so the existing
/// estimates do not move: bit-for-bit the same as with dense factors forced everywhere.
#[test]
fn default_threshold_keeps_small_factors_dense() {
    let p = problem(2, GsgpSolver::Efcg);
    assert_eq!(p.gsgp.options().log_det_dense_factor_max, 2048);
    let kinds = p.gsgp.log_det_factor_kinds().unwrap();
    assert!(kinds.iter().all(|k| matches!(
        k,
        LogDetFactorKind::DenseEigen {
            fallback: false,
            ..
        }
    )));
    let mut opts = p.gsgp.options().clone();
    opts.log_det_dense_factor_max = usize::MAX;
    let forced = refit(&p.gsgp, &p.x, &p.y, &opts);
    assert_eq!(
        p.gsgp.lml_estimate().unwrap().lml,
        forced.lml_estimate().unwrap().lml
    );
}

/// A length scale far beyond the grid (ℓ = 1000 on a grid of extent ~5) keeps every circulant
/// embedding tried indefinite: the dense factor replaces it when it fits in memory (and gives
/// the dense path's estimate exactly), else the refusal says what was wrong.
#[test]
fn indefinite_embedding_falls_back_to_dense_or_is_refused() {
    let (x, y) = data(100, 1, 4.0, 5);
    let kernel = SquaredExponential::new(vec![1000.0], 1.0).unwrap();
    let base = GsgpOptions {
        grid: GridSettings {
            sizes: vec![40],
            ..GridSettings::default()
        },
        log_det_dense_factor_max: 0,
        ..GsgpOptions::default()
    };
    let gsgp = Gsgp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.05, &base).unwrap();
    match gsgp.log_det_factor_kinds().unwrap()[0] {
        LogDetFactorKind::DenseEigen { fallback, .. } => assert!(fallback),
        other => panic!("expected the dense fallback, got {other:?}"),
    }
    let dense_opts = GsgpOptions {
        log_det_dense_factor_max: usize::MAX,
        ..base.clone()
    };
    let dense = Gsgp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.05, &dense_opts).unwrap();
    assert_eq!(
        gsgp.lml_estimate().unwrap().lml,
        dense.lml_estimate().unwrap().lml
    );

    // 30 kB: enough for the grid (82 m-vectors of 40 entries, 26 kB), not for the dense
    // eigendecomposition (24 · 40² = 38 kB).
    let tight_memory = GsgpOptions {
        grid: GridSettings {
            memory_limit: Some(30_000),
            ..base.grid
        },
        ..base
    };
    let refused = Gsgp::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &tight_memory).unwrap();
    assert!(refused.grid_mean_cache().is_ok());
    let err = refused.lml_estimate().unwrap_err();
    match &err {
        ModelError::LogDetEmbeddingIndefinite {
            dim,
            size,
            embedding,
            min_eigenvalue,
            max_eigenvalue,
            dense_bytes,
            limit_bytes,
            ..
        } => {
            assert_eq!((*dim, *size), (0, 40));
            assert!(*embedding >= 79);
            // Indefinite beyond round-off: below −M ε λ_max.
            assert!(
                *min_eigenvalue < -(*embedding as f64) * f64::EPSILON * max_eigenvalue,
                "{min_eigenvalue:e} vs {max_eigenvalue:e}"
            );
            assert_eq!(*dense_bytes, 24 * 40 * 40);
            assert_eq!(*limit_bytes, 30_000);
        }
        other => panic!("expected LogDetEmbeddingIndefinite, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("indefinite") && msg.contains("length scale"),
        "{msg}"
    );
    assert_eq!(refused.log_det_dim().unwrap_err(), err);
}

/// `log det(W K_G Wᵀ + σ²I)` from the sparse rows of `W` and the Toeplitz column (1-D): each
/// entry is a 4 × 4 stencil sum, then one dense Cholesky of order `n`.
fn exact_log_det_1d(ski: &Ski<SquaredExponential>) -> f64 {
    let w = ski.interpolation();
    let n = ski.n_train();
    let gk = ski.grid_kernel();
    let c = gk.first_column(0).unwrap();
    let s = gk.scale();
    let rows: Vec<(Vec<usize>, Vec<f64>)> = (0..n).map(|i| w.row(i).unwrap()).collect();
    let khat = Mat::from_fn(n, n, |a, b| {
        let (ca, va) = &rows[a];
        let (cb, vb) = &rows[b];
        let mut sum = 0.0;
        for (i, wi) in ca.iter().zip(va) {
            for (j, wj) in cb.iter().zip(vb) {
                sum += wi * wj * c[i.abs_diff(*j)];
            }
        }
        s * sum + if a == b { ski.noise_variance() } else { 0.0 }
    });
    Cholesky::new(khat.as_ref()).unwrap().log_det()
}

/// A 1-D grid of 60 004 nodes (SOUND's size) and 2000 points: the dense eigen factor would
/// need 86 GB, the circulant root a few MB. The estimate is finite, within its standard error
/// of the exact log determinant, and agrees with SKI's SLQ (n-dimensional probes, same
/// count) within their combined standard error.
///
/// Tolerances: 4 standard errors (combined for the SKI comparison; measured: GSGP −2548 ± 25,
/// SKI −2554 ± 26, exact −2554) plus `1e-4` relative for the CG tolerance `1e-5` of both
/// estimates (its quadrature bias is orders of magnitude smaller on this well-conditioned
/// `H`, about 57 iterations). About 6 s in the debug test profile on 2 cores.
#[test]
fn sixty_thousand_node_grid_has_a_log_det() {
    let n = 2000;
    let (x, y) = data(n, 1, 60.0, 11);
    let kernel = SquaredExponential::new(vec![0.3], 1.0).unwrap();
    let ski_opts = SkiOptions {
        grid: GridSettings {
            sizes: vec![60_004],
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            tolerance: 1e-5,
            ..KrylovSettings::default()
        },
        estimator: EstimatorSettings {
            probes: 10,
            ..EstimatorSettings::default()
        },
        preconditioner_rank: 0,
    };
    let sigma2 = 0.2;
    let gsgp = Gsgp::fit(
        kernel.clone(),
        x.as_ref(),
        y.as_ref(),
        sigma2,
        &crate::gsgp_support::gsgp_options(&ski_opts),
    )
    .unwrap();
    let kinds = gsgp.log_det_factor_kinds().unwrap();
    let LogDetFactorKind::Circulant { size, embedding } = kinds[0] else {
        panic!("expected a circulant factor, got {kinds:?}");
    };
    assert_eq!(size, 60_004);
    // The smallest 5-smooth length ≥ 2m − 1 = 120 007: the SE kernel (ℓ = 300 h) has decayed
    // long before M/2 spacings, so no lengthening.
    assert_eq!(embedding, 121_500);
    assert_eq!(gsgp.log_det_dim().unwrap(), embedding);
    let est = gsgp.lml_estimate().unwrap();
    assert!(est.lml.is_finite() && est.log_det.value.is_finite());
    let se = est.log_det.std_error;
    assert!(se.is_finite() && se > 0.0);

    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), sigma2, &ski_opts).unwrap();
    let exact = exact_log_det_1d(&ski);
    assert!(
        (est.log_det.value - exact).abs() < 4.0 * se + 1e-4 * exact.abs(),
        "GSGP {} ± {se} vs exact {exact}",
        est.log_det.value
    );
    let ski_est = ski.lml_estimate().unwrap();
    let combined = se.hypot(ski_est.log_det.std_error);
    assert!(
        (est.log_det.value - ski_est.log_det.value).abs() < 4.0 * combined + 1e-4 * exact.abs(),
        "GSGP {} ± {se} vs SKI {} ± {}",
        est.log_det.value,
        ski_est.log_det.value,
        ski_est.log_det.std_error
    );
}
