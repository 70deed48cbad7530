//! GPyTorch's KISS-GP product as measured by `gp-bench/scripts/ski_gpytorch_matvec.py`: the
//! `bench ski-matvec` table quotes the file that script writes (committed under
//! `gp-bench/results/peers/`), with the versions, CPU and date it records, and compares times
//! only when the file was measured on the CPU the bench runs on.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::data::discovery::find_workspace_root;
use crate::report::machine::cpu_description;
use crate::table::fmt_seconds;

/// Where the peer script's results live, relative to the workspace root.
pub const PEER_FILE: &str = "gp-bench/results/peers/ski_gpytorch_matvec.json";

/// The peer script's output (the fields the table uses).
#[derive(Debug, Clone, Deserialize)]
pub struct PeerRecord {
    /// torch's version.
    pub torch: String,
    /// gpytorch's version.
    pub gpytorch: String,
    /// The CPU, named as [`cpu_description`] names it.
    pub cpu: String,
    /// torch's thread count.
    pub threads: usize,
    /// The day of the measurement (UTC, `YYYY-MM-DD`).
    pub date: String,
    /// One entry per measured table row.
    pub rows: Vec<PeerRow>,
}

/// One row of the peer's measurement.
#[derive(Debug, Clone, Deserialize)]
pub struct PeerRow {
    /// Training points, input dimension and grid points per dimension.
    pub n: usize,
    /// Input dimension.
    pub d: usize,
    /// Grid points per dimension.
    pub grid: usize,
    /// Median wall time of one product `K̃ v` (seconds).
    pub product_median_seconds: f64,
}

/// The peer file of the workspace the bench runs in, if there is one and it parses.
pub fn load() -> Option<(PeerRecord, PathBuf)> {
    let root = std::env::current_dir()
        .ok()
        .and_then(|dir| find_workspace_root(&dir))?;
    let path = root.join(PEER_FILE);
    load_from(&path).map(|r| (r, path))
}

/// The peer record at `path`, if the file exists and parses.
pub fn load_from(path: &Path) -> Option<PeerRecord> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// The table cell for the row `(n, d, grid)` whose own product (into a new vector, as
/// GPyTorch's) took `ours` seconds: the peer's median with where it comes from, and the ratio
/// when the peer ran on `this_cpu`; otherwise why there is no figure.
pub fn cell(
    peer: Option<&PeerRecord>,
    n: usize,
    d: usize,
    grid: usize,
    ours: f64,
    this_cpu: &str,
) -> String {
    let Some(rec) = peer else {
        return format!(
            "not measured here (run gp-bench/scripts/ski_gpytorch_matvec.py --out {PEER_FILE})"
        );
    };
    let Some(row) = rec.rows.iter().find(|r| (r.n, r.d, r.grid) == (n, d, grid)) else {
        return format!("not measured at this size ({PEER_FILE} has other rows)");
    };
    let source = format!(
        "GPyTorch {}, torch {}, {} threads, {}, {}",
        rec.gpytorch, rec.torch, rec.threads, rec.cpu, rec.date
    );
    let peer = fmt_seconds(row.product_median_seconds);
    if rec.cpu == this_cpu && ours > 0.0 {
        format!(
            "{peer} ({source}); ours {:.0}× faster",
            row.product_median_seconds / ours
        )
    } else {
        format!("{peer} ({source}; another CPU than this run's, so no ratio)")
    }
}

/// [`cell`] on this machine's CPU.
pub fn cell_here(peer: Option<&PeerRecord>, n: usize, d: usize, grid: usize, ours: f64) -> String {
    cell(peer, n, d, grid, ours, &cpu_description())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(cpu: &str) -> PeerRecord {
        serde_json::from_str(&format!(
            r#"{{"torch": "2.15.0", "gpytorch": "1.15.2", "cpu": "{cpu}", "threads": 2,
                "date": "2026-11-28", "command": "python x.py",
                "rows": [{{"n": 1000000, "d": 1, "grid": 10000, "product_median_seconds": 0.5,
                           "build_seconds": 1.0, "product_seconds": [0.5]}}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn the_cell_quotes_the_peer_and_compares_only_on_the_same_cpu() {
        let rec = record("CPU A");
        let same = cell(Some(&rec), 1_000_000, 1, 10_000, 0.01, "CPU A");
        assert!(same.contains("GPyTorch 1.15.2, torch 2.15.0"), "{same}");
        assert!(same.contains("50× faster"), "{same}");
        let other = cell(Some(&rec), 1_000_000, 1, 10_000, 0.01, "CPU B");
        assert!(
            other.contains("no ratio") && !other.contains("faster"),
            "{other}"
        );
        let size = cell(Some(&rec), 100_000, 3, 30, 0.01, "CPU A");
        assert!(size.starts_with("not measured at this size"), "{size}");
        let none = cell(None, 1_000_000, 1, 10_000, 0.01, "CPU A");
        assert!(none.starts_with("not measured here"), "{none}");
    }
}
