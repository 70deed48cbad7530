//! GSGP from streamed statistics, its typed errors, and the independence of its per-iteration
//! work from `n`.

use crate::gsgp_support;

use std::sync::atomic::{AtomicUsize, Ordering};

use faer::{Col, ColMut, ColRef, Mat};
use gp_kernels::{Matern, MaternNu, SquaredExponential};
use gp_models::grid::GridSettings;
use gp_models::{EstimatorSettings, KrylovSettings};
use gp_models::{Gsgp, GsgpOptions, GsgpSolver, ModelError};
use gp_solvers::factorized::{
    efcg, efcg_simplified, FactorizedCgOptions, StartVector, WeightSpaceSystem,
};
use gp_structured::{InterpolationScheme, SufficientStats};
use gsgp_support::{data, problem, rel_diff_col, rel_diff_mat, tests_for, tight};

fn chunks(x: &Mat<f64>, y: &Col<f64>, size: usize) -> Vec<(Mat<f64>, Col<f64>)> {
    (0..x.nrows())
        .step_by(size)
        .map(|s| {
            let len = size.min(x.nrows() - s);
            (
                x.as_ref().subrows(s, len).to_owned(),
                y.as_ref().subrows(s, len).to_owned(),
            )
        })
        .collect()
}

#[test]
fn from_stats_by_chunks_equals_fit() {
    for d in 1..=3 {
        let p = problem(d, GsgpSolver::Efcg);
        let opts = p.gsgp.options().clone();
        let grid = opts.grid_for(p.x.as_ref()).unwrap();

        // The same statistics give the same model, to the last bit (the one-pass statistics
        // and the solvers are deterministic).
        let same =
            SufficientStats::compute(&grid, p.x.as_ref(), p.y.as_ref(), opts.interpolation());
        let same = Gsgp::from_stats(p.gsgp.kernel().clone(), same.unwrap(), 0.05, &opts).unwrap();
        let xt = tests_for(&p, 8);
        let b = p.gsgp.predict_mean(xt.as_ref()).unwrap();
        let cb = p.gsgp.predict_latent_covariance(xt.as_ref()).unwrap();
        let lb = p.gsgp.lml_estimate().unwrap();
        assert_eq!(same.predict_mean(xt.as_ref()).unwrap(), b, "d={d}");
        assert_eq!(
            same.predict_latent_covariance(xt.as_ref()).unwrap(),
            cb,
            "d={d}"
        );
        assert_eq!(
            same.lml_estimate().unwrap().lml.to_bits(),
            lb.lml.to_bits(),
            "d={d}"
        );

        // Statistics accumulated in chunks of 37 rows differ from the one-pass ones only by
        // summation order: at most ~n·ε relative (n ≤ 300 here, so < 1e-13).
        let stats =
            SufficientStats::from_chunks(&grid, opts.interpolation(), chunks(&p.x, &p.y, 37))
                .unwrap();
        assert_eq!(stats.num_points(), p.x.nrows());
        let reference = p.gsgp.stats();
        let max_s = reference
            .gram()
            .values()
            .iter()
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        let ds = stats
            .gram()
            .values()
            .iter()
            .zip(reference.gram().values())
            .fold(0.0_f64, |m, (u, v)| m.max((u - v).abs()));
        assert!(ds <= 1e-13 * max_s, "d={d} S differs by {ds:e}");
        let dt = (stats.wty() - reference.wty()).norm_max();
        assert!(
            dt <= 1e-13 * reference.wty().norm_max(),
            "d={d} Wᵀy differs by {dt:e}"
        );

        // The model of the chunked statistics solves a system perturbed at round-off level, and
        // both solves stop at a relative residual of 1e-11 (`tight`), so the solutions differ
        // by at most 2·κ(K̂)·1e-11 relative, with κ(K̂) ≤ (n·σ_f² + σ²)/σ² ≤ (300·1.1 + 0.05)/0.05
        // ≈ 6.6e3 here: 1.3e-7. The covariance subtracts such a solution from the prior
        // (σ_f² = 1.1) and is compared relative to its own (smaller) maximum, and the LML's
        // data fit yᵀα inherits the same relative bound.
        let streamed = Gsgp::from_stats(p.gsgp.kernel().clone(), stats, 0.05, &opts).unwrap();
        assert_eq!(streamed.grid(), p.gsgp.grid());
        let bound = 2.0 * 6.6e3 * 1e-11;
        let a = streamed.predict_mean(xt.as_ref()).unwrap();
        assert!(rel_diff_col(&a, &b) < bound, "d={d} mean");
        let ca = streamed.predict_latent_covariance(xt.as_ref()).unwrap();
        let prior_over_posterior = 1.1 / cb.norm_max();
        assert!(
            rel_diff_mat(&ca, &cb) < bound * prior_over_posterior,
            "d={d} covariance {:e}",
            rel_diff_mat(&ca, &cb)
        );
        let la = streamed.lml_estimate().unwrap();
        assert!(
            (la.lml - lb.lml).abs() < bound * lb.lml.abs().max(1.0),
            "d={d} lml"
        );
    }
}

