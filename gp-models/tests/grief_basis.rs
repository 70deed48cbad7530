//! The GP-GRIEF basis (Evans & Nair 2018, §3–4) against expanded Kronecker matrices: the
//! Algorithm-1 selection against brute force on real 1-D spectra, Φ against
//! `K_XU Q S_pᵀ Λ_p^{-1/2}`, the full-rank basis against the SoR kernel, derivatives against
//! finite differences, streamed statistics against dense products, the grid rule, errors,
//! and huge grids. Algorithm 1 on synthetic spectra (random, tied, the worked example) is
//! tested in gp-structured/tests/top_eigen.rs.

use faer::{Col, Mat, MatRef};
use gp_models::grief::{
    AxisBasis, GridOptions, GriefBasis, GriefBasisOptions, InducingGrid, AXIS_JITTER,
};
use gp_models::ModelError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::{naive_cholesky, se, spd_solve};

fn random_x(n: usize, d: usize, seed: u64) -> Mat<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Mat::from_fn(n, d, |_, _| rng.random_range(-1.0..1.0))
}

fn basis(x: MatRef<'_, f64>, mbar: usize, ls: &[f64], p: usize) -> GriefBasis {
    let grid = InducingGrid::from_data(
        x,
        &GridOptions {
            points_per_axis: mbar,
            ..GridOptions::default()
        },
    )
    .unwrap();
    GriefBasis::new(grid, ls, p, &GriefBasisOptions::default()).unwrap()
}

/// All grid points in Kronecker order (dimension 1 outermost).
fn expanded_grid(grid: &InducingGrid) -> Vec<Vec<f64>> {
    let mut pts: Vec<Vec<f64>> = vec![vec![]];
    for axis in grid.axes() {
        pts = pts
            .iter()
            .flat_map(|p| {
                axis.iter().map(move |&u| {
                    let mut q = p.clone();
                    q.push(u);
                    q
                })
            })
            .collect();
    }
    pts
}

/// Global (flat) index of a multi-index, dimension 1 outermost.
fn flat(idx: &[usize], sizes: &[usize]) -> usize {
    idx.iter().zip(sizes).fold(0, |acc, (&a, &m)| acc * m + a)
}

/// All products of the axis eigenvalues, in flat order.
fn expanded_eigenvalues(b: &GriefBasis) -> Vec<f64> {
    let mut vals = vec![1.0];
    for i in 0..b.dims() {
        let ev = b.axis(i).unwrap().eigenvalues();
        vals = vals
            .iter()
            .flat_map(|v| ev.iter().map(move |e| v * e))
            .collect();
    }
    vals
}

fn max_abs_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    let mut m = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            m = m.max((a[(i, j)] - b[(i, j)]).abs());
        }
    }
    m
}

fn max_rel_diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    let mut m = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            let (x, y) = (a[(i, j)], b[(i, j)]);
            if x != y {
                m = m.max((x - y).abs() / x.abs().max(y.abs()));
            }
        }
    }
    m
}

#[test]
fn selection_matches_brute_force_on_kernel_spectra() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for case in 0..60 {
        let d = rng.random_range(1..=5);
        let isotropic = case % 3 == 0;
        let shared: Vec<f64> = {
            let m = rng.random_range(1..=6);
            let mut a: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
            a.sort_by(f64::total_cmp);
            a.dedup();
            a
        };
        let axes: Vec<Vec<f64>> = (0..d)
            .map(|_| {
                if isotropic {
                    return shared.clone();
                }
                let m = rng.random_range(1..=6);
                let mut a: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
                a.sort_by(f64::total_cmp);
                a.dedup();
                a
            })
            .collect();
        let ls: Vec<f64> = if isotropic {
            vec![0.4; d]
        } else {
            (0..d).map(|_| rng.random_range(0.2..1.0)).collect()
        };
        let grid = InducingGrid::from_axes(axes).unwrap();
        let m = grid.size().unwrap();
        let sizes = grid.sizes();
        for p in 1..=m {
            let b = GriefBasis::new(grid.clone(), &ls, p, &GriefBasisOptions::default()).unwrap();
            assert_eq!(b.len(), p);
            let all = expanded_eigenvalues(&b);
            let mut sorted = all.clone();
            sorted.sort_by(|a, b| b.total_cmp(a));
            for j in 0..p {
                let got = b.log_eigenvalues()[j].exp();
                assert!(
                    (got - sorted[j]).abs() <= 1e-12 * sorted[j],
                    "case {case} p {p} j {j}: {got} vs {}",
                    sorted[j]
                );
                // The selected multi-index has that eigenvalue.
                let at = all[flat(b.index(j).unwrap(), &sizes)];
                assert!((at - got).abs() <= 1e-12 * got);
            }
            // No multi-index is selected twice.
            let mut flats: Vec<usize> = (0..p).map(|j| flat(b.index(j).unwrap(), &sizes)).collect();
            flats.sort_unstable();
            flats.dedup();
            assert_eq!(flats.len(), p);
        }
    }
}

