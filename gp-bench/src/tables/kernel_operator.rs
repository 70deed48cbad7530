//! `gp-bench bench kernel-operator`: the matrix-free `K(X, X) + σ²I` applied to blocks of
//! right-hand sides.

use faer::Mat;
use gp_kernels::{KernelOperator, SquaredExponential};
use gp_linalg::LinearOperator;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::BenchError;
use crate::synthetic::{standard_normal, uniform_inputs};
use crate::table::{fmt_rate, fmt_seconds, Table};
use crate::timing::median_time;

/// Times one block product of the matrix-free SE kernel operator (`n × d` inputs) with each
/// number of right-hand sides; reports time, kernel entries per second and time per
/// right-hand side.
pub fn run(n: usize, d: usize, rhs_counts: &[usize], reps: usize) -> Result<Table, BenchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let x = uniform_inputs(n, d, 0.0, 1.0, &mut rng);
    let kernel = SquaredExponential::isotropic(d, 0.3, 1.0)?;
    let op = KernelOperator::new(kernel, x.as_ref(), 0.01)?;
    let mut table = Table::new([
        "n",
        "d",
        "right-hand sides",
        "time",
        "time / rhs",
        "kernel entries/s",
    ]);
    for &r in rhs_counts {
        let b = Mat::from_fn(n, r, |_, _| 0.0);
        let mut b = b;
        for j in 0..r {
            let z = standard_normal(n, &mut rng);
            b.col_mut(j).copy_from(&z);
        }
        let (t, out) = median_time(reps, || op.apply_block(b.as_ref()));
        out?;
        table.row([
            n.to_string(),
            d.to_string(),
            r.to_string(),
            fmt_seconds(t),
            fmt_seconds(t / r as f64),
            fmt_rate((n * n) as f64 / t),
        ]);
    }
    Ok(table)
}
