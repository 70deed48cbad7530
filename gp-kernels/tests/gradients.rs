//! Analytic hyperparameter derivatives against central finite differences in log space.
//!
//! Step: `h = 1e-5` in log space. The central difference has truncation error
//! `h²/6 · |∂³k/∂θ³| ≈ 2·10⁻¹¹ · O(k)` and rounding error `≈ ε · k / h ≈ 2·10⁻¹¹ · k`, both
//! five orders of magnitude below the `1e-6` relative tolerance, so a failure means a wrong
//! formula, not a noisy check. Entries whose derivative is (close to) zero are compared
//! against the kernel's scale `σ²` instead (absolute `1e-9 σ²`).

use crate::common;

use faer::Mat;
use gp_kernels::Kernel;

const H: f64 = 1e-5;
const REL: f64 = 1e-6;

fn close(analytic: f64, fd: f64, scale: f64) -> bool {
    (analytic - fd).abs() <= REL * analytic.abs().max(fd.abs()) + 1e-9 * scale
}

/// Central differences of `f(θ)` in each coordinate of the log hyperparameters.
fn fd_grad<T>(
    kernel: &mut dyn Kernel,
    f: impl Fn(&dyn Kernel) -> T,
    diff: impl Fn(&T, &T) -> T,
) -> Vec<T> {
    let theta = kernel.log_params();
    let mut out = Vec::new();
    for q in 0..theta.len() {
        let mut tp = theta.clone();
        tp[q] += H;
        kernel.set_log_params(&tp).unwrap();
        let fp = f(kernel);
        let mut tm = theta.clone();
        tm[q] -= H;
        kernel.set_log_params(&tm).unwrap();
        let fm = f(kernel);
        out.push(diff(&fp, &fm));
    }
    kernel.set_log_params(&theta).unwrap();
    out
}

/// Point pairs: identical (r = 0), one coordinate equal, close, moderate and far apart.
fn pairs() -> Vec<([f64; 2], [f64; 2])> {
    vec![
        ([0.3, -1.2], [0.3, -1.2]),
        ([0.3, -1.2], [0.3, 0.4]),
        ([0.3, -1.2], [0.3 + 1e-4, -1.2 - 2e-4]),
        ([0.0, 0.0], [0.5, 1.0]),
        ([1.0, 2.0], [-0.7, 0.1]),
        ([0.0, 0.0], [4.0, -6.0]),
    ]
}

#[test]
fn eval_with_grad_matches_finite_differences() {
    for (name, mut kernel) in common::all_kernels() {
        let scale = kernel.eval(&[0.0, 0.0], &[0.0, 0.0]);
        for (x, z) in pairs() {
            let mut grad = vec![f64::NAN; kernel.n_params()];
            let value = kernel.eval_with_grad(&x, &z, &mut grad);
            assert!(
                (value - kernel.eval(&x, &z)).abs() <= 1e-15 * scale,
                "{name}: value"
            );
            let fd = fd_grad(
                kernel.as_mut(),
                |k| k.eval(&x, &z),
                |a, b| (a - b) / (2.0 * H),
            );
            for (q, (a, f)) in grad.iter().zip(&fd).enumerate() {
                assert!(
                    a.is_finite(),
                    "{name}: non-finite gradient {q} at {x:?}, {z:?}"
                );
                assert!(
                    close(*a, *f, scale),
                    "{name}: ∂k/∂θ{q} at {x:?}, {z:?}: analytic {a:e}, finite difference {f:e}"
                );
            }
        }
    }
}

#[test]
fn matrix_and_grads_matches_finite_differences_of_matrix() {
    let x = common::points(23);
    for (name, mut kernel) in common::all_kernels() {
        let scale = kernel.eval(&[0.0, 0.0], &[0.0, 0.0]);
        let (k, grads) = kernel.matrix_and_grads(x.as_ref()).unwrap();
        let dense = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
        assert!(
            (&k - &dense).norm_max() <= 1e-14 * scale,
            "{name}: K differs from matrix()"
        );
        assert_eq!(grads.len(), kernel.n_params(), "{name}");
        let fd = fd_grad(
            kernel.as_mut(),
            |k| k.matrix(x.as_ref(), x.as_ref()).unwrap(),
            |a, b| (a - b) * (1.0 / (2.0 * H)),
        );
        for (q, (g, f)) in grads.iter().zip(&fd).enumerate() {
            for j in 0..x.nrows() {
                for i in 0..x.nrows() {
                    assert!(g[(i, j)].is_finite(), "{name}: non-finite dK/dθ{q}");
                    assert!(
                        close(g[(i, j)], f[(i, j)], scale),
                        "{name}: dK/dθ{q} at ({i}, {j}): analytic {:e}, finite difference {:e}",
                        g[(i, j)],
                        f[(i, j)]
                    );
                }
            }
            // Exactly symmetric.
            assert_eq!(
                g,
                &g.transpose().to_owned(),
                "{name}: dK/dθ{q} not symmetric"
            );
        }
    }
}

#[test]
fn matrix_and_grads_matches_per_entry_eval_with_grad() {
    let x = common::points(17);
    for (name, kernel) in common::all_kernels() {
        let (k, grads) = kernel.matrix_and_grads(x.as_ref()).unwrap();
        let mut g = vec![0.0; kernel.n_params()];
        for j in 0..x.nrows() {
            for i in 0..x.nrows() {
                let xi: Vec<f64> = (0..2).map(|c| x[(i, c)]).collect();
                let xj: Vec<f64> = (0..2).map(|c| x[(j, c)]).collect();
                let v = kernel.eval_with_grad(&xi, &xj, &mut g);
                assert!(
                    (k[(i, j)] - v).abs() <= 1e-14 * v.abs().max(1e-300),
                    "{name}"
                );
                for (q, gq) in g.iter().enumerate() {
                    let tol = 1e-13 * gq.abs() + 1e-15;
                    assert!(
                        (grads[q][(i, j)] - gq).abs() <= tol,
                        "{name}: grad {q} ({i},{j})"
                    );
                }
            }
        }
    }
}

#[test]
fn matern_half_gradient_is_zero_at_coincident_points() {
    let x = Mat::from_fn(3, 2, |i, j| if i == 2 { 0.0 } else { (i + j) as f64 });
    let x = Mat::from_fn(4, 2, |i, j| if i == 3 { x[(0, j)] } else { x[(i % 3, j)] });
    let k = gp_kernels::Matern::new(gp_kernels::MaternNu::Half, vec![0.5, 2.0], 1.0).unwrap();
    let (_, grads) = k.matrix_and_grads(x.as_ref()).unwrap();
    for g in &grads[..2] {
        assert_eq!(g[(0, 3)], 0.0);
        assert_eq!(g[(1, 1)], 0.0);
    }
    let mut g = [f64::NAN; 3];
    k.eval_with_grad(&[1.0, 1.0], &[1.0, 1.0], &mut g);
    assert_eq!(g, [0.0, 0.0, 1.0]);
}
