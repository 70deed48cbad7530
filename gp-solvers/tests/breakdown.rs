//! Breakdowns end a column with a typed status; bad inputs are typed errors.

use crate::common;

use common::*;
use faer::{ColMut, ColRef, Mat};
use gp_linalg::{DenseOperator, DiagonalOperator, LinalgError, LinearOperator};
use gp_solvers::{cg, Breakdown, CgOptions, ColumnStatus, SolverError};

#[test]
fn indefinite_matrix_gives_non_positive_curvature() {
    // Eigenvalues of both signs: a direction with dᵀAd ≤ 0 appears.
    let n = 30;
    let ev: Vec<f64> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                1.0 + i as f64
            } else {
                -1.0 - i as f64
            }
        })
        .collect();
    let a = with_spectrum(&ev, 1);
    // With random right-hand sides, CG meets a direction of non-positive curvature.
    let b = gaussian(n, 4, 2);
    let res = cg(
        &DenseOperator::new(a),
        b.as_ref(),
        None,
        &CgOptions::default(),
    )
    .unwrap();
    let broken = res
        .columns
        .iter()
        .filter(|c| {
            matches!(
                c.status,
                ColumnStatus::Breakdown(Breakdown::NonPositiveCurvature { .. })
            )
        })
        .count();
    assert!(
        broken > 0,
        "{:?}",
        res.columns.iter().map(|c| c.status).collect::<Vec<_>>()
    );
    assert!(res.solution.is_all_finite());
}

#[test]
fn negative_definite_breaks_down_at_first_step() {
    let n = 10;
    let a = Mat::<f64>::identity(n, n) * -1.0;
    let b = gaussian(n, 1, 3);
    let res = cg(
        &DenseOperator::new(a),
        b.as_ref(),
        None,
        &CgOptions::default(),
    )
    .unwrap();
    match res.columns[0].status {
        ColumnStatus::Breakdown(Breakdown::NonPositiveCurvature { curvature }) => {
            assert!(curvature < 0.0)
        }
        s => panic!("unexpected status {s:?}"),
    }
    assert_eq!(res.columns[0].iterations, 0);
    assert_eq!(res.solution.norm_max(), 0.0);
}

/// An SPD operator that starts returning NaN after a number of products.
struct NanAfter {
    a: Mat<f64>,
    calls: std::sync::atomic::AtomicUsize,
    after: usize,
}

impl LinearOperator for NanAfter {
    fn nrows(&self) -> usize {
        self.a.nrows()
    }
    fn ncols(&self) -> usize {
        self.a.ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        let k = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let y = &self.a * x;
        out.copy_from(&y);
        if k >= self.after {
            out[0] = f64::NAN;
        }
    }
}

