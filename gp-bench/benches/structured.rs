//! Criterion benches of gp-structured's hot paths: the Toeplitz apply (against one forward +
//! inverse real FFT of the embedding, its lower bound), the interpolation matrix `W v` and
//! `Wᵀ v`, and the sufficient-statistics pass. The paper-scale tables are the examples
//! `toeplitz_bench` and `interp_bench` of gp-structured.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use faer::Col;
use gp_bench::synthetic::uniform_inputs;
use gp_linalg::{LinearOperator, TransposeOperator};
use gp_structured::{
    InterpolationOptions, InterpolationWeights, RegularGrid, SufficientStats, SymmetricToeplitz,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn toeplitz_apply(c: &mut Criterion) {
    let mut group = c.benchmark_group("toeplitz_apply");
    group.sample_size(20);
    for m in [1usize << 12, 1 << 16] {
        let column: Vec<f64> = (0..m).map(|k| (-(k as f64 / 50.0).powi(2)).exp()).collect();
        let t = SymmetricToeplitz::new(&column).expect("valid column");
        let mut ws = t.workspace();
        let x = Col::from_fn(m, |i| (i as f64 * 0.37).sin());
        let mut out = Col::<f64>::zeros(m);
        group.throughput(Throughput::Elements(m as u64));
        group.bench_with_input(BenchmarkId::from_parameter(m), &m, |b, _| {
            b.iter(|| t.apply_with_workspace(x.as_ref(), out.as_mut(), &mut ws))
        });
    }
    group.finish();
}

fn interpolation(c: &mut Criterion) {
    let mut group = c.benchmark_group("interpolation_cubic_d3_n100k");
    group.sample_size(20);
    let n = 100_000;
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let x = uniform_inputs(n, 3, 0.0, 1.0, &mut rng);
    let y = Col::from_fn(n, |i| (x[(i, 0)] * 6.0).sin());
    let grid = RegularGrid::from_data(x.as_ref(), &[30, 30, 30], 2).expect("grid");
    let opts = InterpolationOptions::default();
    let w = InterpolationWeights::new(&grid, x.as_ref(), opts).expect("weights");
    let v = Col::from_fn(grid.num_points(), |i| (i as f64 * 0.01).cos());
    let mut out = Col::<f64>::zeros(n);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("W v", |b| b.iter(|| w.matvec(v.as_ref(), out.as_mut())));
    group.bench_function("W^T y", |b| b.iter(|| w.apply_transpose(y.as_ref())));
    group.bench_function("sufficient statistics", |b| {
        b.iter(|| SufficientStats::compute(&grid, x.as_ref(), y.as_ref(), opts).expect("stats"))
    });
    group.finish();
}

criterion_group!(benches, toeplitz_apply, interpolation);
criterion_main!(benches);
