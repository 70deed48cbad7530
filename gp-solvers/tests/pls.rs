//! The probabilistic linear solver (IterGP) against dense references: spec `ncgp.md` §5.1
//! U3 (unit vectors = subset of data), U4 (residual actions = CG), U5 (the precision
//! estimate), U8 (the virtual solver run), U12 (breakdown), and the tracked `K Q` option.

use faer::{Col, ColRef, Mat, MatRef};
use gp_linalg::{CountingOperator, DenseOperator};
use gp_solvers::pls::{
    virtual_solver_run, PlsOptions, PlsStatus, Policy, PolicyState, ProbabilisticSolver,
    RecycleOptions, ResidualPolicy, UnitVectorPolicy,
};
use gp_solvers::SolverError;

use crate::common::{dense_solve, gaussian, max_abs_diff, with_spectrum};

const N: usize = 12;

/// K with eigenvalues in [0.05, 5] (cond 100) and a diagonal W⁻¹ in [0.1, 0.43].
fn system(seed: u64) -> (Mat<f64>, Mat<f64>, Col<f64>) {
    let ev: Vec<f64> = (0..N)
        .map(|i| 5.0 * 0.01f64.powf(i as f64 / (N - 1) as f64))
        .collect();
    let k = with_spectrum(&ev, seed);
    let winv = Mat::from_fn(
        N,
        N,
        |i, j| if i == j { 0.1 + 0.03 * i as f64 } else { 0.0 },
    );
    let b = Col::from_fn(N, |i| ((i * 7 + 3) as f64 * 0.41).sin());
    (k, winv, b)
}

fn rel(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    max_abs_diff(a, b) / b.norm_max().max(f64::MIN_POSITIVE)
}

fn col_mat(c: ColRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(c.nrows(), 1, |i, _| c[i])
}

fn tight() -> PlsOptions {
    PlsOptions {
        abs_tolerance: 0.0,
        rel_tolerance: 0.0,
        ..PlsOptions::default()
    }
}

/// `S (Sᵀ A S)⁻¹ Sᵀ`.
fn projected_inverse(a: &Mat<f64>, s: MatRef<'_, f64>) -> Mat<f64> {
    let m = s.transpose() * a * s;
    let inv = dense_solve(&m, &Mat::identity(m.nrows(), m.nrows()));
    s * &inv * s.transpose()
}

#[test]
fn unit_vectors_are_subset_of_data() {
    let (k, winv, b) = system(1);
    let (kop, wop) = (
        DenseOperator::new(k.clone()),
        DenseOperator::new(winv.clone()),
    );
    let khat = &k + &winv;
    let mut solver = ProbabilisticSolver::new(&kop, &wop, b.as_ref(), None, tight()).unwrap();
    let mut policy = UnitVectorPolicy::new();
    let steps = 5;
    for _ in 0..steps {
        assert_eq!(solver.step(&mut policy).unwrap(), PlsStatus::Running);
    }
    let sub = khat.as_ref().submatrix(0, 0, steps, steps).to_owned();
    let sub_inv = dense_solve(&sub, &Mat::identity(steps, steps));
    let v_sub = &sub_inv * b.as_ref().subrows(0, steps);
    let v_want = Mat::from_fn(N, 1, |i, _| if i < steps { v_sub[i] } else { 0.0 });
    let v = col_mat(solver.solution());
    assert!(rel(v.as_ref(), v_want.as_ref()) <= 1e-10);
    let c = solver.root() * solver.root().transpose();
    let c_want = Mat::from_fn(N, N, |i, j| {
        if i < steps && j < steps {
            sub_inv[(i, j)]
        } else {
            0.0
        }
    });
    assert!(rel(c.as_ref(), c_want.as_ref()) <= 1e-10);
}

/// Textbook CG from x₀ = 0 on the dense matrix.
fn textbook_cg(a: &Mat<f64>, b: &Col<f64>, steps: usize) -> Vec<Col<f64>> {
    let mut x = Col::<f64>::zeros(b.nrows());
    let mut r = b.clone();
    let mut p = r.clone();
    let mut out = Vec::new();
    for _ in 0..steps {
        let ap = a * &p;
        let rr = r.squared_norm_l2();
        let alpha = rr / (p.transpose() * &ap);
        x += &p * alpha;
        r -= &ap * alpha;
        let beta = r.squared_norm_l2() / rr;
        p = &r + &p * beta;
        out.push(x.clone());
    }
    out
}

#[test]
fn residual_actions_are_conjugate_gradients() {
    let (k, winv, b) = system(2);
    let (kop, wop) = (
        DenseOperator::new(k.clone()),
        DenseOperator::new(winv.clone()),
    );
    let khat = &k + &winv;
    let cg = textbook_cg(&khat, &b, 10);
    let mut solver = ProbabilisticSolver::new(&kop, &wop, b.as_ref(), None, tight()).unwrap();
    for (j, x) in cg.iter().enumerate() {
        solver.step(&mut ResidualPolicy).unwrap();
        let err = rel(
            col_mat(solver.solution()).as_ref(),
            col_mat(x.as_ref()).as_ref(),
        );
        assert!(err <= 1e-8, "step {}: {err:e}", j + 1);
    }
}

