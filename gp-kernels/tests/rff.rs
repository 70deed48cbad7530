//! Random Fourier features: structure, determinism and Monte Carlo convergence.

use faer::Mat;
use gp_kernels::{
    FactorKind, Kernel, KernelError, Matern, MaternNu, ProductKernel, RandomFourierFeatures,
    SpectralSampling, SquaredExponential,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn pts() -> Mat<f64> {
    Mat::from_fn(12, 2, |i, j| {
        ((i * (3 + j)) as f64 * 0.414_213).fract() * 2.0
    })
}

/// Mean absolute error of `Φ(X)Φ(X)ᵀ` against `K(X, X)` over the off-diagonal pairs.
fn mae<K: SpectralSampling>(kernel: &K, x: &Mat<f64>, num_freqs: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rff = RandomFourierFeatures::sample(kernel, num_freqs, &mut rng).unwrap();
    let approx = rff.kernel_matrix(x.as_ref(), x.as_ref()).unwrap();
    let exact = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    let n = x.nrows();
    let mut sum = 0.0;
    for j in 0..n {
        for i in j + 1..n {
            sum += (approx[(i, j)] - exact[(i, j)]).abs();
        }
    }
    sum / (n * (n - 1) / 2) as f64
}

/// The error falls like `1/sqrt(D)`: the seed-averaged MAE at `D` and `16 D` has ratio
/// `≈ 4`. With 16 seeds × 66 pairs the relative Monte Carlo spread of each averaged MAE is
/// about 5–10 %, so a ratio in `[2.5, 6.5]` and a log-log slope in `[−0.65, −0.35]` fail
/// only for a wrong spectral density (a biased estimate plateaus: slope → 0).
fn check_convergence<K: SpectralSampling>(kernel: &K, name: &str) {
    let x = pts();
    let ds = [100usize, 400, 1600, 6400];
    let seeds = 16u64;
    let errs: Vec<f64> = ds
        .iter()
        .map(|&d| {
            (0..seeds)
                .map(|s| mae(kernel, &x, d, 1000 * s + d as u64))
                .sum::<f64>()
                / seeds as f64
        })
        .collect();
    for (a, b) in [(0, 2), (1, 3)] {
        let ratio = errs[a] / errs[b];
        assert!(
            (2.5..=6.5).contains(&ratio),
            "{name}: error ratio between D = {} and {} is {ratio} (errors {errs:?})",
            ds[a],
            ds[b]
        );
    }
    // Least-squares slope of log(err) against log(D).
    let lx: Vec<f64> = ds.iter().map(|&d| (d as f64).ln()).collect();
    let ly: Vec<f64> = errs.iter().map(|e| e.ln()).collect();
    let (mx, my) = (lx.iter().sum::<f64>() / 4.0, ly.iter().sum::<f64>() / 4.0);
    let slope = lx
        .iter()
        .zip(&ly)
        .map(|(a, b)| (a - mx) * (b - my))
        .sum::<f64>()
        / lx.iter().map(|a| (a - mx).powi(2)).sum::<f64>();
    eprintln!("{name}: seed-averaged MAE at D = {ds:?}: {errs:?}, log-log slope {slope:.3}");
    assert!(
        (-0.65..=-0.35).contains(&slope),
        "{name}: slope {slope} (errors {errs:?})"
    );
}

#[test]
fn se_estimate_converges_like_inverse_sqrt() {
    check_convergence(&SquaredExponential::new(vec![0.6, 1.4], 1.3).unwrap(), "SE");
}

#[test]
fn matern32_estimate_converges_like_inverse_sqrt() {
    check_convergence(
        &Matern::new(MaternNu::ThreeHalves, vec![0.6, 1.4], 1.3).unwrap(),
        "M32",
    );
}

#[test]
fn other_spectral_densities_are_unbiased_enough() {
    // Matérn 1/2, 5/2 and a mixed product kernel: at D = 6400 the MAE is ~1/80 of σ².
    let x = pts();
    let m12 = Matern::new(MaternNu::Half, vec![0.6, 1.4], 1.0).unwrap();
    let m52 = Matern::new(MaternNu::FiveHalves, vec![0.6, 1.4], 1.0).unwrap();
    let prod = ProductKernel::new(
        vec![
            FactorKind::Matern(MaternNu::Half),
            FactorKind::SquaredExponential,
        ],
        vec![0.6, 1.4],
        1.0,
    )
    .unwrap();
    assert!(mae(&m12, &x, 6400, 1) < 0.03);
    assert!(mae(&m52, &x, 6400, 2) < 0.03);
    assert!(mae(&prod, &x, 6400, 3) < 0.03);
}

#[test]
fn features_structure_and_determinism() {
    let kernel = SquaredExponential::new(vec![0.6, 1.4], 1.3).unwrap();
    let x = pts();
    let a = RandomFourierFeatures::sample(&kernel, 50, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
    let b = RandomFourierFeatures::sample(&kernel, 50, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
    assert_eq!(a, b);
    assert_eq!((a.num_freqs(), a.num_basis(), a.input_dim()), (50, 100, 2));
    let phi = a.features(x.as_ref()).unwrap();
    assert_eq!((phi.nrows(), phi.ncols()), (12, 100));
    // cos² + sin² = 1: the diagonal of ΦΦᵀ is exactly the variance.
    let k = a.kernel_matrix(x.as_ref(), x.as_ref()).unwrap();
    for i in 0..12 {
        assert!((k[(i, i)] - 1.3).abs() < 1e-13);
    }
    let xi = [x[(1, 0)], x[(1, 1)]];
    let xj = [x[(5, 0)], x[(5, 1)]];
    assert!((a.eval(&xi, &xj).unwrap() - k[(1, 5)]).abs() < 1e-13);
    assert!(a.eval(&[0.0], &xj).is_err());
    assert!(a.features(Mat::<f64>::zeros(3, 1).as_ref()).is_err());
}

#[test]
fn bad_rff_inputs_are_typed_errors() {
    let kernel = Matern::new(MaternNu::Half, vec![1.0], 1.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    assert!(matches!(
        RandomFourierFeatures::sample(&kernel, 0, &mut rng),
        Err(KernelError::InvalidArgument {
            name: "num_freqs",
            ..
        })
    ));
    let w = Mat::from_fn(3, 1, |i, _| i as f64);
    assert!(RandomFourierFeatures::from_frequencies(w.clone(), 0.0).is_err());
    assert!(RandomFourierFeatures::from_frequencies(w.clone(), f64::NAN).is_err());
    assert!(RandomFourierFeatures::from_frequencies(Mat::zeros(0, 1), 1.0).is_err());
    let mut bad = w.clone();
    bad[(1, 0)] = f64::INFINITY;
    assert!(RandomFourierFeatures::from_frequencies(bad, 1.0).is_err());
    let ok = RandomFourierFeatures::from_frequencies(w, 2.0).unwrap();
    let mut x = Mat::<f64>::zeros(2, 1);
    x[(0, 0)] = f64::NAN;
    assert!(ok.features(x.as_ref()).is_err());
    // Frequencies are finite and have the kernel's dimension.
    let f = kernel.sample_frequencies(1000, &mut rng).unwrap();
    assert_eq!(f.ncols(), kernel.input_dim());
    assert!(f.as_ref().is_all_finite());
}
