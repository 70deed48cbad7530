//! End to end: `gp-bench reproduce all --smoke` into a temporary folder writes, for every
//! paper, `report.md` and a parsable `results.json`, at least one SVG plot, and a top-level
//! README linking every report.

use std::process::Command;

use gp_bench::papers::PAPER_KEYS;

#[test]
fn reproduce_all_smoke_writes_every_report() {
    let out = tempfile::tempdir().expect("temp dir");
    let status = Command::new(env!("CARGO_BIN_EXE_gp-bench"))
        .args(["reproduce", "all", "--smoke", "--no-progress", "--out"])
        .arg(out.path())
        .output()
        .expect("runs gp-bench");
    let stdout = String::from_utf8_lossy(&status.stdout);
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(
        status.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );

    let readme = std::fs::read_to_string(out.path().join("README.md")).expect("index");
    let mut svgs = 0;
    for key in PAPER_KEYS {
        assert!(
            readme.contains(&format!("({key}/report.md)")),
            "README does not link {key}:\n{readme}"
        );
        let dir = out.path().join(key);
        let report = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
        assert!(report.contains("## Run"), "{key}: {report}");
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
        )
        .expect("results.json parses");
        assert_eq!(json["paper"], key);
        assert_eq!(json["size"], "smoke");
        for entry in std::fs::read_dir(&dir).expect("dir") {
            let p = entry.expect("entry").path();
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            assert!(
                !name.as_deref().unwrap_or("").starts_with('.'),
                "temporary file left behind: {}",
                p.display()
            );
            if p.extension().is_some_and(|e| e == "svg") {
                let svg = std::fs::read_to_string(&p).expect("svg");
                assert!(
                    svg.contains("<svg") && svg.contains("<text"),
                    "{}",
                    p.display()
                );
                svgs += 1;
            }
        }
        // Every paper has experiments now.
        assert!(!report.contains("No experiments implemented yet"), "{key}");
        assert!(
            json["experiments"]
                .as_array()
                .is_some_and(|e| !e.is_empty()),
            "{key}"
        );
    }
    assert!(svgs >= 1, "no SVG plot written");
    // Each paper's folder was staged beside it and renamed into place: no staging folder left.
    for entry in std::fs::read_dir(out.path()).expect("out") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        assert!(!name.starts_with('.'), "staging folder left behind: {name}");
    }

    // The RTGPS report ran the bias figure, the training comparison and the landscape.
    let rtgps = std::fs::read_to_string(out.path().join("rtgps/report.md")).expect("report");
    assert!(!rtgps.contains("FAILED"), "{rtgps}");
    for needle in [
        "Figure 1",
        "RR-CG(J_min = 10)",
        "SS-RFF (exact top)",
        "training-exact-loss.svg",
        "landscape-trajectories.svg",
        "SS-RFF(E[D]=701)",
        "ss-rff-training-exact-loss.svg",
        "RR-CG training on structured operators",
        "projected totals of the larger rows",
    ] {
        assert!(
            rtgps.contains(needle),
            "rtgps report lacks {needle}:\n{rtgps}"
        );
    }

    // The KMCG report ran every experiment: the dense sets, the grid and SOUND, with plots.
    let kmcg = std::fs::read_to_string(out.path().join("kmcg/report.md")).expect("report");
    assert!(!kmcg.contains("FAILED"), "{kmcg}");
    for needle in [
        "dense-mpg-se-eps-f.svg",
        "grid-10x10-eps-f.svg",
        "sound-smse.svg",
        "C1:",
    ] {
        assert!(kmcg.contains(needle), "{needle} missing from {kmcg}");
    }

    // The GSGP report has every experiment, the paper's Table 1 ratios and the SVG plots.
    let gsgp = std::fs::read_to_string(out.path().join("gsgp/report.md")).expect("report");
    assert!(!gsgp.contains("FAILED"), "{gsgp}");
    assert!(gsgp.contains("fig3-per-iteration.svg"), "{gsgp}");
    assert!(gsgp.contains("fig4-sound-mean.svg"), "{gsgp}");
    assert!(gsgp.contains("0.433"), "{gsgp}");
    assert!(gsgp.contains("4861.60"), "{gsgp}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("gsgp/results.json")).expect("json"),
    )
    .expect("parses");
    let exps = json["experiments"].as_array().expect("experiments");
    assert_eq!(exps.len(), 4);
    for e in exps {
        assert_eq!(e["status"], "ok", "{e}");
    }

    // The GRIEF report has the exact-GP wine row with the paper's number beside ours, and
    // one row per GRIEF variant pointing at the experiment on the paper's folds.
    let grief = std::fs::read_to_string(out.path().join("grief/report.md")).expect("report");
    assert!(grief.contains("wine (n = 1599, d = 11)"), "{grief}");
    assert!(grief.contains("0.470 ± 0.080"), "{grief}");
    assert!(
        grief.contains("see table1-folds (the paper's own folds)"),
        "{grief}"
    );
    assert!(grief.contains("training-curve-wine.svg"), "{grief}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("grief/results.json")).expect("json"),
    )
    .expect("parses");
    let exp = &json["experiments"][0];
    assert_eq!(exp["status"], "ok", "{exp}");
    let wine = &exp["raw"]["datasets"][0];
    assert_eq!(wine["dataset"], "wine");
    assert_eq!(wine["real"], true);
    assert_eq!(wine["folds"].as_array().map(Vec::len), Some(2));
    assert!(wine["rmse_mean"].as_f64().is_some_and(f64::is_finite));
}

