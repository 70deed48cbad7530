//! Batched preconditioned CG against dense references.

use crate::common;

use common::*;
use faer::Mat;
use gp_linalg::{DenseOperator, DiagonalOperator, LowRankPlusDiagonal};
use gp_solvers::{cg, lanczos, CgOptions, CgSolver, ColumnStatus, LanczosOptions, SymTridiagonal};

fn tight() -> CgOptions {
    CgOptions {
        tolerance: 1e-12,
        max_iterations: 500,
        ..Default::default()
    }
}

#[test]
fn solution_matches_dense_solve() {
    let n = 120;
    let a = spd(n, 1);
    let b = gaussian(n, 4, 2);
    let res = cg(&DenseOperator::new(a.clone()), b.as_ref(), None, &tight()).unwrap();
    assert!(res.all_converged());
    let exact = dense_solve(&a, &b);
    // ‖x − x*‖ ≤ κ · tol · ‖x*‖-ish; κ = 10 here.
    assert!(max_abs_diff(res.solution.as_ref(), exact.as_ref()) < 1e-10);
    for col in &res.columns {
        assert_eq!(col.record.residual_norms.len(), col.iterations + 1);
        assert_eq!(col.record.alphas.len(), col.iterations);
        assert!(col.final_residual() <= 1e-12);
        assert_eq!(col.record.residual_norms[0], 1.0);
    }
}

#[test]
fn preconditioned_solution_matches_dense_solve() {
    let n = 150;
    let k = se_kernel(n, 1.0, 3);
    let sigma2 = 1e-2;
    let a = add_noise(&k, sigma2);
    let b = gaussian(n, 3, 4);
    let pc = gp_solvers::PivotedCholesky::new(
        &k,
        &gp_solvers::PivotedCholeskyOptions {
            max_rank: 10,
            ..Default::default()
        },
    )
    .unwrap();
    let p = pc.preconditioner(sigma2).unwrap();
    let res = cg(
        &DenseOperator::new(a.clone()),
        b.as_ref(),
        Some(&p),
        &tight(),
    )
    .unwrap();
    assert!(res.all_converged());
    let exact = dense_solve(&a, &b);
    let scale = exact.norm_max();
    assert!(max_abs_diff(res.solution.as_ref(), exact.as_ref()) < 1e-8 * scale);
    // rhs_precond_norm_sq = bᵀP⁻¹b.
    let pinv_b = p.solve_block(b.as_ref()).unwrap();
    for (c, col) in res.columns.iter().enumerate() {
        let expected: f64 = (0..n).map(|i| b[(i, c)] * pinv_b[(i, c)]).sum();
        assert!((col.rhs_precond_norm_sq - expected).abs() < 1e-10 * expected);
    }
}

