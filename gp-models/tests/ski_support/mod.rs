//! Shared helpers of the SKI tests: data and the dense SKI reference (dense `W` from the
//! expanded rows, dense `K_G` from the kernel at the grid points, Cholesky).
#![allow(dead_code)]

use faer::{Col, Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::Cholesky;
use gp_models::grid::GridSettings;
use gp_models::KrylovSettings;
use gp_models::{Ski, SkiOptions};
use gp_structured::{InterpolationOptions, InterpolationWeights, RegularGrid};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `n` points uniform in `[0, width]^d`, targets a smooth function plus noise of std 0.1.
pub fn data(n: usize, d: usize, width: f64, seed: u64) -> (Mat<f64>, Col<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>() * width);
    let y = Col::from_fn(n, |i| {
        let mut v = (2.0 * x[(i, 0)]).sin();
        for l in 1..d {
            v *= (1.3 * x[(i, l)] + 0.3).cos();
        }
        v + 0.1 * (rng.random::<f64>() - 0.5) * 3.46
    });
    (x, y)
}

/// Dense `W` (`n × m`) from the expanded rows.
pub fn dense_w(w: &InterpolationWeights) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(w.num_rows(), w.num_cols());
    for i in 0..w.num_rows() {
        let (cols, vals) = w.row(i).expect("row in range");
        for (c, v) in cols.into_iter().zip(vals) {
            out[(i, c)] += v;
        }
    }
    out
}

/// Dense interpolation weights of test points on the model's grid.
pub fn dense_w_test(grid: &RegularGrid, x: MatRef<'_, f64>) -> Mat<f64> {
    let w = InterpolationWeights::new(grid, x, InterpolationOptions::default()).expect("inside");
    dense_w(&w)
}

/// Dense `K_G` from the kernel at the grid points (independent of the Toeplitz code).
pub fn dense_kg<K: Kernel>(kernel: &K, grid: &RegularGrid) -> Mat<f64> {
    let g = grid.points();
    kernel
        .matrix(g.as_ref(), g.as_ref())
        .expect("kernel matrix")
}

/// The dense SKI reference of a model.
pub struct DenseSki {
    pub w: Mat<f64>,
    pub kg: Mat<f64>,
    pub khat: Mat<f64>,
    pub chol: Cholesky,
    pub alpha: Col<f64>,
    pub y: Col<f64>,
    pub grid: RegularGrid,
}

impl DenseSki {
    pub fn new<K: Kernel>(ski: &Ski<K>) -> Self {
        let w = dense_w(ski.interpolation());
        let kg = dense_kg(ski.kernel(), ski.grid());
        Self::from_parts(
            w,
            kg,
            ski.noise_variance(),
            ski.train_y().to_owned(),
            ski.grid().clone(),
        )
    }

    pub fn from_parts(
        w: Mat<f64>,
        kg: Mat<f64>,
        sigma2: f64,
        y: Col<f64>,
        grid: RegularGrid,
    ) -> Self {
        let n = w.nrows();
        let khat = &w * &kg * w.transpose() + Mat::<f64>::identity(n, n) * sigma2;
        let chol = Cholesky::new(khat.as_ref()).expect("SPD");
        let alpha = chol.solve_col(y.as_ref()).expect("solve");
        Self {
            w,
            kg,
            khat,
            chol,
            alpha,
            y,
            grid,
        }
    }

    pub fn lml(&self) -> f64 {
        let n = self.y.nrows() as f64;
        let fit = self.y.transpose() * &self.alpha;
        -0.5 * fit - 0.5 * self.chol.log_det() - 0.5 * n * (2.0 * std::f64::consts::PI).ln()
    }

    pub fn mean(&self, x: MatRef<'_, f64>) -> Col<f64> {
        let ws = dense_w_test(&self.grid, x);
        &ws * (&self.kg * (self.w.transpose() * &self.alpha))
    }

    pub fn covariance(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let ws = dense_w_test(&self.grid, x);
        let prior = &ws * &self.kg * ws.transpose();
        let cross = &self.w * &self.kg * ws.transpose();
        let solved = self.chol.solve(cross.as_ref()).expect("solve");
        prior - cross.transpose() * solved
    }

    /// The subtracted term `k̃*ᵀ K̂⁻¹ k̃*` of the covariance.
    pub fn explained(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let ws = dense_w_test(&self.grid, x);
        let cross = &self.w * &self.kg * ws.transpose();
        let solved = self.chol.solve(cross.as_ref()).expect("solve");
        cross.transpose() * solved
    }
}

/// Options with tight solves for comparisons with the dense reference.
pub fn tight(grid_sizes: Vec<usize>) -> SkiOptions {
    SkiOptions {
        grid: GridSettings {
            sizes: grid_sizes,
            ..GridSettings::default()
        },
        krylov: KrylovSettings {
            tolerance: 1e-11,
            prediction_tolerance: 1e-11,
            variance_tolerance: 1e-11,
            max_iterations: 5000,
            ..KrylovSettings::default()
        },
        ..SkiOptions::default()
    }
}

/// Test points uniform in `[lo, hi]^d`.
pub fn test_points(b: usize, d: usize, lo: f64, hi: f64, seed: u64) -> Mat<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Mat::from_fn(b, d, |_, _| lo + (hi - lo) * rng.random::<f64>())
}

/// Max absolute entry of a difference of columns.
pub fn max_abs_diff(a: &Col<f64>, b: &Col<f64>) -> f64 {
    (a - b).norm_max()
}
