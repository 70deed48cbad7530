//! The exact GP's gradient at extreme scales: variance and noise near 1e-300 make the entries
//! of ααᵀ overflow (~1e600) although the gradient is finite. Scaling `K`, `σ²` by `s` and `y`
//! by `√s` leaves the gradient unchanged (and moves the LML by `−(n/2) log s`), which gives a
//! reference at ordinary scale.

use faer::{Col, Mat};
use gp_kernels::SquaredExponential;
use gp_models::prelude::*;

#[test]
fn gradient_at_tiny_variances_equals_the_rescaled_problem() {
    let n = 25;
    let x = Mat::from_fn(n, 1, |i, _| i as f64 * 0.12);
    let y = Col::from_fn(n, |i| {
        (i as f64 * 0.12 * 2.0).sin() + 0.1 * ((i * 7 % 5) as f64 - 2.0)
    });
    // s = 2⁻⁹⁹⁶ ≈ 1.5e-300, √s = 2⁻⁴⁹⁸.
    let s = 2f64.powi(-996);
    let root = 2f64.powi(-498);
    let reference = ExactGp::fit(
        SquaredExponential::new(vec![1.0], 1.0).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.01,
    )
    .unwrap();
    let y_small = Col::from_fn(n, |i| y[i] * root);
    let tiny = ExactGp::fit(
        SquaredExponential::new(vec![1.0], s).unwrap(),
        x.as_ref(),
        y_small.as_ref(),
        0.01 * s,
    )
    .unwrap();
    let (lml_ref, grad_ref) = reference.lml_and_grad();
    let (lml_tiny, grad_tiny) = tiny.lml_and_grad();
    assert!(grad_tiny.iter().all(|g| g.is_finite()), "{grad_tiny:?}");
    for (a, b) in grad_tiny.iter().zip(&grad_ref) {
        assert!((a - b).abs() <= 1e-10 * (1.0 + b.abs()), "{a} vs {b}");
    }
    let shift = -0.5 * n as f64 * s.ln();
    assert!(
        ((lml_tiny - lml_ref) - shift).abs() < 1e-8 * shift.abs(),
        "{lml_tiny} {lml_ref}"
    );
    // Targets of ordinary size at tiny variances: α ≈ 1e300, its outer product overflows.
    // grad = ½(A/s − B) with A = αᵀ∂Kα and B = tr(K⁻¹∂K) of the unit-scale problem, which
    // come from the unit-scale gradients for y and 2y (½(A − B) and ½(4A − B)).
    let y2 = Col::from_fn(n, |i| 2.0 * y[i]);
    let (_, grad_ref2) = ExactGp::fit(
        SquaredExponential::new(vec![1.0], 1.0).unwrap(),
        x.as_ref(),
        y2.as_ref(),
        0.01,
    )
    .unwrap()
    .lml_and_grad();
    let (_, grad_big) = ExactGp::fit(
        SquaredExponential::new(vec![1.0], s).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.01 * s,
    )
    .unwrap()
    .lml_and_grad();
    assert!(grad_big.iter().all(|g| g.is_finite()), "{grad_big:?}");
    for q in 0..grad_big.len() {
        let a = (grad_ref2[q] - grad_ref[q]) * 2.0 / 3.0;
        let b = a - 2.0 * grad_ref[q];
        let expected = 0.5 * (a / s - b);
        assert!(
            (grad_big[q] - expected).abs() <= 1e-9 * expected.abs(),
            "component {q}: {} vs {expected}",
            grad_big[q]
        );
    }
    // The same through the interface.
    let est = tiny.lml(&LmlRequest::with_gradient()).unwrap();
    assert_eq!(est.grad, grad_tiny);
}
