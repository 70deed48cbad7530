//! The SKI kernel `W K_G Wᵀ` column by column ([`SkiKernelColumns`]) against the dense matrix,
//! its pivoted Cholesky against the dense one, the preconditioned SKI covariance of the
//! training objectives and the preconditioned SKI model against the unpreconditioned ones
//! and against dense Cholesky; the prior covariances and variances of interpolated points
//! from the stencils' 1-D forms.

use crate::ski_support;

use faer::Col;
use gp_kernels::SquaredExponential;
use gp_linalg::Cholesky;
use gp_linalg::LinearOperator;
use gp_models::objective::{krylov_estimate, KrylovDepth, KrylovObjectiveOptions, SkiCovariance};
use gp_models::ski::SkiKernelColumns;
use gp_models::{ModelError, Ski, SkiOptions};
use gp_solvers::{ColumnAccess, PivotedCholesky, PivotedCholeskyOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use ski_support::{data, test_points, tight, DenseSki};

fn model(d: usize, n: usize, noise: f64) -> Ski<SquaredExponential> {
    preconditioned_model(d, n, noise, 0)
}

/// [`model`] with a pivoted-Cholesky preconditioner of rank `rank` (0: none).
fn preconditioned_model(d: usize, n: usize, noise: f64, rank: usize) -> Ski<SquaredExponential> {
    let (x, y) = data(n, d, 2.0, 40 + d as u64);
    let kernel =
        SquaredExponential::new((0..d).map(|l| 0.3 + 0.1 * l as f64).collect(), 1.2).unwrap();
    let options = SkiOptions {
        preconditioner_rank: rank,
        ..tight(vec![[0, 40, 18, 9][d]; d])
    };
    Ski::fit(kernel, x.as_ref(), y.as_ref(), noise, &options).unwrap()
}

#[test]
fn columns_and_diagonal_match_the_dense_kernel_matrix() {
    for d in 1..=3 {
        let ski = model(d, 120, 0.05);
        let dense = DenseSki::new(&ski);
        let n = ski.n_train();
        let mut k = dense.khat.clone();
        for i in 0..n {
            k[(i, i)] -= ski.noise_variance();
        }
        let columns = SkiKernelColumns::new(ski.interpolation(), ski.grid_kernel()).unwrap();
        assert_eq!(columns.dim(), n);
        let scale = k.norm_max();
        let diagonal = columns.diagonal();
        for i in 0..n {
            assert!(
                (diagonal[i] - k[(i, i)]).abs() <= 1e-12 * scale,
                "d = {d}, K[{i},{i}]"
            );
        }
        let mut column = Col::<f64>::zeros(n);
        for j in [0, 1, n / 2, n - 1] {
            columns.column(j, column.as_mut());
            assert!(
                (&column - k.col(j)).norm_max() <= 1e-12 * scale,
                "d = {d}, column {j}"
            );
        }
        // The pivoted Cholesky of the columns is the dense matrix's: same pivots, same factor.
        let options = PivotedCholeskyOptions {
            max_rank: 8,
            relative_tolerance: 0.0,
        };
        let ours = PivotedCholesky::new(&columns, &options).unwrap();
        let reference = PivotedCholesky::new(&k, &options).unwrap();
        assert_eq!(ours.pivots(), reference.pivots(), "d = {d}");
        assert!((ours.factor() - reference.factor()).norm_max() <= 1e-10 * scale.sqrt());
    }
}

/// `log p(y)` of the SKI model by dense Cholesky of `W K_G Wᵀ + σ²I`.
fn dense_data_fit_and_log_det(ski: &Ski<SquaredExponential>) -> (f64, f64) {
    let dense = DenseSki::new(ski);
    let chol = Cholesky::new(dense.khat.as_ref()).unwrap();
    let alpha = chol.solve(ski.train_y().as_mat()).unwrap();
    let fit = ski.train_y().transpose() * alpha.col(0);
    (fit, chol.log_det())
}

#[test]
fn preconditioned_ski_covariance_needs_fewer_iterations_for_the_same_answer() {
    // Small noise: the unpreconditioned K̂ is ill-conditioned, as at the end of a training.
    let ski = model(2, 400, 1e-3);
    let exact = KrylovObjectiveOptions {
        tolerance: 1e-10,
        min_preconditioning_size: 100,
        preconditioner_rank: 15,
        ..KrylovObjectiveOptions::default()
    };
    let run = |covariance: &SkiCovariance<'_, SquaredExponential>| {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        krylov_estimate(
            covariance,
            ski.train_y().as_mat(),
            KrylovDepth::Fixed(2000),
            &exact,
            None,
            &mut rng,
        )
        .unwrap()
    };
    let plain = run(&SkiCovariance::new(&ski).unwrap());
    let preconditioned = run(&SkiCovariance::with_options(&ski, &exact).unwrap());
    // Below the size threshold, or at rank 0, there is no preconditioner.
    for options in [
        KrylovObjectiveOptions {
            min_preconditioning_size: 401,
            ..exact
        },
        KrylovObjectiveOptions {
            preconditioner_rank: 0,
            ..exact
        },
    ] {
        assert_eq!(
            run(&SkiCovariance::with_options(&ski, &options).unwrap()),
            plain
        );
    }
    assert!(
        preconditioned.work * 2 < plain.work,
        "iterations: {} preconditioned, {} plain",
        preconditioned.work,
        plain.work
    );
    // Both solves converged to 1e-10: the data fits agree with Cholesky's to far below the
    // tolerance's effect on yᵀK̂⁻¹y (κ · 1e-10 relative at worst, κ ≲ 1e3·n here).
    let (fit, log_det) = dense_data_fit_and_log_det(&ski);
    for e in [&plain, &preconditioned] {
        let ours = e.data_fit.unwrap();
        assert!((ours - fit).abs() <= 1e-5 * fit, "data fit {ours} vs {fit}");
    }
    // The log-determinants are stochastic (10 probes); the preconditioned one is mostly the
    // exact log|P|, so its error is smaller. Both within 2% of |log det|'s scale n·|log σ²|.
    let spread = 0.02 * (ski.n_train() as f64) * 1e-3f64.ln().abs();
    for e in [&plain, &preconditioned] {
        let ours = e.log_det.unwrap();
        assert!(
            (ours - log_det).abs() <= spread,
            "log det {ours} vs {log_det}"
        );
    }
}

