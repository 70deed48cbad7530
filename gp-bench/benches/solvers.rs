//! Criterion benches of gp-solvers: batched CG on the matrix-free kernel operator (the
//! iterative exact GP's inner loop) with and without a rank-15 pivoted-Cholesky
//! preconditioner.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use faer::Mat;
use gp_bench::synthetic::uniform_inputs;
use gp_kernels::{Kernel, KernelOperator, SquaredExponential};
use gp_solvers::{cg, pivoted_cholesky_preconditioner, CgOptions, PivotedCholeskyOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn batched_cg(c: &mut Criterion) {
    let mut group = c.benchmark_group("cg_se_d3_n2000_11rhs_20iters");
    group.sample_size(10);
    let n = 2000;
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let x = uniform_inputs(n, 3, 0.0, 1.0, &mut rng);
    let kernel = SquaredExponential::isotropic(3, 0.3, 1.0).expect("kernel");
    let noise = 0.01;
    let op = KernelOperator::new(&kernel, x.as_ref(), noise).expect("operator");
    let k = kernel.matrix(x.as_ref(), x.as_ref()).expect("matrix");
    let rank15 = PivotedCholeskyOptions {
        max_rank: 15,
        ..PivotedCholeskyOptions::default()
    };
    let precond = pivoted_cholesky_preconditioner(&k, noise, &rank15).expect("preconditioner");
    let rhs = Mat::from_fn(n, 11, |i, j| ((i * 7 + j * 13) % 29) as f64 / 29.0 - 0.5);
    let options = CgOptions {
        tolerance: 1e-10,
        max_iterations: 20,
        ..CgOptions::default()
    };
    group.throughput(Throughput::Elements((20 * n * n) as u64));
    for (name, p) in [
        ("plain", None),
        ("rank-15", Some(&precond as &dyn gp_solvers::Preconditioner)),
    ] {
        group.bench_with_input(BenchmarkId::from_parameter(name), &name, |b, _| {
            b.iter(|| cg(&op, rhs.as_ref(), p, &options).expect("cg"))
        });
    }
    group.finish();
}

criterion_group!(benches, batched_cg);
criterion_main!(benches);
