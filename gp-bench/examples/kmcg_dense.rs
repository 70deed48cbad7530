//! One dense KMCG problem at `--full` settings (CG/KMCG every step P ≤ 100, VFE/FITC at every
//! step with the paper's 10 seeds), without the rest of `reproduce kmcg --full`: the ε tables
//! with the paper's values and the claims judged on this problem alone.
//!
//! ```text
//! cargo run --release -p gp-bench --example kmcg_dense -- elevators se
//! ```
//!
//! Arguments: a data set (`mpg`, `abalone`, `ailerons`, `elevators`, `poletele`,
//! `precipitation`, `pumadyn`, `toy`) and the kernel (`se` or `matern`). Data from
//! `$GP_DATA_DIR`, else `../shared/datasets`.

use std::path::PathBuf;
use std::time::Instant;

use gp_bench::experiment::RunSize;
use gp_bench::papers::kmcg::claims;
use gp_bench::papers::kmcg::curves::Method;
use gp_bench::papers::kmcg::dense::{load_dense, SPLIT_SEED};
use gp_bench::papers::kmcg::fig_dense::{run_options, TABLE_STEPS};
use gp_bench::papers::kmcg::hyper::{DenseSet, KernelKind};
use gp_bench::papers::kmcg::paper_table::Metric;
use gp_bench::papers::kmcg::problem_run::run_dense;
use gp_bench::papers::kmcg::report_tables::{metric_table, time_table};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let set = DenseSet::parse(&args.next().ok_or("usage: kmcg_dense <set> [se|matern]")?)?;
    let kind = match args.next().as_deref() {
        None | Some("se") => KernelKind::SeArd,
        Some("matern") => KernelKind::Matern52Ard,
        Some(other) => return Err(format!("kernel `{other}`: use se or matern").into()),
    };
    let dir = std::env::var_os("GP_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/datasets"));
    let start = Instant::now();
    let problem = load_dense(set, kind, Some(&dir), SPLIT_SEED)?;
    println!(
        "{} {}: N = {}, n* = {}, d = {}{}; exact reference {:.1} s",
        problem.name,
        kind.label(),
        problem.x_train.nrows(),
        problem.x_test.nrows(),
        problem.x_train.ncols(),
        problem
            .stand_in
            .as_deref()
            .map_or(String::new(), |s| format!(" ({s})")),
        start.elapsed().as_secs_f64()
    );
    let options = run_options(RunSize::Full);
    let run = run_dense(&problem, &options)?;
    println!("all methods: {:.1} s\n", start.elapsed().as_secs_f64());
    let runs = vec![run];
    let all = [
        Method::Cg,
        Method::Kmcg,
        Method::Vfe,
        Method::Fitc,
        Method::CgTextbook,
        Method::KmcgTextbook,
    ];
    let var = [Method::Kmcg, Method::Vfe, Method::Fitc];
    for (title, metric, methods) in [
        ("ε_f, ours (paper)", Metric::EpsF, &all[..]),
        ("ε_var, ours (paper)", Metric::EpsVar, &var[..]),
        (
            "ε_ev, ours (paper); VFE in the paper's plotted sign",
            Metric::EpsEv,
            &var[..],
        ),
    ] {
        println!(
            "{title}\n{}",
            metric_table(&runs, metric, methods, &TABLE_STEPS).to_markdown()
        );
    }
    println!("time\n{}", time_table(&runs).to_markdown());
    let mut checks = claims::c1(&runs);
    checks.push(claims::c2(&runs));
    checks.extend(claims::c3(&runs));
    checks.push(claims::c4(&runs));
    checks.extend(claims::c5(&runs));
    checks.extend(claims::c6(&runs, options.p_max));
    for c in checks {
        println!("{}: {}", if c.met { "met" } else { "NOT met" }, c.name);
    }
    Ok(())
}
