//! The step interfaces of factorized Lanczos ([`FlaSolver`], [`EflaSolver`]): the step loop
//! is the one-shot function, a caller can stop it early, and the reports and statuses match
//! the result.

use crate::factorized_support;

use factorized_support::*;
use gp_solvers::factorized::{
    efla, fla, EflaSolver, FactorizedLanczos, FlaSolver, LanczosStep, StartVector,
    WeightSpaceSystem,
};
use gp_solvers::{LanczosOptions, LanczosStatus, Result};

/// One of the two step interfaces, behind one face.
trait Stepper {
    fn step(&mut self) -> Result<Option<LanczosStep>>;
    fn status(&self) -> LanczosStatus;
    fn steps(&self) -> usize;
    fn is_finished(&self) -> bool;
    fn finish(self: Box<Self>) -> FactorizedLanczos;
}

macro_rules! stepper {
    ($solver:ident) => {
        impl Stepper for $solver<'_> {
            fn step(&mut self) -> Result<Option<LanczosStep>> {
                $solver::step(self)
            }
            fn status(&self) -> LanczosStatus {
                $solver::status(self)
            }
            fn steps(&self) -> usize {
                $solver::steps(self)
            }
            fn is_finished(&self) -> bool {
                $solver::is_finished(self)
            }
            fn finish(self: Box<Self>) -> FactorizedLanczos {
                $solver::finish(*self)
            }
        }
    };
}
stepper!(FlaSolver);
stepper!(EflaSolver);

type OneShot =
    fn(&dyn WeightSpaceSystem, &StartVector, &LanczosOptions) -> Result<FactorizedLanczos>;

/// The solvers: name, one-shot function and step interface.
fn solvers() -> [(&'static str, OneShot, NewStepper); 2] {
    [
        ("fla", fla, |sys, start, o| {
            Ok(Box::new(FlaSolver::new(sys, start, o)?))
        }),
        ("efla", efla, |sys, start, o| {
            Ok(Box::new(EflaSolver::new(sys, start, o)?))
        }),
    ]
}

type NewStepper = for<'a> fn(
    &'a dyn WeightSpaceSystem,
    &StartVector,
    &LanczosOptions,
) -> Result<Box<dyn Stepper + 'a>>;

fn opts(k: usize) -> LanczosOptions {
    LanczosOptions {
        max_iterations: k,
        ..Default::default()
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn mat_bits(m: &faer::Mat<f64>) -> (usize, usize, Vec<u64>) {
    let v = (0..m.ncols())
        .flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)].to_bits()))
        .collect();
    (m.nrows(), m.ncols(), v)
}

/// Every number of `a` and `b` equal bit for bit (the status is compared by the callers).
fn assert_same_numbers(a: &FactorizedLanczos, b: &FactorizedLanczos, what: &str) {
    assert_eq!(
        bits(a.tridiagonal.diagonal()),
        bits(b.tridiagonal.diagonal()),
        "{what}: α"
    );
    assert_eq!(
        bits(a.tridiagonal.off_diagonal()),
        bits(b.tridiagonal.off_diagonal()),
        "{what}: β"
    );
    assert_eq!(bits(&a.q_coeffs), bits(&b.q_coeffs), "{what}: d");
    assert_eq!(mat_bits(&a.q_hat), mat_bits(&b.q_hat), "{what}: Q̂");
    assert_eq!(mat_bits(&a.wt_basis), mat_bits(&b.wt_basis), "{what}: WᵀQ");
    assert_eq!(
        a.start_norm.to_bits(),
        b.start_norm.to_bits(),
        "{what}: ‖z₀‖"
    );
}

fn problems() -> [Problem; 3] {
    [
        Problem::cubic_1d(120, 24, 1.0, 0.1, 8),
        Problem::random_sparse(90, 20, 1.0, 0.1, 3),
        // m + 1 = 11 exhausts the Krylov space (an invariant subspace at the cap).
        Problem::cubic_1d(100, 10, 1.0, 0.1, 40),
    ]
}

