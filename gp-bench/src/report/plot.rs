//! SVG line plots with plotters' SVG backend (text is written as SVG `<text>` elements, so
//! no system fonts are needed).

use plotters::prelude::*;

use crate::error::BenchError;
use crate::experiment::Curve;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// The range of finite values, padded by 5% (or by 1 when all values are equal).
fn padded_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return None;
    }
    let pad = if hi > lo { 0.05 * (hi - lo) } else { 1.0 };
    Some((lo - pad, hi + pad))
}

/// Renders `curve` as an SVG document (800 × 500). A curve without any finite point gives
/// an error; with `log_y` and every y positive the y axis is logarithmic.
///
/// Errors: [`BenchError::Plot`].
pub fn render_svg(curve: &Curve) -> Result<String, BenchError> {
    let err = |reason: String| BenchError::Plot {
        name: curve.file_stem.clone(),
        reason,
    };
    let points = || curve.series.iter().flat_map(|s| s.points.iter().copied());
    let (x0, x1) =
        padded_range(points().map(|p| p.0)).ok_or_else(|| err("no finite points".into()))?;
    let (y0, y1) =
        padded_range(points().map(|p| p.1)).ok_or_else(|| err("no finite points".into()))?;
    let ys_positive = points().all(|p| p.1 > 0.0 || !p.1.is_finite());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(&curve.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80);
        if curve.log_y && ys_positive {
            let (lo, hi) = points()
                .map(|p| p.1)
                .filter(|v| v.is_finite())
                .fold((f64::INFINITY, 0.0_f64), |(a, b), v| (a.min(v), b.max(v)));
            let mut chart = builder
                .build_cartesian_2d(x0..x1, (lo / 1.5..hi * 1.5).log_scale())
                .map_err(|e| err(e.to_string()))?;
            chart
                .configure_mesh()
                .x_desc(curve.x_label.as_str())
                .y_desc(curve.y_label.as_str())
                .draw()
                .map_err(|e| err(e.to_string()))?;
            draw_lines(&mut chart, curve).map_err(err)?;
            legend(&mut chart).map_err(err)?;
        } else {
            let mut chart = builder
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| err(e.to_string()))?;
            chart
                .configure_mesh()
                .x_desc(curve.x_label.as_str())
                .y_desc(curve.y_label.as_str())
                .draw()
                .map_err(|e| err(e.to_string()))?;
            draw_lines(&mut chart, curve).map_err(err)?;
            legend(&mut chart).map_err(err)?;
        }
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

fn draw_lines<'a, DB, CT>(chart: &mut ChartContext<'a, DB, CT>, curve: &Curve) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate<From = (f64, f64)>,
{
    for (i, s) in curve.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 2, color.filled())))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn legend<'a, DB, CT>(chart: &mut ChartContext<'a, DB, CT>) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}
