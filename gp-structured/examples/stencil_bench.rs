//! Microbenchmark of the stencil product `S x` with `S = WᵀW` ([`StencilGram`]).
//!
//! ```text
//! cargo run --release -p gp-structured --example stencil_bench [-- --reps 21] [--case i] [--min 1]
//! ```
//!
//! Builds `S` from [`SufficientStats`] of uniform random points (cubic interpolation) for:
//!
//! * `d = 1`, `m = 8000` (sound-like, `n = 59 306`);
//! * `d = 3`, `40×40×32 = 51 200` nodes, `n = 10^6` (the radar-like setting of Table 1);
//! * the same grid with data only in the lower half of the first axis ("half-empty",
//!   precipitation-like: about half of the stencil rows are all zero);
//! * `d = 3`, `10×10×10` (small grid, most nodes near the boundary).
//!
//! and times `matvec` (median of `reps` runs after a warm-up) on the global rayon pool and on a
//! one-thread pool. **Bytes counted** per product: the stored values (`8·m·((2r+1)^d + 1)/2`,
//! the upper half of the stencil) read once,
//! plus `x` read once and `S x` written once (`16 m`); "ns/value" divides the time by the number
//! of *stored* values (including zeros), so both figures are effective rates against the stored
//! representation. The reference machine streams about 20 GB/s.

use std::time::Instant;

use faer::{Col, Mat};
use gp_structured::{
    InterpolationOptions, LinearOperator, RegularGrid, StencilGram, SufficientStats,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Median wall time of `reps` runs after one warm-up (the minimum instead with `--min 1`,
/// steadier on a shared machine).
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
    if arg("--min", 0) == 1 {
        t[0]
    } else {
        t[reps / 2]
    }
}

/// `S` for `n` uniform points in `[0, 1]^d`, with the first coordinate scaled by `frac0`
/// (data covering only part of the grid when `frac0 < 1`); the grid spans `[0, 1]^d` padded.
fn build(sizes: &[usize], n: usize, frac0: f64, seed: u64) -> SufficientStats {
    let d = sizes.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, l| {
        let u: f64 = rng.random();
        if l == 0 {
            u * frac0
        } else {
            u
        }
    });
    let y = Col::from_fn(n, |i| (3.0 * x[(i, 0)]).sin());
    let opts = InterpolationOptions::default();
    let corners = Mat::from_fn(2, d, |i, _| i as f64);
    let grid = RegularGrid::from_data(corners.as_ref(), sizes, opts.scheme.recommended_padding())
        .expect("grid");
    SufficientStats::compute(&grid, x.as_ref(), y.as_ref(), opts).expect("stats")
}

/// Times `f` on the global pool and on a one-thread pool.
fn par_seq<F: FnMut() + Send>(reps: usize, mut f: F) -> (f64, f64) {
    let par = time(reps, &mut f);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let seq = pool.install(|| time(reps, &mut f));
    (par, seq)
}

fn bench(gram: &StencilGram, reps: usize) -> (f64, f64) {
    let m = gram.order();
    let x = Col::from_fn(m, |j| ((j as f64) * 0.37).sin());
    let mut out = Col::<f64>::zeros(m);
    let t = par_seq(reps, || gram.matvec(x.as_ref(), out.as_mut()));
    std::hint::black_box(&out);
    t
}

/// Read-bandwidth baseline: a sum over `values` with 8 independent accumulators, split into
/// the same kind of parallel chunks as the product.
fn stream(values: &[f64], reps: usize) -> (f64, f64) {
    let mut total = 0.0;
    let t = par_seq(reps, || {
        total = values
            .par_chunks(1 << 16)
            .map(|c| {
                let mut acc = [0.0f64; 8];
                for ch in c.chunks_exact(8) {
                    for (a, v) in acc.iter_mut().zip(ch) {
                        *a += v;
                    }
                }
                acc.iter().sum::<f64>()
            })
            .sum();
    });
    std::hint::black_box(total);
    t
}

fn main() {
    let reps = arg("--reps", 21);
    let threads = rayon::current_num_threads();
    let cases: [(&str, Vec<usize>, usize, f64); 5] = [
        ("d=1 m=8000", vec![8000], 59_306, 1.0),
        ("d=3 40x40x32", vec![40, 40, 32], 1_000_000, 1.0),
        ("d=3 40x40x32 half-empty", vec![40, 40, 32], 1_000_000, 0.5),
        ("d=3 10x10x10", vec![10, 10, 10], 100_000, 1.0),
        ("d=3 80x80x8 (radar-like)", vec![80, 80, 8], 1_000_000, 1.0),
    ];
    println!("rayon threads: {threads}; median of {reps} products\n");
    println!(
        "| case | m | stored values | zero rows | threads | time (ms) | ns/value | GB/s | GB/s of non-zero rows |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    // `--case i` runs only case `i` (for profiling), `--case 99` (default) all of them.
    let only = arg("--case", 99);
    for (c, (name, sizes, n, frac0)) in cases.into_iter().enumerate() {
        if only != 99 && only != c {
            continue;
        }
        let stats = build(&sizes, n, frac0, 7);
        let gram = stats.gram();
        let m = gram.order();
        let k = gram.row_len();
        let values = m * k;
        let zero_rows = gram
            .values()
            .chunks_exact(k)
            .filter(|row| row.iter().all(|v| *v == 0.0))
            .count();
        let bytes = (8 * values + 16 * m) as f64;
        let live_bytes = (8 * (m - zero_rows) * k + 16 * m) as f64;
        let (par, seq) = bench(gram, reps);
        for (t, th) in [(par, threads), (seq, 1)] {
            println!(
                "| {name} | {m} | {values} | {zero_rows} | {th} | {:.3} | {:.3} | {:.1} | {:.1} |",
                t * 1e3,
                t * 1e9 / values as f64,
                bytes / t / 1e9,
                live_bytes / t / 1e9
            );
        }
        if n == 1_000_000 && frac0 == 1.0 {
            let (par, seq) = stream(gram.values(), reps);
            for (t, th) in [(par, threads), (seq, 1)] {
                println!(
                    "| (baseline: sum of the stored values) | {m} | {values} | – | {th} | {:.3} | {:.3} | {:.1} | – |",
                    t * 1e3,
                    t * 1e9 / values as f64,
                    (8 * values) as f64 / t / 1e9
                );
            }
        }
    }
}
