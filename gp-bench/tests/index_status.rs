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
