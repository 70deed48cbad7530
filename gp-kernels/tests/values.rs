//! Known values, the fast dense builders against per-entry evaluation, separable factors
//! and serialization.

use crate::common;

use faer::Mat;
use gp_kernels::{FactorKind, Kernel, Matern, MaternNu, ProductKernel, SquaredExponential};

#[test]
fn matern_closed_forms() {
    let (l, v) = (1.7, 2.3);
    let s3 = 3f64.sqrt();
    let s5 = 5f64.sqrt();
    for r in [0.0f64, 1e-8, 0.3, 1.0, 2.5, 10.0, 40.0] {
        // A point at scaled distance r along the first axis of a 1-D kernel.
        let (x, z) = ([r * l], [0.0]);
        let cases = [
            (MaternNu::Half, (-r).exp()),
            (MaternNu::ThreeHalves, (1.0 + s3 * r) * (-s3 * r).exp()),
            (
                MaternNu::FiveHalves,
                (1.0 + s5 * r + 5.0 * r * r / 3.0) * (-s5 * r).exp(),
            ),
        ];
        for (nu, g) in cases {
            let k = Matern::new(nu, vec![l], v).unwrap();
            let got = k.eval(&x, &z);
            assert!(
                (got - v * g).abs() <= 1e-14 * v * g,
                "{nu:?} at r = {r}: {got:e} vs {:e}",
                v * g
            );
        }
    }
    // ARD: r combines the dimensions.
    let k = Matern::new(MaternNu::Half, vec![2.0, 0.5], 1.0).unwrap();
    let r = ((1.0f64 / 2.0).powi(2) + (1.0f64 / 0.5).powi(2)).sqrt();
    assert!((k.eval(&[1.0, 1.0], &[0.0, 0.0]) - (-r).exp()).abs() < 1e-15);
}

#[test]
fn fast_matrix_equals_per_entry_eval() {
    // 300 rows: more than one row block (256) and several column tiles (64).
    let x = Mat::from_fn(300, 2, |i, j| ((i * (3 + j)) as f64 * 0.377).fract() * 2.0);
    let z = Mat::from_fn(70, 2, |i, j| ((i * (5 + j)) as f64 * 0.123).fract() * 2.0);
    for (name, kernel) in common::all_kernels() {
        for (a, b) in [(&x, &x), (&x, &z), (&z, &x)] {
            let k = kernel.matrix(a.as_ref(), b.as_ref()).unwrap();
            assert_eq!((k.nrows(), k.ncols()), (a.nrows(), b.nrows()));
            for j in 0..b.nrows() {
                for i in 0..a.nrows() {
                    let e = kernel.eval(&[a[(i, 0)], a[(i, 1)]], &[b[(j, 0)], b[(j, 1)]]);
                    assert!(
                        (k[(i, j)] - e).abs() <= 1e-14 * e.abs(),
                        "{name} ({i}, {j}): {:e} vs {e:e}",
                        k[(i, j)]
                    );
                }
            }
        }
        // Non-contiguous input views give the same matrix.
        let xt = x.transpose().to_owned();
        let k1 = kernel.matrix(xt.transpose(), z.as_ref()).unwrap();
        let k2 = kernel.matrix(x.as_ref(), z.as_ref()).unwrap();
        assert_eq!(k1, k2, "{name}");
        // Diagonal.
        let d = kernel.diag(x.as_ref()).unwrap();
        for i in 0..x.nrows() {
            assert_eq!(
                d[i],
                kernel.eval(&[x[(i, 0)], x[(i, 1)]], &[x[(i, 0)], x[(i, 1)]])
            );
        }
    }
}

#[test]
fn far_apart_points_give_zero_not_nan() {
    let x = Mat::from_fn(2, 2, |i, _| if i == 0 { -1e300 } else { 1e300 });
    for (name, kernel) in common::all_kernels() {
        let k = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
        assert_eq!(k[(0, 1)], 0.0, "{name}");
        assert_eq!(kernel.eval(&[-1e300, 0.0], &[1e300, 0.0]), 0.0, "{name}");
        let (_, grads) = kernel.matrix_and_grads(x.as_ref()).unwrap();
        assert!(grads.iter().all(|g| g[(0, 1)] == 0.0), "{name}");
    }
}

#[test]
fn empty_inputs_give_empty_matrices() {
    let x = Mat::<f64>::zeros(0, 2);
    let z = Mat::from_fn(3, 2, |i, j| (i + j) as f64);
    for (_, kernel) in common::all_kernels() {
        let k = kernel.matrix(x.as_ref(), z.as_ref()).unwrap();
        assert_eq!((k.nrows(), k.ncols()), (0, 3));
        let (k, g) = kernel.matrix_and_grads(x.as_ref()).unwrap();
        assert_eq!(k.nrows(), 0);
        assert_eq!(g.len(), kernel.n_params());
    }
}

