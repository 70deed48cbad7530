//! SVG line plots with plotters' SVG backend (text is written as SVG `<text>` elements, so
//! no system fonts are needed). Every axis has tick labels; a logarithmic axis spans whole
//! decades (so it always has labelled ticks), shows its ticks as plain numbers in the data's
//! units (`0.01`, `1`, `100`) and says "log scale" in its caption. Our series are lines with
//! dots; the paper's ([`SeriesStyle::PaperPoints`]) hollow triangles beside them.

use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;

use crate::error::BenchError;
use crate::experiment::{Curve, SeriesStyle};

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

/// The whole decades around the finite positive values: `10^floor(log10 min)` to
/// `10^ceil(log10 max)`, at least one decade wide. `None` when some finite value is not
/// positive or there is none.
fn decade_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .try_fold((f64::INFINITY, 0.0_f64), |(a, b), v| {
            (v > 0.0).then(|| (a.min(v), b.max(v)))
        })?;
    if !lo.is_finite() {
        return None;
    }
    let lo_exp = lo.log10().floor();
    let mut hi_exp = hi.log10().ceil();
    if hi_exp <= lo_exp {
        hi_exp = lo_exp + 1.0;
    }
    Some((10f64.powf(lo_exp), 10f64.powf(hi_exp)))
}

/// Ticks of a log axis from `lo` to `hi` (whole decades): every decade `10^k`, plus `2·10^k`
/// and `5·10^k` when the axis spans at most three decades.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (k0, k1) = (lo.log10().round() as i32, hi.log10().round() as i32);
    let fine = k1 - k0 <= 3;
    let mut ticks = Vec::new();
    for k in k0..=k1 {
        let decade = 10f64.powi(k);
        ticks.push(decade);
        if fine && k < k1 {
            ticks.extend([2.0 * decade, 5.0 * decade]);
        }
    }
    ticks
}

