//! Sparse GPs on inducing points (SoR, DTC, VFE, FITC): the stable `O(N m²)` forms
//! against dense formulas with `Q = K_XU K_UU⁻¹ K_UX` built explicitly (T12), against the
//! exact GP when `U = X`, the nested random subsets and grids of inducing inputs, the
//! analytic gradients against central finite differences, training, and bad input.

use crate::common;

use common::{assert_close, col_vec, toy_data};
use faer::{Col, Mat, MatRef};
use gp_kernels::{Kernel, Matern, MaternNu, SquaredExponential};
use gp_linalg::{Cholesky, JitterLadder};
use gp_models::{
    train, ExactGp, GpModel, InducingFactor, InducingPoints, LmlRequest, ModelError, NestedSubsets,
    PredictRequest, SparseGp, SparseMethod, SparseOptions, TrainOptions,
};

const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

fn matern(d: usize) -> Matern {
    let ls: Vec<f64> = (0..d).map(|j| 0.9 + 0.3 * j as f64).collect();
    Matern::new(MaternNu::FiveHalves, ls, 1.3).unwrap()
}

/// The dense reference: `Q`, the training covariance `Q + Λ` of the method, and what it
/// implies at test points.
struct Dense {
    nlz: f64,
    trace_term: f64,
    mean: Vec<f64>,
    latent_var: Vec<f64>,
}

/// `A⁻¹ B` for SPD `A` by a dense Cholesky (no jitter).
fn spd_solve(a: &Mat<f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    Cholesky::with_jitter(a.as_ref(), &JitterLadder::none())
        .unwrap()
        .solve(b)
        .unwrap()
}

fn dense_reference<K: Kernel>(
    kernel: &K,
    x: &Mat<f64>,
    y: &Col<f64>,
    u: MatRef<'_, f64>,
    s2: f64,
    x_test: &Mat<f64>,
    method: SparseMethod,
) -> Dense {
    let n = x.nrows();
    let k = kernel.matrix(x.as_ref(), x.as_ref()).unwrap();
    let kuu = kernel.matrix(u, u).unwrap();
    let kux = kernel.matrix(u, x.as_ref()).unwrap();
    let kus = kernel.matrix(u, x_test.as_ref()).unwrap();
    let kss = kernel.diag(x_test.as_ref()).unwrap();
    // Q = K_XU K_UU⁻¹ K_UX, Q_*X and Q_** built explicitly.
    let kuu_inv_kux = spd_solve(&kuu, kux.as_ref());
    let q = kux.transpose() * &kuu_inv_kux;
    let q_sx = kus.transpose() * &kuu_inv_kux;
    let kuu_inv_kus = spd_solve(&kuu, kus.as_ref());
    let q_ss = kus.transpose() * &kuu_inv_kus;
    let mut c = q.clone();
    for i in 0..n {
        c[(i, i)] += s2;
        if method == SparseMethod::Fitc {
            c[(i, i)] += k[(i, i)] - q[(i, i)];
        }
    }
    let chol = Cholesky::with_jitter(c.as_ref(), &JitterLadder::none()).unwrap();
    let alpha = chol.solve_col(y.as_ref()).unwrap();
    let fit: f64 = (0..n).map(|i| y[i] * alpha[i]).sum();
    let nlz = 0.5 * fit + 0.5 * chol.log_det() + n as f64 * HALF_LN_2PI;
    let trace_term = (0..n).map(|i| k[(i, i)] - q[(i, i)]).sum::<f64>() / (2.0 * s2);
    let mean_mat = &q_sx * alpha.as_mat();
    let explained = q_sx.clone() * chol.solve(q_sx.transpose()).unwrap();
    let b = x_test.nrows();
    let latent_var = (0..b)
        .map(|j| {
            let prior = if method == SparseMethod::Sor {
                q_ss[(j, j)]
            } else {
                kss[j]
            };
            prior - explained[(j, j)]
        })
        .collect();
    Dense {
        nlz,
        trace_term,
        mean: (0..b).map(|j| mean_mat[(j, 0)]).collect(),
        latent_var,
    }
}

