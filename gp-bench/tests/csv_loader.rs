//! The CSV loader on small temporary files: a good file, the target by name, and every
//! typed error (ragged row, non-numeric cell, NaN, missing file, missing column).

use std::io::Write;
use std::path::PathBuf;

use gp_bench::data::{load_csv, CsvOptions, DataOrigin, TargetColumn};
use gp_bench::BenchError;

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    let mut f = std::fs::File::create(&path).expect("create temp file");
    f.write_all(text.as_bytes()).expect("write temp file");
    path
}

#[test]
fn good_file_target_last() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, "good.csv", "x1,x2,y\n1.0,2,3\n4,5.5,6e0\n-7, 8 ,9\n");
    let d = load_csv(&p, &CsvOptions::default()).expect("loads");
    assert_eq!((d.len(), d.dim()), (3, 2));
    assert_eq!(d.name, "good");
    assert_eq!(d.feature_names, ["x1", "x2"]);
    assert_eq!(d.target_name, "y");
    assert_eq!(d.x[(2, 0)], -7.0);
    assert_eq!(d.x[(2, 1)], 8.0);
    assert_eq!(d.x[(1, 1)], 5.5);
    assert_eq!(d.y[1], 6.0);
    assert_eq!(d.origin, DataOrigin::File(p));
    assert!(d.origin.is_real());
}

#[test]
fn target_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, "named.csv", "mpg,a,b\n10,1,2\n20,3,4\n");
    let opts = CsvOptions {
        target: TargetColumn::Name("mpg".into()),
        ..CsvOptions::default()
    };
    let d = load_csv(&p, &opts).expect("loads");
    assert_eq!(d.target_name, "mpg");
    assert_eq!(d.feature_names, ["a", "b"]);
    assert_eq!((d.y[0], d.y[1]), (10.0, 20.0));
    assert_eq!((d.x[(1, 0)], d.x[(1, 1)]), (3.0, 4.0));

    let opts = CsvOptions {
        target: TargetColumn::Name("price".into()),
        ..CsvOptions::default()
    };
    match load_csv(&p, &opts) {
        Err(BenchError::MissingColumn { name, headers, .. }) => {
            assert_eq!(name, "price");
            assert_eq!(headers, "mpg,a,b");
        }
        other => panic!("expected MissingColumn, got {other:?}"),
    }
}

#[test]
fn ragged_row_names_the_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, "ragged.csv", "x1,x2,y\n1,2,3\n4,5\n");
    match load_csv(&p, &CsvOptions::default()) {
        Err(e @ BenchError::RaggedRow { .. }) => {
            let BenchError::RaggedRow {
                line,
                expected,
                found,
                ..
            } = &e
            else {
                unreachable!()
            };
            assert_eq!((*line, *expected, *found), (3, 3, 2));
            assert!(e.to_string().contains("ragged.csv"), "{e}");
        }
        other => panic!("expected RaggedRow, got {other:?}"),
    }
}

#[test]
fn non_numeric_cell() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, "text.csv", "x1,x2,y\n1,2,3\n4,abc,6\n");
    match load_csv(&p, &CsvOptions::default()) {
        Err(BenchError::NonNumeric {
            line,
            column,
            value,
            ..
        }) => {
            assert_eq!((line, column.as_str(), value.as_str()), (3, "x2", "abc"));
        }
        other => panic!("expected NonNumeric, got {other:?}"),
    }
}

#[test]
fn nan_and_infinity_are_rejected() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, cell) in [("nan.csv", "NaN"), ("inf.csv", "inf")] {
        let p = file(&dir, name, &format!("x1,y\n1,2\n{cell},3\n"));
        match load_csv(&p, &CsvOptions::default()) {
            Err(BenchError::NonFinite { line, column, .. }) => {
                assert_eq!((line, column.as_str()), (3, "x1"));
            }
            other => panic!("expected NonFinite for {cell}, got {other:?}"),
        }
    }
}

#[test]
fn missing_file_names_path_and_layout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = dir.path().join("nowhere.csv");
    let err = load_csv(&p, &CsvOptions::default()).expect_err("missing");
    assert!(matches!(err, BenchError::MissingFile { .. }));
    let msg = err.to_string();
    assert!(msg.contains("nowhere.csv"), "{msg}");
    assert!(msg.contains("header row"), "{msg}");
}

#[test]
fn header_only_and_single_column_files_are_bad() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, "empty.csv", "x1,y\n");
    assert!(matches!(
        load_csv(&p, &CsvOptions::default()),
        Err(BenchError::BadCsv { .. })
    ));
    let p = file(&dir, "one.csv", "y\n1\n2\n");
    assert!(matches!(
        load_csv(&p, &CsvOptions::default()),
        Err(BenchError::BadCsv { .. })
    ));
}

#[test]
fn a_file_without_a_header_row_is_named_not_silently_short() {
    let dir = tempfile::tempdir().expect("dir");
    let p = file(&dir, "noheader.csv", "1.0,2.0,3.0\n4.0,5.0,6.0\n");
    let err = load_csv(&p, &CsvOptions::default()).expect_err("no header");
    assert!(matches!(err, BenchError::BadCsv { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("noheader.csv"), "{msg}");
    assert!(msg.contains("no header row"), "{msg}");
    // A header with a numeric-looking name among text names is still a header.
    let p = file(&dir, "mixed.csv", "x1,2020,y\n1,2,3\n");
    assert_eq!(
        load_csv(&p, &CsvOptions::default()).expect("loads").len(),
        1
    );
}

#[test]
fn identical_inputs_give_a_warning() {
    use gp_bench::data::csv_loader::constant_inputs_warning;
    let dir = tempfile::tempdir().expect("dir");
    let p = file(&dir, "flat.csv", "a,b,y\n1,2,3\n1,2,4\n1,2,5\n");
    let d = load_csv(&p, &CsvOptions::default()).expect("loads with a warning");
    let w = constant_inputs_warning("flat.csv", d.x.as_ref()).expect("a warning");
    assert!(w.contains("flat.csv") && w.contains("same inputs"), "{w}");
    let p = file(&dir, "ok.csv", "a,b,y\n1,2,3\n1,3,4\n");
    let d = load_csv(&p, &CsvOptions::default()).expect("loads");
    assert!(constant_inputs_warning("ok.csv", d.x.as_ref()).is_none());
}
