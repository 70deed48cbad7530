//! Measures the dense-assembly rate (kernel entries per second) of `Kernel::matrix` for the
//! stationary kernels, against a per-entry `eval` baseline, with 1 and 2 rayon threads.
//!
//! `cargo run --release -p gp-kernels --example dense_rate [n] [d]`

use std::time::Instant;

use faer::{Mat, MatRef};
use gp_kernels::{
    FactorKind, Kernel, KernelError, KernelOperator, Matern, MaternNu, ProductKernel,
    SquaredExponential,
};
use gp_linalg::LinearOperator;
use rand::{Rng, SeedableRng};

/// Delegates everything except `fill_block`, so `matrix` falls back to one `eval` per entry.
#[derive(Debug)]
struct PerEntry<K>(K);

impl<K: Kernel> Kernel for PerEntry<K> {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }
    fn param_names(&self) -> Vec<String> {
        self.0.param_names()
    }
    fn log_params(&self) -> Vec<f64> {
        self.0.log_params()
    }
    fn set_log_params(&mut self, p: &[f64]) -> gp_kernels::Result<()> {
        self.0.set_log_params(p)
    }
    fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        self.0.eval(x, z)
    }
    fn eval_with_grad(&self, x: &[f64], z: &[f64], g: &mut [f64]) -> f64 {
        self.0.eval_with_grad(x, z, g)
    }
}

/// Best-of-`reps` entries per second of `kernel.matrix(x, x)`.
fn rate(kernel: &dyn Kernel, x: MatRef<'_, f64>, reps: usize) -> Result<f64, KernelError> {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        let k = kernel.matrix(x, x)?;
        let s = t.elapsed().as_secs_f64();
        std::hint::black_box(&k);
        best = best.min(s);
    }
    Ok((x.nrows() * x.nrows()) as f64 / best)
}

/// Best-of-`reps` entries per second of `kernel.fill_block` into a preallocated output
/// (the arithmetic alone: no allocation, no page faults), on the calling thread.
fn fill_rate(kernel: &dyn Kernel, x: MatRef<'_, f64>, reps: usize) -> f64 {
    let mut out = Mat::<f64>::zeros(x.nrows(), x.nrows());
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        kernel.fill_block(x, x, out.as_mut());
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(&out);
    }
    (x.nrows() * x.nrows()) as f64 / best
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(3000);
    let d = args.get(1).copied().unwrap_or(3);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>() * 4.0);
    let ls: Vec<f64> = (0..d).map(|i| 0.5 + 0.25 * i as f64).collect();
    let kernels: Vec<(&str, Box<dyn Kernel>)> = vec![
        ("SE", Box::new(SquaredExponential::new(ls.clone(), 1.3)?)),
        (
            "Matern-1/2",
            Box::new(Matern::new(MaternNu::Half, ls.clone(), 1.3)?),
        ),
        (
            "Matern-3/2",
            Box::new(Matern::new(MaternNu::ThreeHalves, ls.clone(), 1.3)?),
        ),
        (
            "Matern-5/2",
            Box::new(Matern::new(MaternNu::FiveHalves, ls.clone(), 1.3)?),
        ),
        (
            "Product(M52)",
            Box::new(ProductKernel::uniform(
                FactorKind::Matern(MaternNu::FiveHalves),
                ls.clone(),
                1.3,
            )?),
        ),
        (
            "SE per-entry eval",
            Box::new(PerEntry(SquaredExponential::new(ls.clone(), 1.3)?)),
        ),
        (
            "M52 per-entry eval",
            Box::new(PerEntry(Matern::new(
                MaternNu::FiveHalves,
                ls.clone(),
                1.3,
            )?)),
        ),
    ];
    println!("n = {n}, d = {d}: K(X, X) entries per second (best of 3)");
    println!(
        "{:<20} {:>14} {:>14} {:>18}",
        "kernel", "1 thread", "2 threads", "fill_block, 1 thr"
    );
    for (name, k) in &kernels {
        let mut rates = Vec::new();
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()?;
            rates.push(pool.install(|| rate(k.as_ref(), x.as_ref(), 3))?);
        }
        let fill = fill_rate(k.as_ref(), x.as_ref(), 3);
        println!(
            "{:<20} {:>14.3e} {:>14.3e} {:>18.3e}",
            name, rates[0], rates[1], fill
        );
    }
    // Matrix-free operator: kernel entries per second of one product with r vectors.
    println!("\nKernelOperator (K + σ²I) products, kernel entries per second (best of 3)");
    println!(
        "{:<20} {:>6} {:>14} {:>14}",
        "kernel", "r", "1 thread", "2 threads"
    );
    for (name, k) in kernels.iter().take(4) {
        let op = KernelOperator::new(k.as_ref(), x.as_ref(), 0.1)?;
        for r in [1, 16] {
            let v = Mat::from_fn(n, r, |i, j| ((i + j) as f64).sin());
            let mut rates = Vec::new();
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()?;
                let best = pool.install(|| {
                    let mut best = f64::INFINITY;
                    for _ in 0..3 {
                        let t = Instant::now();
                        let y = op.apply_block(v.as_ref());
                        best = best.min(t.elapsed().as_secs_f64());
                        std::hint::black_box(&y);
                    }
                    best
                });
                rates.push((n * n) as f64 / best);
            }
            println!(
                "{:<20} {:>6} {:>14.3e} {:>14.3e}",
                name, r, rates[0], rates[1]
            );
        }
    }
    Ok(())
}