fn rel_close(a: f64, b: f64, rel: f64, what: &str) {
    assert!(
        (a - b).abs() <= rel * b.abs().max(1.0),
        "{what}: {a} vs reference {b} (|diff| = {:e})",
        (a - b).abs()
    );
}

/// T12: every method's mean, variances and evidence against the dense formulas, in 1-D
/// (grid inducing points) and 2-D (a random subset).
#[test]
fn t12_stable_forms_match_dense_formulas() {
    for (d, n, m) in [(1usize, 80usize, 12usize), (2, 60, 15)] {
        let (x, y) = toy_data(n, d, 4.0, 11 + d as u64);
        let (x_test, _) = toy_data(25, d, 5.0, 99);
        let kernel = matern(d);
        let s2 = 0.05;
        let u = if d == 1 {
            InducingPoints::grid(x.as_ref(), &[m]).unwrap()
        } else {
            InducingPoints::random_subset(x.as_ref(), m, 5).unwrap()
        };
        for method in SparseMethod::ALL {
            let gp = SparseGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), s2, &u, method).unwrap();
            assert_eq!((gp.jitter(), gp.system_jitter()), (0.0, 0.0));
            let r = dense_reference(&kernel, &x, &y, u.points(), s2, &x_test, method);
            let ev = gp.evidence();
            let what = format!("{method}, d = {d}");
            rel_close(ev.nlz, r.nlz, 1e-8, &format!("{what}: nlZ"));
            rel_close(
                ev.trace_penalty,
                r.trace_term,
                1e-8,
                &format!("{what}: trace term"),
            );
            let expected_objective = if method == SparseMethod::Vfe {
                r.nlz + r.trace_term
            } else {
                r.nlz
            };
            rel_close(
                ev.objective,
                expected_objective,
                1e-8,
                &format!("{what}: objective"),
            );
            rel_close(
                ev.paper_plotted_vfe(),
                r.nlz - r.trace_term,
                1e-8,
                &format!("{what}: plotted VFE"),
            );
            let lml = gp.lml(&LmlRequest::value()).unwrap().lml;
            rel_close(lml, -expected_objective, 1e-8, &format!("{what}: lml"));
            let mean = col_vec(&gp.predict_mean(x_test.as_ref()).unwrap());
            assert_close(&mean, &r.mean, 1e-8, 1.0, &format!("{what}: mean"));
            let var = col_vec(&gp.predict_latent_variance(x_test.as_ref()).unwrap());
            assert_close(
                &var,
                &r.latent_var,
                1e-8,
                1.0,
                &format!("{what}: latent variance"),
            );
            let pred = gp.predict_variance(x_test.as_ref()).unwrap();
            let noisy: Vec<f64> = r.latent_var.iter().map(|v| v + s2).collect();
            assert_close(
                &col_vec(&pred),
                &noisy,
                1e-8,
                1.0,
                &format!("{what}: variance"),
            );
            // The covariance's diagonal is the latent variance; the GpModel path agrees.
            let cov = gp.predict_covariance(x_test.as_ref()).unwrap();
            let diag: Vec<f64> = (0..x_test.nrows()).map(|j| cov[(j, j)]).collect();
            assert_close(
                &diag,
                &r.latent_var,
                1e-8,
                1.0,
                &format!("{what}: covariance"),
            );
            let p = gp
                .predict(x_test.as_ref(), &PredictRequest::default())
                .unwrap();
            assert_close(&col_vec(&p.mean), &r.mean, 1e-8, 1.0, &what);
            assert_close(&col_vec(&p.variance), &noisy, 1e-8, 1.0, &what);
        }
    }
}