#[test]
fn cg_tridiagonal_matches_lanczos_tridiagonal() {
    let n = 80;
    let a = spd(n, 5);
    let b = gaussian(n, 1, 6);
    let steps = 15;
    let opts = CgOptions {
        tolerance: 0.0,
        max_iterations: steps,
        ..Default::default()
    };
    let res = cg(&DenseOperator::new(a.clone()), b.as_ref(), None, &opts).unwrap();
    assert_eq!(res.columns[0].status, ColumnStatus::MaxIterations);
    let t_cg = res.columns[0].tridiagonal().unwrap();
    let lz = lanczos(
        &DenseOperator::new(a),
        b.col(0),
        &LanczosOptions {
            max_iterations: steps,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(t_cg.dim(), steps);
    let diff = max_abs_diff(t_cg.to_dense().as_ref(), lz.tridiagonal.to_dense().as_ref());
    assert!(diff < 1e-10, "CG vs Lanczos tridiagonal differ by {diff}");
}

#[test]
fn preconditioned_cg_tridiagonal_is_lanczos_of_whitened_operator() {
    // T from PCG on A x = b equals Lanczos on P^{-1/2} A P^{-1/2} from P^{-1/2} b.
    let n = 60;
    let a = spd(n, 7);
    let u = gaussian(n, 3, 8);
    let p = LowRankPlusDiagonal::with_noise(u.clone(), 2.0).unwrap();
    let p_dense = &u * u.transpose() + Mat::<f64>::identity(n, n) * 2.0;
    let (_, p_inv_sqrt) = sqrt_and_inv_sqrt(&p_dense);
    let whitened = &p_inv_sqrt * &a * &p_inv_sqrt;
    let b = gaussian(n, 1, 9);
    let steps = 12;
    let opts = CgOptions {
        tolerance: 0.0,
        max_iterations: steps,
        ..Default::default()
    };
    let res = cg(&DenseOperator::new(a), b.as_ref(), Some(&p), &opts).unwrap();
    let start = &p_inv_sqrt * &b;
    let lz = lanczos(
        &DenseOperator::new(whitened),
        start.col(0),
        &LanczosOptions {
            max_iterations: steps,
            ..Default::default()
        },
    )
    .unwrap();
    let t_cg = res.columns[0].tridiagonal().unwrap();
    let diff = max_abs_diff(t_cg.to_dense().as_ref(), lz.tridiagonal.to_dense().as_ref());
    assert!(diff < 1e-10, "PCG vs whitened Lanczos differ by {diff}");
    // The SLQ weight is ‖P^{-1/2} b‖².
    let w2 = start.squared_norm_l2();
    assert!((res.columns[0].rhs_precond_norm_sq - w2).abs() < 1e-10 * w2);
}

#[test]
fn step_interface_gives_identical_iterates() {
    let n = 90;
    let a = DenseOperator::new(spd(n, 10));
    let b = gaussian(n, 3, 11);
    let p = DiagonalOperator::from_vec((0..n).map(|i| 1.0 + (i % 7) as f64).collect()).unwrap();
    let opts = CgOptions {
        tolerance: 1e-9,
        reorthogonalize: true,
        ..Default::default()
    };
    let batch = cg(&a, b.as_ref(), Some(&p), &opts).unwrap();

    let mut solver = CgSolver::new(&a, b.as_ref(), Some(&p), &opts).unwrap();
    let mut sum = Mat::<f64>::zeros(n, 3);
    let mut steps = 0;
    while let Some(step) = solver.step().unwrap() {
        steps += 1;
        assert_eq!(step.iteration, steps);
        sum += solver.increment();
        // Frozen columns have zero increments; A d is the product of the direction used.
        for c in 0..3 {
            if !step.advanced.contains(&c) {
                assert_eq!(solver.increment().col(c).norm_max(), 0.0);
            }
        }
        let ad = a.matrix() * solver.direction();
        assert!(max_abs_diff(ad.as_ref(), solver.operator_direction()) < 1e-12);
    }
    assert!(solver.is_finished());
    let stepped = solver.into_result();
    assert_eq!(stepped.solution, batch.solution);
    assert!(max_abs_diff(sum.as_ref(), batch.solution.as_ref()) < 1e-12);
    for (s, b) in stepped.columns.iter().zip(&batch.columns) {
        assert_eq!(s.record.alphas, b.record.alphas);
        assert_eq!(s.record.betas, b.record.betas);
        assert_eq!(s.record.residual_norms, b.record.residual_norms);
        assert_eq!(s.status, b.status);
    }
}

#[test]
fn run_steps_stops_at_a_chosen_iteration() {
    let n = 50;
    let a = DenseOperator::new(spd(n, 12));
    let b = gaussian(n, 2, 13);
    let opts = CgOptions {
        tolerance: 0.0,
        ..Default::default()
    };
    let mut solver = CgSolver::new(&a, b.as_ref(), None, &opts).unwrap();
    assert_eq!(solver.run_steps(7).unwrap(), 7);
    assert_eq!(solver.iteration(), 7);
    let truncated = solver.solution().to_owned();
    let fixed = cg(
        &a,
        b.as_ref(),
        None,
        &CgOptions {
            tolerance: 0.0,
            max_iterations: 7,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(truncated, fixed.solution);
    assert!(solver.columns().iter().all(|c| c.status.is_running()));
}

#[test]
fn columns_converge_independently_and_freeze() {
    let n = 100;
    let ev = log_spectrum(n, 1e4);
    let a = with_spectrum(&ev, 14);
    // The eigenvectors with_spectrum used (same seed).
    let v = orthogonal(n, 14);
    // Column 0: one eigenvector (1 step); column 1: two eigenvectors; column 2: random.
    let mut b = gaussian(n, 3, 15);
    for i in 0..n {
        b[(i, 0)] = v[(i, 10)];
        b[(i, 1)] = v[(i, 20)] + v[(i, 30)];
    }
    let opts = CgOptions {
        tolerance: 1e-9,
        ..Default::default()
    };
    let res = cg(&DenseOperator::new(a), b.as_ref(), None, &opts).unwrap();
    assert!(res.all_converged());
    let its = res.iterations_per_column();
    assert_eq!(its[0], 1);
    assert_eq!(its[1], 2);
    assert!(its[2] > 20, "{its:?}");
    assert_eq!(res.iterations, its[2]);
}

#[test]
fn min_and_max_iterations() {
    let n = 40;
    let a = DenseOperator::new(spd(n, 16));
    let b = gaussian(n, 1, 17);
    let loose = CgOptions {
        tolerance: 0.5,
        ..Default::default()
    };
    let few = cg(&a, b.as_ref(), None, &loose).unwrap();
    let forced = cg(
        &a,
        b.as_ref(),
        None,
        &CgOptions {
            min_iterations: 10,
            ..loose
        },
    )
    .unwrap();
    assert!(few.columns[0].iterations < 10);
    assert_eq!(forced.columns[0].iterations, 10);
    assert!(forced.all_converged());
    let capped = cg(
        &a,
        b.as_ref(),
        None,
        &CgOptions {
            tolerance: 1e-14,
            max_iterations: 5,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(capped.columns[0].status, ColumnStatus::MaxIterations);
    assert_eq!(capped.columns[0].iterations, 5);
    assert!(!capped.all_converged());
}

#[test]
fn zero_right_hand_side_is_converged_at_once() {
    let n = 10;
    let a = DenseOperator::new(spd(n, 18));
    let mut b = gaussian(n, 2, 19);
    for i in 0..n {
        b[(i, 1)] = 0.0;
    }
    let res = cg(&a, b.as_ref(), None, &tight()).unwrap();
    assert_eq!(res.columns[1].iterations, 0);
    assert!(res.columns[1].converged());
    assert_eq!(res.solution.col(1).norm_max(), 0.0);
    assert_eq!(
        res.columns[1].tridiagonal().unwrap(),
        SymTridiagonal::default()
    );
}

#[test]
fn reorthogonalization_converges_where_plain_cg_stalls() {
    // An ill-conditioned matrix (κ = 1e10, log-spread spectrum): plain CG loses
    // orthogonality and needs far more than n iterations; with full re-orthogonalization
    // CG behaves as in exact arithmetic and finishes in about n.
    let n = 120;
    let a = with_spectrum(&log_spectrum(n, 1e10), 20);
    let b = gaussian(n, 1, 21);
    let opts = CgOptions {
        tolerance: 1e-10,
        max_iterations: 4 * n,
        ..Default::default()
    };
    let op = DenseOperator::new(a.clone());
    let plain = cg(&op, b.as_ref(), None, &opts).unwrap();
    let stable = cg(
        &op,
        b.as_ref(),
        None,
        &CgOptions {
            reorthogonalize: true,
            ..opts
        },
    )
    .unwrap();
    assert!(stable.all_converged());
    let (ip, is) = (plain.columns[0].iterations, stable.columns[0].iterations);
    assert!(is <= n + 5, "re-orthogonalized CG took {is} iterations");
    assert!(
        !plain.all_converged() || ip as f64 >= 1.5 * is as f64,
        "plain {ip} vs re-orthogonalized {is}"
    );
    eprintln!(
        "plain CG: {ip} iterations ({:?}); re-orthogonalized: {is}",
        plain.columns[0].status
    );
    // The true residual is small too, up to the attainable accuracy ε·κ ≈ 2e-6 of an
    // x with ‖x‖ ≈ κ‖b‖.
    let r = &b - &a * &stable.solution;
    assert!(
        r.norm_l2() <= 1e-5 * b.norm_l2(),
        "{}",
        r.norm_l2() / b.norm_l2()
    );
}

#[test]
fn recorded_directions_are_conjugate_and_products_exact() {
    let n = 60;
    let a = spd(n, 22);
    let b = gaussian(n, 2, 23);
    let opts = CgOptions {
        tolerance: 1e-10,
        record_directions: true,
        reorthogonalize: true,
        ..Default::default()
    };
    let res = cg(&DenseOperator::new(a.clone()), b.as_ref(), None, &opts).unwrap();
    for col in &res.columns {
        let dirs = col.directions.as_ref().unwrap();
        assert_eq!(dirs.len(), col.iterations);
        let s = dirs.directions();
        let z = dirs.operator_directions();
        assert!(max_abs_diff((&a * s).as_ref(), z) < 1e-12);
        let g = s.transpose() * z;
        for i in 0..g.nrows() {
            for j in 0..g.ncols() {
                if i != j {
                    let rel = g[(i, j)].abs() / (g[(i, i)] * g[(j, j)]).sqrt();
                    assert!(rel < 1e-8, "directions {i},{j} not A-conjugate: {rel}");
                }
            }
        }
    }
    // Without the option nothing is stored.
    let res = cg(&DenseOperator::new(a), b.as_ref(), None, &tight()).unwrap();
    assert!(res.columns[0].directions.is_none());
}
