//! Input errors, degenerate inputs and breakdowns of the factorized solvers: typed errors
//! or statuses, never panics.

use crate::factorized_support;

use factorized_support::*;
use faer::{Col, ColMut, ColRef, Mat};
use gp_linalg::{DenseOperator, LinalgError, LinearOperator};
use gp_solvers::factorized::{
    efcg, efcg_simplified, efla, fcg, fla, EfcgSolver, EflaSolver, FactorizedBreakdown,
    FactorizedCgOptions, FactorizedCgResult, FactorizedLanczos, FactorizedStatus, FactorizedVector,
    FlaSolver, LanczosStep, OperatorSystem, StartVector, WeightSpaceSystem,
};
use gp_solvers::{LanczosOptions, SolverError};

fn invalid(err: SolverError, expected: &str) {
    match err {
        SolverError::InvalidOptions { name, .. } => assert_eq!(name, expected),
        other => panic!("expected InvalidOptions({expected}), got {other:?}"),
    }
}

fn shape(err: SolverError) {
    assert!(matches!(err, SolverError::ShapeMismatch { .. }), "{err:?}");
}

#[test]
fn start_vector_is_validated() {
    let err = StartVector::new(
        Col::from_fn(3, |i| if i == 1 { f64::NAN } else { 1.0 }),
        1.0,
    )
    .unwrap_err();
    assert!(matches!(
        err,
        SolverError::Linalg(LinalgError::NonFinite { .. })
    ));
    invalid(StartVector::new(Col::zeros(3), -1.0).unwrap_err(), "rho");
    invalid(
        StartVector::new(Col::zeros(3), f64::INFINITY).unwrap_err(),
        "rho",
    );
    invalid(
        StartVector::new(Col::from_fn(3, |_| 1.0), 0.0).unwrap_err(),
        "rho",
    );
    let s = StartVector::new(Col::from_fn(3, |i| i as f64), 4.0).unwrap();
    assert_eq!(s.norm(), 2.0);
    assert_eq!(s.g()[2], 2.0);
}

#[test]
fn shapes_are_checked() {
    let p = Problem::cubic_1d(50, 10, 1.0, 0.1, 1);
    let wrong = StartVector::new(Col::from_fn(9, |_| 1.0), 1.0).unwrap();
    let sys = p.system();
    let o = FactorizedCgOptions::default();
    shape(fcg(&sys, &wrong, &o).unwrap_err());
    shape(efcg(&sys, &wrong, &o).unwrap_err());
    shape(efcg_simplified(&sys, Col::<f64>::zeros(9).as_ref(), &o).unwrap_err());
    let lo = LanczosOptions::default();
    shape(fla(&sys, &wrong, &lo).unwrap_err());
    shape(efla(&sys, &wrong, &lo).unwrap_err());
    let nan = Col::from_fn(10, |i| if i == 3 { f64::NAN } else { 0.0 });
    assert!(matches!(
        efcg_simplified(&sys, nan.as_ref(), &o).unwrap_err(),
        SolverError::Linalg(LinalgError::NonFinite { .. })
    ));
    // OperatorSystem: K_G and S must be square of one order.
    let kg = DenseOperator::new(Mat::<f64>::identity(4, 4));
    let s3 = DenseOperator::new(Mat::<f64>::identity(3, 3));
    let rect = DenseOperator::new(Mat::<f64>::zeros(4, 3));
    shape(OperatorSystem::new(&kg, &s3, 0.1).unwrap_err());
    shape(OperatorSystem::new(&rect, &s3, 0.1).unwrap_err());
    invalid(
        OperatorSystem::new(&kg, &kg, -0.1).unwrap_err(),
        "noise_variance",
    );
    // Expansion: W must be n×m.
    let v = FactorizedVector {
        hat: Col::zeros(10),
        coeff: 1.0,
    };
    shape(
        v.expand(&DenseOperator::new(Mat::<f64>::zeros(50, 9)), p.y.as_ref())
            .unwrap_err(),
    );
    let res = efla(&sys, &p.start(&p.y), &LanczosOptions::default()).unwrap();
    shape(
        res.expand_basis(&DenseOperator::new(Mat::<f64>::zeros(49, 10)), p.y.as_ref())
            .unwrap_err(),
    );
}