/// With `U = X` (m = N) every method but SoR's variance is the exact GP: `Q = K`, FITC's
/// `Λ = σ²I`, VFE's trace term 0.
#[test]
fn inducing_on_all_training_points_is_the_exact_gp() {
    let n = 40;
    let x = Mat::from_fn(n, 1, |i, _| i as f64 * 0.25);
    let y = Col::from_fn(n, |i| {
        (i as f64 * 0.25).sin() + 0.1 * ((i * 7 % 5) as f64 - 2.0)
    });
    let x_test = Mat::from_fn(17, 1, |j, _| -0.5 + j as f64 * 0.7);
    let kernel = Matern::new(MaternNu::FiveHalves, vec![0.5], 1.1).unwrap();
    let s2 = 0.02;
    let exact = ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), s2).unwrap();
    assert_eq!(exact.jitter(), 0.0);
    let exact_mean = col_vec(&exact.predict_mean(x_test.as_ref()).unwrap());
    let exact_var = col_vec(&exact.predict_variance(x_test.as_ref()).unwrap());
    let exact_nlz = -exact.log_marginal_likelihood();
    let u = InducingPoints::given(x.as_ref()).unwrap();
    for method in [SparseMethod::Dtc, SparseMethod::Vfe, SparseMethod::Fitc] {
        let gp = SparseGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), s2, &u, method).unwrap();
        let what = format!("{method} with U = X");
        let mean = col_vec(&gp.predict_mean(x_test.as_ref()).unwrap());
        assert_close(&mean, &exact_mean, 1e-8, 1.0, &format!("{what}: mean"));
        let var = col_vec(&gp.predict_variance(x_test.as_ref()).unwrap());
        assert_close(&var, &exact_var, 1e-8, 1.0, &format!("{what}: variance"));
        rel_close(
            gp.evidence().objective,
            exact_nlz,
            1e-8,
            &format!("{what}: evidence"),
        );
        assert!(gp.evidence().trace_penalty < 1e-8);
        if method == SparseMethod::Fitc {
            assert!(gp.lambda().iter().all(|l| (l - 1.0).abs() < 1e-8));
        }
    }
}

/// The first m rows of the permutation are the first m of the first m + 1, and the
/// subsets are the training rows they name.
#[test]
fn nested_subsets_are_nested() {
    let (x, _) = toy_data(50, 2, 3.0, 4);
    let order = NestedSubsets::new(50, 17);
    let mut sorted = order.order().to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    for m in 1..50 {
        let small = order.rows(m).unwrap();
        let large = order.rows(m + 1).unwrap();
        assert_eq!(small, &large[..m]);
    }
    let u = order.take(x.as_ref(), 8).unwrap();
    assert_eq!(u, InducingPoints::random_subset(x.as_ref(), 8, 17).unwrap());
    let rows = u.rows().unwrap();
    for (r, &i) in rows.iter().enumerate() {
        assert_eq!(u.points()[(r, 1)], x[(i, 1)]);
    }
    // Another seed, another order.
    assert_ne!(NestedSubsets::new(50, 18).order(), order.order());
}

/// The grid is the product of per-axis linspaces over the data's range, last axis fastest.
#[test]
fn grid_is_a_product_of_linspaces() {
    let x = Mat::from_fn(
        30,
        2,
        |i, l| if l == 0 { i as f64 } else { -(i as f64) / 10.0 },
    );
    let g = InducingPoints::grid(x.as_ref(), &[3, 4]).unwrap();
    assert_eq!((g.len(), g.dim(), g.rows()), (12, 2, None));
    let p = g.points();
    assert_eq!((p[(0, 0)], p[(0, 1)]), (0.0, -2.9));
    assert_eq!((p[(1, 0)], p[(3, 1)]), (0.0, 0.0));
    assert_eq!((p[(4, 0)], p[(11, 0)]), (14.5, 29.0));
    let one = InducingPoints::grid_between(&[1.0], &[2.0], &[1]).unwrap();
    assert_eq!(one.points()[(0, 0)], 1.0);
}

/// The analytic gradient of every method's objective against central finite differences,
/// through the `GpModel` interface (`lml` is −objective).
#[test]
fn gradients_match_finite_differences() {
    let (x, y) = toy_data(50, 2, 3.0, 21);
    let u = InducingPoints::random_subset(x.as_ref(), 10, 2).unwrap();
    for method in SparseMethod::ALL {
        check_gradient(matern(2), &x, &y, &u, method);
        let se = SquaredExponential::new(vec![0.8, 1.4], 0.9).unwrap();
        check_gradient(se, &x, &y, &u, method);
    }
}

