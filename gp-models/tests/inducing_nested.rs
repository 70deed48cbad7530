//! `NestedSparsePath` against a refit at every size: `SparseGp::fit` on the same prefix of
//! the inducing inputs gives the same mean, latent variance and evidence (all four
//! methods), and a factor that does not exist ends the path at the size where the refit
//! fails.

use crate::common;

use common::{assert_close, col_vec, toy_data};
use faer::Mat;
use gp_kernels::{Matern, MaternNu, SquaredExponential};
use gp_models::{
    InducingFactor, ModelError, NestedSparsePath, NestedSubsets, SparseGp, SparseMethod,
};

const METHODS: [SparseMethod; 4] = [
    SparseMethod::Sor,
    SparseMethod::Dtc,
    SparseMethod::Vfe,
    SparseMethod::Fitc,
];

#[test]
fn every_size_equals_a_refit_on_that_prefix() {
    let (x, y) = toy_data(70, 2, 4.0, 11);
    let (xs, _) = toy_data(13, 2, 4.0, 12);
    let kernel = Matern::new(MaternNu::FiveHalves, vec![0.9, 1.4], 1.3).unwrap();
    let noise = 0.05;
    let subsets = NestedSubsets::new(70, 3);
    let all = subsets.take(x.as_ref(), 24).unwrap();
    let sizes = [1, 2, 5, 9, 16, 24];
    for method in METHODS {
        let path = NestedSparsePath::fit(
            &kernel,
            x.as_ref(),
            y.as_ref(),
            noise,
            &all,
            &sizes,
            method,
            xs.as_ref(),
        )
        .unwrap();
        assert_eq!(path.crash(), None, "{method:?}");
        assert_eq!(path.steps().len(), sizes.len());
        for (step, &m) in path.steps().iter().zip(&sizes) {
            let what = format!("{method:?} m = {m}");
            assert_eq!(step.m, m);
            let u = subsets.take(x.as_ref(), m).unwrap();
            let gp =
                SparseGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), noise, &u, method).unwrap();
            let mean = gp.predict_mean(xs.as_ref()).unwrap();
            let var = gp.predict_latent_variance(xs.as_ref()).unwrap();
            assert_close(&col_vec(&step.mean), &col_vec(&mean), 1e-10, 1e-3, &what);
            assert_close(
                &col_vec(&step.latent_variance),
                &col_vec(&var),
                1e-10,
                1e-3,
                &what,
            );
            let (a, b) = (step.evidence, gp.evidence());
            assert_eq!(a.method, b.method);
            assert_close(
                &[a.objective, a.nlz, a.data_fit, a.log_det, a.trace_penalty],
                &[b.objective, b.nlz, b.data_fit, b.log_det, b.trace_penalty],
                1e-10,
                1.0,
                &what,
            );
        }
    }
}

/// A long lengthscale makes `K_UU` numerically singular as `m` grows: the path stops at
/// the first size whose refit fails, with the factor the refit names.
#[test]
fn the_path_stops_where_a_refit_fails() {
    let (x, y) = toy_data(60, 1, 4.0, 5);
    let xs = Mat::from_fn(4, 1, |i, _| 0.5 + i as f64);
    let kernel = SquaredExponential::new(vec![3.0], 1.0).unwrap();
    let subsets = NestedSubsets::new(60, 1);
    let all = subsets.take(x.as_ref(), 40).unwrap();
    let sizes: Vec<usize> = (1..=40).collect();
    for method in METHODS {
        let path = NestedSparsePath::fit(
            &kernel,
            x.as_ref(),
            y.as_ref(),
            1e-4,
            &all,
            &sizes,
            method,
            xs.as_ref(),
        )
        .unwrap();
        let first_failure = sizes.iter().find_map(|&m| {
            let u = subsets.take(x.as_ref(), m).unwrap();
            match SparseGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 1e-4, &u, method) {
                Ok(_) => None,
                Err(ModelError::InducingCholesky { factor, .. }) => Some((m, factor)),
                Err(e) => panic!("{e}"),
            }
        });
        let (m, factor) = first_failure.expect("a refit fails at some size");
        let crash = path.crash().expect("the path ends early");
        assert_eq!((crash.m, crash.factor), (m, factor), "{method:?}");
        assert_eq!(path.steps().len(), m - 1, "{method:?}");
        assert!(matches!(
            factor,
            InducingFactor::Kuu | InducingFactor::System | InducingFactor::FitcDiagonal
        ));
    }
}

#[test]
fn bad_sizes_and_test_inputs_are_typed_errors() {
    let (x, y) = toy_data(20, 2, 4.0, 1);
    let kernel = Matern::new(MaternNu::FiveHalves, vec![1.0, 1.0], 1.0).unwrap();
    let u = NestedSubsets::new(20, 0).take(x.as_ref(), 5).unwrap();
    let fit = |sizes: &[usize], xs: &Mat<f64>| {
        NestedSparsePath::fit(
            &kernel,
            x.as_ref(),
            y.as_ref(),
            0.1,
            &u,
            sizes,
            SparseMethod::Vfe,
            xs.as_ref(),
        )
    };
    let xs = Mat::from_fn(3, 2, |i, j| (i + j) as f64);
    for sizes in [&[][..], &[0][..], &[3, 2][..], &[6][..]] {
        assert!(
            matches!(
                fit(sizes, &xs),
                Err(ModelError::InvalidOption { name: "sizes", .. })
            ),
            "{sizes:?}"
        );
    }
    let wrong_dim = Mat::from_fn(3, 3, |_, _| 0.0);
    assert!(matches!(
        fit(&[2, 5], &wrong_dim),
        Err(ModelError::TestDim { .. })
    ));
}
