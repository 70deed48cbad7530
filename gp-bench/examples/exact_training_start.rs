//! Exact-GP training from the common start `ℓ = 1` and from the data-based start
//! ([`TrainStart::Data`]), side by side: why each run stopped, its log marginal likelihood
//! and its test RMSE against predicting the training mean.
//!
//! The file's first `--train` rows (default 4000) train an SE-ARD exact GP on standardized
//! inputs and targets; its last `--test` rows (default 1024) test it. Each run stops after
//! at most `--cap` L-BFGS iterations (default 1000, the library's).
//!
//! ```text
//! cargo run --release -p gp-bench --example exact_training_start -- ../shared/datasets/pumadyn32nm.csv
//! ```

use std::path::PathBuf;
use std::time::Instant;

use gp_bench::data::csv_loader::{load_csv, CsvOptions};
use gp_bench::data::Standardizer;
use gp_kernels::SquaredExponential;
use gp_models::{
    train, ExactGp, GpModel, LbfgsOptions, Optimizer, PredictRequest, TrainOptions, TrainStart,
};

fn flag(args: &[String], name: &str, default: usize) -> Result<usize, Box<dyn std::error::Error>> {
    match args.iter().position(|a| a == name) {
        Some(i) => Ok(args
            .get(i + 1)
            .ok_or(format!("{name} needs a value"))?
            .parse()?),
        None => Ok(default),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .map(PathBuf::from)
        .ok_or("usage: exact_training_start <file.csv> [--train N] [--test M] [--cap K]")?;
    let data = load_csv(&path, &CsvOptions::default())?;
    let n_train = flag(&args, "--train", 4000)?.min(data.len());
    let n_test = flag(&args, "--test", 1024)?.min(data.len() - n_train);
    let cap = flag(&args, "--cap", 1000)?;
    let train_part = data.select_rows(&(0..n_train).collect::<Vec<_>>())?;
    let test_part = data.select_rows(&(data.len() - n_test..data.len()).collect::<Vec<_>>())?;
    let st = Standardizer::fit(train_part.x.as_ref(), train_part.y.as_ref())?;
    let x = st.transform_x(train_part.x.as_ref())?;
    let y = st.transform_y(train_part.y.as_ref());
    let x_test = st.transform_x(test_part.x.as_ref())?;
    let d = x.ncols();
    let mean_rmse = {
        let m = train_part.y.iter().sum::<f64>() / n_train as f64;
        (test_part.y.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n_test as f64).sqrt()
    };
    println!(
        "{}: {n_train} training and {n_test} test points, d = {d}",
        data.name
    );
    println!("predicting the training mean: test RMSE {mean_rmse:.4}");
    let gp = ExactGp::fit(
        SquaredExponential::new(vec![1.0; d], 1.0)?,
        x.as_ref(),
        y.as_ref(),
        1.0,
    )?;
    for (label, start) in [
        ("data", TrainStart::Data),
        ("l = 1, variance 1, noise 1", TrainStart::Model),
    ] {
        let t = Instant::now();
        let trained = train(
            &gp,
            &TrainOptions {
                start,
                optimizer: Optimizer::Lbfgs(LbfgsOptions {
                    max_iterations: cap,
                    ..LbfgsOptions::default()
                }),
                ..TrainOptions::default()
            },
        )?;
        let seconds = t.elapsed().as_secs_f64();
        let pred = trained
            .model
            .predict(x_test.as_ref(), &PredictRequest::default())?;
        let mean = st.inverse_y(pred.mean.as_ref());
        let rmse = ((0..n_test)
            .map(|i| (test_part.y[i] - mean[i]).powi(2))
            .sum::<f64>()
            / n_test as f64)
            .sqrt();
        println!(
            "\nstart {label}: test RMSE {rmse:.4}, log marginal likelihood {:.3}, {seconds:.1} s",
            trained.model.log_marginal_likelihood()
        );
        print!("{}", trained.report);
    }
    Ok(())
}
