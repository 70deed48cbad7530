//! RTGPS Tables S1/S2 (`uci-table`) through the fold cache: each training (data set × method)
//! is stored as it finishes, a second run reloads it to the same numbers, an outcome recorded
//! on another split is trained again, `--cached-only` leaves out the sets it cannot complete,
//! and the estimate counts only what the cache lacks.

use gp_bench::data::{DataDir, DataDirOrigin};
use gp_bench::experiment::{Experiment, RunContext, RunSize};
use gp_bench::fold_cache::FoldCache;
use gp_bench::papers::rtgps::uci_table::UciTable;

fn smoke_context<'a>(
    data_dir: &'a DataDir,
    progress: &'a indicatif::ProgressBar,
    sets: Option<&'a [String]>,
    cache: &'a FoldCache,
) -> RunContext<'a> {
    RunContext {
        size: RunSize::Smoke,
        seed: 0,
        data_dir,
        progress,
        folds: None,
        sets,
        fold_cache: Some(cache),
        jobs: 2,
        large: false,
    }
}

/// The raw rows without their training times (which a retraining changes).
fn metrics(raw: &serde_json::Value) -> serde_json::Value {
    let mut raw = raw.clone();
    for row in raw["rows"].as_array_mut().into_iter().flatten() {
        if let Some(row) = row.as_object_mut() {
            row.remove("training_seconds");
        }
    }
    raw
}

fn has_note(notes: &[String], text: &str) -> bool {
    notes.iter().any(|n| n.contains(text))
}

#[test]
fn the_uci_table_records_and_reloads_one_training_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = DataDir {
        path: None,
        origin: DataDirOrigin::NotFound,
    };
    let progress = indicatif::ProgressBar::hidden();
    let pol = ["pol".to_string()];
    let cache = FoldCache::new(dir.path());
    let remaining = |cache: &FoldCache| {
        UciTable.estimate_seconds_remaining(RunSize::Smoke, None, Some(&pol), Some(cache), 0)
    };
    assert!(remaining(&cache) > 0.0);

    // Nothing recorded yet: --cached-only leaves the set out and says so.
    let only = FoldCache::new(dir.path()).with_cached_only(true);
    let empty = UciTable
        .run(&smoke_context(&data_dir, &progress, None, &only))
        .unwrap();
    assert!(empty.checks.is_empty());
    assert!(has_note(&empty.notes, "Left out"), "{:?}", empty.notes);
    assert!(
        has_note(&empty.notes, "4 not recorded and skipped"),
        "{:?}",
        empty.notes
    );

    let ctx = smoke_context(&data_dir, &progress, Some(&pol), &cache);
    let first = UciTable.run(&ctx).unwrap();
    assert!(
        has_note(&first.notes, "0 of 4 trainings"),
        "{:?}",
        first.notes
    );
    assert_eq!(remaining(&cache), 0.0);
    let again = UciTable.run(&ctx).unwrap();
    assert_eq!(first.raw, again.raw);
    assert!(
        has_note(&again.notes, "4 of 4 trainings"),
        "{:?}",
        again.notes
    );

    // An outcome recorded on another split (here: its description changed) is trained again.
    let file = dir.path().join("rtgps/uci-table/pol-fold1.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut entry: serde_json::Value = serde_json::from_str(&text).unwrap();
    entry["result"]["split"] = "another split".into();
    std::fs::write(&file, entry.to_string()).unwrap();
    let retrained = UciTable.run(&ctx).unwrap();
    assert!(
        has_note(&retrained.notes, "3 of 4 trainings"),
        "{:?}",
        retrained.notes
    );
    assert_eq!(metrics(&first.raw), metrics(&retrained.raw));
}

#[test]
fn the_uci_table_refuses_a_set_it_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = DataDir {
        path: None,
        origin: DataDirOrigin::NotFound,
    };
    let progress = indicatif::ProgressBar::hidden();
    let cache = FoldCache::new(dir.path());
    // The smoke plan has pol only.
    let bike = ["bike".to_string()];
    let err = UciTable
        .run(&smoke_context(&data_dir, &progress, Some(&bike), &cache))
        .unwrap_err()
        .to_string();
    assert!(err.contains("bike") && err.contains("pol"), "{err}");
}