#[test]
fn with_log_params_reuses_the_statistics() {
    let p = problem(2, GsgpSolver::Efcg);
    let mut theta = p.gsgp.log_params();
    theta[0] += 0.1;
    let a = p.gsgp.with_log_params(&theta).unwrap();
    let b = p.ski.with_log_params(&theta).unwrap();
    let xt = tests_for(&p, 5);
    let ma = a.predict_mean(xt.as_ref()).unwrap();
    let mb = b.predict_mean(xt.as_ref()).unwrap();
    assert!(rel_diff_col(&ma, &mb) < 1e-8);
    assert_eq!(a.param_names(), p.ski.param_names());
    assert!(
        std::ptr::eq(a.stats(), p.gsgp.stats()),
        "statistics shared, not copied"
    );
}

#[test]
fn training_point_outside_explicit_bounds_is_refused() {
    let (x, y) = data(50, 2, 1.0, 5);
    let opts = GsgpOptions {
        grid: GridSettings {
            sizes: vec![12, 12],
            bounds: Some(vec![(0.0, 0.5), (0.0, 1.2)]),
            ..GridSettings::default()
        },
        ..GsgpOptions::default()
    };
    let kernel = SquaredExponential::new(vec![0.3, 0.3], 1.0).unwrap();
    let err = Gsgp::fit(kernel, x.as_ref(), y.as_ref(), 0.1, &opts).unwrap_err();
    match err {
        ModelError::OutsideGrid { context, .. } => assert_eq!(context, "the training points"),
        other => panic!("expected OutsideGrid, got {other:?}"),
    }
}

#[test]
fn test_point_outside_the_grid_is_refused() {
    let p = problem(1, GsgpSolver::Efcg);
    let far = Mat::from_fn(1, 1, |_, _| 100.0);
    match p.gsgp.predict_mean(far.as_ref()).unwrap_err() {
        ModelError::OutsideGrid { context, .. } => assert_eq!(context, "the test points"),
        other => panic!("expected OutsideGrid, got {other:?}"),
    }
    assert!(matches!(
        p.gsgp.predict_latent_covariance(far.as_ref()),
        Err(ModelError::OutsideGrid { .. })
    ));
    let wrong_dim = Mat::<f64>::zeros(2, 3);
    assert!(matches!(
        p.gsgp.predict_mean(wrong_dim.as_ref()),
        Err(ModelError::TestDim {
            expected: 1,
            found: 3
        })
    ));
}

#[test]
fn non_separable_kernel_is_refused() {
    let (x, y) = data(40, 2, 1.0, 3);
    let matern = Matern::new(MaternNu::FiveHalves, vec![0.5, 0.7], 1.0).unwrap();
    let opts = GsgpOptions {
        grid: GridSettings {
            sizes: vec![12, 12],
            ..GridSettings::default()
        },
        ..GsgpOptions::default()
    };
    match Gsgp::fit(matern, x.as_ref(), y.as_ref(), 0.1, &opts).unwrap_err() {
        ModelError::UnsupportedKernel { model, reason } => {
            assert_eq!(model, "GSGP");
            assert!(reason.contains("not separable"), "{reason}");
        }
        other => panic!("expected UnsupportedKernel, got {other:?}"),
    }
}

#[test]
fn too_large_grid_is_refused_with_the_estimate() {
    let (x, y) = data(40, 3, 1.0, 4);
    let opts = GsgpOptions {
        grid: GridSettings {
            sizes: vec![1000, 1000, 1000],
            memory_limit: Some(1 << 30),
            ..GridSettings::default()
        },
        ..GsgpOptions::default()
    };
    let kernel = SquaredExponential::new(vec![0.3; 3], 1.0).unwrap();
    let err = Gsgp::fit(kernel, x.as_ref(), y.as_ref(), 0.1, &opts).unwrap_err();
    match &err {
        ModelError::GridTooLarge {
            grid_points,
            vectors,
            estimated_bytes,
            limit_bytes,
            limit_source,
        } => {
            assert_eq!(*grid_points, 1_000_000_000);
            assert_eq!(*vectors, 172 + 15 + 6 * 10);
            assert_eq!(*estimated_bytes, 8 * 1_000_000_000 * (172 + 15 + 60));
            assert_eq!(*limit_bytes, 1 << 30);
            assert_eq!(*limit_source, "GsgpOptions::grid.memory_limit");
        }
        other => panic!("expected GridTooLarge, got {other:?}"),
    }
    assert!(err.to_string().contains("bytes"));
    assert!(matches!(
        opts.grid_for(x.as_ref()),
        Err(ModelError::GridTooLarge { .. })
    ));
}

