//! `gp-bench datasets` lists every known data set with where it was found: with an empty
//! data directory only the embedded wine is real and the files are stand-ins.

use std::process::Command;

#[test]
fn datasets_lists_real_and_stand_in_sets() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("mpg.csv"), "x1,x2,y\n1,2,3\n4,5,6\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_gp-bench"))
        .args(["datasets", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("runs gp-bench");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("| {name} ")))
            .unwrap_or_else(|| panic!("no row for {name}:\n{text}"))
            .to_string()
    };
    assert!(line("wine").contains("1599 × 11") && line("wine").contains("| real"));
    // A file that is present is reported with its actual size and the documented one.
    assert!(line("mpg").contains("2 × 2") && line("mpg").contains("documented 392 × 7"));
    for name in ["ailerons", "elevators", "poletele", "sound"] {
        assert!(line(name).contains("synthetic stand-in"), "{}", line(name));
    }
    assert!(text.contains("kmcg-grid") && text.contains("gaussian_mixture"));
}
