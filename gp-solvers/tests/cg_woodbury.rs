//! CG with a diagonal-plus-low-rank preconditioner `P = D + U Uᵀ` forms `s = P⁻¹ r` inside
//! its own passes (`Vᵀr` beside the residual update, then `s = D⁻¹r − V C⁻¹ Vᵀr` and `rᵀs` in
//! one pass) instead of calling the preconditioner's solve. These tests hold the fused step
//! to the one that calls the solve (the same preconditioner behind a wrapper that hides its
//! Woodbury parts), below and above the passes' parallel threshold (2¹⁶ rows).
//!
//! The two compute the same Woodbury formula in another order (`Vᵀr` against `Uᵀ(D⁻¹r)`,
//! and the correction summed per column instead of by a GEMM), so they agree to rounding,
//! not bit for bit. Each step's vectors differ by a few ulps of their scale (`‖b‖` for the
//! residual, whose recursion rounds at that size) and CG carries the differences forward
//! with mild growth at the condition numbers used here (≈ 10³ before preconditioning): over
//! 60 steps the measured differences stay below 1e-13, and the bound is 1e-12.

use std::sync::atomic::{AtomicUsize, Ordering};

use faer::{Col, Mat, MatMut, MatRef};
use gp_linalg::{DiagonalOperator, LinearOperator, LowRankOperator, LowRankPlusDiagonal};
use gp_solvers::{CgOptions, CgSolver, Preconditioner, WoodburyParts};

/// `A = diag(a) + G Gᵀ` with a rank-8 `G`: SPD, cheap to apply at any `n`, and with a
/// low-rank part a rank-5 preconditioner only partly captures.
struct DiagonalPlusLowRank {
    diagonal: DiagonalOperator,
    low_rank: LowRankOperator,
}

impl DiagonalPlusLowRank {
    fn new(n: usize) -> Self {
        let diagonal =
            DiagonalOperator::new(Col::from_fn(n, |i| 0.01 + (i % 97) as f64 / 97.0)).unwrap();
        // Columns of norm ≈ 3/(j + 1): eigenvalues of G Gᵀ of order 10 down to 0.1.
        let scale = 3.0 * (2.0 / n as f64).sqrt();
        let g = Mat::from_fn(n, 8, |i, j| {
            let frequency = std::f64::consts::PI * (j + 1) as f64 / n as f64;
            ((i as f64 + 0.5) * frequency).sin() * scale / (1.0 + j as f64)
        });
        Self {
            diagonal,
            low_rank: LowRankOperator::new(g).unwrap(),
        }
    }

    /// The preconditioner `D + U Uᵀ` from the first five columns of `G` and a diagonal near
    /// `A`'s (constant with `constant`, varying otherwise).
    fn preconditioner(&self, constant: bool) -> LowRankPlusDiagonal {
        let u = self.low_rank.factor().subcols(0, 5).to_owned();
        if constant {
            LowRankPlusDiagonal::with_noise(u, 0.09).unwrap()
        } else {
            LowRankPlusDiagonal::new(u, self.diagonal.clone()).unwrap()
        }
    }
}

impl LinearOperator for DiagonalPlusLowRank {
    fn nrows(&self) -> usize {
        self.diagonal.dim()
    }
    fn ncols(&self) -> usize {
        self.diagonal.dim()
    }
    fn matvec(&self, x: faer::ColRef<'_, f64>, mut out: faer::ColMut<'_, f64>) {
        self.low_rank.matvec(x, out.as_mut());
        for (i, o) in out.iter_mut().enumerate() {
            *o += self.diagonal.values()[i] * x[i];
        }
    }
}

/// A low-rank-plus-diagonal preconditioner that counts the solves CG asks of it and, with
/// `expose: false`, hides its Woodbury parts (so CG calls its solve every step).
struct Wrapped<'a> {
    inner: &'a LowRankPlusDiagonal,
    expose: bool,
    solves: AtomicUsize,
}

impl<'a> Wrapped<'a> {
    fn new(inner: &'a LowRankPlusDiagonal, expose: bool) -> Self {
        Self {
            inner,
            expose,
            solves: AtomicUsize::new(0),
        }
    }

    fn solves(&self) -> usize {
        self.solves.load(Ordering::Relaxed)
    }
}

impl Preconditioner for Wrapped<'_> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn solve_into(&self, r: MatRef<'_, f64>, out: MatMut<'_, f64>) -> gp_solvers::Result<()> {
        self.solves.fetch_add(1, Ordering::Relaxed);
        Preconditioner::solve_into(self.inner, r, out)
    }
    fn log_det(&self) -> gp_solvers::Result<f64> {
        Ok(self.inner.log_det())
    }
    fn sample(&self, rng: &mut dyn rand::RngCore, count: usize) -> gp_solvers::Result<Mat<f64>> {
        Preconditioner::sample(self.inner, rng, count)
    }
    fn woodbury_parts(&self) -> Option<WoodburyParts<'_>> {
        if self.expose {
            self.inner.woodbury_parts()
        } else {
            None
        }
    }
}