#[test]
fn too_large_log_det_factor_is_refused_but_the_mean_works() {
    let (x, y) = data(100, 1, 4.0, 6);
    let opts = GsgpOptions {
        grid: GridSettings {
            sizes: vec![2000],
            memory_limit: Some(10 << 20),
            ..GridSettings::default()
        },
        ..GsgpOptions::default()
    };
    let kernel = SquaredExponential::new(vec![0.5], 1.0).unwrap();
    let gsgp = Gsgp::fit(kernel, x.as_ref(), y.as_ref(), 0.1, &opts).unwrap();
    assert!(gsgp.grid_mean_cache().is_ok());
    match gsgp.lml_estimate().unwrap_err() {
        ModelError::LogDetFactorTooLarge {
            sizes,
            estimated_bytes,
            ..
        } => {
            assert_eq!(sizes, vec![2000]);
            // 24 Σ m_l² for the eigendecomposition plus the CSR copy of S (≤ 7 per row).
            let dense = 24 * 2000 * 2000;
            assert!(estimated_bytes > dense && estimated_bytes <= dense + 16 * 7 * 2000 + 8 * 2001);
        }
        other => panic!("expected LogDetFactorTooLarge, got {other:?}"),
    }
}

#[test]
fn bad_inputs_are_typed_errors() {
    let (x, y) = data(30, 2, 1.0, 7);
    let kernel = SquaredExponential::new(vec![0.3, 0.3], 1.0).unwrap();
    let opts = GsgpOptions {
        grid: GridSettings {
            sizes: vec![10, 10],
            ..GridSettings::default()
        },
        ..GsgpOptions::default()
    };
    let bad = GsgpOptions {
        estimator: EstimatorSettings {
            probes: 0,
            ..opts.estimator
        },
        ..opts.clone()
    };
    match Gsgp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.1, &bad).unwrap_err() {
        ModelError::InvalidOption { name, .. } => assert_eq!(name, "GsgpOptions::estimator.probes"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        Gsgp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.0, &opts),
        Err(ModelError::InvalidNoise { .. })
    ));
    let short = Col::<f64>::zeros(5);
    assert!(matches!(
        Gsgp::fit(kernel.clone(), x.as_ref(), short.as_ref(), 0.1, &opts),
        Err(ModelError::LengthMismatch { .. })
    ));
    let grid = opts.grid_for(x.as_ref()).unwrap();
    let empty = SufficientStats::empty(&grid, opts.interpolation()).unwrap();
    assert!(matches!(
        Gsgp::from_stats(kernel.clone(), empty, 0.1, &opts),
        Err(ModelError::EmptyData { .. })
    ));
    let stats =
        SufficientStats::compute(&grid, x.as_ref(), y.as_ref(), opts.interpolation()).unwrap();
    let linear = GsgpOptions {
        grid: GridSettings {
            scheme: InterpolationScheme::Linear,
            ..opts.grid.clone()
        },
        ..opts.clone()
    };
    assert!(matches!(
        Gsgp::from_stats(kernel, stats.clone(), 0.1, &linear),
        Err(ModelError::InvalidOption {
            name: "GsgpOptions::grid.scheme",
            ..
        })
    ));
    let k1 = SquaredExponential::new(vec![0.3], 1.0).unwrap();
    assert!(matches!(
        Gsgp::from_stats(k1, stats, 0.1, &opts),
        Err(ModelError::KernelDim { .. })
    ));
    let tight_opts = crate::gsgp_support::gsgp_options(&tight(vec![10, 10]));
    let gsgp = Gsgp::fit(
        SquaredExponential::new(vec![0.3, 0.3], 1.0).unwrap(),
        x.as_ref(),
        y.as_ref(),
        0.1,
        &tight_opts,
    )
    .unwrap();
    let probes = gp_solvers::Probes::from_matrix(Mat::<f64>::identity(3, 3), None).unwrap();
    assert!(matches!(
        gsgp.lml_estimate_with_probes(probes),
        Err(ModelError::LengthMismatch { .. })
    ));
}

