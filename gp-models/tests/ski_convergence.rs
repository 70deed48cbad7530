//! SKI converges to the exact GP as the grid refines (smooth 1-D problem).

use crate::ski_support;

use gp_kernels::SquaredExponential;
use gp_models::{ExactGp, Ski};
use ski_support::{data, test_points, tight};

#[test]
fn mean_error_decreases_with_grid_size() {
    let (x, y) = data(200, 1, 5.0, 11);
    let kernel = SquaredExponential::new(vec![0.5], 1.0).unwrap();
    let sigma2 = 0.01;
    let exact = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), sigma2).unwrap();
    let xt = test_points(50, 1, 0.1, 4.9, 12);
    let want = exact.predict_mean(xt.as_ref()).unwrap();
    let want_var = exact.predict_latent_variance(xt.as_ref()).unwrap();
    let mut errors = Vec::new();
    let mut var_errors = Vec::new();
    for m in [12, 24, 48, 96] {
        let ski = Ski::fit(
            kernel.clone(),
            x.as_ref(),
            y.as_ref(),
            sigma2,
            &tight(vec![m]),
        )
        .unwrap();
        let mean = ski.predict_mean(xt.as_ref()).unwrap();
        errors.push((&mean - &want).norm_max());
        let var = ski.predict_latent_variance(xt.as_ref()).unwrap();
        var_errors.push((&var - &want_var).norm_max());
    }
    eprintln!("mean errors {errors:?}, variance errors {var_errors:?}");
    for k in 1..errors.len() {
        assert!(errors[k] < errors[k - 1], "mean errors {errors:?}");
        assert!(
            var_errors[k] < var_errors[k - 1],
            "variance errors {var_errors:?}"
        );
    }
    // Cubic convolution: the kernel error is O(h³); at h ≈ ℓ/9 it is well below the noise.
    assert!(errors[3] < 2e-4, "mean errors {errors:?}");
}