/// A tick label: the number in plain decimals with up to three significant digits (`0.01`,
/// `0.25`, `1`, `100`, `2500`), scientific only far from 1 (`1e-5`, `2e7`).
pub fn fmt_tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor();
    if !(-4.0..6.0).contains(&mag) {
        let s = format!("{v:.2e}");
        return match s.split_once('e') {
            Some((mantissa, exp)) => {
                let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
                format!("{mantissa}e{exp}")
            }
            None => s,
        };
    }
    let decimals = (2.0 - mag).max(0.0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One axis: its range and whether it is logarithmic.
struct Axis {
    range: Range<f64>,
    log: bool,
}

impl Axis {
    /// A log axis over whole decades when `log` is asked for and every value is positive,
    /// else a padded linear one.
    fn new(values: &dyn Fn() -> Vec<f64>, log: bool) -> Option<Self> {
        if log {
            if let Some((lo, hi)) = decade_range(values().into_iter()) {
                return Some(Self {
                    range: lo..hi,
                    log: true,
                });
            }
        }
        let (lo, hi) = padded_range(values().into_iter())?;
        Some(Self {
            range: lo..hi,
            log: false,
        })
    }

    /// The axis caption: the label, plus "log scale" for a logarithmic axis.
    fn caption(&self, label: &str) -> String {
        if self.log {
            format!("{label}, log scale")
        } else {
            label.to_string()
        }
    }

    /// Tick labels: [`fmt_tick`], with values within rounding of zero on a linear axis
    /// shown as `0`.
    fn tick(&self, v: f64) -> String {
        let span = (self.range.end - self.range.start).abs();
        if !self.log && v.abs() < 1e-9 * span {
            "0".to_string()
        } else {
            fmt_tick(v)
        }
    }
}

/// Renders `curve` as an SVG document (800 × 500). A curve without any finite point gives
/// an error; with `log_x` / `log_y` and every value of that axis positive, the axis is
/// logarithmic.
///
/// Errors: [`BenchError::Plot`].
pub fn render_svg(curve: &Curve) -> Result<String, BenchError> {
    let err = |reason: String| BenchError::Plot {
        name: curve.file_stem.clone(),
        reason,
    };
    let values = |axis: usize| {
        move || -> Vec<f64> {
            curve
                .series
                .iter()
                .flat_map(|s| s.points.iter())
                .map(|p| if axis == 0 { p.0 } else { p.1 })
                .collect()
        }
    };
    let x = Axis::new(&values(0), curve.log_x).ok_or_else(|| err("no finite points".into()))?;
    let y = Axis::new(&values(1), curve.log_y).ok_or_else(|| err("no finite points".into()))?;
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
        let (xr, yr) = (x.range.clone(), y.range.clone());
        let log = |axis: &Axis| {
            let r = &axis.range;
            // A hair wider than the decades, so the end ticks are not lost to rounding.
            (r.start / 1.0001..r.end * 1.0001)
                .log_scale()
                .with_key_points(log_ticks(r.start, r.end))
        };
        match (x.log, y.log) {
            (false, false) => draw(&mut builder, curve, &x, &y, xr, yr),
            (true, false) => draw(&mut builder, curve, &x, &y, log(&x), yr),
            (false, true) => draw(&mut builder, curve, &x, &y, xr, log(&y)),
            (true, true) => draw(&mut builder, curve, &x, &y, log(&x), log(&y)),
        }
        .map_err(err)?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// Builds the chart on the axes' coordinates and draws mesh, series and legend.
fn draw<XR, YR>(
    builder: &mut ChartBuilder<'_, '_, SVGBackend<'_>>,
    curve: &Curve,
    x: &Axis,
    y: &Axis,
    x_range: XR,
    y_range: YR,
) -> Result<(), String>
where
    XR: AsRangedCoord<Value = f64>,
    YR: AsRangedCoord<Value = f64>,
    XR::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    YR::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = builder
        .build_cartesian_2d(x_range, y_range)
        .map_err(|e| e.to_string())?;
    let (x_caption, y_caption) = (x.caption(&curve.x_label), y.caption(&curve.y_label));
    let x_fmt = |v: &f64| x.tick(*v);
    let y_fmt = |v: &f64| y.tick(*v);
    chart
        .configure_mesh()
        .x_desc(x_caption)
        .y_desc(y_caption)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, s) in curve.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .filter(|p| (!x.log || p.0 > 0.0) && (!y.log || p.1 > 0.0))
            .collect();
        match s.style {
            SeriesStyle::Line => {
                chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                    .map_err(|e| e.to_string())?
                    .label(s.name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
                chart
                    .draw_series(pts.into_iter().map(|p| Circle::new(p, 2, color.filled())))
                    .map_err(|e| e.to_string())?;
            }
            SeriesStyle::PaperPoints => {
                chart
                    .draw_series(
                        pts.into_iter()
                            .map(|p| TriangleMarker::new(p, 6, color.stroke_width(2))),
                    )
                    .map_err(|e| e.to_string())?
                    .label(s.name.clone())
                    .legend(move |(x, y)| {
                        TriangleMarker::new((x + 10, y), 6, color.stroke_width(2))
                    });
            }
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_plain_numbers() {
        assert_eq!(fmt_tick(0.01), "0.01");
        assert_eq!(fmt_tick(1.0), "1");
        assert_eq!(fmt_tick(100.0), "100");
        assert_eq!(fmt_tick(0.25), "0.25");
        assert_eq!(fmt_tick(1e-5), "1e-5");
        assert_eq!(decade_range([0.19, 0.3].into_iter()), Some((0.1, 1.0)));
        assert_eq!(decade_range([0.1].into_iter()), Some((0.1, 1.0)));
        assert_eq!(decade_range([-1.0, 2.0].into_iter()), None);
        assert_eq!(log_ticks(0.1, 1.0), vec![0.1, 0.2, 0.5, 1.0]);
        assert_eq!(log_ticks(1e-3, 1e5).len(), 9);
    }
}
