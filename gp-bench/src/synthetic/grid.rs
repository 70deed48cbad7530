//! Exact GP prior draws on tensor grids by Kronecker eigendecomposition, and the KMCG grid
//! data sets (spec `kmcg.md` §3.5).
//!
//! On a complete grid a separable kernel's matrix is `K = K₁ ⊗ … ⊗ K_D` with one small
//! factor per axis, so `K + σ²I = Q (Λ + σ²I) Qᵀ` from the factors' eigendecompositions and
//! `y = Q (Λ + σ²I)^{1/2} ε`, `ε ~ N(0, I)`, is an exact draw of `N(0, K + σ²I)` in
//! `O(N Σ G_l)` time, far beyond what a dense Cholesky could factor. Grid points are in the
//! Kronecker order: the **last** axis varies fastest.

use faer::{Col, Mat};
use gp_kernels::{Kernel, SquaredExponential};
use gp_structured::KroneckerEigen;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use super::standard_normal;
use crate::error::BenchError;

/// The `N × D` points of the tensor grid with the given axis coordinates, last axis fastest.
pub fn grid_points(axes: &[Vec<f64>]) -> Mat<f64> {
    let dims: Vec<usize> = axes.iter().map(Vec::len).collect();
    let n: usize = dims.iter().product();
    Mat::from_fn(n, axes.len(), |i, l| {
        let stride: usize = dims[l + 1..].iter().product();
        axes[l][(i / stride) % dims[l]]
    })
}

/// One exact draw of `N(0, K + σ²I)` at the tensor-grid points of `axes` (in the order of
/// [`grid_points`]) for a separable kernel, by the Kronecker eigendecomposition.
/// `noise_variance = 0` draws the latent function (tiny negative eigenvalues from rounding
/// are clamped to zero).
///
/// Errors: a kernel without a product structure, a kernel dimension different from the
/// number of axes, an empty axis, a negative noise variance, or a failed eigendecomposition.
pub fn kronecker_prior_draw<K: Kernel + ?Sized>(
    kernel: &K,
    axes: &[Vec<f64>],
    noise_variance: f64,
    rng: &mut impl Rng,
) -> Result<Col<f64>, BenchError> {
    if !(noise_variance >= 0.0 && noise_variance.is_finite()) {
        return Err(BenchError::InvalidArgument {
            name: "noise_variance",
            reason: format!("must be finite and non-negative, got {noise_variance}"),
        });
    }
    if axes.len() != kernel.input_dim() || axes.iter().any(Vec::is_empty) {
        return Err(BenchError::InvalidArgument {
            name: "axes",
            reason: format!(
                "{} axes (lengths {:?}) for a kernel of input dimension {}; need one non-empty axis per dimension",
                axes.len(),
                axes.iter().map(Vec::len).collect::<Vec<_>>(),
                kernel.input_dim()
            ),
        });
    }
    let Some(sep) = kernel.separable_factors() else {
        return Err(BenchError::InvalidArgument {
            name: "kernel",
            reason: "a Kronecker prior draw needs a separable (product) kernel".into(),
        });
    };
    let mut factors = Vec::with_capacity(axes.len());
    for (l, (axis, f)) in axes.iter().zip(&sep.factors).enumerate() {
        let pts = Mat::from_fn(axis.len(), 1, |i, _| axis[i]);
        let mut k = f.matrix(pts.as_ref(), pts.as_ref())?;
        if l == 0 {
            k *= faer::Scale(sep.scale);
        }
        factors.push(k);
    }
    let refs: Vec<_> = factors.iter().map(Mat::as_ref).collect();
    let eig = KroneckerEigen::from_matrices(&refs)?;
    let lambda = eig.eigenvalues();
    let z = standard_normal(lambda.nrows(), rng);
    let w = Mat::from_fn(lambda.nrows(), 1, |i, _| {
        (lambda[i].max(0.0) + noise_variance).sqrt() * z[i]
    });
    let y = eig.apply_eigenvectors(w.as_ref())?;
    Ok(y.col(0).to_owned())
}

/// Settings of [`kmcg_grid`]; the defaults are the paper's (SE kernel, `ℓ = 1`,
/// `sf² = 1`, `σ² = 1e-3`, jitter standard deviation `1e-3`, 100 test points).
#[derive(Debug, Clone, PartialEq)]
pub struct KmcgGridOptions {
    /// Points per axis `G_l` (the paper uses 10×10, 1000×1000, 100×100×100, 30⁴).
    pub sizes: Vec<usize>,
    /// SE length scale.
    pub lengthscale: f64,
    /// SE output variance.
    pub variance: f64,
    /// Noise variance of the targets.
    pub noise_variance: f64,
    /// Standard deviation of the independent jitter added to each axis coordinate.
    pub jitter_sd: f64,
    /// Test points, uniform on the grid's box.
    pub n_test: usize,
    /// Seed.
    pub seed: u64,
}

impl Default for KmcgGridOptions {
    fn default() -> Self {
        Self {
            sizes: vec![10, 10],
            lengthscale: 1.0,
            variance: 1.0,
            noise_variance: 1e-3,
            jitter_sd: 1e-3,
            n_test: 100,
            seed: 0,
        }
    }
}

/// A KMCG grid data set: the full tensor grid trains, `n_test` uniform points test.
#[derive(Debug, Clone)]
pub struct GridData {
    /// The jittered axis coordinates.
    pub axes: Vec<Vec<f64>>,
    /// The `N × D` training points (last axis fastest), `N = Π G_l`.
    pub x: Mat<f64>,
    /// One draw of `N(0, K + σ²I)` at `x`.
    pub y: Col<f64>,
    /// Test points, uniform on `Π [−G_l/4, G_l/4]`.
    pub x_test: Mat<f64>,
}

/// The KMCG grid data: axis `l` is `linspace(−G_l/4, G_l/4, G_l)` plus independent
/// `N(0, jitter_sd²)` jitter; targets are one exact draw of `N(0, K + σ²I)` by
/// [`kronecker_prior_draw`].
///
/// Errors: an empty size list, an axis with fewer than 2 points, or invalid kernel values.
pub fn kmcg_grid(options: &KmcgGridOptions) -> Result<GridData, BenchError> {
    if options.sizes.is_empty() || options.sizes.iter().any(|&g| g < 2) {
        return Err(BenchError::InvalidArgument {
            name: "sizes",
            reason: format!(
                "need at least one axis, each with ≥ 2 points, got {:?}",
                options.sizes
            ),
        });
    }
    let jitter = Normal::new(0.0, options.jitter_sd).map_err(|e| BenchError::InvalidArgument {
        name: "jitter_sd",
        reason: e.to_string(),
    })?;
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let axes: Vec<Vec<f64>> = options
        .sizes
        .iter()
        .map(|&g| {
            let half = g as f64 / 4.0;
            (0..g)
                .map(|i| -half + 2.0 * half * i as f64 / (g - 1) as f64 + jitter.sample(&mut rng))
                .collect()
        })
        .collect();
    let d = axes.len();
    let kernel = SquaredExponential::isotropic(d, options.lengthscale, options.variance)?;
    let y = kronecker_prior_draw(&kernel, &axes, options.noise_variance, &mut rng)?;
    let x_test = Mat::from_fn(options.n_test, d, |_, l| {
        let half = options.sizes[l] as f64 / 4.0;
        rng.random_range(-half..=half)
    });
    Ok(GridData {
        x: grid_points(&axes),
        axes,
        y,
        x_test,
    })
}
