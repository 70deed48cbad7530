//! `gp-bench bench cholesky`: faer's Cholesky, sequential against rayon: the measurement
//! behind `gp_linalg::ParallelismSetting::Auto`.

use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{restore_parallelism, set_parallelism, Cholesky, Par};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::BenchError;
use crate::synthetic::uniform_inputs;
use crate::table::{fmt_seconds, Table};
use crate::timing::median_time;

/// Times the Cholesky factorization of an SE kernel matrix plus noise at each size, with
/// `Par::Seq` and with rayon on all threads, and reports GFLOP/s (n³/3 flops).
pub fn run(sizes: &[usize], reps: usize) -> Result<Table, BenchError> {
    let mut table = Table::new([
        "n",
        "seq time",
        "seq GFLOP/s",
        "rayon time",
        "rayon GFLOP/s",
    ]);
    let before = gp_linalg::parallelism_setting();
    let result = (|| {
        for &n in sizes {
            let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
            let x = uniform_inputs(n, 3, 0.0, 1.0, &mut rng);
            let kernel = SquaredExponential::isotropic(3, 0.3, 1.0)?;
            let mut k = kernel.matrix(x.as_ref(), x.as_ref())?;
            for i in 0..n {
                k[(i, i)] += 0.01;
            }
            let flops = (n as f64).powi(3) / 3.0;
            let mut cells = vec![n.to_string()];
            for par in [Par::Seq, Par::rayon(0)] {
                set_parallelism(par);
                let (t, chol) = median_time(reps, || Cholesky::new(k.as_ref()));
                chol?;
                cells.push(fmt_seconds(t));
                cells.push(format!("{:.1}", flops / t / 1e9));
            }
            table.row(cells);
        }
        Ok::<(), BenchError>(())
    })();
    restore_parallelism(before);
    result.map(|_| table)
}