/// `SkiOptions::preconditioner_rank` on the model: its likelihood and prediction solves give
/// dense Cholesky's answers in fewer iterations, its probes are `N(0, P)`, and probes the
/// caller chose are refused (their covariance is not `P`).
#[test]
fn preconditioned_ski_model_gives_the_dense_answers_in_fewer_iterations() {
    let noise = 1e-3;
    let plain = model(2, 400, noise);
    let pre = preconditioned_model(2, 400, noise, 15);
    assert!(plain.preconditioner().unwrap().is_none());
    assert_eq!(pre.preconditioner().unwrap().unwrap().rank(), 15);
    assert!(pre.to_string().contains("pivoted-Cholesky rank 15"));
    let dense = DenseSki::new(&pre);

    // Mean: α solved to 1e-11, so its error is at most κ·1e-11 relative (κ ≲ 1e3·n here).
    let (a_plain, a_pre) = (plain.alpha().unwrap(), pre.alpha().unwrap());
    let scale = dense.alpha.norm_max();
    for a in [a_plain, a_pre] {
        assert!((a - &dense.alpha).norm_max() <= 1e-5 * scale);
    }
    let (it_plain, it_pre) = (
        plain.alpha_report().unwrap().iterations,
        pre.alpha_report().unwrap().iterations,
    );
    assert!(
        it_pre * 2 < it_plain,
        "α: {it_pre} vs {it_plain} iterations"
    );
    let xt = test_points(30, 2, 0.0, 2.0, 7);
    let mean = pre.predict_mean(xt.as_ref()).unwrap();
    let want = dense.mean(xt.as_ref());
    assert!((&mean - &want).norm_max() <= 1e-5 * want.norm_max());
    // Variances: the subtracted term k̃*ᵀK̂⁻¹k̃* from preconditioned solves to 1e-11.
    let var = pre.predict_latent_variance(xt.as_ref()).unwrap();
    let cov = dense.covariance(xt.as_ref());
    let prior_scale = 1.2;
    for i in 0..30 {
        assert!(
            (var[i] - cov[(i, i)].max(0.0)).abs() <= 1e-6 * prior_scale,
            "variance {i}: {} vs {}",
            var[i],
            cov[(i, i)]
        );
    }

    // Likelihood: the data fit to the solve's accuracy, the log determinant within the
    // spread of the objective test above, the gradients within 4 standard errors of the
    // unpreconditioned estimate (independent probes).
    let (e_plain, e_pre) = (
        plain.lml_and_grad_estimate().unwrap(),
        pre.lml_and_grad_estimate().unwrap(),
    );
    assert_eq!(
        (e_plain.preconditioner_rank, e_pre.preconditioner_rank),
        (0, 15)
    );
    assert!(e_pre.solve.iterations * 2 < e_plain.solve.iterations);
    let (fit, log_det) = dense_data_fit_and_log_det(&pre);
    assert!((e_pre.data_fit - fit).abs() <= 1e-5 * fit);
    let spread = 0.02 * 400.0 * noise.ln().abs();
    assert!((e_pre.log_det.value - log_det).abs() <= spread);
    for k in 0..e_pre.grad.len() {
        let se = e_pre.grad_std_error[k].hypot(e_plain.grad_std_error[k]);
        let gap = (e_pre.grad[k] - e_plain.grad[k]).abs();
        assert!(
            gap <= 4.0 * se + 1e-6 * e_plain.grad[k].abs(),
            "gradient {k}: {} vs {} (se {se})",
            e_pre.grad[k],
            e_plain.grad[k]
        );
    }

    // Caller-chosen probes have covariance I, not P: refused with the option's name.
    let probes = gp_solvers::Probes::generate(400, None, &Default::default()).unwrap();
    assert!(plain
        .lml_and_grad_estimate_with_probes(probes.clone())
        .is_ok());
    match pre.lml_and_grad_estimate_with_probes(probes) {
        Err(ModelError::InvalidOption { name, .. }) => {
            assert_eq!(name, "SkiOptions::preconditioner_rank")
        }
        other => panic!("expected InvalidOption, got {other:?}"),
    }
}