#[test]
fn phi_matches_expanded_kronecker_product() {
    let (n, d, mbar, p) = (30, 3, 5, 20);
    let ls = [0.3, 0.5, 0.8];
    let x = random_x(n, d, 1);
    let b = basis(x.as_ref(), mbar, &ls, p);
    assert_eq!(b.grid().sizes(), vec![5, 5, 5]);
    let m = 125;

    // Each axis: Q Λ Qᵀ = K + jitter, Q orthonormal (reference SE written independently).
    for (i, &l) in ls.iter().enumerate() {
        let ax = b.axis(i).unwrap();
        let (q, lam, u) = (ax.eigenvectors(), ax.eigenvalues(), ax.points());
        for a in 0..mbar {
            for c in 0..mbar {
                let rebuilt: f64 = (0..mbar).map(|k| q[(a, k)] * lam[k] * q[(c, k)]).sum();
                let k = se(&[u[a]], &[u[c]], &[l], 1.0) + if a == c { AXIS_JITTER } else { 0.0 };
                assert!((rebuilt - k).abs() < 1e-13, "axis {i} ({a}, {c})");
                let qtq: f64 = (0..mbar).map(|r| q[(r, a)] * q[(r, c)]).sum();
                assert!((qtq - f64::from(u8::from(a == c))).abs() < 1e-13);
            }
        }
        assert!(lam.windows(2).all(|w| w[0] >= w[1]));
    }

    // Expanded: K_XU (n × m), Q = ⊗ Q_i (m × m), eigenvalues ⊗ λ_i.
    let pts = expanded_grid(b.grid());
    let xr: Vec<Vec<f64>> = (0..n)
        .map(|r| (0..d).map(|c| x[(r, c)]).collect())
        .collect();
    let kxu = Mat::from_fn(n, m, |r, g| se(&xr[r], &pts[g], &ls, 1.0));
    let sizes = b.grid().sizes();
    let multi = |mut g: usize| {
        let mut idx = vec![0; d];
        for i in (0..d).rev() {
            idx[i] = g % sizes[i];
            g /= sizes[i];
        }
        idx
    };
    let qbig = Mat::from_fn(m, m, |g, h| {
        let (a, c) = (multi(g), multi(h));
        (0..d)
            .map(|i| b.axis(i).unwrap().eigenvectors()[(a[i], c[i])])
            .product::<f64>()
    });
    let all = expanded_eigenvalues(&b);
    let mut sorted = all.clone();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let kq = &kxu * &qbig;
    let reference = Mat::from_fn(n, p, |r, j| {
        let g = flat(b.index(j).unwrap(), &sizes);
        kq[(r, g)] / all[g].sqrt()
    });
    for (lam, s) in b.log_eigenvalues().iter().map(|l| l.exp()).zip(&sorted) {
        assert!((lam - s).abs() <= 1e-12 * s);
    }
    let phi = b.phi_block(x.as_ref()).unwrap();
    let err = max_abs_diff(phi.as_ref(), reference.as_ref());
    assert!(err <= 1e-12, "Φ vs expanded: {err:e}");
    let log = b.phi_block_log(x.as_ref()).unwrap();
    let prod = b.phi_block_product(x.as_ref()).unwrap();
    let rel = max_rel_diff(log.as_ref(), prod.as_ref());
    assert!(rel <= 1e-12, "log vs product form: {rel:e}");
}

