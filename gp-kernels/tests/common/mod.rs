//! Shared test fixtures: one instance of every kernel of the crate.

#![allow(dead_code)]

use faer::Mat;
use gp_kernels::{FactorKind, Kernel, Matern, MaternNu, ProductKernel, SquaredExponential};

/// Every kernel type in 2 dimensions with unequal length scales, with a name.
pub fn all_kernels() -> Vec<(&'static str, Box<dyn Kernel>)> {
    let ls = vec![0.7, 1.9];
    let v = 1.6;
    vec![
        (
            "SE",
            Box::new(SquaredExponential::new(ls.clone(), v).unwrap()),
        ),
        (
            "Matern12",
            Box::new(Matern::new(MaternNu::Half, ls.clone(), v).unwrap()),
        ),
        (
            "Matern32",
            Box::new(Matern::new(MaternNu::ThreeHalves, ls.clone(), v).unwrap()),
        ),
        (
            "Matern52",
            Box::new(Matern::new(MaternNu::FiveHalves, ls.clone(), v).unwrap()),
        ),
        (
            "Product(SE, M32)",
            Box::new(
                ProductKernel::new(
                    vec![
                        FactorKind::SquaredExponential,
                        FactorKind::Matern(MaternNu::ThreeHalves),
                    ],
                    ls.clone(),
                    v,
                )
                .unwrap(),
            ),
        ),
        (
            "Product(M12, M52)",
            Box::new(
                ProductKernel::new(
                    vec![
                        FactorKind::Matern(MaternNu::Half),
                        FactorKind::Matern(MaternNu::FiveHalves),
                    ],
                    ls,
                    v,
                )
                .unwrap(),
            ),
        ),
    ]
}

/// `n` deterministic, irregular points in `[0, 3)²`, with a duplicate of point 0 at the end
/// (so `K` has an off-diagonal `r = 0` entry).
pub fn points(n: usize) -> Mat<f64> {
    Mat::from_fn(n, 2, |i, j| {
        let i = if i == n - 1 { 0 } else { i };
        (((i * 7 + j * 13) as f64 * 0.618_033_988_75).fract()) * 3.0
    })
}