/// The prior covariances `W_a K_G W_bᵀ` and variances from the stencils' 1-D forms against
/// the dense product, in one to three dimensions, between two different sets of points.
#[test]
fn interpolated_cross_and_diagonal_match_the_dense_product() {
    for d in 1..=3 {
        let ski = model(d, 60, 0.05);
        let (other, _) = data(25, d, 2.0, 90 + d as u64);
        let wb = gp_structured::InterpolationWeights::new(
            ski.grid(),
            other.as_ref(),
            gp_structured::InterpolationOptions {
                scheme: ski.options().grid.scheme,
                out_of_grid: ski.options().grid.out_of_grid,
            },
        )
        .unwrap();
        let wa = ski.interpolation();
        let kg = ski.grid_kernel().operator().to_dense();
        let (da, db) = (ski_support::dense_w(wa), ski_support::dense_w(&wb));
        let expected = &da * &kg * db.transpose();
        let cross = ski.grid_kernel().interpolated_cross(wa, &wb).unwrap();
        let scale = expected.norm_max();
        assert_eq!(cross.shape(), (60, 25));
        assert!((&cross - &expected).norm_max() <= 1e-12 * scale, "d = {d}");
        let diagonal = ski.grid_kernel().interpolated_diagonal(&wb).unwrap();
        let expected = &db * &kg * db.transpose();
        for i in 0..25 {
            assert!(
                (diagonal[i] - expected[(i, i)]).abs() <= 1e-12 * scale,
                "d = {d}"
            );
        }
    }
}
