//! Table 1: GSGP/SKI ratios of per-iteration time and memory for posterior-mean inference on
//! SOUND (real when the data directory has it) and on synthetic 3-D stand-ins of the radar
//! and precipitation data (spec `gsgp.md` §4.3), with the paper's ratios beside ours.

use faer::{Col, Mat};
use gp_models::grid::GridSettings;
use gp_models::SkiOptions;
use gp_models::{EstimatorSettings, KrylovSettings};
use gp_structured::sufficient_stats::MOMENT_MIN_POINTS_PER_CELL;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde_json::json;

use super::common::{
    fmt_bytes, fmt_count, peak_rss_bytes, reset_peak_rss, ski_mean, Hypers, MeanRun, PRECIPITATION,
    RADAR, SOUND,
};
use super::gsgp_side::{gsgp_mean, stats_plan};
use super::sound::{load_sound, sound_bounds};
use crate::error::BenchError;
use crate::experiment::{Check, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize};
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Table1;

/// Which data a row uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// SOUND (real or its stand-in), every `stride`-th training point.
    Sound {
        /// Keep every `stride`-th training point (1 = all).
        stride: usize,
    },
    /// Radar-like: `n` points uniform in the reference grid's box (lat, lon, alt), inside a
    /// margin of two cells.
    Radar {
        /// Points.
        n: usize,
    },
    /// Precipitation-like: `stations` uniform (lon, lat) sites, each observed on 365
    /// consecutive days.
    Precipitation {
        /// Sites.
        stations: usize,
    },
}

/// One row of Table 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Data set name as the paper prints it.
    pub dataset: &'static str,
    /// The paper's `n`.
    pub paper_n: &'static str,
    /// The data.
    pub source: Source,
    /// Grid sizes per dimension.
    pub sizes: Vec<usize>,
    /// Grid bounds per dimension.
    pub bounds: Vec<(f64, f64)>,
    /// The paper's `m` as printed.
    pub paper_m: &'static str,
    /// The paper's time ratio.
    pub paper_time: f64,
    /// The paper's memory ratio.
    pub paper_memory: f64,
    /// Relative tolerance of the mean solve (the reference code's, spec §6.4).
    pub tolerance: f64,
}

const RADAR_BOX: [(f64, f64); 3] = [(36.0, 48.0), (-82.0, -64.0), (500.0, 3000.0)];
const PRECIP_BOX: [(f64, f64); 3] = [
    (-123.30945, -68.45191),
    (24.30945, 49.48939),
    (25312.32, 26191.32),
];

fn sound_row(m: usize, paper_m: &'static str, stride: usize, time: f64, mem: f64) -> Row {
    Row {
        dataset: "Sound",
        paper_n: "59.3K",
        source: Source::Sound { stride },
        sizes: vec![m],
        bounds: sound_bounds(m),
        paper_m,
        paper_time: time,
        paper_memory: mem,
        tolerance: 1e-5,
    }
}

fn radar_row(n: usize, sizes: [usize; 3], paper_m: &'static str, time: f64, mem: f64) -> Row {
    Row {
        dataset: "Radar",
        paper_n: "10.5M",
        source: Source::Radar { n },
        sizes: sizes.to_vec(),
        bounds: RADAR_BOX.to_vec(),
        paper_m,
        paper_time: time,
        paper_memory: mem,
        tolerance: 1e-2,
    }
}

fn precip_row(
    stations: usize,
    sizes: [usize; 3],
    paper_m: &'static str,
    time: f64,
    mem: f64,
) -> Row {
    Row {
        dataset: "Precipitation",
        paper_n: "528K",
        source: Source::Precipitation { stations },
        sizes: sizes.to_vec(),
        bounds: PRECIP_BOX.to_vec(),
        paper_m,
        paper_time: time,
        paper_memory: mem,
        tolerance: 0.1,
    }
}