/// Right-hand sides: smooth columns, a zero column (converged from the start) and a unit
/// vector.
fn right_hand_sides(n: usize) -> Mat<f64> {
    Mat::from_fn(n, 4, |i, j| match j {
        1 => 0.0,
        2 => f64::from(i == 3),
        _ => ((i * (j + 2)) as f64 * 0.41).cos(),
    })
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

fn column_norms(a: MatRef<'_, f64>) -> Vec<f64> {
    (0..a.ncols()).map(|c| a.col(c).norm_l2()).collect()
}

/// `max_c ‖a_c − b_c‖ / scale_c` (columns of zero scale must agree exactly).
fn scaled_difference(a: MatRef<'_, f64>, b: MatRef<'_, f64>, scale: &[f64]) -> f64 {
    (0..a.ncols())
        .map(|c| {
            let diff = (a.col(c) - b.col(c)).norm_l2();
            if scale[c] == 0.0 {
                if diff == 0.0 {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                diff / scale[c]
            }
        })
        .fold(0.0, f64::max)
}

/// Steps CG with the preconditioner's solve and with the fused Woodbury form side by side,
/// comparing every step; returns the steps taken and the solves each made after its set-up.
fn compare(n: usize, constant: bool, steps: usize) -> (usize, usize, usize) {
    let a = DiagonalPlusLowRank::new(n);
    let p = a.preconditioner(constant);
    let b = right_hand_sides(n);
    let opts = CgOptions {
        tolerance: 1e-12,
        max_iterations: steps,
        ..CgOptions::default()
    };
    let (opaque, counted) = (Wrapped::new(&p, false), Wrapped::new(&p, true));
    let mut reference = CgSolver::new(&a, b.as_ref(), Some(&opaque), &opts).unwrap();
    let mut fused = CgSolver::new(&a, b.as_ref(), Some(&counted), &opts).unwrap();
    let set_up = (opaque.solves(), counted.solves());
    // Scales of the vectors: the rounding differences of a step are relative to these (the
    // residual recursion rounds at the size of `b`, not of the current, shrinking `r`).
    let (b_scale, s_scale) = (
        column_norms(b.as_ref()),
        column_norms(reference.preconditioned_residual()),
    );
    loop {
        let (r, f) = (reference.step().unwrap(), fused.step().unwrap());
        assert_eq!(r, f, "the same columns advance and stop");
        if r.is_none() {
            break;
        }
        let x_scale = column_norms(reference.solution());
        for (x, y, scale) in [
            (fused.solution(), reference.solution(), &x_scale),
            (fused.residual(), reference.residual(), &b_scale),
            (
                fused.preconditioned_residual(),
                reference.preconditioned_residual(),
                &s_scale,
            ),
            (fused.direction(), reference.direction(), &s_scale),
        ] {
            let e = scaled_difference(x, y, scale);
            assert!(e < 1e-12, "n = {n}, step {}: {e:e}", reference.iteration());
        }
    }
    for (cf, cr) in fused.columns().iter().zip(reference.columns()) {
        assert_eq!(cf.status, cr.status);
        assert_eq!(cf.iterations, cr.iterations);
        // `α_j`, `β_j` and the residual norm after step `j` come from `r_j`, whose rounding
        // is relative to `‖b‖`: compared while `‖r_j‖ ≥ 1e-6 ‖b‖`, relative 1e-8 bounds them.
        let norms = &cr.record.residual_norms;
        for j in (0..cr.iterations).filter(|&j| norms[j + 1] >= 1e-6) {
            for (x, y) in [
                (cf.record.alphas[j], cr.record.alphas[j]),
                (cf.record.betas[j], cr.record.betas[j]),
                (cf.record.residual_norms[j + 1], norms[j + 1]),
            ] {
                assert!(relative(x, y) < 1e-8, "step {}: {x} against {y}", j + 1);
            }
        }
    }
    // The fused iterate's true residual `b − A x` is the one its recursion reports.
    let mut ax = Mat::zeros(n, b.ncols());
    a.matmat(fused.solution(), ax.as_mut());
    for (c, column) in fused.columns().iter().enumerate() {
        if b_scale[c] == 0.0 {
            continue;
        }
        let true_residual = (b.col(c) - ax.col(c)).norm_l2() / b_scale[c];
        let reported = column.record.residual_norms.last().copied().unwrap_or(1.0);
        assert!(
            (true_residual - reported).abs() < 1e-12,
            "column {c}: true {true_residual:e}, reported {reported:e}"
        );
    }
    (
        reference.iteration(),
        opaque.solves() - set_up.0,
        counted.solves() - set_up.1,
    )
}

#[test]
fn woodbury_step_matches_the_solve_and_calls_no_solve() {
    for constant in [true, false] {
        let (steps, reference, fused) = compare(600, constant, 60);
        assert!(steps > 3);
        assert_eq!(reference, steps, "the reference path solves every step");
        assert_eq!(fused, 0, "the fused path never calls the solve");
    }
}

#[test]
fn woodbury_step_matches_the_solve_above_the_parallel_threshold() {
    let (steps, reference, fused) = compare(70_001, true, 12);
    assert_eq!((steps, reference), (12, 12));
    assert_eq!(fused, 0);
}

#[test]
fn reorthogonalized_cg_keeps_the_solve() {
    let a = DiagonalPlusLowRank::new(300);
    let p = a.preconditioner(true);
    let counted = Wrapped::new(&p, true);
    let opts = CgOptions {
        reorthogonalize: true,
        max_iterations: 5,
        tolerance: 0.0,
        ..CgOptions::default()
    };
    let b = right_hand_sides(300);
    let mut solver = CgSolver::new(&a, b.as_ref(), Some(&counted), &opts).unwrap();
    let set_up = counted.solves();
    solver.run().unwrap();
    assert_eq!(counted.solves() - set_up, 5);
}
