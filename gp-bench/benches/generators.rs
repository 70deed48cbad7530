//! Criterion micro-benchmarks of the data generators the reproductions lean on: an exact GP
//! prior draw on a tensor grid by Kronecker eigendecomposition (throughput: grid points),
//! against the dense Cholesky draw it replaces, and the CSV-free embedded wine load.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gp_bench::synthetic::gp_prior_draw;
use gp_bench::synthetic::grid::{grid_points, kronecker_prior_draw};
use gp_kernels::SquaredExponential;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn prior_draws(c: &mut Criterion) {
    let mut group = c.benchmark_group("grid_prior_draw_se_2d");
    group.sample_size(10);
    let kernel = SquaredExponential::isotropic(2, 1.0, 1.0).expect("valid kernel");
    for g in [32usize, 100, 300] {
        let axis: Vec<f64> = (0..g).map(|i| -(g as f64) / 4.0 + 0.5 * i as f64).collect();
        let axes = vec![axis.clone(), axis];
        group.throughput(Throughput::Elements((g * g) as u64));
        group.bench_with_input(BenchmarkId::new("kronecker", g * g), &g, |b, _| {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            b.iter(|| kronecker_prior_draw(&kernel, &axes, 1e-3, &mut rng).expect("draw"))
        });
        if g <= 32 {
            let x = grid_points(&axes);
            group.bench_with_input(BenchmarkId::new("dense_cholesky", g * g), &g, |b, _| {
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                b.iter(|| gp_prior_draw(&kernel, x.as_ref(), &mut rng).expect("draw"))
            });
        }
    }
    group.finish();
}

fn wine_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("embedded_wine_load");
    group.sample_size(10);
    group.throughput(Throughput::Elements(1599));
    group.bench_function("rows", |b| {
        b.iter(|| gp_bench::data::wine::wine().expect("wine"))
    });
    group.finish();
}

criterion_group!(benches, prior_draws, wine_load);
criterion_main!(benches);