/// The rows run at `size`.
pub fn rows(size: RunSize) -> Vec<Row> {
    match size {
        RunSize::Smoke => vec![sound_row(1000, "8K", 10, 0.433, 0.247)],
        RunSize::Quick => vec![
            sound_row(8000, "8K", 1, 0.433, 0.247),
            sound_row(60_004, "60K", 1, 0.941, 0.505),
            radar_row(1_000_000, [80, 80, 8], "51.2K", 0.014, 0.007),
            precip_row(1447, [40, 40, 80], "128K", 0.326, 0.366),
        ],
        RunSize::Full => vec![
            sound_row(8000, "8K", 1, 0.433, 0.247),
            sound_row(60_004, "60K", 1, 0.941, 0.505),
            radar_row(10_500_000, [80, 80, 8], "51.2K", 0.014, 0.007),
            radar_row(10_500_000, [400, 400, 40], "6.4M", 0.584, 0.425),
            precip_row(1447, [40, 40, 80], "128K", 0.326, 0.366),
            precip_row(1447, [65, 65, 125], "528K", 0.491, 0.628),
            precip_row(1447, [80, 80, 200], "1.2M", 0.806, 2.941),
        ],
    }
}

/// Environment variable that restricts Table 1 to some rows: comma-separated, case-insensitive
/// parts of the row labels ([`row_label`], e.g. `radar 6.4m` or `sound,precipitation 528k`).
/// Unset or empty: every row of the size.
pub const ROWS_ENV: &str = "GP_BENCH_TABLE1_ROWS";

/// A row's label: data set and the paper's `m`, e.g. `Radar 6.4M`.
pub fn row_label(row: &Row) -> String {
    format!("{} {}", row.dataset, row.paper_m)
}

/// The rows whose label contains one of the comma-separated parts of `filter`
/// (case-insensitive); all rows when `filter` is empty.
pub fn filter_rows(rows: Vec<Row>, filter: &str) -> Vec<Row> {
    let parts: Vec<String> = filter
        .split(',')
        .map(|p| p.trim().to_lowercase())
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        return rows;
    }
    rows.into_iter()
        .filter(|r| {
            let label = row_label(r).to_lowercase();
            parts.iter().any(|p| label.contains(p.as_str()))
        })
        .collect()
}

/// The interior of `bounds` with a margin of two grid cells, so that every point has its full
/// cubic stencil on the grid `sizes` over `bounds`.
fn interior(bounds: &[(f64, f64)], sizes: &[usize]) -> Vec<(f64, f64)> {
    bounds
        .iter()
        .zip(sizes)
        .map(|(&(lo, hi), &m)| {
            let h = (hi - lo) / (m.max(2) - 1) as f64;
            // A hair more than two cells, so that rounding never leaves a point one node short.
            (lo + 2.01 * h, hi - 2.01 * h)
        })
        .collect()
}

/// Radar-like data: points uniform in the box, a smooth target of the size of the reference's
/// `η^{1/7}` (about 0–10) plus unit noise.
pub fn radar_like(n: usize, inner: &[(f64, f64)], seed: u64) -> (Mat<f64>, Col<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 3, |_, l| {
        inner[l].0 + (inner[l].1 - inner[l].0) * rng.random::<f64>()
    });
    let y = Col::from_fn(n, |i| {
        let (a, b, c) = (x[(i, 0)], x[(i, 1)], x[(i, 2)]);
        5.0 + 3.0 * (a * 1.3).sin() * (b * 0.9).cos() * (-c / 3000.0).exp()
            + rng.sample::<f64, _>(StandardNormal)
    });
    (x, y)
}

/// Precipitation-like data: `stations` sites uniform in (lon, lat), each observed on the 365
/// days 25 568 … 25 932 (the inferred range of the real data, spec §4.2), a smooth mean-zero
/// target plus noise of standard deviation 4.
pub fn precipitation_like(
    stations: usize,
    inner: &[(f64, f64)],
    seed: u64,
) -> (Mat<f64>, Col<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let sites: Vec<(f64, f64)> = (0..stations)
        .map(|_| {
            (
                inner[0].0 + (inner[0].1 - inner[0].0) * rng.random::<f64>(),
                inner[1].0 + (inner[1].1 - inner[1].0) * rng.random::<f64>(),
            )
        })
        .collect();
    let days = 365;
    let first = 25_568.0_f64.max(inner[2].0.ceil());
    let n = stations * days;
    let x = Mat::from_fn(n, 3, |i, l| {
        let (s, t) = (i / days, i % days);
        match l {
            0 => sites[s].0,
            1 => sites[s].1,
            _ => first + t as f64,
        }
    });
    let y = Col::from_fn(n, |i| {
        let (lon, lat, day) = (x[(i, 0)], x[(i, 1)], x[(i, 2)]);
        4.0 * (lon / 8.0).sin() * (lat / 5.0).cos() * (day / 20.0).sin()
            + 4.0 * rng.sample::<f64, _>(StandardNormal)
    });
    (x, y)
}

