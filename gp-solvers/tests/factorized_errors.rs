//! Input errors, degenerate inputs and breakdowns of the factorized solvers: typed errors
//! or statuses, never panics.

mod factorized_support;

use factorized_support::*;
use faer::{Col, ColMut, ColRef, Mat};
use gp_linalg::{DenseOperator, LinalgError};
use gp_solvers::factorized::{
    efcg, efcg_simplified, efla, fcg, fla, FactorizedBreakdown, FactorizedCgOptions,
    FactorizedStatus, FactorizedSystem, FactorizedVector, OperatorSystem, StartVector,
};
use gp_solvers::{LanczosOptions, LanczosStatus, SolverError};

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

impl FactorizedSystem for BadNoise {
    fn grid_dim(&self) -> usize {
        self.0.grid_dim()
    }
    fn apply_kg(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.0.apply_kg(v, out)
    }
    fn apply_s(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.0.apply_s(v, out)
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

/// A system whose K_G product turns NaN after a number of calls.
struct Poisoned(DenseSystem, usize);

impl FactorizedSystem for Poisoned {
    fn grid_dim(&self) -> usize {
        self.0.grid_dim()
    }
    fn apply_kg(&self, v: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        let calls = self.0.counts().0;
        self.0.apply_kg(v, out.as_mut());
        if calls >= self.1 {
            out.fill(f64::NAN);
        }
    }
    fn apply_s(&self, v: ColRef<'_, f64>, out: ColMut<'_, f64>) {
        self.0.apply_s(v, out)
    }
    fn noise_variance(&self) -> f64 {
        self.0.noise_variance()
    }
}

#[test]
fn non_finite_products_end_with_a_status() {
    let p = Problem::cubic_1d(80, 16, 1.0, 0.1, 5);
    for solver in [fcg, efcg] {
        let sys = Poisoned(p.system(), 4);
        let res = solver(&sys, &p.start(&p.y), &Default::default()).unwrap();
        assert_eq!(
            res.status,
            FactorizedStatus::Breakdown(FactorizedBreakdown::NonFinite)
        );
        assert!(
            res.iterations >= 2 && res.iterations <= 4,
            "{}",
            res.iterations
        );
        assert!(res.record.alphas.iter().all(|a| a.is_finite()));
    }
    for solver in [fla, efla] {
        let sys = Poisoned(p.system(), 6);
        let res = solver(&sys, &p.start(&p.y), &Default::default()).unwrap();
        assert_eq!(res.status, LanczosStatus::NonFinite);
        assert!(res.steps() >= 4 && res.steps() <= 6, "{}", res.steps());
        assert!(res.tridiagonal.diagonal().iter().all(|a| a.is_finite()));
    }
}
