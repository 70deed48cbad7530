//! FOM (CG with complete re-orthogonalisation), textbook CG with normalised directions and
//! the Lanczos step interface, against dense references.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use faer::reborrow::ReborrowMut;
use faer::{Col, ColMut, ColRef, Mat, MatRef};
use gp_linalg::{Cholesky, DenseOperator, LinalgError, LinearOperator};
use gp_solvers::{
    fom, lanczos, FomBreakdown, FomOptions, FomSolver, FomStatus, LanczosOptions, LanczosSolver,
    LanczosStatus, SolverError, TextbookCg, TextbookCgOptions,
};

/// `max_{i≠j} |s_iᵀAs_j| / sqrt(s_iᵀAs_i · s_jᵀAs_j)`, with a dense `A`.
fn conjugacy(a: &Mat<f64>, s: MatRef<'_, f64>) -> f64 {
    let g = s.transpose() * a * s;
    let mut worst = 0.0f64;
    for i in 0..g.nrows() {
        for j in 0..g.ncols() {
            if i != j {
                worst = worst.max(g[(i, j)].abs() / (g[(i, i)] * g[(j, j)]).sqrt());
            }
        }
    }
    worst
}

fn col(m: &Mat<f64>) -> Col<f64> {
    Col::from_fn(m.nrows(), |i| m[(i, 0)])
}

fn opts(max_steps: usize) -> FomOptions {
    FomOptions {
        max_steps,
        ..Default::default()
    }
}

#[test]
fn fom_directions_are_conjugate_and_gram_is_projection() {
    let n = 100;
    let a = add_noise(&se_kernel(n, 0.5, 1), 1e-3);
    let b = col(&gaussian(n, 1, 2));
    let op = DenseOperator::new(a.clone());
    let mut solver = FomSolver::new(&op, b.as_ref(), &opts(20)).unwrap();
    solver.run().unwrap();
    assert_eq!(
        solver.status(),
        FomStatus::MaxSteps,
        "{:?}",
        solver.residual_norm()
    );
    assert_eq!(solver.steps(), 20);
    let s = solver.directions();
    assert_eq!((s.nrows(), s.ncols()), (n, 20));
    let c = conjugacy(&a, s);
    assert!(c < 1e-10, "conjugacy {c:e}");
    // Z = A S.
    let z = &a * s;
    assert!(max_abs_diff(z.as_ref(), solver.products()) < 1e-12 * z.norm_max());
    // G = SᵀAS, and its grown factor equals a fresh Cholesky of it.
    let g_dense = s.transpose() * &a * s;
    let g = solver.gram();
    assert!(max_abs_diff(g.as_ref(), g_dense.as_ref()) < 1e-12 * g_dense.norm_max());
    let fresh = Cholesky::new(g.as_ref()).unwrap();
    let l = solver.gram_factor().factor();
    assert!(max_abs_diff(l.as_ref(), fresh.factor()) < 1e-10 * l.norm_max());
    // a = G⁻¹ Sᵀb and x = S a.
    let stb = s.transpose() * &b;
    let ga = &g * Col::from_fn(20, |i| solver.coefficients()[i]);
    assert!((&ga - &stb).norm_max() < 1e-10 * stb.norm_max());
    let x = solver.solution();
    let x_ref = s * Col::from_fn(20, |i| solver.coefficients()[i]);
    assert!((&x - &x_ref).norm_max() < 1e-14 * x_ref.norm_max());
    assert!((solver.rhs_norm() - b.norm_l2()).abs() < 1e-13 * b.norm_l2());
}