fn check_gradient<K: Kernel + Clone + Send + Sync>(
    kernel: K,
    x: &Mat<f64>,
    y: &Col<f64>,
    u: &InducingPoints,
    method: SparseMethod,
) {
    let gp = SparseGp::fit(kernel, x.as_ref(), y.as_ref(), 0.04, u, method).unwrap();
    let est = gp.lml(&LmlRequest::with_gradient()).unwrap();
    let p = GpModel::log_params(&gp);
    assert_eq!(est.grad.len(), p.len());
    let h = 1e-5;
    let scale = est.grad.iter().fold(1.0_f64, |m, g| m.max(g.abs()));
    for k in 0..p.len() {
        let at = |delta: f64| {
            let mut q = p.clone();
            q[k] += delta;
            gp.with_log_params(&q).unwrap().log_evidence()
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!(
            (est.grad[k] - fd).abs() <= 1e-5 * scale,
            "{method}: d lml / d {} = {} analytic vs {fd} finite differences",
            gp.param_names()[k],
            est.grad[k]
        );
    }
}

/// Training VFE on a 1-D sine by L-BFGS (from the data-derived start) raises the ELBO and
/// predicts near the truth: Matérn-5/2 with the paper's zero jitter, and the
/// squared exponential, whose `K_UU` on 15 grid points is numerically singular at the
/// start's long length scale, with a jitter ladder.
#[test]
fn training_vfe_improves_the_elbo() {
    let matern = Matern::new(MaternNu::FiveHalves, vec![3.0], 0.3).unwrap();
    train_sine(matern, JitterLadder::none());
    let se = SquaredExponential::new(vec![3.0], 0.3).unwrap();
    train_sine(se, JitterLadder::default());
}

fn train_sine<K: Kernel + Clone + Send + Sync>(kernel: K, jitter: JitterLadder) {
    let n = 80;
    let x = Mat::from_fn(n, 1, |i, _| i as f64 * 10.0 / n as f64);
    let y = Col::from_fn(n, |i| {
        (i as f64 * 10.0 / n as f64).sin() + 0.1 * ((i * 13 % 7) as f64 - 3.0) / 3.0
    });
    let u = InducingPoints::grid(x.as_ref(), &[15]).unwrap();
    let opts = SparseOptions {
        jitter,
        ..SparseOptions::new(SparseMethod::Vfe)
    };
    let gp = SparseGp::fit_with_options(kernel, x.as_ref(), y.as_ref(), 0.1, &u, &opts).unwrap();
    let before = gp.log_evidence();
    let trained = train(&gp, &TrainOptions::default()).unwrap().model;
    assert!(
        trained.log_evidence() > before + 1.0,
        "ELBO {before} → {}",
        trained.log_evidence()
    );
    let x_test = Mat::from_fn(9, 1, |j, _| 0.5 + j as f64);
    let mean = trained.predict_mean(x_test.as_ref()).unwrap();
    for j in 0..9 {
        let truth = x_test[(j, 0)].sin();
        assert!(
            (mean[j] - truth).abs() < 0.15,
            "x = {}: {} vs {truth}",
            x_test[(j, 0)],
            mean[j]
        );
    }
    assert!(trained.to_string().contains("VFE on 15 inducing points"));
}

/// Bad input gives typed errors; a zero-jitter Cholesky failure names its factor, and a
/// jitter ladder lets the same fit through, reporting the jitter.
#[test]
fn bad_input_is_a_typed_error() {
    let (x, y) = toy_data(30, 1, 3.0, 8);
    let kernel = matern(1);
    assert!(matches!(
        InducingPoints::random_subset(x.as_ref(), 0, 1),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        InducingPoints::random_subset(x.as_ref(), 31, 1),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        NestedSubsets::new(29, 1).take(x.as_ref(), 3),
        Err(ModelError::LengthMismatch { .. })
    ));
    assert!(matches!(
        InducingPoints::given(Mat::<f64>::zeros(0, 1).as_ref()),
        Err(ModelError::EmptyData { .. })
    ));
    assert!(matches!(
        InducingPoints::grid(x.as_ref(), &[0]),
        Err(ModelError::InvalidOption { .. })
    ));
    assert!(matches!(
        InducingPoints::grid(x.as_ref(), &[3, 3]),
        Err(ModelError::LengthMismatch { .. })
    ));
    let bad_u = Mat::from_fn(3, 1, |i, _| if i == 1 { f64::NAN } else { i as f64 });
    assert!(matches!(
        InducingPoints::given(bad_u.as_ref()),
        Err(ModelError::NonFinite { .. })
    ));
    let u = InducingPoints::grid(x.as_ref(), &[6]).unwrap();
    let fit = |x: MatRef<'_, f64>, y: &Col<f64>, u: &InducingPoints| {
        SparseGp::fit(kernel.clone(), x, y.as_ref(), 0.05, u, SparseMethod::Fitc)
    };
    let mut x_nan = x.clone();
    x_nan[(4, 0)] = f64::INFINITY;
    assert!(matches!(
        fit(x_nan.as_ref(), &y, &u),
        Err(ModelError::NonFinite { .. })
    ));
    let mut y_nan = y.clone();
    y_nan[2] = f64::NAN;
    assert!(matches!(
        fit(x.as_ref(), &y_nan, &u),
        Err(ModelError::NonFinite { .. })
    ));
    let short = Col::from_fn(29, |i| y[i]);
    assert!(matches!(
        fit(x.as_ref(), &short, &u),
        Err(ModelError::LengthMismatch { .. })
    ));
    let u2 = InducingPoints::given(Mat::from_fn(4, 2, |i, l| (i + l) as f64).as_ref()).unwrap();
    assert!(matches!(
        fit(x.as_ref(), &y, &u2),
        Err(ModelError::LengthMismatch { .. })
    ));
    let x2 = Mat::from_fn(30, 2, |i, l| (i * (l + 1)) as f64 / 10.0);
    assert!(matches!(
        fit(x2.as_ref(), &y, &u2),
        Err(ModelError::KernelDim { .. })
    ));
    assert!(matches!(
        SparseGp::fit(
            kernel.clone(),
            x.as_ref(),
            y.as_ref(),
            0.0,
            &u,
            SparseMethod::Dtc
        ),
        Err(ModelError::InvalidNoise { .. })
    ));
    let gp = fit(x.as_ref(), &y, &u).unwrap();
    assert!(matches!(
        gp.predict_mean(Mat::<f64>::zeros(2, 2).as_ref()),
        Err(ModelError::TestDim { .. })
    ));
    assert!(matches!(
        gp.with_log_params(&[0.0]),
        Err(ModelError::LengthMismatch { .. })
    ));

    // Duplicate inducing points: K_UU is singular; with the paper's zero jitter every
    // method "crashes" on the factor of K_UU.
    let dup =
        InducingPoints::given(Mat::from_fn(5, 1, |i, _| [0.5, 1.0, 1.0, 2.0, 2.5][i]).as_ref())
            .unwrap();
    for method in SparseMethod::ALL {
        let err =
            SparseGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.05, &dup, method).unwrap_err();
        match &err {
            ModelError::InducingCholesky {
                method: got,
                factor,
                m,
                largest_jitter,
            } => {
                assert_eq!(
                    (*got, *factor, *m, *largest_jitter),
                    (method, InducingFactor::Kuu, 5, 0.0)
                );
            }
            other => panic!("{method}: expected InducingCholesky, got {other:?}"),
        }
        assert!(err.to_string().contains("K_UU"), "{err}");
    }
    // With a jitter ladder the same points fit, and the jitter is reported.
    let opts = SparseOptions {
        jitter: JitterLadder::default(),
        ..SparseOptions::new(SparseMethod::Vfe)
    };
    let gp = SparseGp::fit_with_options(kernel.clone(), x.as_ref(), y.as_ref(), 0.05, &dup, &opts)
        .unwrap();
    assert!(gp.jitter() > 0.0);
    assert!(gp.log_evidence().is_finite());
    // LOVE is refused.
    assert!(matches!(
        gp.predict(
            x.as_ref(),
            &PredictRequest::variance(gp_models::VarianceMethod::Love { rank: 5 })
        ),
        Err(ModelError::InvalidOption { .. })
    ));
}
