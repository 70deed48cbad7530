//! Every synthetic generator: shape, documented ranges, and seed determinism; the
//! Kronecker prior draw against a dense reference.

use faer::Mat;
use gp_bench::synthetic::grid::{grid_points, kmcg_grid, kronecker_prior_draw, KmcgGridOptions};
use gp_bench::synthetic::mixture::{gaussian_mixture, MixtureOptions};
use gp_bench::synthetic::poisson::{poisson_counts, PoissonOptions};
use gp_bench::synthetic::reconstruction::grief_reconstruction;
use gp_bench::synthetic::sine::{gsgp_sine, SINE_TEST_POINTS};
use gp_bench::synthetic::{gp_prior_draw, standard_normal, uniform_inputs};
use gp_kernels::{Kernel, Matern, MaternNu, SquaredExponential};
use gp_linalg::Cholesky;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[test]
fn sine_shape_range_and_seed() {
    let a = gsgp_sine(200, 5).expect("sine");
    assert_eq!((a.x.nrows(), a.x.ncols(), a.y.nrows()), (200, 1, 200));
    assert_eq!(
        (a.x_test.nrows(), a.y_test.nrows()),
        (SINE_TEST_POINTS, SINE_TEST_POINTS)
    );
    assert!((0..200).all(|i| a.x[(i, 0)] >= -1.0 && a.x[(i, 0)] < 1.0));
    assert!((1..200).all(|i| a.x[(i - 1, 0)] <= a.x[(i, 0)]), "sorted");
    // y = sin(2πx + φ) with |φ| ≤ 0.125: within 0.125 of the noise-free sine.
    let tau = 2.0 * std::f64::consts::PI;
    assert!((0..200).all(|i| (a.y[i] - (tau * a.x[(i, 0)]).sin()).abs() <= 0.1251));
    assert_eq!(a.x_test[(0, 0)], a.x[(0, 0)]);
    assert_eq!(a.x_test[(SINE_TEST_POINTS - 1, 0)], a.x[(199, 0)]);
    let b = gsgp_sine(200, 5).expect("sine");
    assert_eq!(a.y, b.y);
    assert_ne!(a.y, gsgp_sine(200, 6).expect("sine").y);
    assert!(gsgp_sine(1, 0).is_err());
}

#[test]
fn cholesky_prior_draw_is_seeded() {
    let k = Matern::isotropic(MaternNu::ThreeHalves, 2, 0.3, 2.0).expect("kernel");
    let x = uniform_inputs(50, 2, 0.0, 1.0, &mut ChaCha8Rng::seed_from_u64(1));
    let a = gp_prior_draw(&k, x.as_ref(), &mut ChaCha8Rng::seed_from_u64(2)).expect("draw");
    let b = gp_prior_draw(&k, x.as_ref(), &mut ChaCha8Rng::seed_from_u64(2)).expect("draw");
    assert_eq!(a.nrows(), 50);
    assert_eq!(a, b);
}

#[test]
fn grid_points_last_axis_fastest() {
    let p = grid_points(&[vec![0.0, 1.0], vec![10.0, 20.0, 30.0]]);
    assert_eq!((p.nrows(), p.ncols()), (6, 2));
    assert_eq!((p[(0, 0)], p[(0, 1)]), (0.0, 10.0));
    assert_eq!((p[(1, 0)], p[(1, 1)]), (0.0, 20.0));
    assert_eq!((p[(3, 0)], p[(3, 1)]), (1.0, 10.0));
    assert_eq!((p[(5, 0)], p[(5, 1)]), (1.0, 30.0));
}

/// `y = A z` with `A Aᵀ = K + σ²I` and `A` square and invertible gives
/// `yᵀ (K + σ²I)⁻¹ y = zᵀ z` exactly: checked against a dense Cholesky of the grid's kernel
/// matrix, with `z` regenerated from the same seed.
#[test]
fn kronecker_draw_has_the_dense_covariance() {
    let kernel = SquaredExponential::new(vec![0.7, 0.4], 1.5).expect("kernel");
    let axes = vec![vec![0.0, 0.3, 0.9, 1.4], vec![-1.0, -0.2, 0.5]];
    let sigma2 = 0.05;
    let y = kronecker_prior_draw(&kernel, &axes, sigma2, &mut ChaCha8Rng::seed_from_u64(9))
        .expect("draw");
    let z = standard_normal(12, &mut ChaCha8Rng::seed_from_u64(9));
    let x = grid_points(&axes);
    let mut k = kernel.matrix(x.as_ref(), x.as_ref()).expect("matrix");
    for i in 0..12 {
        k[(i, i)] += sigma2;
    }
    let chol = Cholesky::new(k.as_ref()).expect("chol");
    let ym = Mat::from_fn(12, 1, |i, _| y[i]);
    let alpha = chol.solve(ym.as_ref()).expect("solve");
    let quad: f64 = (0..12).map(|i| y[i] * alpha[(i, 0)]).sum();
    let zz = z.squared_norm_l2();
    assert!((quad - zz).abs() < 1e-9 * zz.max(1.0), "{quad} vs {zz}");
}

