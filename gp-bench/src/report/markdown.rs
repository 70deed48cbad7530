//! The markdown of `report.md` (one paper) and of the top-level `README.md` (every paper).

use std::fmt::Write as _;

use super::record::PaperRun;
use crate::table::{fmt_seconds, Table};

/// `report.md` of one paper: what it reproduces, the run settings and machine, then per
/// experiment its tables (the paper's numbers beside ours), notes and plots.
pub fn paper_report(run: &PaperRun) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {} — reproduction report\n", run.title);
    let _ = writeln!(
        s,
        "Paper key `{}`; experiments and the paper's numbers from `{}`.\n",
        run.key, run.spec
    );
    if !run.pending.is_empty() {
        let _ = writeln!(s, "**Not implemented yet:** {}\n", run.pending);
    }
    if run.records.is_empty() {
        let _ = writeln!(
            s,
            "**No experiments implemented yet.** This report is a placeholder so that \
             `reproduce all` covers every paper; it contains no results.\n"
        );
    }
    let mut settings = Table::new(["setting", "value"]);
    settings
        .row(["size".to_string(), format!("--{}", run.size)])
        .row(["seed".to_string(), run.seed.to_string()])
        .row(["data directory".to_string(), run.data_dir.clone()])
        .row(["wall time".to_string(), fmt_seconds(run.elapsed_seconds)]);
    for (k, v) in run.machine.rows() {
        settings.row([k, v]);
    }
    let _ = writeln!(s, "## Run\n\n{settings}");
    for r in &run.records {
        let _ = writeln!(s, "## {}\n", r.title);
        let _ = writeln!(s, "- Reproduces: {}", r.paper_reference);
        let _ = writeln!(s, "- Size: {}", r.size_description);
        let _ = writeln!(s, "- Wall time: {}\n", fmt_seconds(r.elapsed_seconds));
        match &r.outcome {
            Err(e) => {
                let _ = writeln!(s, "**FAILED:** {e}\n");
            }
            Ok(out) => {
                for t in &out.tables {
                    let _ = writeln!(s, "### {}\n\n{}", t.title, t.table);
                }
                if !out.checks.is_empty() {
                    let met = out.checks.iter().filter(|c| c.met).count();
                    let _ = writeln!(s, "Checks: {met} of {} met.\n", out.checks.len());
                    for c in &out.checks {
                        let mark = if c.met { "met" } else { "NOT met" };
                        let _ = writeln!(s, "- {mark}: {}", c.name);
                    }
                    s.push('\n');
                }
                if !out.notes.is_empty() {
                    let _ = writeln!(s, "Notes:\n");
                    for n in &out.notes {
                        let _ = writeln!(s, "- {n}");
                    }
                    s.push('\n');
                }
                for (plot, curve) in r.plots.iter().zip(&out.curves) {
                    let _ = writeln!(s, "![{}]({plot})\n", curve.title);
                }
            }
        }
    }
    let _ = writeln!(
        s,
        "Raw figures: [`results.json`](results.json). Regenerate with \
         `cargo run --release -p gp-bench -- reproduce {} --{} --seed {}`.",
        run.key, run.size, run.seed
    );
    s
}

/// The top-level `README.md` linking every paper's report.
pub fn index(runs: &[PaperRun]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# gp-bench reproductions\n");
    if let Some(first) = runs.first() {
        let _ = writeln!(
            s,
            "Size `--{}`, seed {}, data directory {}.\n",
            first.size, first.seed, first.data_dir
        );
    }
    let mut t = Table::new([
        "paper",
        "report",
        "experiments",
        "status",
        "wall time",
        "budget",
    ]);
    for r in runs {
        let status = r.status();
        let budget = r.budget_seconds.map_or_else(
            || "—".to_string(),
            |b| {
                if r.elapsed_seconds <= b {
                    format!("{} (within)", fmt_seconds(b))
                } else {
                    format!(
                        "{} (OVER by {})",
                        fmt_seconds(b),
                        fmt_seconds(r.elapsed_seconds - b)
                    )
                }
            },
        );
        t.row([
            r.title.clone(),
            format!("[{0}/report.md]({0}/report.md)", r.key),
            r.records.len().to_string(),
            status,
            fmt_seconds(r.elapsed_seconds),
            budget,
        ]);
    }
    let total: f64 = runs.iter().map(|r| r.elapsed_seconds).sum();
    let budget: Option<f64> = runs.iter().map(|r| r.budget_seconds).sum();
    if let Some(budget) = budget {
        let _ = writeln!(
            s,
            "Total wall time {} against a budget of {} (the papers' budgets are set for the \
             2-core reference machine; a loaded machine runs over).\n",
            fmt_seconds(total),
            fmt_seconds(budget)
        );
    }
    let _ = writeln!(s, "{t}");
    s
}
