//! Typed errors of the SKI model: data outside the grid, kernels that are not separable or
//! not stationary, grids too large for memory, bad options and bad data.

use crate::ski_support;

use faer::{Col, Mat};
use gp_kernels::{Kernel, Matern, MaternNu, SeparableFactors, SquaredExponential};
use gp_linalg::DenseOperator;
use gp_models::grid::GridSettings;
use gp_models::EstimatorSettings;
use gp_models::{LoveOptions, ModelError, Ski, SkiMemory, SkiOperator, SkiOptions};
use gp_structured::{OutOfGrid, StructuredError};
use ski_support::data;

fn se(d: usize) -> SquaredExponential {
    SquaredExponential::isotropic(d, 0.5, 1.0).unwrap()
}

#[test]
fn training_points_outside_explicit_bounds() {
    let (x, y) = data(50, 1, 2.0, 1);
    let opts = SkiOptions {
        grid: GridSettings {
            sizes: vec![30],
            bounds: Some(vec![(0.0, 1.0)]),
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let err = Ski::fit(se(1), x.as_ref(), y.as_ref(), 0.1, &opts).unwrap_err();
    match &err {
        ModelError::OutsideGrid { context, source } => {
            assert_eq!(*context, "the training points");
            assert!(matches!(
                source,
                StructuredError::OutsideGrid { dim: 0, .. }
            ));
        }
        other => panic!("expected OutsideGrid, got {other:?}"),
    }
    assert!(err.to_string().contains("outside the interpolation grid"));
    // Clamping is the explicit alternative.
    let clamp = SkiOptions {
        grid: GridSettings {
            out_of_grid: OutOfGrid::Clamp,
            ..opts.grid
        },
        ..opts
    };
    assert!(Ski::fit(se(1), x.as_ref(), y.as_ref(), 0.1, &clamp).is_ok());
}

#[test]
fn test_points_outside_the_grid() {
    let (x, y) = data(60, 2, 1.0, 2);
    let opts = SkiOptions {
        grid: GridSettings {
            sizes: vec![15, 15],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let ski = Ski::fit(se(2), x.as_ref(), y.as_ref(), 0.1, &opts).unwrap();
    // One cell outside the data range is still inside the padded grid.
    let near = Mat::from_fn(1, 2, |_, l| if l == 0 { 0.5 } else { 1.0 + 0.5 / 10.0 });
    assert!(ski.predict_mean(near.as_ref()).is_ok());
    let far = Mat::from_fn(1, 2, |_, l| if l == 0 { 0.5 } else { 5.0 });
    for err in [
        ski.predict_mean(far.as_ref()).unwrap_err(),
        ski.predict_latent_variance(far.as_ref()).unwrap_err(),
        ski.love(&LoveOptions::default())
            .unwrap()
            .latent_variance(far.as_ref())
            .unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                ModelError::OutsideGrid {
                    context: "the test points",
                    source: StructuredError::OutsideGrid { dim: 1, .. }
                }
            ),
            "{err:?}"
        );
    }
    let wrong_dim = Mat::<f64>::zeros(2, 3);
    assert!(matches!(
        ski.predict_mean(wrong_dim.as_ref()),
        Err(ModelError::TestDim {
            expected: 2,
            found: 3
        })
    ));
}

#[test]
fn non_separable_kernel_is_refused() {
    let (x, y) = data(40, 2, 1.0, 3);
    let matern = Matern::new(MaternNu::FiveHalves, vec![0.5, 0.7], 1.0).unwrap();
    let opts = SkiOptions {
        grid: GridSettings {
            sizes: vec![12, 12],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let err = Ski::fit(matern, x.as_ref(), y.as_ref(), 0.1, &opts).unwrap_err();
    match &err {
        ModelError::UnsupportedKernel { model, reason } => {
            assert_eq!(*model, "SKI");
            assert!(reason.contains("not separable"), "{reason}");
        }
        other => panic!("expected UnsupportedKernel, got {other:?}"),
    }
}

/// `k(x, z) = 1 + x z` in 1-D: separable (trivially) but not stationary.
#[derive(Debug, Clone)]
struct Linear;

impl Kernel for Linear {
    fn input_dim(&self) -> usize {
        1
    }
    fn param_names(&self) -> Vec<String> {
        vec!["log_variance".into()]
    }
    fn log_params(&self) -> Vec<f64> {
        vec![0.0]
    }
    fn set_log_params(&mut self, _p: &[f64]) -> gp_kernels::Result<()> {
        Ok(())
    }
    fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        1.0 + x[0] * z[0]
    }
    fn eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> f64 {
        let v = self.eval(x, z);
        grad[0] = v;
        v
    }
    fn separable_factors(&self) -> Option<SeparableFactors> {
        Some(SeparableFactors {
            scale: 1.0,
            factors: vec![Box::new(Linear)],
        })
    }
}

#[test]
fn non_stationary_factor_is_refused() {
    let (x, y) = data(40, 1, 1.0, 4);
    let opts = SkiOptions {
        grid: GridSettings {
            sizes: vec![12],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let err = Ski::fit(Linear, x.as_ref(), y.as_ref(), 0.1, &opts).unwrap_err();
    match &err {
        ModelError::UnsupportedKernel { reason, .. } => {
            assert!(reason.contains("not stationary"), "{reason}")
        }
        other => panic!("expected UnsupportedKernel, got {other:?}"),
    }
}

#[test]
fn too_large_grids_are_refused_with_the_estimate() {
    let (x, y) = data(40, 2, 1.0, 5);
    // A 2^20 × 2^20 grid: about 2^40 · 56 · 8 bytes, more than any machine has.
    let huge = SkiOptions {
        grid: GridSettings {
            sizes: vec![1 << 20, 1 << 20],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let err = Ski::fit(se(2), x.as_ref(), y.as_ref(), 0.1, &huge).unwrap_err();
    match &err {
        ModelError::GridTooLarge {
            grid_points,
            vectors,
            estimated_bytes,
            ..
        } => {
            assert_eq!(*grid_points, 1u128 << 40);
            assert_eq!(*vectors, 5 * 11 + 1);
            assert_eq!(*estimated_bytes, (1u128 << 40) * 56 * 8);
        }
        other => panic!("expected GridTooLarge, got {other:?}"),
    }
    assert!(err.to_string().contains("bytes"));

    // An explicit limit: 200 × 200 points need 40 000 · 56 · 8 = 17 920 000 bytes.
    let limited = SkiOptions {
        grid: GridSettings {
            sizes: vec![200, 200],
            memory_limit: Some(10_000_000),
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let err = Ski::fit(se(2), x.as_ref(), y.as_ref(), 0.1, &limited).unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::GridTooLarge {
                estimated_bytes: 17_920_000,
                limit_bytes: 10_000_000,
                limit_source: "SkiOptions::grid.memory_limit",
                ..
            }
        ),
        "{err:?}"
    );
    let est = SkiMemory::estimate(&[200, 200], 10, Some(20_000_000));
    assert!(est.fits());

    // Sizes whose product overflows usize are counted in u128 (saturating), not wrapped.
    let overflow = SkiOptions {
        grid: GridSettings {
            sizes: vec![usize::MAX, usize::MAX],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let m = usize::MAX as u128 * usize::MAX as u128;
    assert!(matches!(
        Ski::fit(se(2), x.as_ref(), y.as_ref(), 0.1, &overflow),
        Err(ModelError::GridTooLarge { grid_points, estimated_bytes: u128::MAX, .. })
            if grid_points == m
    ));
}

#[test]
fn bad_options_and_data() {
    let (x, y) = data(40, 2, 1.0, 6);
    let fit = |opts: &SkiOptions| Ski::fit(se(2), x.as_ref(), y.as_ref(), 0.1, opts);
    let wrong_len = SkiOptions {
        grid: GridSettings {
            sizes: vec![10],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    assert!(matches!(
        fit(&wrong_len),
        Err(ModelError::InvalidOption {
            name: "SkiOptions::grid.sizes",
            ..
        })
    ));
    // 5 points cannot hold 2 padding cells per side.
    let too_small = SkiOptions {
        grid: GridSettings {
            sizes: vec![5, 10],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    assert!(matches!(fit(&too_small), Err(ModelError::Structured(_))));
    let no_probes = SkiOptions {
        estimator: EstimatorSettings {
            probes: 0,
            ..EstimatorSettings::default()
        },
        ..SkiOptions::default()
    };
    assert!(matches!(
        fit(&no_probes),
        Err(ModelError::InvalidOption { .. })
    ));
    let bad_bounds = SkiOptions {
        grid: GridSettings {
            bounds: Some(vec![(1.0, 0.0), (0.0, 1.0)]),
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    assert!(matches!(
        fit(&bad_bounds),
        Err(ModelError::InvalidOption { .. })
    ));
    let mut xnan = x.clone();
    xnan[(3, 1)] = f64::NAN;
    assert!(matches!(
        Ski::fit(
            se(2),
            xnan.as_ref(),
            y.as_ref(),
            0.1,
            &SkiOptions::default()
        ),
        Err(ModelError::NonFinite { row: 3, col: 1, .. })
    ));
    assert!(matches!(
        Ski::fit(se(2), x.as_ref(), y.as_ref(), -1.0, &SkiOptions::default()),
        Err(ModelError::InvalidNoise { .. })
    ));
    let short = Col::<f64>::zeros(10);
    assert!(matches!(
        Ski::fit(
            se(2),
            x.as_ref(),
            short.as_ref(),
            0.1,
            &SkiOptions::default()
        ),
        Err(ModelError::LengthMismatch { .. })
    ));
    // The automatic grid: ⌈(n/2)^{1/d}⌉ interior cells plus padding.
    let ski = Ski::fit(se(2), x.as_ref(), y.as_ref(), 0.1, &SkiOptions::default()).unwrap();
    assert_eq!(ski.grid().sizes(), &[10, 10]);
    assert!(matches!(
        ski.love(&LoveOptions {
            rank: 0,
            ..LoveOptions::default()
        }),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        ski.with_log_params(&[0.0, 0.0]),
        Err(ModelError::LengthMismatch { .. })
    ));
}

#[test]
fn operator_with_a_mismatched_grid_operator() {
    let (x, y) = data(30, 1, 1.0, 7);
    let opts = SkiOptions {
        grid: GridSettings {
            sizes: vec![12],
            ..GridSettings::default()
        },
        ..SkiOptions::default()
    };
    let ski = Ski::fit(se(1), x.as_ref(), y.as_ref(), 0.1, &opts).unwrap();
    let wrong = DenseOperator::new(Mat::<f64>::identity(5, 5));
    assert!(matches!(
        SkiOperator::new(ski.interpolation(), &wrong, 0.1),
        Err(ModelError::Linalg(_))
    ));
    let right = DenseOperator::new(Mat::<f64>::identity(12, 12));
    assert!(SkiOperator::new(ski.interpolation(), &right, f64::NAN).is_err());
    assert!(SkiOperator::new(ski.interpolation(), &right, 0.1).is_ok());
}
