//! Report tables and series shared by the KMCG experiments: our value beside the paper's.

use super::curves::{Method, MethodCurve, ProblemRun};
use super::paper_table::{paper_value, Metric, PaperKernel};
use crate::experiment::{Curve, Series, SeriesStyle};
use crate::table::Table;

/// The appendix's kernel of our kernel label.
pub fn paper_kernel(label: &str) -> PaperKernel {
    if label.starts_with("SE") {
        PaperKernel::Se
    } else {
        PaperKernel::Matern52
    }
}

/// A value in 3 decimals or 2-digit scientific notation.
pub fn fmt(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if (1e-2..1e3).contains(&v.abs()) {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// "ours (paper)" for one cell.
pub fn cell(ours: Option<f64>, paper: Option<f64>) -> String {
    match (ours, paper) {
        (Some(o), Some(p)) => format!("{} ({})", fmt(o), fmt(p)),
        (Some(o), None) => fmt(o),
        (None, Some(p)) => format!("— ({})", fmt(p)),
        (None, None) => "—".into(),
    }
}

/// One row per problem and method: `ours (paper)` at each step of `steps`.
pub fn metric_table(
    runs: &[ProblemRun],
    metric: Metric,
    methods: &[Method],
    steps: &[usize],
) -> Table {
    let mut headers = vec!["data set".to_string(), "kernel".into(), "method".into()];
    headers.extend(steps.iter().map(|p| format!("P = {p}")));
    headers.push("last good P / crashed runs".into());
    let mut t = Table::new(headers);
    for r in runs {
        for &m in methods {
            let Some(c) = r.curve(m) else { continue };
            let mut row = vec![r.dataset.clone(), r.kernel.clone(), m.label().to_string()];
            for &p in steps {
                let ours = c.at(p).and_then(|s| match metric {
                    Metric::EpsF | Metric::Smse => Some(s.eps_f),
                    Metric::EpsVar => s.eps_var,
                    Metric::EpsEv => {
                        if m == Method::Vfe {
                            s.eps_ev_plotted
                        } else {
                            s.eps_ev
                        }
                    }
                    _ => None,
                });
                let kernel = paper_kernel(&r.kernel);
                // The dense appendix labels VFE's plotted evidence row apart; the grid one
                // calls it "VFE".
                let plotted = (metric == Metric::EpsEv && m == Method::Vfe)
                    .then(|| {
                        paper_value(
                            metric,
                            kernel,
                            &r.dataset,
                            "VFE as plotted (DTC nlZ − trace term)",
                            p,
                        )
                    })
                    .flatten();
                let paper = plotted
                    .or_else(|| paper_value(metric, kernel, &r.dataset, m.paper_label(), p))
                    .map(|v| v.value);
                row.push(cell(ours, if r.stand_in { None } else { paper }));
            }
            row.push(format!("{} / {} of {}", c.last_good, c.crashed, c.runs));
            t.row(row);
        }
    }
    t
}

/// Our curve of a metric.
pub fn series(c: &MethodCurve, f: fn(&super::curves::StepMetrics) -> Option<f64>) -> Series {
    Series {
        name: c.method.label().to_string(),
        points: c
            .steps
            .iter()
            .filter_map(|s| f(s).filter(|v| *v > 0.0).map(|v| (s.p as f64, v)))
            .collect(),
        style: SeriesStyle::Line,
    }
}

/// The paper's values of a method as hollow markers at `steps`.
pub fn paper_series(r: &ProblemRun, metric: Metric, m: Method, steps: &[usize]) -> Option<Series> {
    if r.stand_in {
        return None;
    }
    let pts: Vec<(f64, f64)> = steps
        .iter()
        .filter_map(|&p| {
            paper_value(
                metric,
                paper_kernel(&r.kernel),
                &r.dataset,
                m.paper_label(),
                p,
            )
            .map(|v| (p as f64, v.value))
        })
        .filter(|(_, v)| *v > 0.0)
        .collect();
    (!pts.is_empty()).then(|| Series {
        name: format!("{} (paper)", m.label()),
        points: pts,
        style: SeriesStyle::PaperPoints,
    })
}

/// Time at P = 10, 50, 100 per problem and method.
pub fn time_table(runs: &[ProblemRun]) -> Table {
    let mut t = Table::new([
        "data set", "kernel", "method", "P = 10", "P = 50", "P = 100",
    ]);
    for r in runs {
        for m in [Method::Cg, Method::Kmcg, Method::Vfe, Method::Fitc] {
            let Some(c) = r.curve(m) else { continue };
            let at = |p: usize| {
                c.at(p)
                    .and_then(|s| s.seconds)
                    .map_or("—".into(), |t| format!("{t:.3} s"))
            };
            t.row([
                r.dataset.clone(),
                r.kernel.clone(),
                m.label().into(),
                at(10),
                at(50),
                at(100),
            ]);
        }
    }
    t
}

/// `ε_f` (or SMSE) against wall time for CG, KMCG, VFE and FITC (Figs. 9, 10, 14): the
/// Krylov methods' cumulative time, the baselines' time of each step's fit.
pub fn time_curve(r: &ProblemRun, file_stem: String, title: String, y_label: &str) -> Curve {
    let series = [Method::Cg, Method::Kmcg, Method::Vfe, Method::Fitc]
        .iter()
        .filter_map(|&m| r.curve(m))
        .map(|c| Series {
            name: c.method.label().to_string(),
            points: c
                .steps
                .iter()
                .filter_map(|s| Some((s.seconds?, s.eps_f)))
                .filter(|&(t, e)| t > 0.0 && e > 0.0)
                .collect(),
            style: SeriesStyle::Line,
        })
        .collect();
    Curve {
        file_stem,
        title,
        x_label: "seconds".into(),
        y_label: y_label.into(),
        log_x: true,
        log_y: true,
        series,
    }
}