/// A system with a given (possibly invalid) noise variance.
struct BadNoise(DenseSystem, f64);

impl WeightSpaceSystem for BadNoise {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn apply_prior(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> gp_solvers::Result<()> {
        self.0.apply_prior(v, out)
    }
    fn apply_gram(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> gp_solvers::Result<()> {
        self.0.apply_gram(v, out)
    }
    fn noise_variance(&self) -> f64 {
        self.1
    }
}

#[test]
fn options_and_noise_are_validated() {
    let p = Problem::cubic_1d(50, 10, 1.0, 0.1, 2);
    let start = p.start(&p.y);
    let sys = p.system();
    for (o, name) in [
        (
            FactorizedCgOptions {
                tolerance: f64::NAN,
                ..Default::default()
            },
            "tolerance",
        ),
        (
            FactorizedCgOptions {
                tolerance: -1.0,
                ..Default::default()
            },
            "tolerance",
        ),
        (
            FactorizedCgOptions {
                min_iterations: 5,
                max_iterations: 4,
                ..Default::default()
            },
            "min_iterations",
        ),
        (
            FactorizedCgOptions {
                reference_norm: Some(0.0),
                ..Default::default()
            },
            "reference_norm",
        ),
    ] {
        invalid(fcg(&sys, &start, &o).unwrap_err(), name);
        invalid(efcg(&sys, &start, &o).unwrap_err(), name);
        invalid(efcg_simplified(&sys, start.g(), &o).unwrap_err(), name);
    }
    for sigma2 in [-1.0, f64::NAN, f64::INFINITY] {
        let bad = BadNoise(p.system(), sigma2);
        invalid(
            efcg(&bad, &start, &Default::default()).unwrap_err(),
            "noise_variance",
        );
        invalid(
            fcg(&bad, &start, &Default::default()).unwrap_err(),
            "noise_variance",
        );
        invalid(
            efcg_simplified(&bad, start.g(), &Default::default()).unwrap_err(),
            "noise_variance",
        );
        invalid(
            efla(&bad, &start, &Default::default()).unwrap_err(),
            "noise_variance",
        );
        invalid(
            fla(&bad, &start, &Default::default()).unwrap_err(),
            "noise_variance",
        );
    }
    let lo = LanczosOptions {
        breakdown_tolerance: -1.0,
        ..Default::default()
    };
    invalid(efla(&sys, &start, &lo).unwrap_err(), "breakdown_tolerance");
    invalid(fla(&sys, &start, &lo).unwrap_err(), "breakdown_tolerance");
    // A zero Lanczos start vector.
    let zero = StartVector::new(Col::zeros(10), 0.0).unwrap();
    invalid(efla(&sys, &zero, &Default::default()).unwrap_err(), "start");
    invalid(fla(&sys, &zero, &Default::default()).unwrap_err(), "start");
}

#[test]
fn degenerate_cg_runs() {
    let p = Problem::cubic_1d(50, 10, 1.0, 0.1, 3);
    let sys = p.system();
    // A zero right-hand side is solved at once.
    let zero = StartVector::new(Col::zeros(10), 0.0).unwrap();
    for solver in [fcg, efcg] {
        let res = solver(&sys, &zero, &Default::default()).unwrap();
        assert_eq!(res.status, FactorizedStatus::Converged);
        assert_eq!(res.iterations, 0);
        assert_eq!(res.record.residual_norms, vec![0.0]);
        assert_eq!(res.solution.hat.norm_l2(), 0.0);
        assert_eq!(res.solution.coeff, 0.0);
        assert!(res.tridiagonal().unwrap().is_empty());
        // No iteration allowed.
        let o = FactorizedCgOptions {
            max_iterations: 0,
            ..Default::default()
        };
        let res = solver(&sys, &p.start(&p.y), &o).unwrap();
        assert_eq!(res.status, FactorizedStatus::MaxIterations);
        assert_eq!(res.iterations, 0);
        assert_eq!(res.record.residual_norms, vec![1.0]);
    }
}

#[test]
fn breakdowns_end_with_a_status() {
    // An indefinite K_G: the first curvature zᵀK̃z = gᵀK_G g + σ²ρ is negative.
    let p = Problem::cubic_1d(50, 10, 1.0, 0.01, 4);
    let neg = DenseSystem::new(-&p.kg, p.s.clone(), 0.01);
    for solver in [fcg, efcg] {
        let res = solver(&neg, &p.start(&p.y), &Default::default()).unwrap();
        assert!(
            matches!(
                res.status,
                FactorizedStatus::Breakdown(FactorizedBreakdown::NonPositiveCurvature { .. })
            ),
            "{:?}",
            res.status
        );
        assert_eq!(res.iterations, 0);
    }
    let u = Col::from_fn(10, |i| 1.0 + i as f64);
    let res = efcg_simplified(&neg, u.as_ref(), &Default::default()).unwrap();
    assert!(res.status.is_breakdown(), "{:?}", res.status);

    // A negative-definite S: the factorized ‖r‖² comes out negative.
    let kg = DenseOperator::new(Mat::<f64>::identity(1, 1));
    let s = DenseOperator::new(Mat::<f64>::identity(1, 1) * -10.0);
    let sys = OperatorSystem::new(&kg, &s, 1.0).unwrap();
    let start = StartVector::new(Col::from_fn(1, |_| 1.0), 1.0).unwrap();
    for solver in [fcg, efcg] {
        let res = solver(&sys, &start, &Default::default()).unwrap();
        assert!(
            matches!(
                res.status,
                FactorizedStatus::Breakdown(FactorizedBreakdown::NegativeSquaredNorm { .. })
            ),
            "{:?}",
            res.status
        );
        assert_eq!(res.iterations, 1);
        assert_eq!(res.record.residual_norms.len(), 1);
    }
    let res = efcg_simplified(&sys, start.g(), &Default::default()).unwrap();
    assert!(matches!(
        res.status,
        FactorizedStatus::Breakdown(FactorizedBreakdown::NegativeSquaredNorm { .. })
    ));
}

/// How a [`Faulty`] system's prior product goes wrong once it has been called `after` times.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// It writes NaN and reports success.
    Nan,
    /// It returns an error.
    Error,
}

/// A system whose K_G product goes wrong after a number of calls.
struct Faulty(DenseSystem, usize, Fault);

impl WeightSpaceSystem for Faulty {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn apply_prior(&self, v: ColRef<'_, f64>, mut out: ColMut<'_, f64>) -> gp_solvers::Result<()> {
        let calls = self.0.counts().0;
        self.0.apply_prior(v, out.as_mut())?;
        if calls >= self.1 {
            match self.2 {
                Fault::Nan => out.fill(f64::NAN),
                Fault::Error => {
                    return Err(SolverError::InvalidCoefficients {
                        reason: "injected product failure".into(),
                    })
                }
            }
        }
        Ok(())
    }
    fn apply_gram(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) -> gp_solvers::Result<()> {
        self.0.apply_gram(v, out)
    }
    fn noise_variance(&self) -> f64 {
        self.0.noise_variance()
    }
}

/// Checks that `err` is the injected fault: the product's own error, or a non-finite error
/// for NaN output.
fn assert_fault(err: SolverError, fault: Fault, what: &str) {
    match fault {
        Fault::Nan => assert!(
            matches!(err, SolverError::Linalg(LinalgError::NonFinite { .. })),
            "{what}: {err:?}"
        ),
        Fault::Error => assert!(
            matches!(err, SolverError::InvalidCoefficients { .. }),
            "{what}: {err:?}"
        ),
    }
}

#[test]
fn failing_products_are_errors_from_every_solver() {
    let p = Problem::cubic_1d(80, 16, 1.0, 0.1, 5);
    let start = p.start(&p.y);
    // After 0 calls: the set-up fails; after 3: a product inside the iteration fails.
    for after in [0, 3] {
        for fault in [Fault::Nan, Fault::Error] {
            for (name, solver) in [("fcg", fcg as CgSolverFn), ("efcg", efcg)] {
                let sys = Faulty(p.system(), after, fault);
                let err = solver(&sys, &start, &Default::default()).unwrap_err();
                assert_fault(err, fault, &format!("{name} after {after}"));
            }
            let sys = Faulty(p.system(), after, fault);
            let err = efcg_simplified(&sys, start.g(), &Default::default()).unwrap_err();
            assert_fault(err, fault, &format!("efcg_simplified after {after}"));
            for (name, solver) in [("fla", fla as LanczosFn), ("efla", efla)] {
                let sys = Faulty(p.system(), after, fault);
                let err = solver(&sys, &start, &Default::default()).unwrap_err();
                assert_fault(err, fault, &format!("{name} after {after}"));
            }
            // The step interface reports the same error.
            let sys = Faulty(p.system(), after, fault);
            let err = match EfcgSolver::new(&sys, &start, &Default::default()) {
                Err(e) => e,
                Ok(mut solver) => loop {
                    match solver.step() {
                        Err(e) => break e,
                        Ok(Some(_)) => {}
                        Ok(None) => panic!("EfcgSolver finished despite a failing product"),
                    }
                },
            };
            assert_fault(err, fault, &format!("EfcgSolver after {after}"));
            // So do the Lanczos step interfaces: from `new` when the set-up's product fails
            // (after 0 calls), from `step` otherwise. A failed step records nothing: trying
            // again fails again, and `finish` gives the vectors before it, as the one-shot
            // run with that many vectors on the healthy system.
            let o = LanczosOptions::default();
            let sys = Faulty(p.system(), after, fault);
            match FlaSolver::new(&sys, &start, &o) {
                Err(e) => {
                    assert_eq!(after, 0, "FlaSolver::new failed after {after}");
                    assert_fault(e, fault, "FlaSolver::new");
                }
                Ok(mut solver) => {
                    let err = lanczos_step_error(&mut solver, FlaSolver::step, FlaSolver::steps);
                    assert_fault(err, fault, &format!("FlaSolver after {after}"));
                    let res = solver.finish();
                    assert_same_prefix(&res, &fla(&p.system(), &start, &opts(res.steps())));
                }
            }
            let sys = Faulty(p.system(), after, fault);
            match EflaSolver::new(&sys, &start, &o) {
                Err(e) => {
                    assert_eq!(after, 0, "EflaSolver::new failed after {after}");
                    assert_fault(e, fault, "EflaSolver::new");
                }
                Ok(mut solver) => {
                    let err = lanczos_step_error(&mut solver, EflaSolver::step, EflaSolver::steps);
                    assert_fault(err, fault, &format!("EflaSolver after {after}"));
                    let res = solver.finish();
                    assert_same_prefix(&res, &efla(&p.system(), &start, &opts(res.steps())));
                }
            }
        }
    }
}

fn opts(k: usize) -> LanczosOptions {
    LanczosOptions {
        max_iterations: k,
        ..Default::default()
    }
}

/// Steps until a step fails, checks that the failed step recorded nothing (a second try
/// fails too and the number of vectors stays) and returns the error.
fn lanczos_step_error<S>(
    solver: &mut S,
    step: fn(&mut S) -> gp_solvers::Result<Option<LanczosStep>>,
    steps: fn(&S) -> usize,
) -> SolverError {
    let err = loop {
        match step(solver) {
            Err(e) => break e,
            Ok(Some(_)) => {}
            Ok(None) => panic!("the solver finished despite a failing product"),
        }
    };
    let k = steps(solver);
    assert!(k >= 1, "the failure comes after some steps");
    assert!(step(solver).is_err(), "a second try of the failed step");
    assert_eq!(steps(solver), k);
    err
}

/// `res` (stopped by a failed step) holds exactly the vectors of `expected`.
fn assert_same_prefix(res: &FactorizedLanczos, expected: &gp_solvers::Result<FactorizedLanczos>) {
    let Ok(expected) = expected else {
        panic!("the healthy run failed: {expected:?}");
    };
    assert_eq!(res.status, gp_solvers::LanczosStatus::Running);
    assert_eq!(res.tridiagonal, expected.tridiagonal);
    assert_eq!(res.q_hat, expected.q_hat);
    assert_eq!(res.q_coeffs, expected.q_coeffs);
    assert_eq!(res.wt_basis, expected.wt_basis);
}

type CgSolverFn = fn(
    &dyn WeightSpaceSystem,
    &StartVector,
    &FactorizedCgOptions,
) -> gp_solvers::Result<FactorizedCgResult>;
type LanczosFn = fn(
    &dyn WeightSpaceSystem,
    &StartVector,
    &LanczosOptions,
) -> gp_solvers::Result<FactorizedLanczos>;

/// An operator that writes NaN.
#[derive(Debug)]
struct NanOperator(usize);

impl LinearOperator for NanOperator {
    fn nrows(&self) -> usize {
        self.0
    }
    fn ncols(&self) -> usize {
        self.0
    }
    fn matvec(&self, _x: ColRef<'_, f64>, mut y: ColMut<'_, f64>) {
        y.fill(f64::NAN);
    }
}

#[test]
fn operator_system_checks_lengths_and_outputs() {
    let kg = DenseOperator::new(Mat::<f64>::identity(3, 3));
    let s = DenseOperator::new(Mat::<f64>::identity(3, 3));
    let sys = OperatorSystem::new(&kg, &s, 0.5).unwrap();
    let mut out = Col::<f64>::zeros(3);
    for bad in [2, 4] {
        let v = Col::<f64>::zeros(bad);
        assert!(matches!(
            sys.apply_prior(v.as_ref(), out.as_mut()),
            Err(SolverError::ShapeMismatch { .. })
        ));
        assert!(matches!(
            sys.apply_gram(v.as_ref(), out.as_mut()),
            Err(SolverError::ShapeMismatch { .. })
        ));
        let mut bad_out = Col::<f64>::zeros(bad);
        assert!(matches!(
            sys.apply_b(
                Col::<f64>::zeros(3).as_ref(),
                bad_out.as_mut(),
                out.as_mut()
            ),
            Err(SolverError::ShapeMismatch { .. })
        ));
    }
    let nan = NanOperator(3);
    let start = StartVector::new(Col::from_fn(3, |i| i as f64 + 1.0), 20.0).unwrap();
    for (kg, s) in [
        (&nan as &dyn LinearOperator, &s as &dyn LinearOperator),
        (&kg, &nan),
    ] {
        let sys = OperatorSystem::new(kg, s, 0.5).unwrap();
        let v = Col::<f64>::from_fn(3, |i| i as f64);
        assert!(sys
            .apply_b(v.as_ref(), out.as_mut(), Col::<f64>::zeros(3).as_mut())
            .is_err());
        for solver in [fcg as CgSolverFn, efcg] {
            let err = solver(&sys, &start, &Default::default()).unwrap_err();
            assert!(
                matches!(err, SolverError::Linalg(LinalgError::NonFinite { .. })),
                "{err:?}"
            );
        }
        let err = efcg_simplified(&sys, start.g(), &Default::default()).unwrap_err();
        assert!(
            matches!(err, SolverError::Linalg(LinalgError::NonFinite { .. })),
            "{err:?}"
        );
        for solver in [fla as LanczosFn, efla] {
            let err = solver(&sys, &start, &Default::default()).unwrap_err();
            assert!(
                matches!(err, SolverError::Linalg(LinalgError::NonFinite { .. })),
                "{err:?}"
            );
        }
    }
}