/// The data of a row and a description of where they came from.
fn row_data(
    row: &Row,
    ctx: &RunContext<'_>,
) -> Result<(Mat<f64>, Col<f64>, String, bool), BenchError> {
    let inner = interior(&row.bounds, &row.sizes);
    Ok(match row.source {
        Source::Sound { stride } => {
            let s = load_sound(ctx.data_dir.path.as_deref(), ctx.seed)?;
            let keep: Vec<usize> = (0..s.x_train.nrows()).step_by(stride.max(1)).collect();
            let x = Mat::from_fn(keep.len(), 1, |i, _| s.x_train[(keep[i], 0)]);
            let y = Col::from_fn(keep.len(), |i| s.y_train[keep[i]]);
            let mut origin = s.origin.describe();
            if stride > 1 {
                origin.push_str(&format!(", every {stride}th training point"));
            }
            let real = s.origin.is_real();
            (x, y, origin, real)
        }
        Source::Radar { n } => {
            let (x, y) = radar_like(n, &inner, ctx.seed ^ 0x7ada);
            (
                x,
                y,
                format!(
                    "SYNTHETIC radar-like: {n} points uniform in lat × lon × alt of the reference \
                     grid box"
                ),
                false,
            )
        }
        Source::Precipitation { stations } => {
            let (x, y) = precipitation_like(stations, &inner, ctx.seed ^ 0x9ec1);
            (
                x,
                y,
                format!(
                    "SYNTHETIC precipitation-like: {stations} uniform sites × 365 days \
                     (n = {})",
                    stations * 365
                ),
                false,
            )
        }
    })
}

fn hypers(source: Source) -> &'static Hypers {
    match source {
        Source::Sound { .. } => &SOUND,
        Source::Radar { .. } => &RADAR,
        Source::Precipitation { .. } => &PRECIPITATION,
    }
}

/// The three memory columns of the ratio table: the entry-count ratio (the one compared
/// with the paper's), the paper's, and the byte ratio (ours only).
pub const MEMORY_COLUMNS: [&str; 3] = [
    "memory ratio, ours (entries; compared with the paper)",
    "memory ratio, paper (entries)",
    "memory ratio, ours (bytes held; not in the paper)",
];

/// The report's note on which memory ratio is compared with the paper's and why.
pub const MEMORY_NOTE: &str = "Which memory ratio is compared: the paper's Table 1 counts \
     stored entries (SKI nnz(W) + m + n, GSGP nnz(S) + 2m), so the entries ratio is the one set \
     beside the paper's. The bytes ratio is what this implementation holds and can differ a lot \
     (on the precipitation-like row an entries ratio below 1 goes with a bytes ratio above 1): \
     SKI keeps W factorized (4^d weights and indices per point), while GSGP stores the upper half \
     of the 7^d-offset stencil of S for every grid node, explicit zeros included. Both are shown; \
     only the entries ratio is judged against the paper.";

/// The outcome of one row.
struct Outcome {
    row: Row,
    n: usize,
    origin: String,
    ski: Result<MeanRun, String>,
    gsgp: Result<MeanRun, String>,
    /// The path of GSGP's statistics pass.
    stats_path: &'static str,
    /// Peak resident set size of the process during the row (data, SKI, GSGP), when the
    /// kernel's counter could be reset.
    peak_rss: Option<u64>,
}