#[test]
fn full_rank_basis_is_the_sor_kernel() {
    let (n, d, mbar) = (25, 2, 5);
    let ls = [0.35, 0.5];
    let x = random_x(n, d, 2);
    let b = basis(x.as_ref(), mbar, &ls, mbar * mbar);
    let phi = b.phi_block(x.as_ref()).unwrap();
    let pts = expanded_grid(b.grid());
    let xr: Vec<Vec<f64>> = (0..n)
        .map(|r| (0..d).map(|c| x[(r, c)]).collect())
        .collect();
    let kuu: Vec<Vec<f64>> = pts
        .iter()
        .map(|u| pts.iter().map(|v| se(u, v, &ls, 1.0)).collect())
        .collect();
    let chol = naive_cholesky(&kuu);
    let kux: Vec<Vec<f64>> = xr
        .iter()
        .map(|xa| pts.iter().map(|u| se(xa, u, &ls, 1.0)).collect())
        .collect();
    let solved: Vec<Vec<f64>> = kux.iter().map(|k| spd_solve(&chol, k)).collect();
    let mut err = 0.0f64;
    for r in 0..n {
        for c in 0..n {
            let sor: f64 = kux[r].iter().zip(&solved[c]).map(|(a, b)| a * b).sum();
            let low: f64 = (0..phi.ncols()).map(|j| phi[(r, j)] * phi[(c, j)]).sum();
            err = err.max((sor - low).abs());
        }
    }
    assert!(err <= 1e-10, "ΦΦᵀ vs K_XU K_UU⁻¹ K_UX: {err:e}");
    // And p = m asked through cap_to_grid gives the same basis.
    let capped = GriefBasis::new(
        b.grid().clone(),
        &ls,
        10_000,
        &GriefBasisOptions { cap_to_grid: true },
    )
    .unwrap();
    assert_eq!(capped.len(), 25);
    assert_eq!(capped.indices(), b.indices());
}

#[test]
fn axis_feature_derivatives_match_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let symmetric: Vec<f64> = (0..8).map(|k| -1.0 + 2.0 * k as f64 / 7.0).collect();
    let mut random: Vec<f64> = (0..7).map(|_| rng.random_range(-1.0..1.0)).collect();
    random.sort_by(f64::total_cmp);
    let x = Col::from_fn(40, |_| rng.random_range(-1.3..1.3));
    let h: f64 = 1e-5;
    for (points, l) in [(&symmetric, 0.3), (&symmetric, 0.6), (&random, 0.25)] {
        let ax = AxisBasis::new(points, l).unwrap();
        let plus = AxisBasis::new(points, l * h.exp()).unwrap();
        let minus = AxisBasis::new(points, l * (-h).exp()).unwrap();
        let cols: Vec<usize> = (0..points.len()).collect();
        let df = ax.feature_derivatives(x.as_ref(), &cols).unwrap();
        let fp = plus.features(x.as_ref(), &cols).unwrap();
        let fm = minus.features(x.as_ref(), &cols).unwrap();
        for (k, &lam) in ax.eigenvalues().iter().enumerate() {
            // Eigenpairs near round-off are ill-conditioned for both; skip them.
            if lam < 1e-8 * ax.eigenvalues()[0] {
                continue;
            }
            let scale = (0..x.nrows()).fold(0.0f64, |m, r| m.max(df[(r, k)].abs()));
            for r in 0..x.nrows() {
                let fd = (fp[(r, k)] - fm[(r, k)]) / (2.0 * h);
                assert!(
                    (df[(r, k)] - fd).abs() <= 1e-6 * scale.max(1.0),
                    "ℓ {l}, column {k} (λ = {lam:e}), row {r}: {} vs {fd}",
                    df[(r, k)]
                );
            }
        }
    }
}

#[test]
fn phi_derivatives_match_finite_differences() {
    let (n, d, mbar, p) = (20, 3, 6, 30);
    let ls = [0.4, 0.7, 1.1];
    let x = random_x(n, d, 4);
    let b = basis(x.as_ref(), mbar, &ls, p);
    let dphi = b.phi_derivatives_block(x.as_ref()).unwrap();
    assert_eq!(dphi.len(), d);
    let h: f64 = 1e-5;
    for i in 0..d {
        let mut lp = ls.to_vec();
        let mut lm = ls.to_vec();
        lp[i] *= h.exp();
        lm[i] *= (-h).exp();
        let bp = GriefBasis::new(b.grid().clone(), &lp, p, &GriefBasisOptions::default()).unwrap();
        let bm = GriefBasis::new(b.grid().clone(), &lm, p, &GriefBasisOptions::default()).unwrap();
        // The selection must not change across the step (frozen-selection derivative).
        assert_eq!(bp.indices(), b.indices());
        assert_eq!(bm.indices(), b.indices());
        let fp = bp.phi_block(x.as_ref()).unwrap();
        let fm = bm.phi_block(x.as_ref()).unwrap();
        let fd = Mat::from_fn(n, p, |r, j| (fp[(r, j)] - fm[(r, j)]) / (2.0 * h));
        let scale = dphi[i].norm_max();
        let err = max_abs_diff(dphi[i].as_ref(), fd.as_ref());
        assert!(err <= 1e-6 * scale, "axis {i}: {err:e} (scale {scale:e})");
    }
}

