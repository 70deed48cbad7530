//! One fold of GP-GRIEF Table 1 at the paper's settings (GRIEF-II with the `p` rule, GRIEF-I
//! with p = 1000 and 10 000 MALA steps, the exact GP where the training part is small),
//! timed, without the rest of `reproduce grief --full`.
//!
//! ```text
//! cargo run --release -p gp-bench --example grief_fold -- fertility 0
//! ```
//!
//! Arguments: a Table 1 data set (`uci/<name>` of the data directory: `$GP_DATA_DIR`, else
//! `../shared/datasets`) and the fold (0–9).

use std::path::PathBuf;

use gp_bench::data::uci::load_uci;
use gp_bench::papers::grief::grief_fold::{run_grief_fold, GriefFoldOptions, InitRows};
use gp_models::sampling::MalaOptions;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().ok_or("usage: grief_fold <dataset> [fold]")?;
    let fold: usize = args.next().map_or(Ok(0), |s| s.parse())?;
    let dir = std::env::var_os("GP_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/datasets"));
    let data = load_uci(&name, &dir)?;
    let (train, test) = data.fold(fold)?;
    let options = GriefFoldOptions {
        n_full: train.len() + test.len(),
        init_points: 1000,
        init_restarts: 0,
        max_iterations: 1000,
        exact_max_train: Some(5000),
        p_type_one: 1000,
        mala: MalaOptions::default(),
        seed: fold as u64,
        init_rows: InitRows::TrainingPart,
        progress: true,
    };
    let start = std::time::Instant::now();
    let r = run_grief_fold(&train, &test, &options)?;
    println!(
        "{name}, fold {fold}: {} training / {} test points, grid 10^{:.1}, {:.1} s in all",
        r.n_train,
        r.n_test,
        r.log10_m,
        start.elapsed().as_secs_f64()
    );
    println!(
        "initialisation (exact GP on ≤ 1000 points): {:.1} s",
        r.init_seconds
    );
    for (label, m) in [("GP-GRIEF-II", &r.type_two), ("GP-GRIEF-I", &r.type_one)] {
        println!(
            "{label}: p = {}, test RMSE {:.4}, {:.1} s with the initialisation ({})",
            m.p, m.rmse, m.seconds, m.detail
        );
    }
    if let Some(e) = &r.exact {
        println!(
            "exact GP: test RMSE {:.4}, {:.1} s ({})",
            e.rmse, e.seconds, e.detail
        );
    }
    Ok(())
}