/// Actions drawn from a seeded Gaussian.
struct RandomPolicy(Mat<f64>);

impl Policy for RandomPolicy {
    fn action(&mut self, state: &PolicyState<'_>) -> Col<f64> {
        self.0.col(state.iteration).to_owned()
    }
}

#[test]
fn the_precision_estimate_is_the_projected_inverse_and_reaches_the_inverse() {
    let (k, winv, b) = system(3);
    let (kop, wop) = (
        DenseOperator::new(k.clone()),
        DenseOperator::new(winv.clone()),
    );
    let khat = &k + &winv;
    let actions = gaussian(N, N, 33);
    let mut policy = RandomPolicy(actions.clone());
    let mut solver = ProbabilisticSolver::new(&kop, &wop, b.as_ref(), None, tight()).unwrap();
    for j in 1..=N {
        solver.step(&mut policy).unwrap();
        let c = solver.root() * solver.root().transpose();
        let want = projected_inverse(&khat, actions.as_ref().subcols(0, j));
        assert!(rel(c.as_ref(), want.as_ref()) <= 1e-8, "after {j} actions");
        // v = C b.
        let cb = &c * &b;
        assert!(
            rel(
                col_mat(solver.solution()).as_ref(),
                col_mat(cb.as_ref()).as_ref()
            ) <= 1e-8
        );
    }
    let c = solver.root() * solver.root().transpose();
    let inv = dense_solve(&khat, &Mat::identity(N, N));
    assert!(rel(c.as_ref(), inv.as_ref()) <= 1e-8);
}

#[test]
fn the_virtual_solver_run_rebuilds_the_belief_without_products_with_k() {
    let (k, winv, b) = system(4);
    let (kop, wop) = (
        DenseOperator::new(k.clone()),
        DenseOperator::new(winv.clone()),
    );
    let mut first = ProbabilisticSolver::new(&kop, &wop, b.as_ref(), None, tight()).unwrap();
    for _ in 0..6 {
        first.step(&mut ResidualPolicy).unwrap();
    }
    let (_, _, buffers) = first.into_parts();
    let s_old = buffers.actions().to_owned();
    // A new W⁻¹ (the next Newton step), K unchanged.
    let winv2 = Mat::from_fn(
        N,
        N,
        |i, j| if i == j { 0.3 - 0.015 * i as f64 } else { 0.0 },
    );
    let khat2 = &k + &winv2;
    let counting_k = CountingOperator::new(DenseOperator::new(k.clone()));
    let wop2 = DenseOperator::new(winv2.clone());
    let recycled = virtual_solver_run(buffers.clone(), &wop2, &RecycleOptions::default()).unwrap();
    // (a) C₀ = S M⁻¹ Sᵀ.
    let c0 = &recycled.root * recycled.root.transpose();
    assert!(
        rel(
            c0.as_ref(),
            projected_inverse(&khat2, s_old.as_ref()).as_ref()
        ) <= 1e-8
    );
    // (e) T = K S after the rotation.
    let ks = &k * recycled.buffers.actions();
    assert!(rel(recycled.buffers.products(), ks.as_ref()) <= 1e-10);
    // (d) the solver built on it takes no product with K but the residual's (and none when
    // K Q is tracked); (b) the recycled residual is orthogonal to span(S).
    let solver = ProbabilisticSolver::new(
        &counting_k,
        &wop2,
        b.as_ref(),
        Some(recycled.clone()),
        tight(),
    )
    .unwrap();
    assert_eq!(counting_k.products(), 1);
    let str0 = s_old.transpose() * solver.residual();
    assert!(str0.norm_max() <= 1e-10 * s_old.norm_max() * b.norm_max());
    let tracked = PlsOptions {
        track_kq: true,
        ..tight()
    };
    let counting_k2 = CountingOperator::new(DenseOperator::new(k.clone()));
    let solver2 =
        ProbabilisticSolver::new(&counting_k2, &wop2, b.as_ref(), Some(recycled), tracked).unwrap();
    assert_eq!(counting_k2.products(), 0);
    assert!(
        rel(
            col_mat(solver2.residual()).as_ref(),
            col_mat(solver.residual()).as_ref()
        ) <= 1e-10
    );
    // (f) compression to R = 3 columns: the projected inverse of the kept rotated actions.
    let compressed = virtual_solver_run(
        buffers,
        &wop2,
        &RecycleOptions {
            rank: Some(3),
            ..RecycleOptions::default()
        },
    )
    .unwrap();
    assert_eq!((compressed.root.ncols(), compressed.dropped), (3, 3));
    let c_r = &compressed.root * compressed.root.transpose();
    let want = projected_inverse(&khat2, compressed.buffers.actions());
    assert!(rel(c_r.as_ref(), want.as_ref()) <= 1e-8);
}