#[test]
fn nan_in_operator_gives_non_finite_status() {
    let n = 20;
    let op = NanAfter {
        a: spd(n, 4),
        calls: 0.into(),
        after: 3,
    };
    let b = gaussian(n, 1, 5);
    let res = cg(
        &op,
        b.as_ref(),
        None,
        &CgOptions {
            tolerance: 1e-14,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        res.columns[0].status,
        ColumnStatus::Breakdown(Breakdown::NonFinite)
    );
    assert_eq!(res.columns[0].iterations, 3);
    assert!(res.solution.is_all_finite());
    assert!(res.columns[0]
        .record
        .residual_norms
        .iter()
        .all(|r| r.is_finite()));
    // The tridiagonal of the valid steps is still available.
    assert_eq!(res.columns[0].tridiagonal().unwrap().dim(), 3);
}

#[test]
fn indefinite_preconditioner_is_reported() {
    let n = 20;
    let a = DenseOperator::new(spd(n, 6));
    let b = gaussian(n, 1, 7);
    // An indefinite diagonal: either rejected up front (bᵀP⁻¹b ≤ 0) or a breakdown later.
    let d =
        DiagonalOperator::from_vec((0..n).map(|i| if i < n / 2 { 1.0 } else { -1.0 }).collect())
            .unwrap();
    match cg(&a, b.as_ref(), Some(&d), &CgOptions::default()) {
        Err(SolverError::PreconditionerNotSpd { .. }) => {}
        Ok(res) => assert!(
            res.columns[0].status.is_breakdown(),
            "{:?}",
            res.columns[0].status
        ),
        Err(e) => panic!("unexpected error {e}"),
    }
    // Entirely negative: bᵀP⁻¹b < 0 is rejected up front.
    let d = DiagonalOperator::from_vec(vec![-1.0; n]).unwrap();
    assert!(matches!(
        cg(&a, b.as_ref(), Some(&d), &CgOptions::default()),
        Err(SolverError::PreconditionerNotSpd { .. })
    ));
}

#[test]
fn bad_inputs_are_typed_errors() {
    let n = 8;
    let a = DenseOperator::new(spd(n, 8));
    let b = gaussian(n, 1, 9);
    let wrong = gaussian(n + 1, 1, 9);
    assert!(matches!(
        cg(&a, wrong.as_ref(), None, &CgOptions::default()),
        Err(SolverError::ShapeMismatch { .. })
    ));
    let mut nan = b.clone();
    nan[(2, 0)] = f64::NAN;
    assert!(matches!(
        cg(&a, nan.as_ref(), None, &CgOptions::default()),
        Err(SolverError::Linalg(LinalgError::NonFinite { .. }))
    ));
    for opts in [
        CgOptions {
            tolerance: -1.0,
            ..Default::default()
        },
        CgOptions {
            tolerance: f64::NAN,
            ..Default::default()
        },
        CgOptions {
            min_iterations: 5,
            max_iterations: 4,
            ..Default::default()
        },
    ] {
        assert!(matches!(
            cg(&a, b.as_ref(), None, &opts),
            Err(SolverError::InvalidOptions { .. })
        ));
    }
    let rect = DenseOperator::new(gaussian(n, n + 1, 1));
    assert!(matches!(
        cg(&rect, b.as_ref(), None, &CgOptions::default()),
        Err(SolverError::ShapeMismatch { .. })
    ));
    let small_p = DiagonalOperator::from_vec(vec![1.0; n - 1]).unwrap();
    assert!(matches!(
        cg(&a, b.as_ref(), Some(&small_p), &CgOptions::default()),
        Err(SolverError::ShapeMismatch { .. })
    ));
    // max_iterations = 0: nothing happens, status says so.
    let res = cg(
        &a,
        b.as_ref(),
        None,
        &CgOptions {
            max_iterations: 0,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(res.columns[0].status, ColumnStatus::MaxIterations);
}

/// `A = [[2, 1, 0], [1, 2, 0], [0, 0, 2]]` whose products turn NaN from the second call on
/// (a kernel operator overflowing mid-run, say).
struct NanAfterFirstProduct {
    calls: std::sync::atomic::AtomicUsize,
}

impl LinearOperator for NanAfterFirstProduct {
    fn nrows(&self) -> usize {
        3
    }
    fn ncols(&self) -> usize {
        3
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        let call = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        out[0] = 2.0 * x[0] + x[1];
        out[1] = x[0] + 2.0 * x[1];
        out[2] = 2.0 * x[2];
        if call > 0 {
            out[2] = f64::NAN;
        }
    }
}

#[test]
fn lanczos_reports_a_non_finite_product_as_a_status() {
    use gp_solvers::{lanczos, LanczosOptions, LanczosStatus};
    // The first step is complete (α₀ = 2, β₀ = 1); the second product is NaN. T keeps the
    // first step only, with no dangling off-diagonal entry.
    let a = NanAfterFirstProduct {
        calls: std::sync::atomic::AtomicUsize::new(0),
    };
    let start = faer::col![1.0, 0.0, 0.0];
    let out = lanczos(&a, start.as_ref(), &LanczosOptions::default()).expect("a status");
    assert_eq!(out.status, LanczosStatus::NonFinite);
    assert_eq!(out.q.ncols(), 1);
    let t = out.tridiagonal.to_dense();
    assert_eq!((t.nrows(), t.ncols()), (1, 1));
    assert_eq!(t[(0, 0)], 2.0);
}
