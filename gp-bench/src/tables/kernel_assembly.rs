//! `gp-bench bench kernel-assembly`: dense kernel-matrix throughput in entries per second.

use gp_kernels::Kernel;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::BenchError;
use crate::synthetic::uniform_inputs;
use crate::table::{fmt_rate, fmt_seconds, Table};
use crate::timing::median_time;

/// Times `kernel.matrix(X, X)` for `n × d` uniform inputs with each named kernel and reports
/// entries per second and nanoseconds per entry (on the rayon pool: all threads).
pub fn run(
    kernels: &[(&str, Box<dyn Kernel>)],
    n: usize,
    reps: usize,
) -> Result<Table, BenchError> {
    let mut table = Table::new(["kernel", "n", "d", "time", "entries/s", "ns/entry"]);
    for (name, kernel) in kernels {
        let d = kernel.input_dim();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let x = uniform_inputs(n, d, 0.0, 1.0, &mut rng);
        let (t, k) = median_time(reps, || kernel.matrix(x.as_ref(), x.as_ref()));
        k?;
        let entries = (n * n) as f64;
        table.row([
            name.to_string(),
            n.to_string(),
            d.to_string(),
            fmt_seconds(t),
            fmt_rate(entries / t),
            format!("{:.2}", t / entries * 1e9),
        ]);
    }
    Ok(table)
}
