//! The LOVE low-rank covariance against the dense SKI posterior covariance as the rank grows.

use crate::ski_support;

use gp_kernels::SquaredExponential;
use gp_models::{LoveOptions, LoveStart, Ski};
use ski_support::{data, test_points, tight, DenseSki};

fn errors(ski: &Ski<SquaredExponential>, start: LoveStart, ranks: &[usize]) -> Vec<f64> {
    let dense = DenseSki::new(ski);
    let d = ski.input_dim();
    let xt = test_points(15, d, 0.2, 1.8, 41);
    let want = dense.covariance(xt.as_ref());
    ranks
        .iter()
        .map(|&k| {
            let love = ski
                .love(&LoveOptions {
                    rank: k,
                    start,
                    ..LoveOptions::default()
                })
                .unwrap();
            assert!(love.rank() <= k);
            let cov = love.latent_covariance(xt.as_ref()).unwrap();
            let var = love.latent_variance(xt.as_ref()).unwrap();
            for i in 0..15 {
                assert!((var[i] - cov[(i, i)].max(0.0)).abs() < 1e-12);
                for j in 0..15 {
                    assert!((cov[(i, j)] - cov[(j, i)]).abs() < 1e-12);
                }
            }
            (&cov - &want).norm_l2() / want.norm_l2()
        })
        .collect()
}

#[test]
fn love_converges_to_dense_covariance_1d() {
    let (x, y) = data(150, 1, 2.0, 40);
    let kernel = SquaredExponential::new(vec![0.3], 1.0).unwrap();
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.01, &tight(vec![50])).unwrap();
    let ranks = [2, 5, 10, 20, 50];
    let errs = errors(&ski, LoveStart::AverageColumn, &ranks);
    eprintln!("LOVE relative errors (average column) {errs:?}");
    for k in 1..errs.len() {
        assert!(errs[k] <= errs[k - 1] * 1.0001 + 1e-12, "{errs:?}");
    }
    assert!(
        errs[0] > 1e-2,
        "rank 2 should be visibly approximate: {errs:?}"
    );
    assert!(errs[4] < 1e-6, "{errs:?}");
    let errs_y = errors(&ski, LoveStart::Targets, &ranks);
    eprintln!("LOVE relative errors (targets) {errs_y:?}");
    assert!(errs_y[4] < 1e-6, "{errs_y:?}");
}

#[test]
fn love_converges_to_dense_covariance_2d() {
    let (x, y) = data(200, 2, 2.0, 42);
    let kernel = SquaredExponential::new(vec![0.6, 0.5], 1.0).unwrap();
    let ski = Ski::fit(kernel, x.as_ref(), y.as_ref(), 0.02, &tight(vec![14, 15])).unwrap();
    let ranks = [4, 16, 64, 200];
    let errs = errors(&ski, LoveStart::AverageColumn, &ranks);
    eprintln!("LOVE relative errors 2-D {errs:?}");
    for k in 1..errs.len() {
        assert!(errs[k] <= errs[k - 1] * 1.0001 + 1e-12, "{errs:?}");
    }
    assert!(errs[3] < 1e-6, "{errs:?}");
}
