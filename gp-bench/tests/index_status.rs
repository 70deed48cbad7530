//! The index's status column counts the checks: never "ok" for a paper with a failed check.

use gp_bench::experiment::{Check, ExperimentOutput, RunSize};
use gp_bench::report::{markdown, ExperimentRecord, MachineInfo, PaperRun};

fn run(checks: Vec<Check>) -> PaperRun {
    PaperRun {
        key: "p".into(),
        title: "Paper".into(),
        spec: "spec.md".into(),
        pending: String::new(),
        records: vec![ExperimentRecord {
            name: "e".into(),
            title: "E".into(),
            paper_reference: "Table 1".into(),
            size_description: "tiny".into(),
            elapsed_seconds: 0.1,
            outcome: Ok(ExperimentOutput {
                checks,
                ..ExperimentOutput::default()
            }),
            plots: Vec::new(),
        }],
        machine: MachineInfo::detect(),
        size: RunSize::Quick,
        seed: 0,
        data_dir: "none".into(),
        out_dir: "p".into(),
        elapsed_seconds: 0.1,
        budget_seconds: Some(10.0),
    }
}

#[test]
fn a_paper_with_a_failed_check_is_not_ok() {
    let failed = run(vec![Check::new("a", true), Check::new("b", false)]);
    assert_eq!(failed.checks_met(), (1, 2));
    let index = markdown::index(&[failed]);
    assert!(index.contains("ran; 1 of 2 checks met"), "{index}");
    assert!(!index.contains("| ok"), "{index}");

    let passed = run(vec![Check::new("a", true)]);
    assert!(passed.status().starts_with("ok; 1 of 1 checks met"));
    let report = markdown::paper_report(&run(vec![Check::new("target", false)]));
    assert!(report.contains("NOT met: target"), "{report}");
}

/// The index reports each paper's `--quick` wall time against its budget, and the total
/// against the main job's 3 minutes, which the registered papers' budgets add up to.
#[test]
fn the_index_reports_the_quick_budgets() {
    let total: f64 = gp_bench::papers::registry()
        .iter()
        .map(|p| p.quick_budget_seconds)
        .sum();
    assert_eq!(total, gp_bench::papers::QUICK_BUDGET_SECONDS);
    let within = run(vec![Check::new("a", true)]);
    let mut over = run(vec![Check::new("a", true)]);
    over.elapsed_seconds = 12.5;
    let index = markdown::index(&[within, over]);
    assert!(index.contains("(within)"), "{index}");
    assert!(index.contains("(OVER by 2.50 s)"), "{index}");
    assert!(index.contains("against a budget of 20.00 s"), "{index}");
}
