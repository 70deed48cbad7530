//! Data-directory discovery order: explicit argument > environment value > the workspace
//! default. The environment value is passed as an argument, so nothing here touches the
//! process environment (no races with other tests).

use std::ffi::OsStr;

use gp_bench::data::{resolve_data_dir, DataDirOrigin};
use gp_bench::BenchError;

#[test]
fn explicit_beats_env_beats_default() {
    let explicit = tempfile::tempdir().expect("dir");
    let env = tempfile::tempdir().expect("dir");
    // A fake workspace whose ../shared/datasets exists.
    let outer = tempfile::tempdir().expect("dir");
    let root = outer.path().join("main");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::create_dir_all(outer.path().join("shared").join("datasets")).expect("mkdir");

    let d = resolve_data_dir(
        Some(explicit.path()),
        Some(env.path().as_os_str()),
        Some(&root),
    )
    .expect("resolves");
    assert_eq!(d.origin, DataDirOrigin::Argument);
    assert_eq!(d.path.as_deref(), Some(explicit.path()));

    let d = resolve_data_dir(None, Some(env.path().as_os_str()), Some(&root)).expect("resolves");
    assert_eq!(d.origin, DataDirOrigin::Environment);
    assert_eq!(d.path.as_deref(), Some(env.path()));

    // An empty variable counts as unset.
    for env_value in [None, Some(OsStr::new(""))] {
        let d = resolve_data_dir(None, env_value, Some(&root)).expect("resolves");
        assert_eq!(d.origin, DataDirOrigin::WorkspaceDefault);
        let p = d.path.expect("default found");
        assert!(p.ends_with("shared/datasets"), "{}", p.display());
        assert!(p.is_dir());
    }
}

#[test]
fn nothing_found_means_stand_ins() {
    let outer = tempfile::tempdir().expect("dir");
    let d = resolve_data_dir(None, None, Some(outer.path())).expect("resolves");
    assert_eq!(d.origin, DataDirOrigin::NotFound);
    assert_eq!(d.path, None);
    assert!(d.describe().contains("GP_DATA_DIR"));
    let d = resolve_data_dir(None, None, None).expect("resolves");
    assert_eq!(d.origin, DataDirOrigin::NotFound);
}

#[test]
fn a_missing_explicit_or_env_directory_is_an_error() {
    let outer = tempfile::tempdir().expect("dir");
    let missing = outer.path().join("typo");
    let err = resolve_data_dir(Some(&missing), None, None).expect_err("missing");
    assert!(matches!(err, BenchError::MissingDirectory { .. }));
    assert!(err.to_string().contains("typo"), "{err}");
    assert!(err.to_string().contains("--data-dir"), "{err}");
    let err = resolve_data_dir(None, Some(missing.as_os_str()), None).expect_err("missing");
    assert!(err.to_string().contains("GP_DATA_DIR"), "{err}");
}

#[test]
fn a_data_dir_that_is_a_file_says_it_is_not_a_directory() {
    let outer = tempfile::tempdir().expect("dir");
    let file = outer.path().join("data.csv");
    std::fs::write(&file, "x,y\n1,2\n").expect("write");
    let err = resolve_data_dir(Some(&file), None, None).expect_err("a file");
    assert!(matches!(err, BenchError::NotADirectory { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("is not a directory"), "{msg}");
    assert!(!msg.contains("does not exist"), "{msg}");
    assert!(msg.contains("--data-dir"), "{msg}");
}
