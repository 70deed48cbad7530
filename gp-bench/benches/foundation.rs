//! Criterion micro-benchmarks of the foundation: exact-GP LML + gradient, dense kernel
//! assembly, and the matrix-free kernel operator. Sized to finish in a few minutes on
//! 2 cores; `gp-bench bench <name>` prints the same figures as tables at larger sizes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use faer::Mat;
use gp_bench::synthetic::{smooth_regression, uniform_inputs};
use gp_kernels::{Kernel, KernelOperator, SquaredExponential};
use gp_linalg::LinearOperator;
use gp_models::ExactGp;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn exact_lml_and_grad(c: &mut Criterion) {
    let mut group = c.benchmark_group("exact_gp_lml_and_grad_d8");
    group.sample_size(10);
    for n in [1000usize, 2000] {
        let (x, y) = smooth_regression(n, 8, 0.01, 1);
        let kernel = SquaredExponential::isotropic(8, 0.5, 1.0).expect("valid kernel");
        group.throughput(Throughput::Elements((n * n) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                ExactGp::fit(kernel.clone(), x.as_ref(), y.as_ref(), 0.01)
                    .expect("fit")
                    .lml_and_grad()
            })
        });
    }
    group.finish();
}

fn kernel_assembly(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel_matrix_se_d8");
    group.sample_size(10);
    let n = 2000;
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let x = uniform_inputs(n, 8, 0.0, 1.0, &mut rng);
    let kernel = SquaredExponential::isotropic(8, 0.5, 1.0).expect("valid kernel");
    group.throughput(Throughput::Elements((n * n) as u64));
    group.bench_function(BenchmarkId::from_parameter(n), |b| {
        b.iter(|| kernel.matrix(x.as_ref(), x.as_ref()).expect("matrix"))
    });
    group.finish();
}

fn kernel_operator(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel_operator_se_d3_n20000");
    group.sample_size(10);
    let n = 20_000;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x = uniform_inputs(n, 3, 0.0, 1.0, &mut rng);
    let kernel = SquaredExponential::isotropic(3, 0.3, 1.0).expect("valid kernel");
    let op = KernelOperator::new(kernel, x.as_ref(), 0.01).expect("operator");
    for r in [1usize, 16] {
        let b = Mat::from_fn(n, r, |i, j| ((i * 31 + j * 17) % 101) as f64 / 101.0);
        group.throughput(Throughput::Elements((n * n) as u64));
        group.bench_with_input(BenchmarkId::new("rhs", r), &r, |bch, _| {
            bch.iter(|| op.apply_block(b.as_ref()).expect("apply"))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    exact_lml_and_grad,
    kernel_assembly,
    kernel_operator
);
criterion_main!(benches);