#[test]
fn kronecker_draw_rejects_bad_input() {
    let kernel = SquaredExponential::new(vec![0.7, 0.4], 1.5).expect("kernel");
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    assert!(kronecker_prior_draw(&kernel, &[vec![0.0, 1.0]], 0.1, &mut rng).is_err());
    assert!(kronecker_prior_draw(&kernel, &[vec![0.0], vec![]], 0.1, &mut rng).is_err());
    assert!(kronecker_prior_draw(&kernel, &[vec![0.0], vec![1.0]], -1.0, &mut rng).is_err());
}

#[test]
fn kmcg_grid_shape_range_and_seed() {
    let opts = KmcgGridOptions {
        sizes: vec![10, 8],
        n_test: 20,
        seed: 4,
        ..KmcgGridOptions::default()
    };
    let g = kmcg_grid(&opts).expect("grid");
    assert_eq!((g.x.nrows(), g.x.ncols(), g.y.nrows()), (80, 2, 80));
    assert_eq!((g.x_test.nrows(), g.x_test.ncols()), (20, 2));
    assert_eq!(g.axes[0].len(), 10);
    // Axis 0: linspace(−2.5, 2.5, 10) plus jitter of sd 1e-3.
    assert!((g.axes[0][0] + 2.5).abs() < 1e-2);
    assert!((g.axes[0][9] - 2.5).abs() < 1e-2);
    assert!((0..20).all(|i| g.x_test[(i, 1)].abs() <= 2.0));
    let h = kmcg_grid(&opts).expect("grid");
    assert_eq!(g.y, h.y);
    assert_eq!(g.x_test, h.x_test);
    let other = kmcg_grid(&KmcgGridOptions {
        seed: 5,
        ..opts.clone()
    })
    .expect("grid");
    assert_ne!(g.y, other.y);
    assert!(kmcg_grid(&KmcgGridOptions {
        sizes: vec![1],
        ..opts
    })
    .is_err());
}

#[test]
fn poisson_counts_shape_and_seeds() {
    let opts = PoissonOptions {
        latent_seed: 1,
        count_seed: 2,
        ..PoissonOptions::default()
    };
    let a = poisson_counts(&opts).expect("counts");
    assert_eq!((a.x.nrows(), a.f.nrows(), a.y.nrows()), (100, 100, 100));
    assert_eq!((a.x[(0, 0)], a.x[(99, 0)]), (0.0, 1.0));
    assert!((0..100).all(|i| a.y[i] >= 0.0 && a.y[i].fract() == 0.0));
    // New counts, same latent rates.
    let b = poisson_counts(&PoissonOptions {
        count_seed: 3,
        ..opts
    })
    .expect("counts");
    assert_eq!(a.f, b.f);
    assert_ne!(a.y, b.y);
    let c = poisson_counts(&opts).expect("counts");
    assert_eq!(a.y, c.y);
}

#[test]
fn mixture_shape_and_seeds() {
    let opts = MixtureOptions {
        per_class: 30,
        ..MixtureOptions::default()
    };
    let a = gaussian_mixture(&opts).expect("mixture");
    assert_eq!((a.x.nrows(), a.x.ncols()), (300, 3));
    assert_eq!(a.labels.len(), 300);
    assert_eq!((a.labels[0], a.labels[299]), (0, 9));
    assert_eq!((a.means.nrows(), a.covariances.len()), (10, 10));
    // Covariance eigenvalues are in (0.001, 0.1): the trace is in (0.003, 0.3).
    for c in &a.covariances {
        let tr = c[(0, 0)] + c[(1, 1)] + c[(2, 2)];
        assert!(tr > 0.003 && tr < 0.3, "trace {tr}");
    }
    // The sample seed changes the samples only.
    let b = gaussian_mixture(&MixtureOptions {
        sample_seed: 1,
        ..opts
    })
    .expect("mixture");
    assert_eq!(a.means, b.means);
    assert_ne!(a.x, b.x);
    assert_eq!(a.x, gaussian_mixture(&opts).expect("mixture").x);
    assert!(gaussian_mixture(&MixtureOptions { classes: 0, ..opts }).is_err());
}

#[test]
fn grief_reconstruction_shape_range_and_seed() {
    let a = grief_reconstruction(100, 100, 3).expect("data");
    assert_eq!((a.x.nrows(), a.x.ncols()), (100, 100));
    let r = 3f64.sqrt();
    assert!((0..100).all(|i| (0..100).all(|j| a.x[(i, j)].abs() <= r)));
    assert_eq!((a.split.train.len(), a.split.test.len()), (50, 50));
    let b = grief_reconstruction(100, 100, 3).expect("data");
    assert_eq!(a.x, b.x);
    assert_eq!(a.split, b.split);
    assert_ne!(a.x, grief_reconstruction(100, 100, 4).expect("data").x);
    assert!(grief_reconstruction(100, 0, 0).is_err());
    // Unit variance per coordinate (uniform on ±√3): the mean square of 10⁴ values is within
    // 5% of 1 (its standard error is ~0.9%).
    let ms = (0..100)
        .flat_map(|i| (0..100).map(move |j| (i, j)))
        .map(|(i, j)| a.x[(i, j)] * a.x[(i, j)])
        .sum::<f64>()
        / 1e4;
    assert!((ms - 1.0).abs() < 0.05, "{ms}");
}