#[test]
fn a_missing_data_dir_is_a_clear_error() {
    let out = tempfile::tempdir().expect("temp dir");
    let missing = out.path().join("no-such-dir");
    let status = Command::new(env!("CARGO_BIN_EXE_gp-bench"))
        .args([
            "reproduce",
            "gsgp",
            "--smoke",
            "--no-progress",
            "--data-dir",
        ])
        .arg(&missing)
        .arg("--out")
        .arg(out.path())
        .output()
        .expect("runs gp-bench");
    assert!(!status.status.success());
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(
        stderr.contains("no-such-dir") && stderr.contains("--data-dir"),
        "{stderr}"
    );
}

#[test]
fn an_unwritable_out_directory_fails_before_anything_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").expect("write");
    let started = std::time::Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_gp-bench"))
        .args(["reproduce", "all", "--smoke", "--no-progress", "--out"])
        .arg(file.join("out"))
        .output()
        .expect("runs gp-bench");
    assert!(!status.status.success());
    let stderr = String::from_utf8_lossy(&status.stderr);
    let stdout = String::from_utf8_lossy(&status.stdout);
    assert!(stderr.contains("not writable"), "{stderr}");
    assert!(!stdout.contains("report:"), "experiments ran:\n{stdout}");
    assert!(started.elapsed().as_secs() < 30);
}

/// `--folds K` must be at least 1: zero folds is refused before anything runs.
#[test]
fn zero_folds_are_refused() {
    let out = tempfile::tempdir().expect("temp dir");
    let status = Command::new(env!("CARGO_BIN_EXE_gp-bench"))
        .args([
            "reproduce",
            "grief",
            "--smoke",
            "--no-progress",
            "--folds",
            "0",
            "--out",
        ])
        .arg(out.path())
        .output()
        .expect("runs gp-bench");
    assert!(!status.status.success());
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(stderr.contains("--folds"), "{stderr}");
    assert!(!out.path().join("grief").exists());
}

/// `--large` only extends `--full` runs: with another size it is refused before anything
/// runs.
#[test]
fn large_without_full_is_refused() {
    let out = tempfile::tempdir().expect("temp dir");
    let status = Command::new(env!("CARGO_BIN_EXE_gp-bench"))
        .args([
            "reproduce",
            "rtgps",
            "--smoke",
            "--large",
            "--no-progress",
            "--out",
        ])
        .arg(out.path())
        .output()
        .expect("runs gp-bench");
    assert!(!status.status.success());
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(
        stderr.contains("--large") && stderr.contains("--full"),
        "{stderr}"
    );
    assert!(!out.path().join("rtgps").exists());
}
