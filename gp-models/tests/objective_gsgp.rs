//! CG and RR-CG in grid space on a GSGP model (`gsgp_krylov_estimate`,
//! `train_objective_gsgp`): converged, they give the dense SKI log marginal likelihood and
//! the model's own gradient; over every pair of draws, the RR estimates average to the
//! truncated series (the exact-expectation identity, spec `rtgps.md` H5, in grid space);
//! RR-CG training lowers the exact loss.

use crate::gsgp_support;

use faer::Mat;
use gp_models::objective::{
    gsgp_krylov_estimate, train_objective_gsgp, Estimator, GsgpProbes, KrylovDepth,
    KrylovObjectiveOptions, ObjectiveEstimate, ObjectiveTrainOptions,
};
use gp_models::optim::AdamOptions;
use gp_models::GsgpSolver;
use gp_solvers::truncation::{ExpDecay, TruncationLaw};
use gp_solvers::{ProbeOptions, Probes};
use gsgp_support::{problem, DenseSki};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `√k e_i` for all `i`: probes that make SLQ and Hutchinson exact up to the solver.
fn complete(k: usize) -> Probes {
    Probes::from_matrix(Mat::<f64>::identity(k, k) * (k as f64).sqrt(), None).unwrap()
}

/// `count` Rademacher probes of dimension `dim`.
fn rademacher(dim: usize, count: usize, seed: u64) -> Probes {
    let opts = ProbeOptions {
        count,
        seed,
        ..ProbeOptions::default()
    };
    Probes::generate(dim, None, &opts).unwrap()
}

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(5)
}

#[test]
fn converged_grid_space_cg_gives_the_dense_lml_and_the_models_gradient() {
    for (d, solver) in [
        (1, GsgpSolver::Efcg),
        (2, GsgpSolver::Efcg),
        (1, GsgpSolver::Fcg),
    ] {
        let p = problem(d, solver);
        let r = p.gsgp.log_det_dim().unwrap();
        let m = p.gsgp.grid().num_points();
        let opts = KrylovObjectiveOptions {
            tolerance: 1e-12,
            ..KrylovObjectiveOptions::default()
        };
        let ours = gsgp_krylov_estimate(
            &p.gsgp,
            KrylovDepth::Fixed(600),
            &opts,
            Some(GsgpProbes {
                log_det: complete(r),
                trace: complete(m),
            }),
            &mut rng(),
        )
        .unwrap();
        let dense = DenseSki::new(&p.ski).lml();
        let lml = ours.lml.unwrap();
        assert!(
            (lml - dense).abs() < 1e-8 * dense.abs(),
            "d={d} {solver:?}: lml {lml} vs dense {dense}"
        );
        let theirs = p
            .gsgp
            .lml_and_grad_estimate_with_probes(complete(r), complete(m))
            .unwrap();
        assert_eq!(ours.gradient.len(), p.gsgp.n_params());
        for (k, (a, b)) in ours.gradient.iter().zip(&theirs.grad).enumerate() {
            assert!(
                (a - b).abs() < 1e-7 * b.abs().max(1.0),
                "d={d} {solver:?} param {k}: {a} vs {b}"
            );
        }
        assert!(ours.work > 0 && ours.work < 600);
    }
}

/// `Σ_{J₁,J₂} P(J₁) P(J₂) estimate(J₁, J₂)` over the support of `law`, for value and
/// gradient.
fn expectation_over_draw_pairs(
    f: impl Fn(&[usize]) -> ObjectiveEstimate,
    law: &dyn TruncationLaw,
) -> (f64, Vec<f64>) {
    let mut value = 0.0;
    let mut grad: Vec<f64> = Vec::new();
    for j1 in law.min_support()..=law.max_support() {
        for j2 in law.min_support()..=law.max_support() {
            let w = law.pmf(j1) * law.pmf(j2);
            let e = f(&[j1, j2]);
            value += w * e.lml.unwrap();
            grad.resize(e.gradient.len(), 0.0);
            for (g, v) in grad.iter_mut().zip(&e.gradient) {
                *g += w * v;
            }
        }
    }
    (value, grad)
}

