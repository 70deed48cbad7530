//! GP-GRIEF Table 1, exact-GP baseline column (Yang et al. 2015: exact SE-ARD GP for
//! n < 2000) on `wine` (embedded, always real) and `autompg` (`mpg.csv` from the data
//! directory, or a labelled synthetic stand-in), with the paper's GRIEF-II, GRIEF-I and
//! baseline numbers beside ours; the GRIEF variants themselves run in
//! [`table1_folds`](super::table1_folds) on the paper's own folds.
//!
//! Protocol (spec §3.3, with its decisions): a seeded 10-fold partition (each fold 90%
//! train / 10% test; the paper's fixed Yang et al. splits are not available here), inputs
//! and targets standardized with the training fold's statistics, SE-ARD exact GP trained by
//! one L-BFGS run (no restarts) from length scales √d, unit variance and noise variance 0.5,
//! RMSE in original units, mean ± std over folds with ddof = 0.
//!
//! Why that start and no restarts: the red wine data has 240 rows that repeat another row
//! exactly (inputs and quality), so the log marginal likelihood is unbounded above along
//! "noise → 0, length scales → 0" (each duplicate pair gains `−½ log σ²`). Restarts, or a
//! start with short length scales and little noise, end in that degenerate optimum, which
//! predicts the prior mean away from the training points (test RMSE ≈ 0.7). From the start
//! above L-BFGS converges to the regular local optimum.

use serde_json::json;

use super::fold::{run_fold, FoldOptions, FoldResult};
use super::table1::{PaperRow, PAPER_TABLE};
use crate::data::catalog::load_or_stand_in;
use crate::data::{k_fold, permutation, Dataset};
use crate::error::BenchError;
use crate::experiment::{
    Check, Curve, Experiment, ExperimentOutput, NamedTable, RunContext, RunSize, Series,
    SeriesStyle,
};
use crate::summary::mean_std;
use crate::table::{fmt_seconds, Table};

/// The experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct UciExact;

/// The data sets: the paper's name (its Table 1 row) and the gp-bench catalogue name.
const SETS: &[(&str, &str)] = &[("wine", "wine"), ("autompg", "mpg")];

/// Folds of the partition (the paper's protocol).
const FOLDS: usize = 10;

/// Per-size settings.
#[derive(Debug, Clone, Copy)]
struct Plan {
    /// Folds run (the first ones of the 10-fold partition).
    folds: usize,
    /// Rows kept per data set (a seeded subsample), `None` for all.
    max_rows: Option<usize>,
    /// L-BFGS iteration cap.
    max_iterations: usize,
    /// Random restarts.
    restarts: usize,
}

fn plan(size: RunSize) -> Plan {
    match size {
        RunSize::Smoke => Plan {
            folds: 2,
            max_rows: Some(100),
            max_iterations: 15,
            restarts: 0,
        },
        RunSize::Quick => Plan {
            // Superseded by table1-folds (the paper's own folds); kept short.
            folds: 2,
            max_rows: None,
            max_iterations: 200,
            restarts: 0,
        },
        RunSize::Full => Plan {
            folds: FOLDS,
            max_rows: None,
            max_iterations: 1000,
            restarts: 0,
        },
    }
}

