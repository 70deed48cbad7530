//! End-to-end smoke test of the demo at a small size: data drawn from a known GP, trained
//! from wrong hyperparameters, must predict the latent function well and be calibrated.

use gp_bench::demo::{run, DemoOptions};

#[test]
fn demo_recovers_a_known_gp_at_small_size() {
    let options = DemoOptions {
        n_train: 200,
        n_test: 200,
        lengthscales: vec![0.3, 0.6],
        restarts: 0,
        ..DemoOptions::default()
    };
    let report = run(&options).expect("demo runs");
    // Noise sd is 0.1; a trained exact GP on 200 points of a smooth 2-D draw predicts the
    // latent function far better than the noise level.
    assert!(
        report.latent_rmse < 0.1,
        "latent RMSE {}",
        report.latent_rmse
    );
    // 200 test points: the binomial sd of the coverage is ~1.5%, so 95% ± 6% is > 3 sd.
    assert!(
        (report.coverage95 - 0.95).abs() < 0.06,
        "coverage {}",
        report.coverage95
    );
    assert_eq!(report.hyperparameters.len(), 4);
    assert!(report
        .metrics
        .to_markdown()
        .contains("log marginal likelihood"));
}