#[test]
fn an_action_in_the_span_is_a_breakdown_and_is_not_appended() {
    let (k, winv, b) = system(5);
    let (kop, wop) = (DenseOperator::new(k), DenseOperator::new(winv));
    let actions = gaussian(N, 3, 55);
    // The third action repeats a combination of the first two.
    let mut repeated = actions.clone();
    for i in 0..N {
        repeated[(i, 2)] = 2.0 * actions[(i, 0)] - 0.5 * actions[(i, 1)];
    }
    let mut policy = RandomPolicy(repeated);
    let mut solver = ProbabilisticSolver::new(&kop, &wop, b.as_ref(), None, tight()).unwrap();
    solver.step(&mut policy).unwrap();
    solver.step(&mut policy).unwrap();
    let (root, buffers, v) = (
        solver.root().to_owned(),
        solver.buffers().clone(),
        solver.solution().to_owned(),
    );
    assert_eq!(solver.step(&mut policy).unwrap(), PlsStatus::Breakdown);
    assert_eq!(solver.root(), root.as_ref());
    assert_eq!(solver.buffers(), &buffers);
    assert_eq!(solver.solution(), v.as_ref());
    // A finished solve takes no more actions.
    assert_eq!(solver.step(&mut policy).unwrap(), PlsStatus::Breakdown);
    assert_eq!(solver.iteration(), 2);
}

#[test]
fn tracking_k_q_halves_the_products_and_keeps_the_iterates() {
    let (k, winv, b) = system(6);
    let wop = DenseOperator::new(winv);
    let (plain_k, tracked_k) = (
        CountingOperator::new(DenseOperator::new(k.clone())),
        CountingOperator::new(DenseOperator::new(k)),
    );
    let mut plain = ProbabilisticSolver::new(&plain_k, &wop, b.as_ref(), None, tight()).unwrap();
    let tracked_options = PlsOptions {
        track_kq: true,
        ..tight()
    };
    let mut tracked =
        ProbabilisticSolver::new(&tracked_k, &wop, b.as_ref(), None, tracked_options).unwrap();
    for _ in 0..10 {
        plain.step(&mut ResidualPolicy).unwrap();
        tracked.step(&mut ResidualPolicy).unwrap();
        let err = rel(
            col_mat(tracked.residual()).as_ref(),
            col_mat(plain.residual()).as_ref(),
        );
        assert!(err <= 1e-9, "{err:e}");
    }
    assert_eq!((plain_k.products(), tracked_k.products()), (20, 10));
    assert_eq!((plain.k_products(), tracked.k_products()), (20, 10));
}

#[test]
fn the_default_tolerances_stop_a_solve_and_bad_input_is_an_error() {
    let (k, winv, b) = system(7);
    let (kop, wop) = (DenseOperator::new(k), DenseOperator::new(winv));
    let mut solver =
        ProbabilisticSolver::new(&kop, &wop, b.as_ref(), None, PlsOptions::default()).unwrap();
    assert_eq!(
        solver.run(&mut ResidualPolicy).unwrap(),
        PlsStatus::Converged
    );
    assert!(solver.residual_norm() < 1e-5 * b.norm_l2().max(1.0));
    let capped = PlsOptions {
        max_iterations: Some(2),
        ..tight()
    };
    let mut solver = ProbabilisticSolver::new(&kop, &wop, b.as_ref(), None, capped).unwrap();
    assert_eq!(
        solver.run(&mut ResidualPolicy).unwrap(),
        PlsStatus::MaxIterations
    );
    assert_eq!(solver.iteration(), 2);
    let short = Col::<f64>::zeros(N - 1);
    assert!(matches!(
        ProbabilisticSolver::new(&kop, &wop, short.as_ref(), None, tight()),
        Err(SolverError::ShapeMismatch { .. })
    ));
    let nan = Col::from_fn(N, |i| if i == 3 { f64::NAN } else { 1.0 });
    assert!(matches!(
        ProbabilisticSolver::new(&kop, &wop, nan.as_ref(), None, tight()),
        Err(SolverError::Linalg(_))
    ));
    let bad = PlsOptions {
        breakdown_tolerance: 1.5,
        ..tight()
    };
    assert!(matches!(
        ProbabilisticSolver::new(&kop, &wop, b.as_ref(), None, bad),
        Err(SolverError::InvalidOptions { .. })
    ));
    let small = DenseOperator::new(Mat::<f64>::identity(3, 3));
    assert!(matches!(
        ProbabilisticSolver::new(&kop, &small, b.as_ref(), None, tight()),
        Err(SolverError::ShapeMismatch { .. })
    ));
}
