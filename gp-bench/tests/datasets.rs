//! The embedded wine data and the catalogue of known data sets.

use gp_bench::data::catalog::{known, load_known, load_or_stand_in, stand_in};
use gp_bench::data::wine::{wine, WINE_FEATURES, WINE_ROWS};
use gp_bench::data::{DataOrigin, CATALOG};
use gp_bench::BenchError;

#[test]
fn wine_has_1599_rows_and_11_features() {
    let d = wine().expect("embedded wine");
    assert_eq!((WINE_ROWS, WINE_FEATURES), (1599, 11));
    assert_eq!((d.len(), d.dim(), d.y.nrows()), (1599, 11, 1599));
    assert_eq!(d.feature_names.len(), 11);
    assert_eq!(d.feature_names[10], "alcohol");
    assert!(d.origin.is_real());
    // The first data row of winequality-red.csv (not the header): 7.4, 0.7, ..., quality 5.
    assert_eq!((d.x[(0, 0)], d.x[(0, 1)], d.y[0]), (7.4, 0.7, 5.0));
    // Quality scores of the red wines are 3..=8.
    assert!((0..d.len()).all(|i| (3.0..=8.0).contains(&d.y[i])));
}

#[test]
fn catalogue_names_and_stand_ins() {
    for name in ["wine", "mpg", "ailerons", "elevators", "poletele", "sound"] {
        assert!(known(name).is_ok(), "{name}");
    }
    assert!(matches!(
        known("iris"),
        Err(BenchError::UnknownDataset { .. })
    ));
    let mpg = known("mpg").expect("known");
    let s = stand_in(mpg, 3);
    assert_eq!((s.data.len(), s.data.dim()), (392, 7));
    assert!(!s.data.origin.is_real());
    assert!(s.data.origin.describe().contains("STAND-IN"));
    assert_eq!(CATALOG.len(), 6);
}

#[test]
fn missing_directory_gives_a_stand_in_for_files_and_the_real_wine() {
    let empty = tempfile::tempdir().expect("dir");
    let err = load_known("mpg", Some(empty.path())).expect_err("missing");
    assert!(err.to_string().contains("mpg.csv"), "{err}");
    let s = load_or_stand_in("elevators", Some(empty.path()), 0).expect("stand-in");
    assert_eq!((s.data.len(), s.data.dim()), (16599, 18));
    assert!(matches!(s.data.origin, DataOrigin::Synthetic(_)));
    let w = load_or_stand_in("wine", None, 0).expect("wine");
    assert!(w.data.origin.is_real());
}

#[test]
fn a_broken_file_is_an_error_not_a_stand_in() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("mpg.csv"), "x1,y\n1,2\n3\n").expect("write");
    assert!(matches!(
        load_or_stand_in("mpg", Some(dir.path()), 0),
        Err(BenchError::RaggedRow { .. })
    ));
}

/// With the real data directory (`GP_DATA_DIR`, as CI sets it) the files load with their
/// documented sizes; without it this test has nothing to check.
#[test]
fn real_files_have_their_documented_sizes_when_present() {
    let Some(dir) = std::env::var_os("GP_DATA_DIR") else {
        eprintln!("GP_DATA_DIR not set: skipping the real-file size check");
        return;
    };
    for name in ["mpg", "sound"] {
        let l = load_known(name, Some(std::path::Path::new(&dir))).expect("loads");
        assert_eq!(
            (l.data.len(), l.data.dim()),
            (l.known.n, l.known.d),
            "{name}"
        );
    }
}
