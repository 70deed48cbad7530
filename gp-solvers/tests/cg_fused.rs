//! The CG step does its vector work for all columns in row-chunked passes (`cg/passes.rs`)
//! and RR-CG keeps one running sum with snapshots instead of one accumulator per draw.
//! Both promise the bits of the plain column-by-column computation; these tests hold them
//! to it against a reference CG written here with `gp_linalg::vector`'s kernels, below and
//! above the vector kernels' parallel threshold (2¹⁶ rows).

use faer::{Mat, MatRef};
use gp_linalg::vector::{axpy, dot, norm2};
use gp_linalg::{DiagonalOperator, LinearOperator, LowRankPlusDiagonal, SparseOperator};
use gp_solvers::rr_cg::{rr_cg, RrCgOptions};
use gp_solvers::truncation::{ExpDecay, TruncationLaw};
use gp_solvers::{CgOptions, CgSolver, Preconditioner, SolverError};

/// A sparse SPD operator of order `n`: a varying diagonal, the path graph's `−1`s and a
/// weak long-range coupling.
fn sparse_spd(n: usize) -> SparseOperator {
    let (mut rows, mut cols, mut vals) = (vec![], vec![], vec![]);
    for i in 0..n {
        rows.push(i);
        cols.push(i);
        vals.push(2.05 + (i % 7) as f64 * 0.3);
        for (gap, v) in [(1, -1.0), (97, 0.01)] {
            if i + gap < n {
                rows.extend([i, i + gap]);
                cols.extend([i + gap, i]);
                vals.extend([v, v]);
            }
        }
    }
    SparseOperator::from_triplets(n, n, &rows, &cols, &vals).unwrap()
}

/// Right-hand sides: smooth columns, a unit vector (which converges early) and, with
/// `zero`, a zero column (converged from the start).
fn right_hand_sides(n: usize, zero: bool) -> Mat<f64> {
    Mat::from_fn(n, 5, |i, j| match j {
        2 if zero => 0.0,
        3 => f64::from(i == 5),
        _ => ((i * (j + 3)) as f64 * 0.37).sin(),
    })
}

/// `P = diag(p)`: elementwise, so a block solve equals its column solves bit for bit (a
/// low-rank preconditioner's GEMM may sum a block in another order than a column).
struct Jacobi(Vec<f64>);

impl Preconditioner for Jacobi {
    fn dim(&self) -> usize {
        self.0.len()
    }
    fn solve_into(
        &self,
        r: MatRef<'_, f64>,
        mut out: faer::MatMut<'_, f64>,
    ) -> gp_solvers::Result<()> {
        for c in 0..r.ncols() {
            for (i, &p) in self.0.iter().enumerate() {
                out[(i, c)] = r[(i, c)] / p;
            }
        }
        Ok(())
    }
    fn log_det(&self) -> gp_solvers::Result<f64> {
        Ok(self.0.iter().map(|p| p.ln()).sum())
    }
    fn sample(&self, _: &mut dyn rand::RngCore, _: usize) -> gp_solvers::Result<Mat<f64>> {
        unimplemented!("not used by CG")
    }
}

fn jacobi(n: usize) -> Jacobi {
    Jacobi((0..n).map(|i| 2.0 + (i % 5) as f64 * 0.1).collect())
}

fn low_rank_preconditioner(n: usize) -> LowRankPlusDiagonal {
    let u = Mat::from_fn(n, 3, |i, j| ((i + 11 * j) as f64 * 0.013).cos() * 0.3);
    let d = DiagonalOperator::new(faer::Col::from_fn(n, |i| 2.0 + (i % 5) as f64 * 0.1));
    LowRankPlusDiagonal::new(u, d.unwrap()).unwrap()
}

/// One column's CG by the book, with `gp_linalg::vector`'s kernels: per step `(α, β, ‖r‖)`
/// and the iterate after each step.
struct Reference {
    alphas: Vec<f64>,
    betas: Vec<f64>,
    residual_norms: Vec<f64>,
    iterates: Vec<Vec<f64>>,
}