/// The contraction `⟨H, dΦ/d log ℓ_i⟩` formed column by column equals the one with the
/// derivative blocks materialised (same products in another order: rounding only).
#[test]
fn contracted_derivatives_match_the_materialised_blocks() {
    let (n, d, mbar, p) = (23, 3, 5, 40);
    let x = random_x(n, d, 9);
    let b = basis(x.as_ref(), mbar, &[0.5, 0.9, 1.4], p);
    let h = Mat::from_fn(n, p, |r, j| ((r * 7 + j * 3) as f64 * 0.37).sin());
    let got = b.contract_derivatives(x.as_ref(), h.as_ref()).unwrap();
    let dphi = b.phi_derivatives_block(x.as_ref()).unwrap();
    assert_eq!(got.len(), d);
    for (i, block) in dphi.iter().enumerate() {
        let mut want = 0.0;
        let mut scale = 0.0;
        for j in 0..p {
            for r in 0..n {
                want += h[(r, j)] * block[(r, j)];
                scale += (h[(r, j)] * block[(r, j)]).abs();
            }
        }
        assert!(
            (got[i] - want).abs() <= 1e-13 * scale,
            "axis {i}: {} vs {want}",
            got[i]
        );
    }
    assert!(matches!(
        b.contract_derivatives(x.as_ref(), h.as_ref().subcols(0, p - 1)),
        Err(ModelError::LengthMismatch { .. })
    ));
}

/// A basis rebuilt with its own selection at the same length scales is the same basis; a
/// given selection is checked.
#[test]
fn a_given_selection_rebuilds_the_basis_and_is_checked() {
    let (n, d) = (30, 2);
    let x = random_x(n, d, 12);
    let b = basis(x.as_ref(), 5, &[0.6, 0.9], 9);
    let same = b.with_lengthscales_frozen(&b.lengthscales()).unwrap();
    assert_eq!(same.indices(), b.indices());
    assert_eq!(same.log_eigenvalues(), b.log_eigenvalues());
    assert_eq!(
        same.phi_block(x.as_ref()).unwrap(),
        b.phi_block(x.as_ref()).unwrap()
    );
    let grid = b.grid().clone();
    let bad = |indices: Vec<usize>| {
        matches!(
            GriefBasis::with_indices(grid.clone(), &[0.6, 0.9], indices),
            Err(ModelError::InvalidOption {
                name: "indices",
                ..
            })
        )
    };
    assert!(bad(vec![]));
    assert!(bad(vec![0, 1, 2]));
    assert!(bad(vec![0, 5]));
    assert!(bad(vec![1, 2, 0, 0, 1, 2]));
    assert!(matches!(
        GriefBasis::with_indices(grid.clone(), &[0.6], vec![0, 0]),
        Err(ModelError::LengthMismatch { .. })
    ));
}

#[test]
fn streamed_stats_match_dense_products() {
    let (n, d) = (57, 3);
    let x = random_x(n, d, 5);
    let y = Col::from_fn(n, |r| (3.0 * x[(r, 0)]).sin() + x[(r, 2)]);
    let b = basis(x.as_ref(), 4, &[0.5, 0.6, 0.7], 25);
    let phi = b.phi_block(x.as_ref()).unwrap();
    let a = phi.transpose() * &phi;
    let r = phi.transpose() * &y;
    let yty: f64 = y.iter().map(|v| v * v).sum();
    for block in [1, 7, 56, 57, 100] {
        let s = b.stats(x.as_ref(), y.as_ref(), block).unwrap();
        assert_eq!(s.n, n);
        assert!(max_abs_diff(s.a.as_ref(), a.as_ref()) <= 1e-12 * a.norm_max());
        let rerr = (0..25).fold(0.0f64, |m, j| m.max((s.r[j] - r[j]).abs()));
        assert!(rerr <= 1e-12 * r.norm_max());
        assert!((s.yty - yty).abs() <= 1e-12 * yty);
    }
}

