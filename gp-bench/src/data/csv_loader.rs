//! A numeric CSV loader: a header row, one data point per line, every cell a finite number.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use faer::{Col, Mat};

use super::{DataOrigin, Dataset};
use crate::error::BenchError;

/// Which column is the target.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TargetColumn {
    /// The last column (the layout of `../shared/datasets`).
    #[default]
    Last,
    /// The column with this header name.
    Name(String),
}

/// Options of [`load_csv`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CsvOptions {
    /// The target column (default: the last).
    pub target: TargetColumn,
    /// The cell separator (default `b','`).
    pub delimiter: Option<u8>,
}

/// The layout every loaded file must have, quoted in error messages.
pub const EXPECTED_LAYOUT: &str = "a comma-separated file with one header row (`x1,...,xd,y`), \
then one data point per line, every cell a finite number, the target in the last column or \
in the column named by the experiment";

/// Loads a numeric CSV file: the header names the columns; every other column than the
/// target becomes an input, in file order. The data set is named after the file stem.
///
/// Errors: [`BenchError::MissingFile`] (the message names the path and the expected layout),
/// [`BenchError::RaggedRow`], [`BenchError::NonNumeric`], [`BenchError::NonFinite`],
/// [`BenchError::MissingColumn`], and [`BenchError::BadCsv`] for a file without a header
/// (a first row that is all numbers is taken as a missing header, not as column names),
/// with fewer than two columns or without data rows. Inputs that are all equal are loaded
/// with a warning on standard error ([`constant_inputs_warning`]).
pub fn load_csv(path: &Path, options: &CsvOptions) -> Result<Dataset, BenchError> {
    let file = File::open(path).map_err(|e| BenchError::MissingFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
        layout: EXPECTED_LAYOUT.to_string(),
    })?;
    let bad = |reason: String| BenchError::BadCsv {
        path: path.to_path_buf(),
        reason,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .delimiter(options.delimiter.unwrap_or(b','))
        .from_reader(file);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| bad(format!("cannot read the header row: {e}")))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    if headers.iter().all(|h| h.parse::<f64>().is_ok()) {
        return Err(bad(format!(
            "the first row ({}) is all numbers: the file has no header row, and loading it \
             would drop its first data point; add a header row ({EXPECTED_LAYOUT})",
            headers.join(",")
        )));
    }
    if headers.len() < 2 || headers.iter().all(String::is_empty) {
        return Err(bad(format!(
            "the header row has {} column(s); expected at least one input and the target ({EXPECTED_LAYOUT})",
            headers.len()
        )));
    }
    let target = match &options.target {
        TargetColumn::Last => headers.len() - 1,
        TargetColumn::Name(name) => {
            headers
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| BenchError::MissingColumn {
                    path: path.to_path_buf(),
                    name: name.clone(),
                    headers: headers.join(","),
                })?
        }
    };
    let ncols = headers.len();
    let (values, _) =
        read_numeric_records(&mut reader, path, Some(ncols), ReadErrors::Csv, &|j| {
            headers[j].clone()
        })?;
    let n = values.len() / ncols;
    if n == 0 {
        return Err(bad(format!(
            "no data rows after the header ({EXPECTED_LAYOUT})"
        )));
    }
    let inputs: Vec<usize> = (0..ncols).filter(|&j| j != target).collect();
    let x = Mat::from_fn(n, inputs.len(), |i, k| values[i * ncols + inputs[k]]);
    let y = Col::from_fn(n, |i| values[i * ncols + target]);
    let name = path
        .file_stem()
        .map_or_else(|| "data".to_string(), |s| s.to_string_lossy().into_owned());
    if let Some(warning) = constant_inputs_warning(&path.display().to_string(), x.as_ref()) {
        eprintln!("warning: {warning}");
    }
    Ok(Dataset {
        name,
        x,
        y,
        feature_names: inputs.iter().map(|&j| headers[j].clone()).collect(),
        target_name: headers[target].clone(),
        origin: DataOrigin::File(path.to_path_buf()),
    })
}

/// A warning when the inputs cannot inform a GP: every row of `x` is the same point (with a
/// single row there is nothing to compare, so no warning), or every input column is
/// constant. `name` names the data in the message.
pub fn constant_inputs_warning(name: &str, x: faer::MatRef<'_, f64>) -> Option<String> {
    if x.nrows() < 2 || x.ncols() == 0 {
        return None;
    }
    let constant = (0..x.ncols()).all(|j| (1..x.nrows()).all(|i| x[(i, j)] == x[(0, j)]));
    constant.then(|| {
        format!(
            "{name}: all {} rows have the same inputs (every one of the {} input columns is \
             constant), so a GP cannot learn anything from them; check the file",
            x.nrows(),
            x.ncols()
        )
    })
}

/// How a failure to read the underlying bytes is reported by [`read_numeric_records`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadErrors {
    /// A plain file: [`BenchError::BadCsv`].
    Csv,
    /// A gzip stream: the decoder failed, so [`BenchError::BadGzip`].
    Gzip,
}

/// Reads every remaining record of `reader` as finite numbers, row-major, and returns them
/// with the number of columns. `ncols` is the header's width when there is a header; without
/// one (`None`) the first record sets it (0 when there are no records). `column` names
/// column `j` in error messages. Shared by the CSV loader and the headerless gzip files, so
/// both report ragged rows and bad cells alike.
///
/// Errors: [`BenchError::RaggedRow`], [`BenchError::NonNumeric`], [`BenchError::NonFinite`],
/// and [`BenchError::BadCsv`] or [`BenchError::BadGzip`] (per `read_errors`) when the bytes
/// cannot be read.
pub(crate) fn read_numeric_records<R: Read>(
    reader: &mut csv::Reader<R>,
    path: &Path,
    mut ncols: Option<usize>,
    read_errors: ReadErrors,
    column: &dyn Fn(usize) -> String,
) -> Result<(Vec<f64>, usize), BenchError> {
    let mut values: Vec<f64> = Vec::new();
    let mut record = csv::StringRecord::new();
    let mut line: u64 = u64::from(ncols.is_some());
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let reason = format!("after line {line}: {e}");
            match (read_errors, e.kind()) {
                (ReadErrors::Gzip, csv::ErrorKind::Io(_)) => BenchError::BadGzip {
                    path: path.to_path_buf(),
                    reason,
                },
                _ => BenchError::BadCsv {
                    path: path.to_path_buf(),
                    reason,
                },
            }
        })?;
        if !more {
            break;
        }
        line = record.position().map_or(line + 1, |p| p.line());
        let expected = *ncols.get_or_insert(record.len());
        if record.len() != expected {
            return Err(BenchError::RaggedRow {
                path: path.to_path_buf(),
                line,
                expected,
                found: record.len(),
            });
        }
        for (j, cell) in record.iter().enumerate() {
            let text = cell.trim();
            let v: f64 = text.parse().map_err(|_| BenchError::NonNumeric {
                path: path.to_path_buf(),
                line,
                column: column(j),
                value: text.to_string(),
            })?;
            if !v.is_finite() {
                return Err(BenchError::NonFinite {
                    path: path.to_path_buf(),
                    line,
                    column: column(j),
                    value: text.to_string(),
                });
            }
            values.push(v);
        }
    }
    Ok((values, ncols.unwrap_or(0)))
}