#[test]
fn the_step_loop_is_the_one_shot_run() {
    for (pi, p) in problems().iter().enumerate() {
        let start = p.start(&p.y);
        for k in [0, 1, 2, 7, 11, 30] {
            for tol in [1e-12, 1e-3] {
                let o = LanczosOptions {
                    max_iterations: k,
                    breakdown_tolerance: tol,
                };
                for (name, one_shot, new) in solvers() {
                    let what = format!("problem {pi}, {name}, k = {k}, tol = {tol:e}");
                    let sys = p.system();
                    let expected = one_shot(&sys, &start, &o).unwrap();
                    assert_ne!(expected.status, LanczosStatus::Running, "{what}");
                    let sys = p.system();
                    let mut solver = new(&sys, &start, &o).unwrap();
                    let mut reports = Vec::new();
                    while let Some(r) = solver.step().unwrap() {
                        assert_eq!(r.index, reports.len(), "{what}");
                        assert_eq!(r.status, solver.status(), "{what}");
                        assert_eq!(solver.steps(), r.index + 1, "{what}");
                        reports.push(r);
                    }
                    assert!(solver.is_finished(), "{what}");
                    assert!(
                        solver.step().unwrap().is_none(),
                        "{what}: a step after the end"
                    );
                    assert_eq!(solver.status(), expected.status, "{what}");
                    let res = solver.finish();
                    assert_eq!(res.status, expected.status, "{what}");
                    assert_same_numbers(&res, &expected, &what);
                    // The reports carry T and the running status.
                    assert_eq!(reports.len(), res.steps(), "{what}");
                    let (alpha, beta) =
                        (res.tridiagonal.diagonal(), res.tridiagonal.off_diagonal());
                    for (j, r) in reports.iter().enumerate() {
                        assert_eq!(r.alpha.to_bits(), alpha[j].to_bits(), "{what}");
                        if j + 1 < reports.len() {
                            assert_eq!(r.beta.map(f64::to_bits), Some(beta[j].to_bits()));
                            assert_eq!(r.status, LanczosStatus::Running, "{what}");
                        } else {
                            assert_eq!(r.beta, None, "{what}");
                            assert_eq!(r.status, expected.status, "{what}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn stopping_early_equals_a_smaller_max_iterations() {
    for (pi, p) in problems().iter().enumerate() {
        let start = p.start(&p.y);
        for (name, one_shot, new) in solvers() {
            for k in [1, 2, 5, 9] {
                let what = format!("problem {pi}, {name}, stopped after {k}");
                let sys = p.system();
                let expected = one_shot(&sys, &start, &opts(k)).unwrap();
                assert_eq!(expected.steps(), k, "{what}");
                let sys = p.system();
                let mut solver = new(&sys, &start, &opts(30)).unwrap();
                assert_eq!(solver.status(), LanczosStatus::Running, "{what}");
                for j in 0..k {
                    let r = solver.step().unwrap().unwrap();
                    assert_eq!(r.index, j, "{what}");
                    assert!(r.beta.is_some(), "{what}");
                }
                assert!(!solver.is_finished(), "{what}");
                assert_eq!(solver.steps(), k, "{what}");
                let res = solver.finish();
                // The caller stopped it: still running.
                assert_eq!(res.status, LanczosStatus::Running, "{what}");
                assert_same_numbers(&res, &expected, &what);
            }
        }
    }
}

#[test]
fn a_solver_without_steps_has_stopped() {
    let p = Problem::cubic_1d(50, 10, 1.0, 0.1, 42);
    let start = p.start(&p.y);
    for (name, one_shot, new) in solvers() {
        let sys = p.system();
        let mut solver = new(&sys, &start, &opts(0)).unwrap();
        assert!(solver.is_finished(), "{name}");
        assert_eq!(solver.status(), LanczosStatus::MaxIterations, "{name}");
        assert!(solver.step().unwrap().is_none(), "{name}");
        let res = solver.finish();
        let expected = one_shot(&sys, &start, &opts(0)).unwrap();
        assert_eq!(res.status, expected.status, "{name}");
        assert_same_numbers(&res, &expected, name);
        assert_eq!(res.q_hat.shape(), (10, 0));
    }
}
