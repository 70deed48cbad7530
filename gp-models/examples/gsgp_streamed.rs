//! GSGP fitted from a file that is never loaded whole: one pass finds the data's range, a
//! second streams chunks of rows into the sufficient statistics `WᵀW`, `Wᵀy`, `yᵀy`, and the
//! model is built from them alone.
//!
//! ```text
//! cargo run --release -p gp-models --example gsgp_streamed -- [--csv points.csv] [--n 1000000] [--m 200]
//! ```
//!
//! The CSV has a header row, two input columns and the target last. Without `--csv` the
//! example writes `n` synthetic rows (`y = sin(4x₀) cos(3x₁)` plus noise on `[0, 1]²`) to the
//! temporary directory first. The grid has `m × m` points over the data's range padded by two
//! cells per side.

#[path = "support/cli.rs"]
mod cli;
use cli::{arg, flag};

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Lines, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use gp_kernels::SquaredExponential;
use gp_models::faer::{Col, Mat};
use gp_models::grid::GridSettings;
use gp_models::prelude::*;
use gp_structured::SufficientStats;

const CHUNK: usize = 100_000;

fn write_synthetic(path: &Path, n: usize) -> std::io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    writeln!(w, "x0,x1,y")?;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = || {
        // xorshift64*: enough for synthetic inputs.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..n {
        let (a, b, e) = (uniform(), uniform(), uniform() - 0.5);
        writeln!(w, "{a},{b},{}", (4.0 * a).sin() * (3.0 * b).cos() + 0.1 * e)?;
    }
    Ok(())
}

/// Chunks of `(x, y)` rows read from a CSV; a parse error ends the stream and is kept.
struct Chunks {
    lines: Lines<BufReader<File>>,
    error: Arc<Mutex<Option<String>>>,
}

impl Chunks {
    fn open(path: &Path, error: Arc<Mutex<Option<String>>>) -> std::io::Result<Self> {
        let mut lines = BufReader::new(File::open(path)?).lines();
        let _header = lines.next();
        Ok(Self { lines, error })
    }
}

impl Iterator for Chunks {
    type Item = (Mat<f64>, Col<f64>);

    fn next(&mut self) -> Option<Self::Item> {
        let mut rows: Vec<[f64; 3]> = Vec::with_capacity(CHUNK);
        for line in self.lines.by_ref() {
            let parsed = line.map_err(|e| e.to_string()).and_then(|l| {
                let v: Vec<f64> = l
                    .split(',')
                    .map(|s| s.trim().parse::<f64>().map_err(|e| format!("{e} in '{l}'")))
                    .collect::<Result<_, _>>()?;
                <[f64; 3]>::try_from(v).map_err(|v| format!("{} columns, need 3", v.len()))
            });
            match parsed {
                Ok(row) => rows.push(row),
                Err(e) => {
                    if let Ok(mut slot) = self.error.lock() {
                        *slot = Some(e);
                    }
                    return None;
                }
            }
            if rows.len() == CHUNK {
                break;
            }
        }
        if rows.is_empty() {
            return None;
        }
        let x = Mat::from_fn(rows.len(), 2, |i, j| rows[i][j]);
        let y = Col::from_fn(rows.len(), |i| rows[i][2]);
        Some((x, y))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let m: usize = arg("--m", 200);
    let path = match flag("--csv") {
        Some(p) => PathBuf::from(p),
        None => {
            let n: usize = arg("--n", 1_000_000);
            let p = std::env::temp_dir().join("gpscale_gsgp_streamed.csv");
            let t = Instant::now();
            write_synthetic(&p, n)?;
            println!(
                "wrote {n} rows to {} in {:.1} s",
                p.display(),
                t.elapsed().as_secs_f64()
            );
            p
        }
    };
    let error = Arc::new(Mutex::new(None));
    let check = |error: &Arc<Mutex<Option<String>>>| -> Result<(), Box<dyn std::error::Error>> {
        match error.lock().map(|e| e.clone()) {
            Ok(Some(e)) => Err(format!("{}: {e}", path.display()).into()),
            _ => Ok(()),
        }
    };

    // Pass 1: the range of the inputs.
    let t = Instant::now();
    let (mut lo, mut hi, mut n) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2], 0usize);
    for (x, _) in Chunks::open(&path, Arc::clone(&error))? {
        n += x.nrows();
        for j in 0..2 {
            for i in 0..x.nrows() {
                lo[j] = lo[j].min(x[(i, j)]);
                hi[j] = hi[j].max(x[(i, j)]);
            }
        }
    }
    check(&error)?;
    // Two cells of padding per side, as the default grid rule does for cubic interpolation.
    let pad = |j: usize| 2.0 * (hi[j] - lo[j]) / (m - 5) as f64;
    let bounds = vec![
        (lo[0] - pad(0), hi[0] + pad(0)),
        (lo[1] - pad(1), hi[1] + pad(1)),
    ];
    println!(
        "pass 1 (range of {n} rows): {:.1} s",
        t.elapsed().as_secs_f64()
    );

    // Pass 2: the sufficient statistics on the grid, chunk by chunk.
    let options = GsgpOptions {
        grid: GridSettings {
            sizes: vec![m, m],
            bounds: Some(bounds),
            ..GridSettings::default()
        },
        ..GsgpOptions::default()
    };
    let probe = Mat::from_fn(1, 2, |_, j| lo[j]);
    let grid = options.grid_for(probe.as_ref())?;
    let t = Instant::now();
    let stats = SufficientStats::from_chunks(
        &grid,
        options.interpolation(),
        Chunks::open(&path, Arc::clone(&error))?,
    )?;
    check(&error)?;
    println!(
        "pass 2 (statistics of {} points on a {m} × {m} grid): {:.1} s",
        stats.num_points(),
        t.elapsed().as_secs_f64()
    );

    let kernel = SquaredExponential::new(vec![0.2, 0.2], 1.0)?;
    let model = Gsgp::from_stats(kernel, stats, 0.01, &options)?;
    println!("{model}");
    let x_test = Mat::from_fn(5, 2, |i, j| 0.1 + 0.2 * i as f64 + 0.05 * j as f64);
    let t = Instant::now();
    let pred = model.predict(x_test.as_ref(), &PredictRequest::default())?;
    println!("prediction at 5 points: {:.2} s", t.elapsed().as_secs_f64());
    for i in 0..5 {
        let truth = (4.0 * x_test[(i, 0)]).sin() * (3.0 * x_test[(i, 1)]).cos();
        println!(
            "  x = ({:.2}, {:.2}): mean {:+.4} ± {:.4} (noise-free truth {truth:+.4})",
            x_test[(i, 0)],
            x_test[(i, 1)],
            pred.mean[i],
            pred.variance[i].sqrt()
        );
    }
    Ok(())
}