#[test]
fn rr_estimates_average_to_the_truncated_series_over_every_pair_of_draws() {
    // Truncated at 9 steps (far from converged: the bias of plain CG at that depth is
    // visible), the RR-CG value and gradient averaged over all (J₁, J₂) with their
    // probabilities equal truncated CG at the law's largest depth, for the same probes.
    for solver in [GsgpSolver::Efcg, GsgpSolver::Fcg] {
        let p = problem(2, solver);
        let r = p.gsgp.log_det_dim().unwrap();
        let m = p.gsgp.grid().num_points();
        let probes = GsgpProbes {
            log_det: rademacher(r, 3, 11),
            trace: rademacher(m, 3, 12),
        };
        let opts = KrylovObjectiveOptions {
            tolerance: 0.0,
            ..KrylovObjectiveOptions::default()
        };
        let law = ExpDecay::new(0.3, 3, 9).unwrap();
        let run = |depth: KrylovDepth<'_>| {
            gsgp_krylov_estimate(&p.gsgp, depth, &opts, Some(probes.clone()), &mut rng()).unwrap()
        };
        let truncated = run(KrylovDepth::Fixed(9));
        let (value, grad) = expectation_over_draw_pairs(
            |depths| run(KrylovDepth::Given { law: &law, depths }),
            &law,
        );
        let t_value = truncated.lml.unwrap();
        assert!(
            (value - t_value).abs() < 1e-9 * t_value.abs(),
            "{solver:?}: E[value] {value} vs truncated {t_value}"
        );
        for (k, (a, b)) in grad.iter().zip(&truncated.gradient).enumerate() {
            assert!(
                (a - b).abs() < 1e-9 * b.abs().max(1.0),
                "{solver:?} param {k}: E[grad] {a} vs truncated {b}"
            );
        }
        // The truncation is real: 9 steps are far from the converged gradient.
        let converged = run(KrylovDepth::Fixed(600));
        let gap = truncated
            .gradient
            .iter()
            .zip(&converged.gradient)
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0.0, f64::max);
        assert!(
            gap > 1e-3,
            "{solver:?}: truncated gradient too close ({gap})"
        );
    }
}

#[test]
fn rr_cg_training_in_grid_space_lowers_the_exact_loss_and_refuses_bad_requests() {
    let p = problem(1, GsgpSolver::Efcg);
    let options = ObjectiveTrainOptions {
        adam: AdamOptions {
            learning_rate: 0.05,
            iterations: 30,
            ..AdamOptions::default()
        },
        exact_loss_every: Some(30),
        ..ObjectiveTrainOptions::default()
    };
    let rr = Estimator::rr_cg_exp_decay(0.1, 10, 150).unwrap();
    let data = Some((p.x.as_ref(), p.y.as_ref()));
    let out = train_objective_gsgp(&p.gsgp, &rr, &options, data, &mut |_| {
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    let (first, last) = (
        out.steps[0].exact_loss.unwrap(),
        out.steps[30].exact_loss.unwrap(),
    );
    assert!(last < first, "{first} → {last}");
    assert!(out.steps[1..].iter().all(|s| s.work >= 10));
    assert!(out.noise_variance > 0.0);

    let chol = train_objective_gsgp(&p.gsgp, &Estimator::Cholesky, &options, data, &mut |_| {
        std::ops::ControlFlow::Continue(())
    });
    assert!(chol.unwrap_err().to_string().contains("CG or RR-CG"));
    let no_data = train_objective_gsgp(&p.gsgp, &rr, &options, None, &mut |_| {
        std::ops::ControlFlow::Continue(())
    });
    assert!(no_data.unwrap_err().to_string().contains("exact_data"));

    // Probes of the wrong dimension and a single draw are refused.
    let m = p.gsgp.grid().num_points();
    let opts = KrylovObjectiveOptions::default();
    let bad = gsgp_krylov_estimate(
        &p.gsgp,
        KrylovDepth::Fixed(5),
        &opts,
        Some(GsgpProbes {
            log_det: rademacher(3, 2, 1),
            trace: rademacher(m + 1, 2, 2),
        }),
        &mut rng(),
    );
    assert!(bad.unwrap_err().to_string().contains("grid point"));
    let law = ExpDecay::new(0.3, 3, 9).unwrap();
    let one = gsgp_krylov_estimate(
        &p.gsgp,
        KrylovDepth::Given {
            law: &law,
            depths: &[4],
        },
        &opts,
        None,
        &mut rng(),
    );
    assert!(one
        .unwrap_err()
        .to_string()
        .contains("two independent draws"));
}
