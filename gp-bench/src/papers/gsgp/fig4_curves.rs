//! Figure 4's plot series: our points as one line per method (and grid), with the
//! log-determinant reference left out (it is the point every error is measured from, not a
//! method that converged), and the paper's points beside ours.

use super::common::{fmt_count, Method};
use super::fig4::{PanelPoint, PaperPoint};
use crate::experiment::{Series, SeriesStyle};

/// Whether `pt` is the log-determinant reference: SKI on the reference's grid `m_ref` with
/// the same probes, so its "error" measures only the CG tolerance, not a method.
pub(super) fn is_reference(pt: &PanelPoint, m_ref: usize) -> bool {
    pt.method == Method::Ski && pt.m == m_ref
}

/// Our series `(seconds, error)`: one per method, or per method and grid when `by_grid`;
/// points for which `skip` is true are left out.
pub(super) fn our_series(
    pts: &[PanelPoint],
    by_grid: bool,
    skip: &dyn Fn(&PanelPoint) -> bool,
) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for pt in pts.iter().filter(|p| !skip(p)) {
        let name = if by_grid {
            format!("{} m = {}", pt.method.label(), fmt_count(pt.m))
        } else {
            pt.method.label().to_string()
        };
        let point = (pt.seconds.max(1e-9), pt.error);
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => out.push(Series {
                name,
                points: vec![point],
                style: SeriesStyle::Line,
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// The paper's points `(seconds, error)` of a panel, one marker series per method.
pub(super) fn paper_series(table: &[PaperPoint]) -> Vec<Series> {
    [(Method::Ski, 0), (Method::Gsgp, 1)]
        .into_iter()
        .map(|(method, i)| Series {
            name: format!("paper {}", method.label()),
            points: table
                .iter()
                .map(|row| if i == 0 { row.1 } else { row.2 })
                .collect(),
            style: SeriesStyle::PaperPoints,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fig4::PAPER_LOG_DET;
    use super::*;

    fn point(method: Method, m: usize, error: f64) -> PanelPoint {
        PanelPoint {
            method,
            m,
            setting: String::new(),
            seconds: 1.0,
            error,
            extra: serde_json::Value::Null,
        }
    }

    #[test]
    fn log_det_reference_is_not_plotted_as_a_method() {
        let pts = [
            point(Method::Ski, 1000, 50.0),
            point(Method::Ski, 60_004, 0.0),
            point(Method::Gsgp, 60_004, 3.0),
        ];
        assert!(is_reference(&pts[1], 60_004));
        assert!(!is_reference(&pts[2], 60_004));
        let series = our_series(&pts, false, &|p| is_reference(p, 60_004));
        let ski = series.iter().find(|s| s.name == "SKI");
        assert_eq!(ski.map(|s| s.points.len()), Some(1));
        assert!(series.iter().flat_map(|s| &s.points).all(|p| p.1 > 0.0));
    }

    #[test]
    fn paper_points_are_drawn_beside_ours() {
        let paper = paper_series(&PAPER_LOG_DET);
        assert_eq!(paper.len(), 2);
        assert!(paper
            .iter()
            .all(|s| s.style == SeriesStyle::PaperPoints && s.points.len() == 8));
        assert!(paper[0].name.contains("paper"));
    }
}
