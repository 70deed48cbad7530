//! Throughput of the sufficient-statistics pass ([`SufficientStats::compute_with_path`]) in
//! points per second, on each path.
//!
//! ```text
//! cargo run --release -p gp-structured --example stats_bench -- \
//!     --sizes 100,100,80 --n 1000000 [--path auto|moments|scatter|both] [--reps 3] [--linear]
//! ```
//!
//! `n` uniform random points in `[0, 1]^d` on a grid of `sizes` fitted to `[0, 1]^d` with the
//! scheme's recommended padding; cubic unless `--linear`. Prints, per path, the minimum and
//! median wall time of `reps` passes, points per second (of the minimum), the smallest CPU
//! time of a pass (user + system over all threads; steadier than wall time on a shared
//! machine), the expected points per cell, the path `Auto` takes, and the peak resident set
//! size of the process so far (`VmHWM`; run one path per process to attribute it).
//! `--path both` (the default) runs both paths and also reports the largest relative
//! difference between their `S` and `t`.

use std::time::Instant;

use faer::{Col, Mat};
use gp_structured::sufficient_stats::StatsPath;
use gp_structured::{
    InterpolationOptions, InterpolationScheme, OutOfGrid, RegularGrid, SufficientStats,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn peak_rss_gib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(f64::NAN, |kb| kb / (1u64 << 20) as f64)
}

/// CPU time (user + system, all threads) of the process so far, in seconds: less sensitive
/// than wall time to other load on a shared machine.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|t| {
            // Fields after the command name (which is in parentheses): utime is the 14th
            // field of the line, stime the 15th, in clock ticks (100 per second on Linux).
            let rest = &t[t.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0)
        })
        .unwrap_or(f64::NAN)
}

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (u, v)| m.max((u - v).abs()));
    err / scale.max(f64::MIN_POSITIVE)
}

fn main() {
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or_else(|| "30,30,30".into())
        .split(',')
        .map(|s| s.parse().expect("--sizes: comma-separated integers"))
        .collect();
    let n: usize = arg("--n").map_or(1_000_000, |v| v.parse().expect("--n"));
    let reps: usize = arg("--reps").map_or(3, |v| v.parse().expect("--reps"));
    let which = arg("--path").unwrap_or_else(|| "both".into());
    let linear = std::env::args().any(|a| a == "--linear");
    let scheme = if linear {
        InterpolationScheme::Linear
    } else {
        InterpolationScheme::Cubic
    };
    let opts = InterpolationOptions {
        scheme,
        out_of_grid: OutOfGrid::Error,
    };
    let d = sizes.len();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let x = Mat::from_fn(n, d, |_, _| rng.random::<f64>());
    let y = Col::from_fn(n, |i| (3.0 * x[(i, 0)]).sin() + rng.random::<f64>() - 0.5);
    let corners = Mat::from_fn(2, d, |i, _| i as f64);
    let grid = RegularGrid::from_data(corners.as_ref(), &sizes, scheme.recommended_padding())
        .expect("grid");
    let plan = SufficientStats::plan(&sizes, scheme, Some(n));
    println!(
        "grid {sizes:?} ({} nodes), n = {n}, {} points per cell, {} rayon threads; Auto → {} \
         (pass ≈ {:.2} GiB)",
        grid.num_points(),
        plan.points_per_cell
            .map_or("?".into(), |r| format!("{r:.2}")),
        rayon::current_num_threads(),
        plan.path.name(),
        plan.peak_bytes() as f64 / (1u64 << 30) as f64
    );
    let paths: Vec<StatsPath> = match which.as_str() {
        "auto" => vec![StatsPath::Auto],
        "moments" => vec![StatsPath::CellMoments],
        "scatter" => vec![StatsPath::PointScatter],
        _ => vec![StatsPath::CellMoments, StatsPath::PointScatter],
    };
    let mut results = Vec::new();
    for path in paths {
        let mut times = Vec::new();
        let mut cpu = Vec::new();
        let mut last = None;
        for _ in 0..reps.max(1) {
            drop(last.take());
            let (t0, c0) = (Instant::now(), cpu_seconds());
            let s = SufficientStats::compute_with_path(&grid, x.as_ref(), y.as_ref(), opts, path)
                .expect("stats");
            times.push(t0.elapsed().as_secs_f64());
            cpu.push(cpu_seconds() - c0);
            last = Some(s);
        }
        times.sort_by(f64::total_cmp);
        cpu.sort_by(f64::total_cmp);
        let (min, med) = (times[0], times[times.len() / 2]);
        println!(
            "{:>14}: wall min {min:.3} s, median {med:.3} s, {:.3e} points/s; CPU min {:.2} s \
             ({:.3e} points per CPU-second); peak RSS so far {:.2} GiB",
            path.name(),
            n as f64 / min,
            cpu[0],
            n as f64 / cpu[0],
            peak_rss_gib()
        );
        results.extend(last);
    }
    if let [a, b] = &results[..] {
        let ds = max_rel(a.gram().values(), b.gram().values());
        let ta: Vec<f64> = a.wty().iter().copied().collect();
        let tb: Vec<f64> = b.wty().iter().copied().collect();
        println!(
            "max relative difference between the paths: S {ds:.2e}, t {:.2e}",
            max_rel(&ta, &tb)
        );
    }
}
