//! The SKI operator takes CG's curvatures `dᵀ(W K_G Wᵀ + σ²I) d` inside its last pass
//! (`LinearOperator::matmat_with_dots`). They must be the bits of `vector::dot` after the
//! product, so CG on the SKI operator steps exactly as it did with the dots in a pass of
//! its own.

use crate::ski_support;

use faer::{Mat, MatMut, MatRef};
use gp_kernels::SquaredExponential;
use gp_linalg::vector::dot_col;
use gp_linalg::LinearOperator;
use gp_models::Ski;
use gp_solvers::{CgOptions, CgSolver};
use ski_support::{data, tight};

fn model(d: usize, n: usize) -> Ski<SquaredExponential> {
    let (x, y) = data(n, d, 2.0, 70 + d as u64);
    let kernel =
        SquaredExponential::new((0..d).map(|l| 0.3 + 0.1 * l as f64).collect(), 1.2).unwrap();
    Ski::fit(
        kernel,
        x.as_ref(),
        y.as_ref(),
        0.05,
        &tight(vec![[0, 60, 20, 10][d]; d]),
    )
    .unwrap()
}

/// The same operator without its own `matmat_with_dots` (the trait's default: the product,
/// then `vector::dot`).
struct PlainDots<'a>(&'a dyn LinearOperator);

impl LinearOperator for PlainDots<'_> {
    fn nrows(&self) -> usize {
        self.0.nrows()
    }
    fn ncols(&self) -> usize {
        self.0.ncols()
    }
    fn matvec(&self, x: faer::ColRef<'_, f64>, out: faer::ColMut<'_, f64>) {
        self.0.matvec(x, out)
    }
    fn matmat(&self, x: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        self.0.matmat(x, out)
    }
}

/// Columns of one block: the blocked product (cubic, `d ≤ 3`) takes twelve per pass, so
/// 11 and 14 cover one and two passes; 1 takes the column-by-column path.
fn block(n: usize, k: usize) -> Mat<f64> {
    Mat::from_fn(n, k, |i, j| {
        ((i * (j + 3)) as f64 * 0.013).sin() + 0.1 * j as f64
    })
}

#[test]
fn curvatures_are_the_bits_of_dot_after_the_product() {
    // 20 000 rows: two full dot chunks of 8192 rows and a partial one.
    for d in 1..=3 {
        let ski = model(d, 20_000);
        let op = ski.operator();
        for k in [1, 11, 14] {
            let x = block(20_000, k);
            let mut out = Mat::zeros(20_000, k);
            let dots = op.matmat_with_dots(x.as_ref(), out.as_mut());
            assert_eq!(dots.len(), k);
            let mut plain = Mat::zeros(20_000, k);
            op.matmat(x.as_ref(), plain.as_mut());
            assert_eq!(out, plain, "d = {d}, k = {k}: the product is unchanged");
            for (j, dot) in dots.iter().enumerate() {
                let expected = dot_col(x.col(j), plain.col(j)).unwrap();
                assert_eq!(
                    dot.to_bits(),
                    expected.to_bits(),
                    "d = {d}, k = {k}, column {j}"
                );
            }
        }
    }
}

#[test]
fn cg_on_the_ski_operator_steps_as_with_separate_dots() {
    let ski = model(3, 70_001);
    let op = ski.operator();
    let plain = PlainDots(&op);
    let b = block(70_001, 11);
    let opts = CgOptions {
        tolerance: 0.0,
        max_iterations: 8,
        ..CgOptions::default()
    };
    let mut fused = CgSolver::new(&op, b.as_ref(), None, &opts).unwrap();
    let mut separate = CgSolver::new(&plain, b.as_ref(), None, &opts).unwrap();
    fused.run().unwrap();
    separate.run().unwrap();
    for (f, s) in fused.columns().iter().zip(separate.columns()) {
        assert_eq!(f.iterations, 8);
        assert_eq!(f.record, s.record, "α, β and residual norms, bit for bit");
    }
    assert_eq!(fused.solution(), separate.solution());
}
