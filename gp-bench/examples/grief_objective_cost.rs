//! What one GP-GRIEF-II training evaluation costs, by part, on one Table 1 fold.
//!
//! `train` evaluates the objective at new hyperparameters: it rebuilds the basis and the
//! statistics `ΦᵀΦ`, `Φᵀy` (`with_log_params`, one streamed pass, `n p²` multiply-adds)
//! and runs the θ-gradient pass (a second streamed pass: `Φ_b P⁻¹` per row block, `n p²`
//! more). This prints both parts and the whole objective side by side.
//!
//! ```text
//! cargo run --release -p gp-bench --example grief_objective_cost -- kin40k 0 1000
//! ```
//!
//! Arguments: a Table 1 data set (`uci/<name>` under `$GP_DATA_DIR`, else
//! `../shared/datasets`), the fold (default 0) and `p` (default 1000).

use std::path::PathBuf;
use std::time::Instant;

use gp_bench::data::uci::load_uci;
use gp_bench::data::Standardizer;
use gp_kernels::SquaredExponential;
use gp_models::grief::{Grief, GriefOptions};
use gp_models::GpModel;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args
        .next()
        .ok_or("usage: grief_objective_cost <dataset> [fold] [p]")?;
    let fold: usize = args.next().map_or(Ok(0), |s| s.parse())?;
    let p: usize = args.next().map_or(Ok(1000), |s| s.parse())?;
    let dir = std::env::var_os("GP_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/datasets"));
    let data = load_uci(&name, &dir)?;
    let (train, _) = data.fold(fold)?;
    let st = Standardizer::fit(train.x.as_ref(), train.y.as_ref())?;
    let x = st.transform_x(train.x.as_ref())?;
    let y = st.transform_y(train.y.as_ref());
    let d = x.ncols();
    let kernel = SquaredExponential::new(vec![1.0; d], 1.0)?;
    let options = GriefOptions {
        p,
        cap_to_grid: true,
        ..GriefOptions::default()
    };
    let model = Grief::fit(kernel, x.as_ref(), y.as_ref(), 0.1, &options)?;
    let params = model.log_params();
    println!(
        "{name}, fold {fold}: n = {}, d = {d}, p = {}",
        x.nrows(),
        model.eigenfunctions()
    );
    println!("rep | rebuild (basis + statistics) | θ-gradient pass | objective");
    for rep in 0..3 {
        let t = Instant::now();
        let refit = model.with_log_params(&params)?;
        let rebuild = t.elapsed().as_secs_f64();
        let t = Instant::now();
        refit.lml_and_grad(true)?;
        let gradient = t.elapsed().as_secs_f64();
        let mut objective = model.training_objective();
        let t = Instant::now();
        objective(&params, 0)?;
        let whole = t.elapsed().as_secs_f64();
        println!("{rep} | {rebuild:.3} s | {gradient:.3} s | {whole:.3} s");
    }
    Ok(())
}
