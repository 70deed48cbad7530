//! Atomic writes and SVG rendering.

use gp_bench::experiment::{Curve, Series, SeriesStyle};
use gp_bench::report::{render_svg, write_atomic};

#[test]
fn atomic_write_creates_replaces_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("sub").join("report.md");
    write_atomic(&path, b"first").expect("write");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "first");
    write_atomic(&path, b"second").expect("write");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "second");
    let names: Vec<String> = std::fs::read_dir(path.parent().expect("parent"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["report.md"]);
}

#[test]
fn svg_has_title_axes_and_legend_as_text() {
    let curve = Curve {
        file_stem: "c".into(),
        title: "error against iterations".into(),
        x_label: "iteration".into(),
        y_label: "relative error".into(),
        log_x: false,
        log_y: true,
        series: vec![
            Series {
                name: "CG".into(),
                points: (0..10).map(|i| (i as f64, 10f64.powi(-i))).collect(),
                style: SeriesStyle::Line,
            },
            Series {
                name: "KMCG".into(),
                points: (0..10).map(|i| (i as f64, 2.0 * 10f64.powi(-i))).collect(),
                style: SeriesStyle::Line,
            },
        ],
    };
    let svg = render_svg(&curve).expect("renders");
    for text in [
        "<svg",
        "error against iterations",
        "iteration",
        "relative error",
        "KMCG",
    ] {
        assert!(svg.contains(text), "missing {text}");
    }
    let empty = Curve {
        series: vec![],
        ..curve
    };
    assert!(render_svg(&empty).is_err());
}
