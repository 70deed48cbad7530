//! What a reproduction run records, before it is written as markdown and JSON.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::machine::MachineInfo;
use crate::experiment::{Curve, ExperimentOutput, RunSize, SeriesStyle};

/// One experiment's run.
#[derive(Debug, Clone)]
pub struct ExperimentRecord {
    /// The experiment's identifier.
    pub name: String,
    /// Its heading.
    pub title: String,
    /// What in the paper it reproduces.
    pub paper_reference: String,
    /// The sizes used, in words.
    pub size_description: String,
    /// Wall time of the run in seconds.
    pub elapsed_seconds: f64,
    /// The output, or the error message of a failed run.
    pub outcome: Result<ExperimentOutput, String>,
    /// File names of the SVG plots written for it (relative to the paper's folder).
    pub plots: Vec<String>,
}

/// One paper's run: what `report.md` and `results.json` are made of.
#[derive(Debug, Clone)]
pub struct PaperRun {
    /// Short key (`grief`).
    pub key: String,
    /// The paper's title and venue.
    pub title: String,
    /// The implementation spec that lists the paper's experiments.
    pub spec: String,
    /// What is not implemented yet (empty when everything is).
    pub pending: String,
    /// The experiments run.
    pub records: Vec<ExperimentRecord>,
    /// Machine, threads, versions.
    pub machine: MachineInfo,
    /// Size of the run.
    pub size: RunSize,
    /// Seed of the run.
    pub seed: u64,
    /// Where real data was looked for.
    pub data_dir: String,
    /// The folder the report was written to.
    pub out_dir: PathBuf,
    /// Wall time of the whole paper in seconds.
    pub elapsed_seconds: f64,
    /// The paper's wall-time budget at this size (`--quick` only), seconds.
    pub budget_seconds: Option<f64>,
}

impl PaperRun {
    /// Whether every experiment succeeded.
    pub fn all_ok(&self) -> bool {
        self.records.iter().all(|r| r.outcome.is_ok())
    }

    /// The checks judged in the successful experiments: `(met, total)`.
    pub fn checks_met(&self) -> (usize, usize) {
        self.records
            .iter()
            .filter_map(|r| r.outcome.as_ref().ok())
            .flat_map(|o| &o.checks)
            .fold((0, 0), |(k, n), c| (k + usize::from(c.met), n + 1))
    }

    /// The index's status of the paper: `ok` only when every experiment ran and every check
    /// was met; `ran; k of n checks met` when some check was not; `FAILED` when an
    /// experiment failed.
    pub fn status(&self) -> String {
        let (met, total) = self.checks_met();
        let pending = if self.pending.is_empty() {
            String::new()
        } else {
            format!("; not implemented yet: {}", self.pending)
        };
        if self.records.is_empty() {
            "no experiments implemented yet".to_string()
        } else if !self.all_ok() {
            format!("FAILED (see report); {met} of {total} checks met")
        } else if met < total {
            format!("ran; {met} of {total} checks met{pending}")
        } else if total > 0 {
            format!("ok; {met} of {total} checks met{pending}")
        } else {
            format!("ok (no pass/fail checks at this size){pending}")
        }
    }

    /// `results.json`: the run's settings, the machine, and every experiment's raw figures
    /// and curves.
    pub fn to_json(&self) -> Value {
        let experiments: Vec<Value> = self
            .records
            .iter()
            .map(|r| {
                let mut v = json!({
                    "name": r.name,
                    "title": r.title,
                    "paper_reference": r.paper_reference,
                    "size": r.size_description,
                    "elapsed_seconds": r.elapsed_seconds,
                    "plots": r.plots,
                });
                match &r.outcome {
                    Ok(out) => {
                        v["status"] = json!("ok");
                        v["raw"] = out.raw.clone();
                        v["notes"] = json!(out.notes);
                        v["curves"] = Value::Array(out.curves.iter().map(curve_json).collect());
                        v["checks"] = Value::Array(
                            out.checks
                                .iter()
                                .map(|c| json!({"name": c.name, "met": c.met}))
                                .collect(),
                        );
                    }
                    Err(e) => {
                        v["status"] = json!("failed");
                        v["error"] = json!(e);
                    }
                }
                v
            })
            .collect();
        json!({
            "paper": self.key,
            "title": self.title,
            "spec": self.spec,
            "pending": self.pending,
            "size": self.size.as_str(),
            "seed": self.seed,
            "data_dir": self.data_dir,
            "elapsed_seconds": self.elapsed_seconds,
            "budget_seconds": self.budget_seconds,
            "machine": self.machine.to_json(),
            "experiments": experiments,
        })
    }
}

fn curve_json(c: &Curve) -> Value {
    json!({
        "file_stem": c.file_stem,
        "title": c.title,
        "x_label": c.x_label,
        "log_x": c.log_x,
        "log_y": c.log_y,
        "y_label": c.y_label,
        "series": c.series.iter().map(|s| json!({
            "name": s.name,
            "paper": s.style == SeriesStyle::PaperPoints,
            "x": s.points.iter().map(|p| p.0).collect::<Vec<_>>(),
            "y": s.points.iter().map(|p| p.1).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}