impl Experiment for Table1 {
    fn name(&self) -> &'static str {
        "table1-ratios"
    }

    fn title(&self) -> &'static str {
        "Table 1: GSGP/SKI ratios of per-iteration time and memory (mean inference)"
    }

    fn paper_reference(&self) -> &'static str {
        "GSGP Table 1 (spec gsgp.md §4.3), checks T13/T14; memory = SKI nnz(W) + m + n, GSGP \
         nnz(WᵀW) + 2m"
    }

    fn describe_size(&self, size: RunSize) -> String {
        rows(size)
            .iter()
            .map(|r| {
                let n = match r.source {
                    Source::Sound { stride } if stride > 1 => format!("59.3K/{stride}"),
                    Source::Sound { .. } => "59.3K".into(),
                    Source::Radar { n } => fmt_count(n),
                    Source::Precipitation { stations } => fmt_count(stations * 365),
                };
                format!(
                    "{} n = {n}, m = {}",
                    r.dataset,
                    fmt_count(r.sizes.iter().product())
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            RunSize::Quick => 25.0,
            // Measured: all seven rows in 54 s (`bench gsgp-table1`), most of it the two
            // radar-like rows at n = 10.5M (the 6.4M row 9.4 GiB at its peak).
            RunSize::Full => 90.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let filter = std::env::var(ROWS_ENV).unwrap_or_default();
        let mut out = Table1::run_rows(filter_rows(rows(ctx.size), &filter), ctx)?;
        if !filter.trim().is_empty() {
            out.notes.push(format!(
                "Only the rows matching {ROWS_ENV}={filter:?} were run."
            ));
        }
        Ok(out)
    }
}

/// `gp-bench bench gsgp-table1 --rows FILTER`: the `--full` rows of Table 1 whose label
/// matches `filter` (see [`filter_rows`]; empty = all), alone. The way to re-measure one row, e.g. the radar
/// 51.2K row's time ratio (the target) or the 6.4M row (~18 GiB peak, about a
/// minute).
///
/// Errors: a filter that matches no row; otherwise as [`Table1::run_rows`].
pub fn run_full_rows(
    filter: &str,
    data_dir: &crate::data::DataDir,
) -> Result<ExperimentOutput, BenchError> {
    let selected = filter_rows(rows(RunSize::Full), filter);
    if selected.is_empty() {
        let labels: Vec<String> = rows(RunSize::Full).iter().map(row_label).collect();
        return Err(BenchError::InvalidArgument {
            name: "rows",
            reason: format!("{filter:?} matches none of the rows {labels:?}"),
        });
    }
    let progress = indicatif::ProgressBar::hidden();
    let ctx = RunContext {
        size: RunSize::Full,
        seed: 0,
        data_dir,
        progress: &progress,
        folds: None,
        sets: None,
        fold_cache: None,
        jobs: 1,
        large: false,
        seeds: 1,
    };
    Table1::run_rows(selected, &ctx)
}

impl Table1 {
    /// Runs the given rows of Table 1 (SKI, then GSGP, on each row's data) and builds the tables.
    ///
    /// Errors: data that cannot be loaded; a method that fails is reported in the table instead.
    pub fn run_rows(rows: Vec<Row>, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        ctx.progress.set_length(rows.len() as u64);
        let mut outcomes = Vec::new();
        let mut notes = vec![
            "Time ratio = GSGP per-iteration time / SKI per-iteration time of one mean solve \
             (solve wall time / iterations); memory ratio = (nnz(S) + 2m) / (nnz(W) + m + n), the \
             paper's entry counts (spec §4.3), with nnz(W) = 4^d per point (explicit zeros \
             included, as the reference's CSR W) and nnz(S) without exact zeros. The byte ratio \
             compares what this implementation holds: SKI's factorized W plus 4 n- and 2 \
             m-vectors, GSGP's stencil of S (the upper half of the 7^d offsets, zeros included) \
             plus 7 m-vectors."
                .to_string(),
            MEMORY_NOTE.to_string(),
            "Solves: relative tolerance 1e-5 (SOUND), 1e-2 (radar), 0.1 (precipitation), the \
             reference's effective settings (spec §6.4); SKI from x0 = 0, GSGP its default \
             factorized CG; both use every core. Hyperparameters from spec Table 2 (precipitation: \
             Table 2, not hypers.yaml)."
                .to_string(),
            "Radar and precipitation are SYNTHETIC stand-ins on the reference's grids (radar idx 2 \
             and 9: 80×80×8 and 400×400×40 over lat 36–48, lon −82…−64, alt 500–3000 m; \
             precipitation 40×40×80, 65×65×125, 80×80×200 over the reference's hard-coded box): \
             radar-like points are uniform in the box (the real scans are concentrated around 13 \
             stations, so the real S is sparser for fine grids), precipitation-like data are 1447 \
             uniform sites × 365 days (the real data are ~1446 stations × 365 days). Their \
             memory ratios follow the coverage, so they compare with the paper only roughly."
                .to_string(),
            format!(
                "GSGP's statistics pass takes the point scatter (one shared stencil, no per-thread \
                 moment records) when the data have fewer than {MOMENT_MIN_POINTS_PER_CELL} \
                 points per grid cell, as on the finer radar and precipitation grids; the radar \
                 6.4M row holds the 8.2 GiB stencil of S (its upper half) and peaks at about \
                 9.4 GiB (it is \
                 skipped, saying so, when less memory is available). {ROWS_ENV} (e.g. \
                 \"radar 6.4m\") runs only the matching rows."
            ),
            "SOUND grids: m = 8000 and m = 60 004 over [1 − 2h, 60 000 + 2h] (h = 59 999/(m − 5)); \
             at m = 60 004, h = 1 and every point is on a node, as in the reference's 60K grid."
                .to_string(),
        ];
        for row in rows {
            let m: usize = row.sizes.iter().product();
            ctx.progress
                .set_message(format!("{} m = {}", row.dataset, fmt_count(m)));
            let rss_reset = reset_peak_rss();
            let (x, y, origin, _real) = row_data(&row, ctx)?;
            let h = hypers(row.source);
            let opts = SkiOptions {
                grid: GridSettings {
                    sizes: row.sizes.clone(),
                    bounds: Some(row.bounds.clone()),
                    ..GridSettings::default()
                },
                krylov: KrylovSettings {
                    prediction_tolerance: row.tolerance,
                    variance_tolerance: row.tolerance,
                    max_iterations: 1000,
                    ..KrylovSettings::default()
                },
                estimator: EstimatorSettings {
                    probes: 1,
                    ..EstimatorSettings::default()
                },
                // Plain CG, the SKI baseline of the GSGP paper.
                preconditioner_rank: 0,
            };
            let ski = ski_mean(h, x.as_ref(), y.as_ref(), &opts)
                .map(|r| r.0)
                .map_err(|e| e.to_string());
            let gsgp = gsgp_mean(h, x.as_ref(), y.as_ref(), &opts)
                .map(|r| r.0)
                .map_err(|e| e.to_string());
            let plan = stats_plan(&row.sizes, x.nrows());
            outcomes.push(Outcome {
                n: x.nrows(),
                row,
                origin,
                ski,
                gsgp,
                stats_path: plan.path.name(),
                peak_rss: if rss_reset { peak_rss_bytes() } else { None },
            });
            ctx.progress.inc(1);
        }

        let mut table = Table::new([
            "dataset",
            "n",
            "d",
            "m",
            "time ratio, ours",
            "time ratio, paper",
            MEMORY_COLUMNS[0],
            MEMORY_COLUMNS[1],
            MEMORY_COLUMNS[2],
            "SKI / iter (iters)",
            "GSGP / iter (iters)",
            "data",
        ]);
        let mut targets = Table::new(["check", "ours", "target", "met?"]);
        let mut checks = Vec::new();
        let mut raw = Vec::new();
        for o in &outcomes {
            let m: usize = o.row.sizes.iter().product();
            let d = o.row.sizes.len();
            let fmt_run = |r: &Result<MeanRun, String>| match r {
                Ok(r) => format!("{} ({})", fmt_seconds(r.per_iteration()), r.iterations),
                Err(_) => "failed".into(),
            };
            let (time_ratio, mem_ratio, byte_ratio) = match (&o.ski, &o.gsgp) {
                (Ok(s), Ok(g)) => (
                    Some(g.per_iteration() / s.per_iteration()),
                    Some(g.memory.entries as f64 / s.memory.entries as f64),
                    Some(g.memory.bytes as f64 / s.memory.bytes as f64),
                ),
                _ => (None, None, None),
            };
            let f3 = |v: Option<f64>| v.map_or_else(|| "–".into(), |v| format!("{v:.3}"));
            table.row([
                o.row.dataset.to_string(),
                format!("{} (paper {})", fmt_count(o.n), o.row.paper_n),
                d.to_string(),
                format!("{} (paper {})", fmt_count(m), o.row.paper_m),
                f3(time_ratio),
                format!("{:.3}", o.row.paper_time),
                f3(mem_ratio),
                format!("{:.3}", o.row.paper_memory),
                f3(byte_ratio),
                fmt_run(&o.ski),
                fmt_run(&o.gsgp),
                o.origin.clone(),
            ]);
            for (label, r) in [("SKI", &o.ski), ("GSGP", &o.gsgp)] {
                if let Err(e) = r {
                    notes.push(format!(
                        "{} m = {}: {label} did not run: {e}",
                        o.row.dataset,
                        fmt_count(m)
                    ));
                }
            }
            if o.row.dataset == "Radar" && o.row.paper_m == "51.2K" {
                if let Some(t) = time_ratio {
                    if o.n >= 10_500_000 {
                        checks.push(Check::new(
                            format!(
                                "time ratio ≤ 0.014, radar-like n = {}, m = 51.2K",
                                fmt_count(o.n)
                            ),
                            t <= 0.014,
                        ));
                    }
                    targets.row([
                        format!("time ratio, radar-like n = {}, m = 51.2K", fmt_count(o.n)),
                        format!("{t:.4}"),
                        "≤ 0.014 (the paper's; issue target at n = 10.5M)".into(),
                        // SKI's iteration is linear in n, GSGP's is not: at a smaller n the
                        // ratio says nothing about the target.
                        if o.n < 10_500_000 {
                            "not at this n: run --full or `bench gsgp-table1 --rows \"radar 51.2k\"`"
                        } else if t <= 0.014 {
                            "yes"
                        } else {
                            "no"
                        }
                        .into(),
                    ]);
                }
            }
            if let (Ok(s), Ok(g)) = (&o.ski, &o.gsgp) {
                targets.row([
                    format!("bytes held, {} m = {}", o.row.dataset, fmt_count(m)),
                    format!(
                        "SKI {} vs GSGP {}",
                        fmt_bytes(s.memory.bytes),
                        fmt_bytes(g.memory.bytes)
                    ),
                    String::new(),
                    String::new(),
                ]);
            }
            if let Some(peak) = o.peak_rss {
                targets.row([
                    format!(
                        "peak RSS of the row, {} m = {} (GSGP statistics: {})",
                        o.row.dataset,
                        fmt_count(m),
                        o.stats_path
                    ),
                    fmt_bytes(peak),
                    String::new(),
                    String::new(),
                ]);
            }
            raw.push(json!({
                "dataset": o.row.dataset,
                "n": o.n,
                "d": d,
                "grid_sizes": o.row.sizes,
                "m": m,
                "bounds": o.row.bounds,
                "tolerance": o.row.tolerance,
                "data": o.origin,
                "paper": {"n": o.row.paper_n, "m": o.row.paper_m,
                          "time_ratio": o.row.paper_time, "memory_ratio": o.row.paper_memory},
                "time_ratio": time_ratio,
                "memory_ratio": mem_ratio,
                "byte_ratio": byte_ratio,
                "gsgp_stats_path": o.stats_path,
                "peak_rss_bytes": o.peak_rss,
                "ski": match &o.ski { Ok(r) => r.to_json(), Err(e) => json!({"error": e}) },
                "gsgp": match &o.gsgp { Ok(r) => r.to_json(), Err(e) => json!({"error": e}) },
            }));
        }
        if ctx.size != RunSize::Full {
            notes.push(format!(
                "--{} sizes: {}; --full runs the paper's seven rows (radar-like at n = 10.5M, \
                 precipitation-like at n = 528K).",
                ctx.size,
                if ctx.size == RunSize::Quick {
                    "the radar-like row uses n = 1M instead of 10.5M (SKI's per-iteration cost \
                     grows with n, GSGP's does not, so the ratio at 10.5M is smaller still)"
                } else {
                    "one SOUND row on every 10th training point with m = 1000 (proves the harness \
                     only)"
                }
            ));
        }
        let mut tables = vec![NamedTable {
            title: "GSGP/SKI ratios (paper's beside ours)".into(),
            table,
        }];
        if !targets.is_empty() {
            tables.push(NamedTable {
                title: "Targets and bytes".into(),
                table: targets,
            });
        }
        Ok(ExperimentOutput {
            tables,
            notes,
            raw: json!({ "rows": raw }),
            curves: Vec::new(),
            checks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_memory_ratios_are_labelled_and_the_compared_one_is_said() {
        assert!(MEMORY_COLUMNS[0].contains("entries") && MEMORY_COLUMNS[0].contains("paper"));
        assert!(MEMORY_COLUMNS[1].contains("paper"));
        assert!(MEMORY_COLUMNS[2].contains("bytes") && MEMORY_COLUMNS[2].contains("not in"));
        assert!(MEMORY_NOTE.contains("counts") && MEMORY_NOTE.contains("entries ratio"));
    }

    #[test]
    fn rows_can_be_selected_by_label() {
        let full = rows(RunSize::Full);
        let radar = filter_rows(full.clone(), "radar 6.4m");
        assert_eq!(radar.len(), 1);
        assert_eq!(row_label(&radar[0]), "Radar 6.4M");
        assert_eq!(radar[0].sizes, vec![400, 400, 40]);
        assert_eq!(filter_rows(full.clone(), " , ").len(), full.len());
        assert_eq!(
            filter_rows(full.clone(), "Sound,precipitation 528K").len(),
            3
        );
    }
}