fn reference_cg(
    a: &dyn LinearOperator,
    b: &[f64],
    p: Option<&dyn Preconditioner>,
    tolerance: f64,
    steps: usize,
) -> Reference {
    let n = b.len();
    let precondition = |r: &[f64]| -> Vec<f64> {
        match p {
            Some(p) => p
                .solve_block(MatRef::from_column_major_slice(r, n, 1))
                .unwrap()
                .col_as_slice(0)
                .to_vec(),
            None => r.to_vec(),
        }
    };
    let mut out = Reference {
        alphas: vec![],
        betas: vec![],
        residual_norms: vec![],
        iterates: vec![],
    };
    let bnorm = norm2(b);
    if bnorm == 0.0 {
        return out;
    }
    let (mut x, mut r) = (vec![0.0; n], b.to_vec());
    let mut s = precondition(&r);
    let mut rz = dot(&r, &s).unwrap();
    let mut d = s.clone();
    for _ in 0..steps {
        let mut ad = vec![0.0; n];
        a.matmat(
            MatRef::from_column_major_slice(&d, n, 1),
            faer::MatMut::from_column_major_slice_mut(&mut ad, n, 1),
        );
        let alpha = rz / dot(&d, &ad).unwrap();
        let delta: Vec<f64> = d.iter().map(|v| alpha * v).collect();
        axpy(1.0, &delta, &mut x).unwrap();
        axpy(-alpha, &ad, &mut r).unwrap();
        s = precondition(&r);
        let rz_new = dot(&r, &s).unwrap();
        let rnorm = norm2(&r);
        out.alphas.push(alpha);
        out.residual_norms.push(rnorm / bnorm);
        out.betas.push(rz_new / rz);
        out.iterates.push(x.clone());
        if rnorm / bnorm <= tolerance {
            break;
        }
        let beta = rz_new / rz;
        rz = rz_new;
        for (di, si) in d.iter_mut().zip(&s) {
            *di = si + beta * *di;
        }
    }
    out
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The batched solver's records and iterates equal the per-column reference bit for bit.
fn check_against_reference(n: usize, preconditioned: bool, zero: bool) {
    let a = sparse_spd(n);
    let b = right_hand_sides(n, zero);
    let p = jacobi(n);
    let p: Option<&dyn Preconditioner> = if preconditioned { Some(&p) } else { None };
    let (tolerance, steps) = (1e-9, 60);
    let opts = CgOptions {
        tolerance,
        max_iterations: steps,
        ..CgOptions::default()
    };
    let mut solver = CgSolver::new(&a, b.as_ref(), p, &opts).unwrap();
    let mut iterates = vec![vec![]; b.ncols()];
    while solver.step().unwrap().is_some() {
        for (c, list) in iterates.iter_mut().enumerate() {
            list.push(solver.solution().col(c).iter().copied().collect::<Vec<_>>());
        }
    }
    for (c, iterates) in iterates.iter().enumerate() {
        let reference = reference_cg(&a, b.col_as_slice(c), p, tolerance, steps);
        let record = &solver.column(c).unwrap().record;
        let context = format!("n = {n}, preconditioned = {preconditioned}, column {c}");
        assert_eq!(bits(&record.alphas), bits(&reference.alphas), "{context}");
        assert_eq!(bits(&record.betas), bits(&reference.betas), "{context}");
        assert_eq!(
            bits(&record.residual_norms[1..]),
            bits(&reference.residual_norms),
            "{context}"
        );
        for (j, x) in reference.iterates.iter().enumerate() {
            assert_eq!(bits(&iterates[j]), bits(x), "{context}, step {}", j + 1);
        }
    }
    // The unit-vector column stops before the others (the stopped-column path is taken).
    // Columns stop at different steps (the stopped-column path is taken), all before the cap.
    let its: Vec<usize> = (0..b.ncols())
        .map(|c| solver.column(c).unwrap().iterations)
        .collect();
    assert!(
        its.iter().any(|&j| j != its[0]) && its.iter().all(|&j| j < steps),
        "{its:?}"
    );
}

#[test]
fn fused_steps_equal_column_by_column_cg_bitwise() {
    for n in [1_000, 70_001] {
        for preconditioned in [false, true] {
            for zero in [false, true] {
                check_against_reference(n, preconditioned, zero);
            }
        }
    }
}

#[test]
fn step_accumulating_adds_the_weighted_increment_bitwise() {
    let n = 70_001;
    let a = sparse_spd(n);
    let b = right_hand_sides(n, true);
    let m = b.ncols();
    let opts = CgOptions {
        tolerance: 1e-9,
        max_iterations: 12,
        ..CgOptions::default()
    };
    let mut fused = CgSolver::new(&a, b.as_ref(), None, &opts).unwrap();
    let mut plain = CgSolver::new(&a, b.as_ref(), None, &opts).unwrap();
    let mut sum = vec![0.0; n * m];
    let mut by_hand = vec![0.0; n * m];
    let mut j = 0;
    while plain.step().unwrap().is_some() {
        j += 1;
        let weight = 1.0 + 0.1 * j as f64;
        assert!(fused
            .step_accumulating(weight, &mut [&mut sum])
            .unwrap()
            .is_some());
        for c in 0..m {
            let increment = plain.increment().col(c).iter().copied().collect::<Vec<_>>();
            axpy(weight, &increment, &mut by_hand[c * n..(c + 1) * n]).unwrap();
        }
        assert_eq!(fused.increment(), plain.increment());
    }
    assert_eq!(bits(&sum), bits(&by_hand));
    // A target of the wrong length is refused before anything is done.
    let before = fused.iteration();
    let mut short = vec![0.0; n * m - 1];
    let err = fused.step_accumulating(1.0, &mut [&mut short]).unwrap_err();
    assert!(matches!(err, SolverError::ShapeMismatch { .. }), "{err}");
    assert_eq!(fused.iteration(), before);
}

/// RR-CG's estimates (one running sum, snapshots at the draws, the iterate itself while the
/// weights are 1) equal one accumulator per draw fed every weighted increment, bit for bit:
/// draws inside and past `J_min`, equal draws, and a draw past the step where every column
/// has converged.
#[test]
fn rr_cg_snapshots_equal_one_accumulator_per_draw_bitwise() {
    let n = 2_000;
    let a = sparse_spd(n);
    for (preconditioned, tolerance) in [(false, 1e-9), (true, 1e-9), (false, 1e-4)] {
        let b = right_hand_sides(n, true);
        let p = low_rank_preconditioner(n);
        let p: Option<&dyn Preconditioner> = if preconditioned { Some(&p) } else { None };
        let law = ExpDecay::new(0.05, 10, 400).unwrap();
        let draws = [7, 30, 30, 10, 300];
        let opts = RrCgOptions {
            tolerance,
            ..RrCgOptions::default()
        };
        let out = rr_cg(&a, b.as_ref(), p, &law, &draws, &opts).unwrap();

        let cg_opts = CgOptions {
            tolerance,
            max_iterations: 300,
            ..CgOptions::default()
        };
        let mut solver = CgSolver::new(&a, b.as_ref(), p, &cg_opts).unwrap();
        let mut sums = vec![Mat::<f64>::zeros(n, b.ncols()); draws.len()];
        while let Some(step) = solver.step().unwrap() {
            let j = step.iteration;
            for (sum, &draw) in sums.iter_mut().zip(&draws) {
                if j <= draw {
                    for c in 0..b.ncols() {
                        let inc = solver
                            .increment()
                            .col(c)
                            .iter()
                            .copied()
                            .collect::<Vec<_>>();
                        axpy(law.weight(j), &inc, sum.col_as_slice_mut(c)).unwrap();
                    }
                }
            }
        }
        assert_eq!(out.iterations, solver.iteration());
        if tolerance > 1e-6 {
            assert!(
                out.iterations < 300,
                "every column converges before the last draw"
            );
        }
        for (estimate, sum) in out.estimates.iter().zip(&sums) {
            for c in 0..b.ncols() {
                assert_eq!(
                    bits(estimate.col_as_slice(c)),
                    bits(sum.col_as_slice(c)),
                    "tolerance {tolerance}, preconditioned {preconditioned}, column {c}"
                );
            }
        }
    }
}
