//! What one exact-GP training evaluation costs next to a stand-alone gradient.
//!
//! `train` evaluates the objective at new hyperparameters: it fills `K + σ²I`, factors it
//! (`n³/3` flops), forms the inverse (`2n³/3`) and runs the gradient pass. A stand-alone
//! `lml(&LmlRequest::with_gradient())` on a fitted model reuses the model's factor and does
//! only the inverse and the gradient pass; refitting (`with_log_params`) does the fill and
//! the factorization. This prints the three side by side on the first 90% of a CSV file
//! (standardized), so that "evaluation ≈ refit + gradient" can be checked.
//!
//! ```text
//! cargo run --release -p gp-bench --example exact_objective_cost -- ../shared/datasets/abalone.csv
//! ```

use std::path::PathBuf;
use std::time::Instant;

use gp_bench::data::csv_loader::{load_csv, CsvOptions};
use gp_bench::data::Standardizer;
use gp_kernels::SquaredExponential;
use gp_models::{ExactGp, GpModel, LmlRequest};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .ok_or("usage: exact_objective_cost <file.csv> (header row, target last)")?;
    let data = load_csv(&path, &CsvOptions::default())?;
    let n = data.len() * 9 / 10;
    let train = data.select_rows(&(0..n).collect::<Vec<_>>())?;
    let st = Standardizer::fit(train.x.as_ref(), train.y.as_ref())?;
    let x = st.transform_x(train.x.as_ref())?;
    let y = st.transform_y(train.y.as_ref());
    let d = x.ncols();
    let kernel = SquaredExponential::isotropic(d, (d as f64).sqrt(), 1.0)?;
    let gp = ExactGp::fit(kernel, x.as_ref(), y.as_ref(), 0.5)?;
    let params = gp.log_params();
    println!("{}: n = {n}, d = {d}", data.name);
    println!(
        "rep | lml+grad on the fitted model | refit | objective (1st call) | objective (2nd call)"
    );
    for rep in 0..3 {
        let t = Instant::now();
        gp.lml(&LmlRequest::with_gradient())?;
        let standalone = t.elapsed().as_secs_f64();
        let t = Instant::now();
        gp.with_log_params(&params)?;
        let refit = t.elapsed().as_secs_f64();
        let mut objective = gp.training_objective();
        let t = Instant::now();
        objective(&params, 0)?;
        let first = t.elapsed().as_secs_f64();
        let t = Instant::now();
        objective(&params, 0)?;
        let second = t.elapsed().as_secs_f64();
        println!(
            "{rep:>3} | {standalone:>8.3} s | {refit:>6.3} s | {first:>8.3} s | {second:>8.3} s"
        );
    }
    Ok(())
}