#[test]
fn grid_rule_follows_the_reference_code() {
    // Column 0: 3 distinct values; column 1: 40 distinct; column 2: constant.
    let n = 40;
    let x = Mat::from_fn(n, 3, |r, c| match c {
        0 => [2.0, -1.0, 0.5][r % 3],
        1 => (r as f64 * 0.37).sin() * 4.0,
        _ => 7.5,
    });
    let grid = InducingGrid::from_data(x.as_ref(), &GridOptions::default()).unwrap();
    assert_eq!(grid.sizes(), vec![3, 10, 1]);
    assert_eq!(grid.axis(0).unwrap(), &[-1.0, 0.5, 2.0]);
    assert_eq!(grid.axis(2).unwrap(), &[7.5]);
    let col1: Vec<f64> = x.col(1).iter().copied().collect();
    let lo = col1.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = col1.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let axis1 = grid.axis(1).unwrap();
    assert_eq!((axis1[0], axis1[9]), (lo, hi));
    for (k, u) in axis1.iter().enumerate() {
        assert!((u - (lo + (hi - lo) * k as f64 / 9.0)).abs() < 1e-14);
    }
    assert!((grid.log_size() - 30f64.ln()).abs() < 1e-14);
    assert_eq!(grid.size(), Some(30));

    // beyond_domain keeps m̄_i points: two outer ones beyond the range, the m̄_i − 2 inner
    // ones evenly spaced over [min, max].
    let x2 = Mat::from_fn(n, 3, |r, c| match c {
        0 => [2.0, -1.0, 0.5, 1.0][r % 4],
        1 => x[(r, 1)],
        _ => 7.5,
    });
    let g = InducingGrid::from_data(
        x2.as_ref(),
        &GridOptions {
            points_per_axis: 6,
            beyond_domain: 0.1,
        },
    )
    .unwrap();
    assert_eq!(g.sizes(), vec![4, 6, 1]);
    // Axis 0: 4 points = 4 distinct values, so 2 inner points evenly spaced, 2 outside.
    let a0 = g.axis(0).unwrap();
    assert_eq!(a0.len(), 4);
    assert!((a0[0] - (-1.3)).abs() < 1e-14 && (a0[3] - 2.3).abs() < 1e-14);
    assert_eq!((a0[1], a0[2]), (-1.0, 2.0));
    let pad = 0.1 * (hi - lo);
    let a1 = g.axis(1).unwrap();
    assert!((a1[0] - (lo - pad)).abs() < 1e-14 && (a1[5] - (hi + pad)).abs() < 1e-14);
    for (k, u) in a1[1..5].iter().enumerate() {
        assert!((u - (lo + (hi - lo) * k as f64 / 3.0)).abs() < 1e-14);
    }
    assert_eq!(g.axis(2).unwrap(), &[7.5], "constant axes are not widened");
    // Exactly m̄ distinct values: without widening the grid is the values, with it the inner
    // points are evenly spaced.
    let x3 = Mat::from_fn(n, 1, |r, _| [0.0, 1.0, 3.0, 4.0, 5.0, 9.0][r % 6]);
    let g = InducingGrid::from_data(
        x3.as_ref(),
        &GridOptions {
            points_per_axis: 6,
            beyond_domain: 0.5,
        },
    )
    .unwrap();
    assert_eq!(g.axis(0).unwrap(), &[-4.5, 0.0, 3.0, 6.0, 9.0, 13.5]);
    let g = InducingGrid::from_data(
        x3.as_ref(),
        &GridOptions {
            points_per_axis: 6,
            beyond_domain: 0.0,
        },
    )
    .unwrap();
    assert_eq!(g.axis(0).unwrap(), &[0.0, 1.0, 3.0, 4.0, 5.0, 9.0]);
    // A binary column with widening: just the two outer points.
    let xb = Mat::from_fn(n, 1, |r, _| (r % 2) as f64);
    let g = InducingGrid::from_data(
        xb.as_ref(),
        &GridOptions {
            points_per_axis: 10,
            beyond_domain: 0.25,
        },
    )
    .unwrap();
    assert_eq!(g.axis(0).unwrap(), &[-0.25, 1.25]);
    // m̄ = 1 on a varying column: NumPy's linspace(min, max, 1) = [min].
    let g = InducingGrid::from_data(
        x.as_ref(),
        &GridOptions {
            points_per_axis: 1,
            beyond_domain: 0.0,
        },
    )
    .unwrap();
    assert_eq!(g.axis(1).unwrap(), &[lo]);
    // A constant column still works in a basis (one eigenfunction on that axis).
    let b = GriefBasis::new(grid, &[1.0, 1.0, 1.0], 30, &GriefBasisOptions::default()).unwrap();
    assert!(b.indices().chunks(3).all(|idx| idx[2] == 0));
    assert!(b.phi_block(x.as_ref()).unwrap().norm_max().is_finite());

    let explicit = InducingGrid::from_axes(vec![vec![0.0, 1.0], vec![3.0]]).unwrap();
    assert_eq!(explicit.sizes(), vec![2, 1]);
}

