//! Plain markdown tables for the command line and the reports.

/// A markdown table: a header row and rows of already formatted cells, printed with columns
/// padded to a common width so it reads well in a terminal and renders in markdown.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with the given column headers.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Self {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are left empty, extra cells are kept.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    /// Number of data rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no data rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as markdown with padded columns.
    pub fn to_markdown(&self) -> String {
        let ncols = self
            .rows
            .iter()
            .map(Vec::len)
            .chain(std::iter::once(self.headers.len()))
            .max()
            .unwrap_or(0);
        let cell = |row: &[String], j: usize| row.get(j).cloned().unwrap_or_default();
        let widths: Vec<usize> = (0..ncols)
            .map(|j| {
                self.rows
                    .iter()
                    .map(|r| cell(r, j).chars().count())
                    .chain(std::iter::once(cell(&self.headers, j).chars().count()))
                    .max()
                    .unwrap_or(0)
                    .max(3)
            })
            .collect();
        let line = |row: &[String]| {
            let cells: Vec<String> = (0..ncols)
                .map(|j| {
                    let c = cell(row, j);
                    let pad = widths[j] - c.chars().count();
                    format!("{c}{}", " ".repeat(pad))
                })
                .collect();
            format!("| {} |", cells.join(" | "))
        };
        let mut out = line(&self.headers);
        out.push('\n');
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&format!("|-{}-|\n", rule.join("-|-")));
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_markdown())
    }
}

/// Formats a duration in seconds with a unit that keeps 3 significant digits readable; from
/// 10 000 s on in hours with the seconds beside (`20.71 h (74550 s)`), so that the estimates
/// of hours-long `--full` runs read at a glance.
pub fn fmt_seconds(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.1} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else if s < 1e4 {
        format!("{s:.2} s")
    } else {
        format!("{:.2} h ({s:.0} s)", s / 3600.0)
    }
}

/// Formats a rate (per second) with an SI prefix, e.g. `1.23 G/s`.
pub fn fmt_rate(per_second: f64) -> String {
    let (v, p) = if per_second >= 1e9 {
        (per_second / 1e9, "G")
    } else if per_second >= 1e6 {
        (per_second / 1e6, "M")
    } else if per_second >= 1e3 {
        (per_second / 1e3, "k")
    } else {
        (per_second, "")
    };
    format!("{v:.2} {p}/s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_pads_columns() {
        let mut t = Table::new(["n", "time"]);
        t.row(["1000", "1.0 ms"]).row(["20000", "3 s"]);
        let s = t.to_markdown();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines
            .iter()
            .all(|l| l.chars().count() == lines[0].chars().count()));
        assert_eq!(lines[3], "| 20000 | 3 s    |");
    }

    #[test]
    fn units() {
        assert_eq!(fmt_seconds(0.0015), "1.5 ms");
        assert_eq!(fmt_seconds(2.0), "2.00 s");
        assert_eq!(fmt_seconds(9999.0), "9999.00 s");
        assert_eq!(fmt_seconds(74_550.0), "20.71 h (74550 s)");
        assert_eq!(fmt_rate(2.5e9), "2.50 G/s");
    }
}
