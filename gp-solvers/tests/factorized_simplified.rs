//! Simplified EFCG (paper Algorithm 4, GSGP spec §3.5) for right-hand sides `W u` in the
//! range of `W`, against plain CG on the dense `K̃ = W K_G Wᵀ + σ² I`, and its posterior-mean
//! use from `x₀ = y/σ²`.

use crate::factorized_support;

use factorized_support::*;
use faer::{Col, Mat};
use gp_linalg::Cholesky;
use gp_solvers::factorized::{efcg_simplified, FactorizedCgOptions, FactorizedStatus};
use gp_solvers::{cg, CgOptions};
use rand_distr::{Distribution, StandardNormal};

fn grid_vector(m: usize, seed: u64) -> Col<f64> {
    let mut r = rng(seed);
    Col::from_fn(m, |_| StandardNormal.sample(&mut r))
}

fn problems() -> Vec<Problem> {
    vec![
        Problem::cubic_1d(300, 60, 1.0, 0.1, 8),
        Problem::cubic_2d(300, 8, 8, 1.0, 0.1, 6),
        Problem::random_sparse(200, 50, 1.0, 0.1, 3),
    ]
}

#[test]
fn iterates_equal_plain_cg_for_rhs_in_range_of_w() {
    for (k, p) in problems().into_iter().enumerate() {
        let u = grid_vector(p.m(), 11 + k as u64);
        let b = &p.w * &u;
        let reference = cg_iterates(&p.ktilde, &b, 10);
        let opts = FactorizedCgOptions {
            tolerance: 0.0,
            max_iterations: 10,
            record_iterates: true,
            ..Default::default()
        };
        let res = efcg_simplified(&p.system(), u.as_ref(), &opts).unwrap();
        assert_eq!(res.iterations, 10);
        assert_eq!(res.status, FactorizedStatus::MaxIterations);
        assert!((res.rhs_norm - b.norm_l2()).abs() < 1e-12 * b.norm_l2());
        let w = p.w_op();
        for (j, (it, xr)) in res
            .iterates
            .as_ref()
            .unwrap()
            .iter()
            .zip(&reference)
            .enumerate()
        {
            assert_eq!(it.coeff, 0.0);
            // Any z₀ works: the coefficient is zero.
            let x = it.expand(&w, b.as_ref()).unwrap();
            let d = rel_diff(&x, xr);
            assert!(d < 1e-10, "problem {k}: iterate {} differs by {d:e}", j + 1);
        }
        let x = res.solution.expand(&w, b.as_ref()).unwrap();
        assert!(rel_diff(&(p.w.transpose() * &x), &res.solution_wt) < 1e-10);
    }
}

#[test]
fn same_iteration_counts_and_answers_for_rhs_in_range_of_w() {
    for (k, p) in problems().into_iter().enumerate() {
        let u = grid_vector(p.m(), 21 + k as u64);
        let b = &p.w * &u;
        // Tolerances reached before CG's rounding drift sets in (near m iterations, two
        // plain CG runs with different rounding already differ by one iteration).
        for tol in [1e-2, 1e-3] {
            let rhs = Mat::from_fn(p.n(), 1, |i, _| b[i]);
            let copts = CgOptions {
                tolerance: tol,
                ..Default::default()
            };
            let plain = cg(&p.ktilde_op(), rhs.as_ref(), None, &copts).unwrap();
            let opts = FactorizedCgOptions {
                tolerance: tol,
                ..Default::default()
            };
            let sys = p.system();
            let res = efcg_simplified(&sys, u.as_ref(), &opts).unwrap();
            assert!(res.converged());
            assert_eq!(
                res.iterations, plain.columns[0].iterations,
                "problem {k}, tol {tol}"
            );
            // One B = (K_G, S) at the start and one per iteration.
            assert_eq!(sys.counts(), (res.iterations + 1, res.iterations + 1));
            let x = res.solution.expand(&p.w_op(), b.as_ref()).unwrap();
            let true_res = (&b - &p.ktilde * &x).norm_l2() / b.norm_l2();
            assert!(true_res <= 1.01 * tol, "{true_res:e}");
            // The same iterate, up to the rounding drift of CG itself.
            let x_ref = col_of(&plain.solution);
            let d = rel_diff(&x, &x_ref);
            let other = plain_cg_on(&Factored(&p), &b, tol, 1000);
            let drift = rel_diff(&col_of(&other.solution), &x_ref);
            assert!(
                d <= (100.0 * drift).max(1e-10),
                "problem {k}, tol {tol}: {d:e} (drift {drift:e})"
            );
        }
    }
}