/// A [`WeightSpaceSystem`] that counts the products it forwards.
struct Counting<S> {
    inner: S,
    kg: AtomicUsize,
    s: AtomicUsize,
}

impl<S: WeightSpaceSystem> WeightSpaceSystem for Counting<S> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn apply_prior(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> gp_solvers::Result<()> {
        self.kg.fetch_add(1, Ordering::Relaxed);
        self.inner.apply_prior(v, out)
    }
    fn apply_gram(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> gp_solvers::Result<()> {
        self.s.fetch_add(1, Ordering::Relaxed);
        self.inner.apply_gram(v, out)
    }
    fn noise_variance(&self) -> f64 {
        self.inner.noise_variance()
    }
}

#[test]
fn per_iteration_work_does_not_depend_on_n() {
    // The same grid for 200 and 20 000 points: the solver sees only (K_G, S, σ²) of order m,
    // makes exactly one K_G and one S product per iteration, and keeps the same storage.
    let kernel = SquaredExponential::new(vec![0.4, 0.5], 1.0).unwrap();
    let opts = GsgpOptions {
        grid: GridSettings {
            sizes: vec![24, 20],
            bounds: Some(vec![(-0.5, 2.5), (-0.5, 2.5)]),
            ..GridSettings::default()
        },
        // The model's mean weights to the solver's 1e-8 below (the default is looser).
        krylov: KrylovSettings {
            prediction_tolerance: 1e-8,
            variance_tolerance: 1e-8,
            ..KrylovSettings::default()
        },
        ..GsgpOptions::default()
    };
    let mut records = Vec::new();
    for n in [200, 20_000] {
        let (x, y) = data(n, 2, 2.0, 11);
        let gsgp = Gsgp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.05, &opts).unwrap();
        assert_eq!(gsgp.n_train(), n);
        let system = Counting {
            inner: gsgp.system().unwrap(),
            kg: AtomicUsize::new(0),
            s: AtomicUsize::new(0),
        };
        assert_eq!(system.dim(), 480);
        let start = StartVector::new(gsgp.stats().wty().to_owned(), gsgp.stats().yty()).unwrap();
        let fopts = FactorizedCgOptions {
            tolerance: 1e-8,
            ..FactorizedCgOptions::default()
        };
        let res = efcg(&system, &start, &fopts).unwrap();
        let it = res.iterations;
        assert!(it > 5);
        // Set-up: the start-vector split (one S product for ŷ₀ = α g, one K_G for Â ŷ₀)
        // and h = K_G g₀; then one K_G and one S per iteration.
        assert_eq!(system.kg.load(Ordering::Relaxed), it + 2, "n={n}");
        assert_eq!(system.s.load(Ordering::Relaxed), it + 1, "n={n}");
        // The solution is the model's: Wᵀα.
        let wt = gsgp.wt_alpha().unwrap();
        assert!(rel_diff_col(&res.solution_wt, wt) < 1e-6);

        let (kg0, s0) = (
            system.kg.load(Ordering::Relaxed),
            system.s.load(Ordering::Relaxed),
        );
        let r0 = Col::from_fn(480, |i| ((i * 7) % 13) as f64 - 6.0);
        let res = efcg_simplified(&system, r0.as_ref(), &fopts).unwrap();
        let it = res.iterations;
        assert_eq!(system.kg.load(Ordering::Relaxed) - kg0, it + 1);
        assert_eq!(system.s.load(Ordering::Relaxed) - s0, it + 1);
        records.push((
            gsgp.stats().gram().storage_bytes(),
            gsgp.grid().num_points(),
        ));
    }
    assert_eq!(
        records[0], records[1],
        "grid-space storage independent of n"
    );
}

#[test]
fn lbfgs_training_increases_the_likelihood() {
    let p = problem(1, GsgpSolver::Efcg);
    let mut theta = p.gsgp.log_params();
    theta[0] += 0.7;
    let start = p.gsgp.with_log_params(&theta).unwrap();
    let opts = gp_models::TrainOptions {
        optimizer: gp_models::Optimizer::Lbfgs(gp_models::LbfgsOptions {
            max_iterations: 8,
            ..gp_models::LbfgsOptions::default()
        }),
        ..gp_models::TrainOptions::default()
    };
    let trained = gp_models::train(&start, &opts).unwrap();
    let before = start.lml_estimate().unwrap().lml;
    let after = trained.model.lml_estimate().unwrap().lml;
    assert!(after > before, "{after} ≤ {before}");
}