#[test]
fn bad_input_gives_typed_errors() {
    let x = random_x(10, 2, 6);
    let grid = InducingGrid::from_data(x.as_ref(), &GridOptions::default()).unwrap();
    let opts = GriefBasisOptions::default();
    let err = |r: Result<GriefBasis, ModelError>| r.err().unwrap();
    assert!(matches!(
        err(GriefBasis::new(grid.clone(), &[1.0, 1.0], 0, &opts)),
        ModelError::InvalidOption { name: "p", .. }
    ));
    let e = err(GriefBasis::new(grid.clone(), &[1.0, 1.0], 101, &opts));
    assert!(matches!(e, ModelError::InvalidOption { name: "p", .. }));
    assert!(e.to_string().contains("cap_to_grid"), "{e}");
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            err(GriefBasis::new(grid.clone(), &[1.0, bad], 5, &opts)),
            ModelError::InvalidOption {
                name: "lengthscales",
                ..
            }
        ));
    }
    assert!(matches!(
        err(GriefBasis::new(grid.clone(), &[1.0], 5, &opts)),
        ModelError::LengthMismatch { .. }
    ));
    let b = GriefBasis::new(grid, &[1.0, 1.0], 5, &opts).unwrap();
    let mut bad_x = x.clone();
    bad_x[(3, 1)] = f64::NAN;
    assert!(matches!(
        b.phi_block(bad_x.as_ref()),
        Err(ModelError::NonFinite { row: 3, col: 1, .. })
    ));
    assert!(matches!(
        InducingGrid::from_data(bad_x.as_ref(), &GridOptions::default()),
        Err(ModelError::NonFinite { row: 3, col: 1, .. })
    ));
    assert!(matches!(
        b.phi_block(Mat::<f64>::zeros(4, 3).as_ref()),
        Err(ModelError::LengthMismatch {
            expected: 2,
            found: 3,
            ..
        })
    ));
    assert!(matches!(
        b.phi_derivatives_block(Mat::<f64>::zeros(4, 1).as_ref()),
        Err(ModelError::LengthMismatch { .. })
    ));
    let y = Col::<f64>::zeros(9);
    assert!(matches!(
        b.stats(x.as_ref(), y.as_ref(), 4),
        Err(ModelError::LengthMismatch {
            expected: 10,
            found: 9,
            ..
        })
    ));
    let mut y = Col::<f64>::zeros(10);
    assert!(matches!(
        b.stats(x.as_ref(), y.as_ref(), 0),
        Err(ModelError::InvalidOption {
            name: "block_rows",
            ..
        })
    ));
    y[2] = f64::INFINITY;
    assert!(matches!(
        b.stats(x.as_ref(), y.as_ref(), 4),
        Err(ModelError::NonFinite { row: 2, .. })
    ));
    assert!(matches!(
        b.stats(
            Mat::<f64>::zeros(0, 2).as_ref(),
            Col::<f64>::zeros(0).as_ref(),
            4
        ),
        Err(ModelError::EmptyData { .. })
    ));
    assert_eq!(
        b.phi_block(Mat::<f64>::zeros(0, 2).as_ref())
            .unwrap()
            .ncols(),
        5
    );
    assert!(matches!(
        InducingGrid::from_data(Mat::<f64>::zeros(0, 2).as_ref(), &GridOptions::default()),
        Err(ModelError::EmptyData { .. })
    ));
    for (points_per_axis, beyond_domain) in [(0, 0.0), (10, -0.1), (10, f64::NAN)] {
        assert!(matches!(
            InducingGrid::from_data(
                x.as_ref(),
                &GridOptions {
                    points_per_axis,
                    beyond_domain
                }
            ),
            Err(ModelError::InvalidOption { .. })
        ));
    }
    assert!(matches!(
        InducingGrid::from_axes(vec![vec![0.0, 0.0]]),
        Err(ModelError::InvalidOption { name: "axes", .. })
    ));
    assert!(matches!(
        InducingGrid::from_axes(vec![]),
        Err(ModelError::EmptyData { .. })
    ));
    assert!(matches!(
        InducingGrid::from_axes(vec![vec![1.0], vec![]]),
        Err(ModelError::EmptyData { .. })
    ));
    assert!(matches!(
        InducingGrid::from_axes(vec![vec![f64::NAN]]),
        Err(ModelError::NonFinite { .. })
    ));
    assert!(matches!(
        AxisBasis::new(&[0.0, 1.0], 1.0)
            .unwrap()
            .features(Col::<f64>::zeros(2).as_ref(), &[2]),
        Err(ModelError::InvalidOption {
            name: "columns",
            ..
        })
    ));
}