#[test]
fn posterior_mean_from_y_over_sigma2() {
    // GSGP spec §3.5 use 1: x₀ = y/σ² gives r₀ = −W K_G t/σ² (t = Wᵀy), so r̂₀ = −K_G t/σ²
    // and Wᵀz̃ = Wᵀ(x − x₀) + t/σ²; the tolerance is relative to ‖y‖.
    for p in problems() {
        let sigma2 = p.sigma2;
        let t = p.w.transpose() * &p.y;
        let r0_hat = &p.kg * &t * (-1.0 / sigma2);
        let exact = Cholesky::new(p.ktilde.as_ref())
            .unwrap()
            .solve_col(p.y.as_ref())
            .unwrap();
        let exact_wt = p.w.transpose() * &exact;
        for tol in [1e-2, 1e-5, 1e-8] {
            let opts = FactorizedCgOptions {
                tolerance: tol,
                reference_norm: Some(p.y.norm_l2()),
                ..Default::default()
            };
            let res = efcg_simplified(&p.system(), r0_hat.as_ref(), &opts).unwrap();
            assert!(res.converged());
            let z_wt = &res.solution_wt + &t * (1.0 / sigma2);
            // ‖K̃ z − y‖ ≤ tol ‖y‖ (recursive residual) ⇒ ‖z − z̃‖ ≤ tol ‖y‖ / σ².
            let x = res.solution.expand(&p.w_op(), p.y.as_ref()).unwrap() + &p.y * (1.0 / sigma2);
            let err = (&x - &exact).norm_l2();
            assert!(
                err <= 1.01 * tol * p.y.norm_l2() / sigma2,
                "tol {tol}: {err:e}"
            );
            let w_norm = p.w.norm_l2();
            assert!((&z_wt - &exact_wt).norm_l2() <= w_norm * 1.01 * tol * p.y.norm_l2() / sigma2);
            // The mean cache z̄ = K_G Wᵀz̃ agrees as well.
            let mean_cache = &p.kg * &z_wt;
            let exact_cache = &p.kg * &exact_wt;
            assert!(rel_diff(&mean_cache, &exact_cache) < 100.0 * tol);
        }
    }
}

#[test]
fn rhs_in_the_null_space_of_w_is_solved_at_once() {
    let p = Problem::cubic_1d(100, 20, 1.0, 0.1, 30);
    let res = efcg_simplified(
        &p.system(),
        Col::<f64>::zeros(20).as_ref(),
        &Default::default(),
    )
    .unwrap();
    assert!(res.converged());
    assert_eq!(res.iterations, 0);
    assert_eq!(res.record.residual_norms, vec![0.0]);
    assert_eq!(res.solution_wt.norm_l2(), 0.0);
}

/// Simplified EFCG's step interface: stepping to the end is `efcg_simplified` bit for bit,
/// and a truncated solve is a prefix of the full one.
#[test]
fn efcg_simplified_solver_steps_equal_the_wrapper_bit_for_bit() {
    use gp_solvers::factorized::EfcgSimplifiedSolver;
    use gp_solvers::Status;
    for (i, p) in problems().into_iter().enumerate() {
        let system = p.system();
        let u = grid_vector(p.m(), 40 + i as u64);
        let opts = FactorizedCgOptions {
            tolerance: 1e-10,
            record_iterates: true,
            ..Default::default()
        };
        let full = efcg_simplified(&system, u.as_ref(), &opts).unwrap();
        let mut solver = EfcgSimplifiedSolver::new(&system, u.as_ref(), &opts).unwrap();
        let mut steps = 0;
        while let Some(step) = solver.step().unwrap() {
            steps += 1;
            assert_eq!(step.iteration, solver.iteration());
            assert_eq!(step.status, solver.status());
        }
        assert!(solver.is_finished());
        let stepped = solver.finish();
        assert_same_result(&stepped, steps, &full);

        let mut solver = EfcgSimplifiedSolver::new(&system, u.as_ref(), &opts).unwrap();
        for _ in 0..3 {
            solver.step().unwrap();
        }
        assert_eq!(solver.status(), Status::Running);
        let third = solver.solution();
        let truncated = solver.finish();
        assert_prefix_of_three(&third, &truncated, &full);
    }
}
