//! Plot axes: tick labels on both axes, log axes in the data's units, the paper's points.

use gp_bench::experiment::{Curve, Series, SeriesStyle};
use gp_bench::report::render_svg;

/// The texts of the SVG's `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split_once("</text>")?.0.trim().to_string())
        })
        .collect()
}

fn curve(log: bool) -> Curve {
    Curve {
        file_stem: "fig".into(),
        title: "SMAE against time".into(),
        x_label: "seconds".into(),
        y_label: "test SMAE".into(),
        log_x: log,
        log_y: log,
        series: vec![
            Series {
                name: "GSGP".into(),
                points: vec![(0.05, 0.3), (0.4, 0.21), (3.0, 0.195)],
                style: SeriesStyle::Line,
            },
            Series {
                name: "paper GSGP".into(),
                points: vec![(0.06, 0.29), (2.3, 0.195)],
                style: SeriesStyle::PaperPoints,
            },
        ],
    }
}

#[test]
fn log_axes_have_numeric_ticks_in_the_data_units() {
    let svg = render_svg(&curve(true)).expect("renders");
    let t = texts(&svg);
    // y spans 0.195…0.3, inside one decade: the axis still has labelled ticks.
    for tick in ["0.1", "1", "0.01", "10"] {
        assert!(t.iter().any(|s| s == tick), "no tick {tick} in {t:?}");
    }
    assert!(!svg.contains("log10"), "a log axis caption says log10");
    assert!(t
        .iter()
        .any(|s| s.starts_with("seconds") && s.contains("log scale")));
    assert!(
        t.iter().any(|s| s == "paper GSGP"),
        "no paper legend in {t:?}"
    );
    // The paper's points are drawn as markers (polygons), ours as a line.
    assert!(svg.contains("<polygon") || svg.contains("<path"));
}

#[test]
fn linear_axes_have_tick_labels_on_y() {
    let svg = render_svg(&curve(false)).expect("renders");
    let t = texts(&svg);
    let numeric: Vec<f64> = t.iter().filter_map(|s| s.parse().ok()).collect();
    assert!(numeric.iter().any(|v| (0.19..=0.31).contains(v)), "{t:?}");
    assert!(
        numeric.iter().any(|v| (0.0..=4.0).contains(v) && *v > 0.5),
        "{t:?}"
    );
}