impl Experiment for UciExact {
    fn name(&self) -> &'static str {
        "uci-exact"
    }

    fn title(&self) -> &'static str {
        "Table 1: UCI regression, exact-GP baseline (wine, autompg)"
    }

    fn paper_reference(&self) -> &'static str {
        "GP-GRIEF Table 1 (spec grief.md §3.3–3.4): the Yang et al. (2015) exact SE-ARD GP column, \
         with the GRIEF-II and GRIEF-I columns beside it"
    }

    fn describe_size(&self, size: RunSize) -> String {
        let p = plan(size);
        format!(
            "{} of the {FOLDS} folds of a seeded 90/10 partition, {}, L-BFGS ≤ {} iterations, {} restart(s)",
            p.folds,
            p.max_rows.map_or_else(
                || "all rows".to_string(),
                |m| format!("a seeded subsample of {m} rows per data set")
            ),
            p.max_iterations,
            p.restarts
        )
    }

    fn estimate_seconds(&self, size: RunSize) -> f64 {
        match size {
            RunSize::Smoke => 2.0,
            // Measured on the 2-core reference machine: 4–7 s per wine fold, ~0.1 s per
            // autompg fold.
            RunSize::Quick => 20.0,
            RunSize::Full => 45.0,
        }
    }

    fn run(&self, ctx: &RunContext<'_>) -> Result<ExperimentOutput, BenchError> {
        let p = plan(ctx.size);
        let dir = ctx.data_dir.path.as_deref();
        let mut datasets: Vec<(&PaperRow, &str, Dataset)> = Vec::new();
        for (paper_name, catalog_name) in SETS {
            let Some(row) = PAPER_TABLE.iter().find(|r| r.paper_name == *paper_name) else {
                continue;
            };
            let loaded = load_or_stand_in(catalog_name, dir, ctx.seed)?;
            let mut data = loaded.data;
            if let Some(m) = p.max_rows.filter(|&m| m < data.len()) {
                let keep = permutation(data.len(), ctx.seed ^ 0x5eed)[..m].to_vec();
                data = data.select_rows(&keep)?;
            }
            datasets.push((row, catalog_name, data));
        }
        ctx.progress.set_length((datasets.len() * p.folds) as u64);

        let mut table = Table::new([
            "dataset",
            "method",
            "test RMSE, ours",
            "test RMSE, paper",
            "ours within tolerance?",
            "folds",
            "n train / test",
            "time per fold",
            "data",
        ]);
        let mut notes = vec![
            "RMSE is in original target units, mean ± std over folds with ddof = 0 (spec §3.3). \
             Tolerance (spec §4.4, check 16): |ours − paper| ≤ max(paper std, 10% of the paper mean)."
                .to_string(),
            "The folds are a seeded random 10-fold partition, not the Yang et al. (2015) splits the \
             paper used (those are not available offline), so fold-to-fold noise differs."
                .to_string(),
        ];
        notes.push(
            "Training: one L-BFGS run from length scales √d, unit variance and noise variance 0.5 \
             (standardized units), no restarts. The wine data has 240 exact duplicate rows, which \
             make the marginal likelihood unbounded along noise → 0 with short length scales; \
             restarts would pick that degenerate optimum (test RMSE ≈ 0.7), so none are used."
                .to_string(),
        );
        if let Some(m) = p.max_rows {
            notes.push(format!(
                "Smoke size: every data set is cut to a seeded subsample of {m} rows; the numbers \
                 only prove the harness, they are not comparable with the paper."
            ));
        }
        let mut raw_sets = Vec::new();
        let mut curves = Vec::new();
        let mut checks = Vec::new();
        for (row, catalog_name, data) in &datasets {
            let splits = k_fold(data.len(), FOLDS, ctx.seed)?;
            let mut results: Vec<FoldResult> = Vec::new();
            for (k, split) in splits.iter().take(p.folds).enumerate() {
                ctx.progress.set_message(format!(
                    "{} fold {}/{} (n_train = {}, d = {})",
                    row.paper_name,
                    k + 1,
                    p.folds,
                    split.train.len(),
                    data.dim()
                ));
                let r = run_fold(
                    data,
                    split,
                    &FoldOptions {
                        max_iterations: p.max_iterations,
                        restarts: p.restarts,
                        seed: ctx.seed.wrapping_add(k as u64),
                    },
                )?;
                results.push(r);
                ctx.progress.inc(1);
            }
            let rmses: Vec<f64> = results.iter().map(|r| r.rmse).collect();
            let (mean, std) = mean_std(&rmses);
            let (mnlp_mean, _) = mean_std(&results.iter().map(|r| r.mnlp).collect::<Vec<_>>());
            let secs = results.iter().map(|r| r.seconds).sum::<f64>() / results.len().max(1) as f64;
            let real = data.origin.is_real();
            let sizes = results
                .first()
                .map_or_else(String::new, |r| format!("{} / {}", r.n_train, r.n_test));
            let label = format!("{} (n = {}, d = {})", row.paper_name, row.n, row.d);
            if real && p.max_rows.is_none() {
                checks.push(Check::new(
                    format!(
                        "{}: exact-GP RMSE within the paper's tolerance",
                        row.paper_name
                    ),
                    row.yang.within_printed_tolerance(mean, row.digits),
                ));
            }
            let verdict = if !real {
                "n/a (synthetic stand-in)".to_string()
            } else if p.max_rows.is_some() {
                "n/a (smoke subsample)".to_string()
            } else if row.yang.within_printed_tolerance(mean, row.digits) {
                "yes".to_string()
            } else {
                format!("no (Δ = {:+.*})", row.digits, mean - row.yang.mean)
            };
            table.row([
                label.clone(),
                "exact GP, SE-ARD, L-BFGS (Yang et al. 2015 column)".to_string(),
                format!("{:.*} ± {:.*}", row.digits, mean, row.digits, std),
                row.yang.format(row.digits),
                verdict,
                format!("{} of {FOLDS}", results.len()),
                sizes,
                fmt_seconds(secs),
                data.origin.describe(),
            ]);
            for (method, paper) in [
                ("GP-GRIEF-II (p = 1000)", row.grief2),
                ("GP-GRIEF-I (p = 1000, MALA)", row.grief1),
            ] {
                table.row([
                    label.clone(),
                    method.to_string(),
                    "see table1-folds (the paper's own folds)".to_string(),
                    paper.format(row.digits),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]);
            }
            if real && p.max_rows.is_none() && !row.yang.within_printed_tolerance(mean, row.digits)
            {
                notes.push(format!(
                    "`{}`: our exact GP ({mean:.3}) is outside the tolerance of the paper's \
                     exact-GP number ({}).{}",
                    row.paper_name,
                    row.yang.format(row.digits),
                    if row.paper_name == "wine" {
                        " Explained: the paper's wine set (the Yang et al. files, \
                         `uci/wine` of the data directory) predicts another column: its target \
                         steps by 0.1 with standard deviation 1.066, the red wines' alcohol \
                         content (centred), while the embedded file here predicts the quality \
                         score (sd 0.81). On the paper's fold 1 the exact GP from the data-based \
                         start gives 0.412; see table1-folds at --full."
                    } else {
                        " Not explained yet."
                    }
                ));
            }
            if !real {
                notes.push(format!(
                    "`{}`: the real file was not found; the row uses a {}. Its RMSE says nothing \
                     about the paper's number.",
                    row.paper_name,
                    data.origin.describe()
                ));
            }
            curves.push(Curve {
                file_stem: format!("training-curve-{}", row.paper_name),
                title: format!(
                    "{}: exact-GP training, negative log marginal likelihood per L-BFGS iteration",
                    row.paper_name
                ),
                x_label: "L-BFGS iteration".into(),
                y_label: "negative log marginal likelihood (standardized y)".into(),
                log_x: false,
                log_y: false,
                series: results
                    .iter()
                    .enumerate()
                    .map(|(k, r)| Series {
                        name: format!("fold {}", k + 1),
                        points: r.trajectory.iter().map(|&(i, f)| (i as f64, f)).collect(),
                        style: SeriesStyle::Line,
                    })
                    .collect(),
            });
            raw_sets.push(json!({
                "dataset": catalog_name,
                "paper_name": row.paper_name,
                "origin": data.origin.describe(),
                "real": real,
                "rows_used": data.len(),
                "dim": data.dim(),
                "rmse_mean": mean,
                "rmse_std_ddof0": std,
                "mnlp_mean": mnlp_mean,
                "paper": {
                    "yang_exact": [row.yang.mean, row.yang.std],
                    "grief2": [row.grief2.mean, row.grief2.std],
                    "grief1": [row.grief1.mean, row.grief1.std],
                },
                "grief_variants": "in the table1-folds experiment (the paper's own folds)",
                "folds": results.iter().enumerate().map(|(k, r)| json!({
                    "fold": k,
                    "n_train": r.n_train,
                    "n_test": r.n_test,
                    "rmse": r.rmse,
                    "mnlp": r.mnlp,
                    "seconds": r.seconds,
                    "iterations": r.iterations,
                    "evaluations": r.evaluations,
                    "stop_reason": r.stop_reason,
                    "hyperparameters": r.hyperparameters.iter()
                        .map(|(n, v)| (n.clone(), json!(v)))
                        .collect::<serde_json::Map<_, _>>(),
                    "neg_lml_trajectory": r.trajectory.iter().map(|t| t.1).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            }));
        }
        Ok(ExperimentOutput {
            tables: vec![NamedTable {
                title: "Test RMSE (paper's numbers beside ours)".into(),
                table,
            }],
            notes,
            raw: json!({ "datasets": raw_sets }),
            curves,
            checks,
        })
    }
}
