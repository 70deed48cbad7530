//! Shared helpers of the GSGP tests: pairs of `Ski` and `Gsgp` models on the same data,
//! options and grid.
#![allow(dead_code)]

pub(crate) use crate::ski_support;

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::{Gsgp, GsgpOptions, GsgpSolver, Ski, SkiOptions};

#[allow(unused_imports)]
pub use ski_support::{data, test_points, tight, DenseSki};

/// The GSGP options of the same grid, solves and probes as the SKI `options`.
pub fn gsgp_options(options: &SkiOptions) -> GsgpOptions {
    GsgpOptions::from_parts(options.grid.clone(), options.krylov, options.estimator)
}

/// A SKI and a GSGP model of the same data with the same (tight) options.
pub struct Pair {
    pub ski: Ski<SquaredExponential>,
    pub gsgp: Gsgp<SquaredExponential>,
    pub x: Mat<f64>,
    pub y: Col<f64>,
}

/// The three test problems: d = 1 (n 150, m 40), d = 2 (n 200, 20×25), d = 3 (n 300,
/// 8×10×9).
pub fn problem(d: usize, solver: GsgpSolver) -> Pair {
    let (n, sizes, lengths, width, seed) = match d {
        1 => (150, vec![40], vec![0.6], 4.0, 1),
        2 => (200, vec![20, 25], vec![0.5, 0.7], 2.0, 2),
        _ => (300, vec![8, 10, 9], vec![0.6, 0.8, 0.7], 1.5, 3),
    };
    let (x, y) = data(n, d, width, seed);
    let kernel = SquaredExponential::new(lengths, 1.1).unwrap();
    let ski_opts: SkiOptions = tight(sizes);
    let mut opts = gsgp_options(&ski_opts);
    opts.solver = solver;
    let ski = Ski::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.05, &ski_opts).unwrap();
    let gsgp = Gsgp::fit(kernel, x.as_ref(), y.as_ref(), 0.05, &opts).unwrap();
    Pair { ski, gsgp, x, y }
}

/// Test points inside the training range.
pub fn tests_for(pair: &Pair, b: usize) -> Mat<f64> {
    let d = pair.x.ncols();
    let hi = (0..d)
        .map(|l| {
            (0..pair.x.nrows())
                .map(|i| pair.x[(i, l)])
                .fold(f64::MIN, f64::max)
        })
        .fold(f64::MAX, f64::min);
    test_points(b, d, 0.0, hi, 17)
}

/// `max |a − b| / max(|b|, floor)`.
pub fn rel_diff_mat(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    (a - b).norm_max() / b.norm_max().max(1e-300)
}

/// `max |a − b| / max |b|`.
pub fn rel_diff_col(a: &Col<f64>, b: &Col<f64>) -> f64 {
    (a - b).norm_max() / b.norm_max().max(1e-300)
}
