//! Regression from a CSV file, with the model saved to JSON and loaded back.
//!
//! ```text
//! cargo run --release -p gp-models --example csv_regression -- [--csv data.csv] [--out model.json]
//! ```
//!
//! The CSV has a header row and numeric columns; the last column is the target, the others
//! the inputs. Without `--csv` the example writes a small synthetic file (`y = sin(3x₀) + x₁²`
//! plus noise) to the temporary directory and uses it. It holds out every fifth row, fits an
//! exact GP with an SE-ARD kernel to standardized inputs and normalized targets
//! ([`NormalizedY`]), trains it, prints the test RMSE, saves the inner model as JSON, loads
//! it and checks that the loaded model predicts the same bits.

#[path = "support/cli.rs"]
mod cli;
use cli::flag;

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use gp_kernels::SquaredExponential;
use gp_models::data::Standardizer;
use gp_models::faer::{Col, Mat};
use gp_models::prelude::*;

/// Rows of a numeric CSV with a header row.
fn read_csv(path: &PathBuf) -> Result<Vec<Vec<f64>>, Box<dyn std::error::Error>> {
    let mut rows = Vec::new();
    for (i, line) in BufReader::new(File::open(path)?)
        .lines()
        .enumerate()
        .skip(1)
    {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let row = line
            .split(',')
            .map(|v| v.trim().parse::<f64>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{}: line {}: {e}", path.display(), i + 1))?;
        rows.push(row);
    }
    Ok(rows)
}

/// A synthetic two-input data set, written as CSV.
fn write_synthetic(path: &PathBuf) -> std::io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    writeln!(w, "x0,x1,y")?;
    for i in 0..300 {
        let (x0, x1) = ((i % 20) as f64 / 10.0, (i / 20) as f64 / 7.5);
        let noise = 0.05 * (((i * 7919) % 101) as f64 / 50.0 - 1.0);
        writeln!(w, "{x0},{x1},{}", (3.0 * x0).sin() + x1 * x1 + noise)?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = match flag("--csv") {
        Some(p) => PathBuf::from(p),
        None => {
            let p = std::env::temp_dir().join("gpscale_csv_regression.csv");
            write_synthetic(&p)?;
            p
        }
    };
    let rows = read_csv(&path)?;
    let d = rows.first().map_or(0, |r| r.len().saturating_sub(1));
    if d == 0 || rows.iter().any(|r| r.len() != d + 1) {
        return Err(format!("{}: need rows of equal length ≥ 2", path.display()).into());
    }
    let (mut train_rows, mut test_rows) = (Vec::new(), Vec::new());
    for (i, row) in rows.iter().enumerate() {
        if i % 5 == 4 {
            test_rows.push(row);
        } else {
            train_rows.push(row);
        }
    }
    let to_mat = |r: &[&Vec<f64>]| Mat::from_fn(r.len(), d, |i, j| r[i][j]);
    let to_col = |r: &[&Vec<f64>]| Col::from_fn(r.len(), |i| r[i][d]);
    let (x, y, x_test, y_test) = (
        to_mat(&train_rows),
        to_col(&train_rows),
        to_mat(&test_rows),
        to_col(&test_rows),
    );

    // Inputs standardized with the training rows' statistics; targets normalized inside.
    let scaler = Standardizer::fit(x.as_ref(), y.as_ref())?;
    let (xs, xs_test) = (
        scaler.transform_x(x.as_ref())?,
        scaler.transform_x(x_test.as_ref())?,
    );
    let kernel = SquaredExponential::new(vec![1.0; d], 1.0)?;
    let model = NormalizedY::fit(y.as_ref(), |z| ExactGp::fit(kernel, xs.as_ref(), z, 0.1))?;
    let trained = train(&model, &TrainOptions::default())?;
    println!("{trained}");
    let pred = trained
        .model
        .predict(xs_test.as_ref(), &PredictRequest::default())?;
    let rmse = ((0..y_test.nrows())
        .map(|i| (pred.mean[i] - y_test[i]).powi(2))
        .sum::<f64>()
        / y_test.nrows() as f64)
        .sqrt();
    println!(
        "{} training and {} test rows from {}: test RMSE {rmse:.4}",
        y.nrows(),
        y_test.nrows(),
        path.display()
    );

    // Save the fitted (inner) model, load it, and predict again.
    let out = flag("--out").map_or_else(
        || std::env::temp_dir().join("gpscale_csv_regression_model.json"),
        PathBuf::from,
    );
    trained
        .model
        .inner()
        .save_json(BufWriter::new(File::create(&out)?))?;
    let loaded: ExactGp<SquaredExponential> = ExactGp::load_json(File::open(&out)?)?;
    let again = loaded.predict(xs_test.as_ref(), &PredictRequest::default())?;
    let inner = trained
        .model
        .inner()
        .predict(xs_test.as_ref(), &PredictRequest::default())?;
    assert_eq!(
        again.mean, inner.mean,
        "a loaded model predicts the same bits"
    );
    println!(
        "saved to {} and loaded: identical predictions",
        out.display()
    );
    Ok(())
}