#[test]
fn fom_equals_textbook_cg_on_early_steps() {
    let n = 60;
    let a = spd(n, 3);
    let b = col(&gaussian(n, 1, 4));
    let op = DenseOperator::new(a.clone());
    let mut f = FomSolver::new(&op, b.as_ref(), &opts(n)).unwrap();
    let mut t = TextbookCg::new(&op, b.as_ref(), &TextbookCgOptions::default()).unwrap();
    for k in 1..=5 {
        let fs = f.step().unwrap().unwrap();
        let ts = t.step().unwrap().unwrap();
        assert_eq!((fs.step, ts.step), (k, k));
        let (xf, xt) = (f.solution(), t.solution().to_owned());
        assert!(
            (&xf - &xt).norm_l2() < 1e-10 * xt.norm_l2(),
            "step {k}: {:e}",
            (&xf - &xt).norm_l2() / xt.norm_l2()
        );
        assert!((fs.residual_norm - ts.residual_norm).abs() < 1e-10 * b.norm_l2());
        // Same directions (both start from b/‖b‖ and are normalised the same way).
        assert!(max_abs_diff(f.directions(), t.directions()) < 1e-10);
    }
    // Textbook CG's products are A S as well.
    let z = &a * t.directions();
    assert!(max_abs_diff(z.as_ref(), t.products()) < 1e-12 * z.norm_max());
}

