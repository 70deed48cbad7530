//! Benchmarks of the interpolation matrix `W` and the GSGP sufficient statistics.
//!
//! ```text
//! cargo run --release -p gp-structured --example interp_bench [-- --n 1000000 --stats-n 4000000]
//! ```
//!
//! Prints markdown tables:
//!
//! 1. `W v` and `Wᵀ v` at `n` points for `d = 1, 2, 3` (cubic, about `10^5` grid points),
//!    factorized (default) and CSR storage, with points in random order and sorted by cell.
//!    **Bytes counted** per product: the stored representation read once (factorized:
//!    `8n` stencil starts + `8·n·d·4` weights; CSR: `8(n+1)` row pointers + `16·nnz` indices
//!    and values), plus the input vector read once and the output vector written once
//!    (`8m + 8n`). Re-reads of the input caused by cache misses and the per-thread buffers of
//!    `Wᵀ v` are not counted, so the figure is an *effective* bandwidth; it is compared with
//!    the reference machine's ~20 GB/s.
//! 2. Sufficient statistics (`WᵀW`, `Wᵀy`, `yᵀy`) throughput in points per second for
//!    `d = 1, 2, 3`, for a coarse grid (many points per cell, the GSGP regime) and a fine grid
//!    (about ten points per cell), points in random order.

use std::time::Instant;

use faer::{Col, Mat};
use gp_structured::{
    cell_order, permute_rows, CsrInterpolation, InterpolationOptions, InterpolationWeights,
    LinearOperator, RegularGrid, SufficientStats, TransposeOperator,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PEAK_GBS: f64 = 20.0;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Median wall time of `reps` runs after one warm-up.
fn time<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[reps / 2]
}

fn points(n: usize, d: usize, seed: u64) -> Mat<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Mat::from_fn(n, d, |_, _| rng.random::<f64>())
}

fn grid_for(d: usize, per_dim: usize) -> RegularGrid {
    let corners = Mat::from_fn(2, d, |i, _| i as f64);
    RegularGrid::from_data(corners.as_ref(), &vec![per_dim; d], 2).expect("grid")
}

fn row(label: &str, n: usize, m: usize, bytes: f64, t: f64) {
    let gbs = bytes / t / 1e9;
    println!(
        "| {label} | {n} | {m} | {:.2} | {:.1} | {:.2} | {:.0}% |",
        t * 1e3,
        bytes / 1e6,
        gbs,
        100.0 * gbs / PEAK_GBS
    );
}

fn main() {
    let n = arg("--n", 1_000_000);
    let stats_n = arg("--stats-n", 4_000_000);
    println!(
        "rayon threads: {}, n = {n}, cubic interpolation\n",
        rayon::current_num_threads()
    );
    let skip_w = std::env::args().any(|a| a == "--skip-w");
    let skip_stats = std::env::args().any(|a| a == "--skip-stats");
    if !skip_w {
        bench_w(n);
    }
    if !skip_stats {
        bench_stats(stats_n);
    }
}

fn bench_w(n: usize) {
    println!("## W v and Wᵀ v\n");
    println!("| product | n | m | ms | MB counted | GB/s | % of {PEAK_GBS} GB/s |");
    println!("|---|---|---|---|---|---|---|");
    // Calibration: a parallel sum over 128M doubles (1 GiB), the attainable read bandwidth.
    {
        use rayon::prelude::*;
        let big = vec![1.0f64; 1 << 27];
        let t = time(5, || {
            let s: f64 = big
                .par_chunks(1 << 16)
                .map(|c| {
                    // Eight independent partial sums, so the loop is not latency-bound.
                    let mut acc = [0.0f64; 8];
                    for ch in c.chunks_exact(8) {
                        for (a, v) in acc.iter_mut().zip(ch) {
                            *a += v;
                        }
                    }
                    acc.iter().sum::<f64>()
                })
                .sum();
            std::hint::black_box(s);
        });
        row(
            "calibration: parallel sum of 1 GiB",
            1 << 27,
            0,
            8.0 * big.len() as f64,
            t,
        );
    }
    let opts = InterpolationOptions::default();
    for (d, per_dim) in [(1usize, 100_000usize), (2, 316), (3, 46)] {
        let grid = grid_for(d, per_dim);
        let m = grid.num_points();
        let x0 = points(n, d, d as u64);
        let perm = cell_order(&grid, x0.as_ref(), opts).expect("order");
        let xs = permute_rows(x0.as_ref(), &perm).expect("perm");
        for (order, x) in [("random", &x0), ("sorted", &xs)] {
            let w = InterpolationWeights::new(&grid, x.as_ref(), opts).expect("W");
            let csr = CsrInterpolation::from_weights(&w).expect("csr");
            let v = Col::from_fn(m, |j| (j as f64 * 1e-3).sin());
            let u = Col::from_fn(n, |i| (i as f64 * 1e-3).cos());
            let mut out_n = Col::<f64>::zeros(n);
            let mut out_m = Col::<f64>::zeros(m);
            let io = 8.0 * (n + m) as f64;
            let fb = w.storage_bytes() as f64 + io;
            let cb = csr.storage_bytes() as f64 + io;
            let t = time(7, || w.matvec(v.as_ref(), out_n.as_mut()));
            row(&format!("d={d} {order} factorized W v"), n, m, fb, t);
            let t = time(7, || {
                w.transposed().matvec(u.as_ref(), out_m.as_mut());
            });
            row(&format!("d={d} {order} factorized Wᵀ v"), n, m, fb, t);
            let t = time(7, || csr.matvec(v.as_ref(), out_n.as_mut()));
            row(&format!("d={d} {order} CSR W v"), n, m, cb, t);
            let t = time(7, || {
                csr.apply_transpose(u.as_ref()).expect("csr t");
            });
            row(&format!("d={d} {order} CSR Wᵀ v"), n, m, cb, t);
        }
    }
}

fn bench_stats(stats_n: usize) {
    let opts = InterpolationOptions::default();
    println!("\n## Sufficient statistics (WᵀW, Wᵀy, yᵀy), points in random order\n");
    println!("| d | grid | cells | n | points/cell | s | points/s |");
    println!("|---|---|---|---|---|---|---|");
    for (d, coarse, fine) in [
        (1usize, 1000usize, 400_000usize),
        (2, 100, 600),
        (3, 30, 75),
    ] {
        let x = points(stats_n, d, 100 + d as u64);
        let y = Col::from_fn(stats_n, |i| x[(i, 0)].sin());
        for per_dim in [coarse, fine] {
            let grid = grid_for(d, per_dim);
            let cells = (per_dim - 3).pow(d as u32);
            let t = time(3, || {
                SufficientStats::compute(&grid, x.as_ref(), y.as_ref(), opts).expect("stats");
            });
            println!(
                "| {d} | {per_dim}^{d} | {cells} | {stats_n} | {:.0} | {:.3} | {:.2e} |",
                stats_n as f64 / cells as f64,
                t,
                stats_n as f64 / t
            );
        }
    }
}
