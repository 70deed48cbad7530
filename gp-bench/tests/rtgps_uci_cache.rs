//! RTGPS Tables S1/S2 (`uci-table`) through the fold cache: each training (data set × method)
//! is stored as it finishes, a second run reloads it to the same numbers, an outcome recorded
//! on another split is trained again, `--cached-only` leaves out the sets it cannot complete,
//! and the estimate counts only what the cache lacks.

use gp_bench::data::{DataDir, DataDirOrigin};
use gp_bench::experiment::{Experiment, RunContext, RunSize};
use gp_bench::fold_cache::FoldCache;
use gp_bench::papers::rtgps::uci_table::UciTable;

/// No data directory: every set is its labelled stand-in.
fn no_data_dir() -> DataDir {
    DataDir {
        path: None,
        origin: DataDirOrigin::NotFound,
    }
}

fn smoke_context<'a>(
    data_dir: &'a DataDir,
    progress: &'a indicatif::ProgressBar,
    sets: Option<&'a [String]>,
    cache: &'a FoldCache,
) -> RunContext<'a> {
    seeded_context(data_dir, progress, sets, cache, 1)
}

fn seeded_context<'a>(
    data_dir: &'a DataDir,
    progress: &'a indicatif::ProgressBar,
    sets: Option<&'a [String]>,
    cache: &'a FoldCache,
    seeds: usize,
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
        seeds,
    }
}

/// The raw rows without their training times (which a retraining changes).
fn metrics(raw: &serde_json::Value) -> serde_json::Value {
    let mut raw = raw.clone();
    for row in raw["rows"].as_array_mut().into_iter().flatten() {
        if let Some(row) = row.as_object_mut() {
            row.remove("training_seconds");
            // The seconds per CPU are timings too; the CPUs and step counts are kept.
            for host in row
                .get_mut("hosts")
                .and_then(|h| h.as_array_mut())
                .into_iter()
                .flatten()
            {
                if let Some(host) = host.as_object_mut() {
                    host.remove("seconds");
                }
            }
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
    let data_dir = no_data_dir();
    let progress = indicatif::ProgressBar::hidden();
    let pol = ["pol".to_string()];
    let cache = FoldCache::new(dir.path());
    let remaining = |cache: &FoldCache| {
        UciTable.estimate_seconds_remaining(RunSize::Smoke, None, Some(&pol), Some(cache), 0, 1)
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
    let file = dir.path().join("rtgps/uci-table/pol-seed0-fold1.json");
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
    let data_dir = no_data_dir();
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

/// `--seeds 2`: the first seed's trainings come from the cache of a one-seed run, the second
/// seed's are trained; the rows show mean ± std over both, and the raw rows list each seed.
#[test]
fn the_uci_table_averages_over_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = no_data_dir();
    let progress = indicatif::ProgressBar::hidden();
    let cache = FoldCache::new(dir.path());
    let remaining = |seeds: usize| {
        UciTable.estimate_seconds_remaining(RunSize::Smoke, None, None, Some(&cache), 0, seeds)
    };
    assert_eq!(remaining(2), 2.0 * remaining(1));
    let one = UciTable
        .run(&seeded_context(&data_dir, &progress, None, &cache, 1))
        .unwrap();
    assert_eq!(remaining(1), 0.0);
    assert!(remaining(2) > 0.0);
    let two = UciTable
        .run(&seeded_context(&data_dir, &progress, None, &cache, 2))
        .unwrap();
    assert!(has_note(&two.notes, "4 of 8 trainings"), "{:?}", two.notes);
    let rows = two.raw["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    let seeds: Vec<u64> = rows.iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, [0, 0, 0, 0, 1, 1, 1, 1]);
    // The first seed's rows are the one-seed run's.
    assert_eq!(
        metrics(&serde_json::json!({ "rows": rows[..4].to_vec() })),
        metrics(&one.raw)
    );
    let table = &two.tables[0].table.to_markdown();
    assert!(
        table.contains("2 seeds 0–1") && table.contains(" ± "),
        "{table}"
    );
    assert_eq!(two.checks.len(), one.checks.len());
}

/// The cache compares splits by `identity`, which names real or stand-in rows but not the
/// directory they were read from: the same files reached by another spelling of the data
/// directory give the same identity (checked when `GP_DATA_DIR` holds the data).
#[test]
fn a_split_is_identified_without_its_data_directory() {
    use gp_bench::papers::rtgps::data::load_rtgps;
    let stand_in = load_rtgps("pol", None, 0, Some(300)).unwrap();
    assert!(stand_in.identity().contains("synthetic stand-in"));
    assert!(!stand_in.identity().contains("SYNTHETIC"));
    let Some(dir) = std::env::var_os("GP_DATA_DIR").map(std::path::PathBuf::from) else {
        eprintln!("GP_DATA_DIR not set: the real-file half of this test is skipped");
        return;
    };
    let Ok(plain) = load_rtgps("pol", Some(&dir), 0, Some(300)) else {
        eprintln!("no pol in GP_DATA_DIR: the real-file half of this test is skipped");
        return;
    };
    let other = load_rtgps("pol", Some(&dir.join(".")), 0, Some(300)).unwrap();
    assert_ne!(plain.describe(), other.describe());
    assert_eq!(plain.identity(), other.identity());
    assert!(plain.identity().contains("real"));
    assert_ne!(plain.identity(), stand_in.identity());
}