fn product_of_factors(kernel: &dyn Kernel, x: &[f64], z: &[f64]) -> f64 {
    let sep = kernel.separable_factors().unwrap();
    assert_eq!(sep.factors.len(), x.len());
    let mut v = sep.scale;
    for (i, f) in sep.factors.iter().enumerate() {
        assert_eq!(f.input_dim(), 1);
        v *= f.eval(&x[i..i + 1], &z[i..i + 1]);
    }
    v
}

#[test]
fn separable_factors_reproduce_eval() {
    let se = SquaredExponential::new(vec![0.4, 1.1, 2.0], 1.7).unwrap();
    let prod = ProductKernel::new(
        vec![
            FactorKind::Matern(MaternNu::Half),
            FactorKind::SquaredExponential,
            FactorKind::Matern(MaternNu::FiveHalves),
        ],
        vec![0.4, 1.1, 2.0],
        1.7,
    )
    .unwrap();
    let pts = [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
        ([0.1, -0.3, 2.0], [0.5, 0.2, -1.0]),
        ([3.0, 1.0, 0.0], [-2.0, 0.0, 4.0]),
    ];
    for k in [&se as &dyn Kernel, &prod] {
        for (x, z) in pts {
            let e = k.eval(&x, &z);
            assert!(
                (product_of_factors(k, &x, &z) - e).abs() <= 1e-14 * e,
                "{k:?}"
            );
        }
    }
    // All-SE product kernel equals the ARD SE kernel.
    let all_se =
        ProductKernel::uniform(FactorKind::SquaredExponential, vec![0.4, 1.1, 2.0], 1.7).unwrap();
    for (x, z) in pts {
        assert!((all_se.eval(&x, &z) - se.eval(&x, &z)).abs() <= 1e-14 * se.eval(&x, &z));
    }
    // ARD Matérn in more than one dimension is not separable.
    for nu in [MaternNu::Half, MaternNu::ThreeHalves, MaternNu::FiveHalves] {
        assert!(Matern::new(nu, vec![1.0, 2.0], 1.0)
            .unwrap()
            .separable_factors()
            .is_none());
        let one = Matern::new(nu, vec![1.5], 2.0).unwrap();
        assert!(
            (product_of_factors(&one, &[0.2], &[1.0]) - one.eval(&[0.2], &[1.0])).abs() < 1e-15
        );
    }
}

#[test]
fn params_names_and_round_trip() {
    for (name, mut kernel) in common::all_kernels() {
        let names = kernel.param_names();
        assert_eq!(
            names,
            ["log_lengthscale_0", "log_lengthscale_1", "log_variance"],
            "{name}"
        );
        let p = kernel.log_params();
        assert!((p[0] - 0.7f64.ln()).abs() < 1e-15 && (p[2] - 1.6f64.ln()).abs() < 1e-15);
        kernel.set_log_params(&[0.1, -0.2, 0.3]).unwrap();
        assert_eq!(kernel.log_params().len(), 3);
        assert!((kernel.log_params()[1] + 0.2).abs() < 1e-15);
        assert!((kernel.eval(&[0.0, 0.0], &[0.0, 0.0]) - 0.3f64.exp()).abs() < 1e-15);
    }
}

#[test]
fn serde_round_trip() {
    let m = Matern::new(MaternNu::FiveHalves, vec![0.5, 3.0], 1.2).unwrap();
    let back: Matern = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(m, back);
    let p = ProductKernel::new(
        vec![
            FactorKind::SquaredExponential,
            FactorKind::Matern(MaternNu::Half),
        ],
        vec![0.5, 3.0],
        1.2,
    )
    .unwrap();
    let back: ProductKernel = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(p, back);
}

#[test]
fn pointer_kernels_forward() {
    let se = SquaredExponential::new(vec![0.5], 1.0).unwrap();
    let x = Mat::from_fn(5, 1, |i, _| i as f64 * 0.3);
    let direct = se.matrix(x.as_ref(), x.as_ref()).unwrap();
    let mut boxed: Box<dyn Kernel> = Box::new(se.clone());
    assert_eq!(boxed.matrix(x.as_ref(), x.as_ref()).unwrap(), direct);
    assert_eq!(
        Kernel::matrix(&&se, x.as_ref(), x.as_ref()).unwrap(),
        direct
    );
    boxed.set_log_params(&[0.0, 0.0]).unwrap();
    let mut by_ref = &se;
    assert!(by_ref.set_log_params(&[0.0, 0.0]).is_err());
    let mut arc = std::sync::Arc::new(se.clone());
    assert!(arc.set_log_params(&[0.0, 0.0]).is_ok());
}