#[test]
fn huge_grids_give_finite_features() {
    // d = 33, m̄ = 10: m = 10^33 (log form, chosen automatically from d ≥ 30).
    let (n, d, p) = (200, 33, 100);
    let x = random_x(n, d, 7);
    let ls = vec![1.0; d];
    let b = basis(x.as_ref(), 10, &ls, p);
    assert_eq!(b.len(), p);
    assert_eq!(b.grid().size(), None);
    assert!((b.log_grid_size() - 33.0 * 10f64.ln()).abs() < 1e-10);
    let phi = b.phi_block(x.as_ref()).unwrap();
    assert!(phi.norm_max().is_finite() && phi.norm_max() > 0.0);
    let prod = b.phi_block_product(x.as_ref()).unwrap();
    let rel = max_rel_diff(phi.as_ref(), prod.as_ref());
    assert!(rel <= 1e-12, "log vs product form at d = 33: {rel:e}");
    let dphi = b.phi_derivatives_block(x.subrows(0, 20)).unwrap();
    assert!(dphi.iter().all(|m| m.norm_max().is_finite()));
    let y = Col::from_fn(n, |r| x[(r, 0)]);
    let s = b.stats(x.as_ref(), y.as_ref(), 64).unwrap();
    assert!(s.a.norm_max().is_finite());

    // d = 100 and d = 150 with m̄ = 100: m = 10^200 and 10^300.
    for d in [100, 150] {
        let x = random_x(8, d, 8);
        let b = basis(x.as_ref(), 100, &vec![0.5; d], 100);
        assert_eq!(b.grid().sizes(), vec![8; d], "8 distinct values per axis");
        let x = random_x(300, d, 9);
        let b = basis(x.as_ref(), 100, &vec![0.5; d], 100);
        assert!((b.log_grid_size() - d as f64 * 100f64.ln()).abs() < 1e-9);
        assert!(b.log_eigenvalues().iter().all(|v| v.is_finite()));
        let phi = b.phi_block(x.subrows(0, 10)).unwrap();
        assert!(phi.norm_max().is_finite() && phi.norm_max() > 0.0);
    }
}

/// `cargo test --release -p gp-models --test integration grief_phi_timing -- --ignored --nocapture`
#[test]
#[ignore = "timing only; run in release"]
fn grief_phi_timing() {
    let (n, d, p) = (10_000, 10, 1000);
    let x = random_x(n, d, 10);
    let b = basis(x.as_ref(), 10, &vec![1.0; d], p);
    let _ = b.phi_block(x.subrows(0, 100)).unwrap();
    let t = std::time::Instant::now();
    let phi = b.phi_block(x.as_ref()).unwrap();
    let product = t.elapsed();
    let t = std::time::Instant::now();
    let _ = b.phi_block_log(x.as_ref()).unwrap();
    let log = t.elapsed();
    let t = std::time::Instant::now();
    let _ = b.phi_derivatives_block(x.as_ref()).unwrap();
    let deriv = t.elapsed();
    let t = std::time::Instant::now();
    let y = Col::from_fn(n, |r| x[(r, 0)]);
    let _ = b.stats(x.as_ref(), y.as_ref(), 2048).unwrap();
    let stats = t.elapsed();
    println!(
        "n = {n}, d = {d}, p = {p}: phi {product:?} (log form {log:?}), derivatives {deriv:?}, \
         stats {stats:?}; |Φ|max = {}",
        phi.norm_max()
    );
}