#[test]
fn fom_solves_the_system_in_n_steps() {
    let n = 30;
    let a = with_spectrum(&log_spectrum(n, 1e3), 5);
    let b = col(&gaussian(n, 1, 6));
    let op = DenseOperator::new(a.clone());
    let mut solver = FomSolver::new(&op, b.as_ref(), &opts(n)).unwrap();
    // After a few steps the reported residual is ‖b − A x‖.
    for _ in 0..5 {
        solver.step().unwrap();
    }
    let r5 = (&b - &a * solver.solution()).norm_l2();
    assert!((solver.residual_norm() - r5).abs() < 1e-10 * r5);
    solver.run().unwrap();
    assert!(
        matches!(solver.status(), FomStatus::Converged | FomStatus::MaxSteps),
        "{:?}",
        solver.status()
    );
    let x = solver.solution();
    let r = (&b - &a * &x).norm_l2();
    assert!(
        r < 1e-10 * b.norm_l2(),
        "relative residual {:e}",
        r / b.norm_l2()
    );
    assert!((solver.residual_norm() - r).abs() < 1e-12 * b.norm_l2());
    // The convenience function runs the same steps.
    let out = fom(&op, b.as_ref(), &opts(n)).unwrap();
    assert_eq!(out.status, solver.status());
    assert_eq!(out.directions.ncols(), solver.steps());
    assert!((&out.solution - &x).norm_max() == 0.0);
    // A tolerance stops earlier, with ‖r‖ ≤ tol ‖b‖.
    let early = fom(
        &op,
        b.as_ref(),
        &FomOptions {
            max_steps: n,
            tolerance: 1e-3,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(early.status, FomStatus::Converged);
    assert!(early.residual_norm <= 1e-3 * b.norm_l2());
    assert!(early.directions.ncols() < solver.steps());
}

#[test]
fn fom_breaks_down_on_a_rank_deficient_operator() {
    // A = G Gᵀ of rank 8; b has a component outside range(A), so the Krylov space has
    // dimension 9 and direction 9 has (numerically) zero curvature.
    let (n, rank) = (60, 8);
    let g = gaussian(n, rank, 7);
    let a = &g * g.transpose();
    let b = col(&gaussian(n, 1, 8));
    let op = DenseOperator::new(a.clone());
    let mut solver = FomSolver::new(&op, b.as_ref(), &opts(n)).unwrap();
    solver.run().unwrap();
    let FomStatus::Breakdown { step, reason } = solver.status() else {
        panic!("expected a breakdown, got {:?}", solver.status());
    };
    assert!(step == rank + 1, "breakdown at step {step}, {reason:?}");
    assert!(matches!(
        reason,
        FomBreakdown::NonPositiveCurvature { .. } | FomBreakdown::GramNotPositiveDefinite { .. }
    ));
    // The state is that of the last valid step.
    let k = solver.steps();
    assert_eq!(k, step - 1);
    assert_eq!(solver.directions().ncols(), k);
    assert_eq!(solver.products().ncols(), k);
    assert_eq!(solver.gram_factor().dim(), k);
    assert_eq!(solver.coefficients().len(), k);
    let s = solver.directions();
    let g_dense = s.transpose() * &a * s;
    // Near the end of the Krylov space the directions grow (‖s_j‖ up to ~1e4 here: β
    // removes large A-components), so G is accurate to rounding relative to ‖S‖²‖A‖.
    let scale = s.norm_max().powi(2) * a.norm_max();
    assert!(max_abs_diff(solver.gram().as_ref(), g_dense.as_ref()) < 1e-12 * scale);
    let r = (&b - &a * solver.solution()).norm_l2();
    // b ∉ range(A): the Galerkin iterates of an inconsistent singular system grow near the
    // end of the Krylov space (‖r‖ ≫ ‖b‖ here), but the reported residual is still b − A x.
    assert!((solver.residual_norm() - r).abs() < 1e-8 * r.max(b.norm_l2()));
    // Frozen: further steps do nothing.
    let before = solver.status();
    assert!(solver.step().unwrap().is_none());
    assert_eq!(solver.status(), before);
    assert_eq!(solver.steps(), k);

    // b ∈ range(A): a consistent system, solved within the rank-dimensional Krylov space;
    // the run stops at step rank + 1 at the latest (converged or a curvature breakdown).
    let b = &a * col(&gaussian(n, 1, 9));
    let mut solver = FomSolver::new(&op, b.as_ref(), &opts(n)).unwrap();
    solver.run().unwrap();
    eprintln!(
        "consistent: {:?} after {} steps",
        solver.status(),
        solver.steps()
    );
    assert!(solver.steps() <= rank);
    assert!(matches!(
        solver.status(),
        FomStatus::Converged | FomStatus::Breakdown { .. }
    ));
    let r = (&b - &a * solver.solution()).norm_l2();
    assert!(r < 1e-8 * b.norm_l2(), "{:e}", r / b.norm_l2());
}

#[test]
fn fom_on_an_invariant_krylov_space_converges_at_step_one() {
    let n = 20;
    let b = col(&gaussian(n, 1, 9));
    // A = I: the Galerkin solution on span{b} is exact; the residual is rounding noise.
    let id = DenseOperator::new(Mat::<f64>::identity(n, n));
    let mut solver = FomSolver::new(&id, b.as_ref(), &opts(n)).unwrap();
    solver.run().unwrap();
    assert_eq!(solver.status(), FomStatus::Converged);
    assert_eq!(solver.steps(), 1);
    assert!((&solver.solution() - &b).norm_max() < 1e-14 * b.norm_max());
    // b an eigenvector of A.
    let a = Mat::from_fn(n, n, |i, j| if i == j { 1.0 + i as f64 } else { 0.0 });
    let e = Col::from_fn(n, |i| if i == 4 { 3.0 } else { 0.0 });
    let op = DenseOperator::new(a);
    let mut solver = FomSolver::new(&op, e.as_ref(), &opts(n)).unwrap();
    solver.run().unwrap();
    assert_eq!(solver.status(), FomStatus::Converged);
    assert_eq!(solver.steps(), 1);
    assert!((solver.solution()[4] - 0.6).abs() < 1e-15);
    // max_steps = 0: nothing to do.
    let mut none = FomSolver::new(&op, e.as_ref(), &opts(0)).unwrap();
    assert_eq!(none.status(), FomStatus::MaxSteps);
    assert!(none.step().unwrap().is_none());
    assert_eq!(none.solution().norm_max(), 0.0);
}

#[test]
fn textbook_cg_loses_conjugacy_where_fom_keeps_it() {
    // The paper's Figure 15: a noise-free SE kernel matrix is numerically singular. With
    // this lengthscale FOM takes all 60 steps (longer lengthscales exhaust the numerical
    // rank first and FOM stops with a curvature breakdown).
    let n = 200;
    let a = se_kernel(n, 0.3, 10);
    let b = col(&gaussian(n, 1, 11));
    let op = DenseOperator::new(a.clone());
    let mut t = TextbookCg::new(
        &op,
        b.as_ref(),
        &TextbookCgOptions {
            max_steps: 60,
            ..Default::default()
        },
    )
    .unwrap();
    while t.step().unwrap().is_some() {}
    let ct = conjugacy(&a, t.directions());
    let mut f = FomSolver::new(&op, b.as_ref(), &opts(60)).unwrap();
    f.run().unwrap();
    let cf = conjugacy(&a, f.directions());
    eprintln!(
        "textbook: {} steps, {:?}, conjugacy {ct:e}; FOM: {} steps, {:?}, conjugacy {cf:e}",
        t.steps(),
        t.status(),
        f.steps(),
        f.status()
    );
    assert!(ct > 1e-3, "textbook conjugacy {ct:e}");
    assert!(cf < 1e-8, "FOM conjugacy {cf:e}");
    assert_eq!(f.steps(), 60);
}

#[test]
fn textbook_cg_breaks_down_on_zero_curvature() {
    // A singular operator and b in its null space: sᵀAs = 0 at the first step.
    let n = 10;
    let a = Mat::from_fn(n, n, |i, j| if i == j && i > 0 { 1.0 } else { 0.0 });
    let b = Col::from_fn(n, |i| if i == 0 { 1.0 } else { 0.0 });
    let op = DenseOperator::new(a);
    let mut t = TextbookCg::new(&op, b.as_ref(), &TextbookCgOptions::default()).unwrap();
    assert!(t.step().unwrap().is_none());
    assert!(matches!(
        t.status(),
        FomStatus::Breakdown {
            step: 1,
            reason: FomBreakdown::NonPositiveCurvature { .. }
        }
    ));
    assert_eq!(t.steps(), 0);
    assert_eq!(t.solution().norm_max(), 0.0);
    // FOM: the same, as a curvature breakdown at step 1 with an empty state.
    let mut f = FomSolver::new(&op, b.as_ref(), &opts(n)).unwrap();
    assert!(f.step().unwrap().is_none());
    assert!(matches!(
        f.status(),
        FomStatus::Breakdown {
            step: 1,
            reason: FomBreakdown::NonPositiveCurvature { .. }
        }
    ));
    assert_eq!(f.steps(), 0);
}

#[test]
fn lanczos_solver_steps_match_lanczos() {
    let n = 80;
    let a = with_spectrum(&log_spectrum(n, 1e4), 12);
    let b = col(&gaussian(n, 1, 13));
    let op = DenseOperator::new(a.clone());
    let k = 30;
    let options = LanczosOptions {
        max_iterations: k,
        ..Default::default()
    };
    let mut solver = LanczosSolver::new(&op, b.as_ref(), &options).unwrap();
    assert_eq!(solver.steps(), 0);
    assert!(solver.alpha().is_none());
    for j in 0..k {
        let it = solver.step().unwrap().unwrap();
        assert_eq!(it.index, j);
        assert_eq!(solver.steps(), j + 1);
        assert_eq!(solver.alpha(), Some(it.alpha));
        assert_eq!(solver.beta(), Some(it.beta));
        let q = solver.basis();
        let qtq = q.transpose() * q;
        assert!(max_abs_diff(qtq.as_ref(), Mat::<f64>::identity(j + 1, j + 1).as_ref()) < 1e-12);
        let t = q.transpose() * &a * q;
        let td = solver.tridiagonal().unwrap().to_dense();
        assert!(max_abs_diff(t.as_ref(), td.as_ref()) < 1e-12);
        // (AQ)ᵀ(AQ) = T² + β_j² e_j e_jᵀ: what KMCG needs without storing A Q.
        let aq = &a * q;
        let mut expected = &td * &td;
        expected[(j, j)] += it.beta * it.beta;
        let ztz = aq.transpose() * &aq;
        assert!(max_abs_diff(ztz.as_ref(), expected.as_ref()) < 1e-12);
    }
    assert_eq!(solver.status(), LanczosStatus::MaxIterations);
    assert!(solver.step().unwrap().is_none());
    assert!(solver.next_vector().is_none());
    let whole = lanczos(&op, b.as_ref(), &options).unwrap();
    assert_eq!(whole.status, LanczosStatus::MaxIterations);
    assert_eq!(max_abs_diff(whole.basis(), solver.basis()), 0.0);
    assert_eq!(whole.tridiagonal, solver.tridiagonal().unwrap());
    assert_eq!(solver.alphas().len(), k);
    assert_eq!(solver.betas().len(), k);
}

#[test]
fn bad_input_is_a_typed_error() {
    let a = DenseOperator::new(spd(5, 1));
    let fo = FomOptions::default();
    let to = TextbookCgOptions::default();
    let lo = LanczosOptions::default();
    let zero = Col::<f64>::zeros(5);
    let short = Col::<f64>::ones(4);
    let nan = Col::from_fn(5, |i| if i == 2 { f64::NAN } else { 1.0 });
    let ones = Col::<f64>::ones(5);
    let rect = DenseOperator::new(Mat::<f64>::zeros(5, 4));
    // FOM.
    assert!(matches!(
        FomSolver::new(&a, zero.as_ref(), &fo),
        Err(SolverError::InvalidOptions { .. })
    ));
    assert!(matches!(
        FomSolver::new(&a, short.as_ref(), &fo),
        Err(SolverError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        FomSolver::new(&a, nan.as_ref(), &fo),
        Err(SolverError::Linalg(LinalgError::NonFinite { .. }))
    ));
    assert!(matches!(
        FomSolver::new(&rect, ones.as_ref(), &fo),
        Err(SolverError::ShapeMismatch { .. })
    ));
    for bad in [
        FomOptions {
            tolerance: -1.0,
            ..fo
        },
        FomOptions {
            breakdown_tolerance: f64::NAN,
            ..fo
        },
    ] {
        assert!(matches!(
            FomSolver::new(&a, ones.as_ref(), &bad),
            Err(SolverError::InvalidOptions { .. })
        ));
    }
    assert!(fom(&a, zero.as_ref(), &fo).is_err());
    // Textbook CG.
    assert!(matches!(
        TextbookCg::new(&a, zero.as_ref(), &to),
        Err(SolverError::InvalidOptions { .. })
    ));
    assert!(matches!(
        TextbookCg::new(&a, short.as_ref(), &to),
        Err(SolverError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        TextbookCg::new(&a, nan.as_ref(), &to),
        Err(SolverError::Linalg(LinalgError::NonFinite { .. }))
    ));
    assert!(matches!(
        TextbookCg::new(&rect, ones.as_ref(), &to),
        Err(SolverError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        TextbookCg::new(
            &a,
            ones.as_ref(),
            &TextbookCgOptions {
                tolerance: f64::INFINITY,
                ..to
            }
        ),
        Err(SolverError::InvalidOptions { .. })
    ));
    // Lanczos.
    assert!(matches!(
        LanczosSolver::new(&a, zero.as_ref(), &lo),
        Err(SolverError::InvalidOptions { .. })
    ));
    assert!(matches!(
        LanczosSolver::new(&a, nan.as_ref(), &lo),
        Err(SolverError::Linalg(LinalgError::NonFinite { .. }))
    ));
    assert!(matches!(
        LanczosSolver::new(&rect, ones.as_ref(), &lo),
        Err(SolverError::ShapeMismatch { .. })
    ));
}

/// A dense operator whose products turn NaN from the `fail_at`-th on (1-based).
struct FailingOperator {
    inner: DenseOperator,
    calls: AtomicUsize,
    fail_at: usize,
}

impl LinearOperator for FailingOperator {
    fn nrows(&self) -> usize {
        self.inner.nrows()
    }
    fn ncols(&self) -> usize {
        self.inner.ncols()
    }
    fn matvec(&self, x: ColRef<'_, f64>, mut out: ColMut<'_, f64>) {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.inner.matvec(x, out.rb_mut());
        if call >= self.fail_at {
            out[0] = f64::NAN;
        }
    }
}

fn failing(n: usize, fail_at: usize) -> FailingOperator {
    FailingOperator {
        inner: DenseOperator::new(spd(n, 20)),
        calls: AtomicUsize::new(0),
        fail_at,
    }
}

#[test]
fn a_non_finite_product_freezes_every_solver() {
    let n = 12;
    let b = col(&gaussian(n, 1, 21));
    // FOM: steps 1 and 2 are kept, step 3 breaks down.
    let op = failing(n, 3);
    let mut f = FomSolver::new(&op, b.as_ref(), &opts(n)).unwrap();
    assert!(f.step().unwrap().is_some());
    assert!(f.step().unwrap().is_some());
    let (x2, r2, g2) = (f.solution(), f.residual_norm(), f.gram());
    assert!(f.step().unwrap().is_none());
    assert_eq!(
        f.status(),
        FomStatus::Breakdown {
            step: 3,
            reason: FomBreakdown::NonFinite
        }
    );
    assert_eq!(f.steps(), 2);
    assert_eq!(f.gram_factor().dim(), 2);
    assert_eq!((&f.solution() - &x2).norm_max(), 0.0);
    assert_eq!(f.residual_norm(), r2);
    assert_eq!(max_abs_diff(f.gram().as_ref(), g2.as_ref()), 0.0);
    assert!(f.step().unwrap().is_none());
    // Textbook CG.
    let op = failing(n, 3);
    let mut t = TextbookCg::new(&op, b.as_ref(), &TextbookCgOptions::default()).unwrap();
    t.step().unwrap();
    t.step().unwrap();
    let x2 = t.solution().to_owned();
    assert!(t.step().unwrap().is_none());
    assert!(matches!(
        t.status(),
        FomStatus::Breakdown {
            step: 3,
            reason: FomBreakdown::NonFinite
        }
    ));
    assert_eq!(t.steps(), 2);
    assert_eq!((t.solution().to_owned() - &x2).norm_max(), 0.0);
    // Lanczos: q_3 is dropped.
    let op = failing(n, 3);
    let mut l = LanczosSolver::new(&op, b.as_ref(), &LanczosOptions::default()).unwrap();
    l.step().unwrap();
    l.step().unwrap();
    assert!(l.step().unwrap().is_none());
    assert_eq!(l.status(), LanczosStatus::NonFinite);
    assert_eq!(l.steps(), 2);
    assert_eq!(l.basis().ncols(), 2);
    assert_eq!(l.tridiagonal().unwrap().dim(), 2);
}

#[test]
fn fom_without_a_curvature_threshold_still_stops_cleanly() {
    // τ = 0 on a rank-deficient operator: only the Gram factor or a non-positive
    // curvature can stop the run; whatever stops it, the state stays consistent.
    let (n, rank) = (40, 5);
    let g = gaussian(n, rank, 22);
    let a = &g * g.transpose();
    let b = col(&gaussian(n, 1, 23));
    let op = DenseOperator::new(a);
    let mut f = FomSolver::new(
        &op,
        b.as_ref(),
        &FomOptions {
            max_steps: n,
            breakdown_tolerance: 0.0,
            ..Default::default()
        },
    )
    .unwrap();
    f.run().unwrap();
    let k = f.steps();
    assert!(k >= rank, "{:?} after {k} steps", f.status());
    assert_eq!(f.directions().ncols(), k);
    assert_eq!(f.gram_factor().dim(), k);
    assert_eq!(f.gram().nrows(), k);
    assert_eq!(f.coefficients().len(), k);
    assert!(f.solution().norm_max().is_finite());
    assert!(f.step().unwrap().is_none());
}
