//! The `gp-bench` command line: `reproduce <paper>|all` (the README's main job), `datasets`,
//! `demo` and `bench <name>` scaling tables. Run `gp-bench --help`.

// One `unsafe` call, in `keep_freed_memory` (a malloc tuning call); nothing else may use it.
#![deny(unsafe_code)]
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use gp_bench::data::discovery::find_workspace_root;
use gp_bench::data::{listing, resolve_data_dir, DataDir, DATA_DIR_ENV};
use gp_bench::demo::{self, DemoOptions};
use gp_bench::experiment::RunSize;
use gp_bench::fold_cache::FoldCache;
use gp_bench::papers::{self, Paper};
use gp_bench::reproduce::{estimate_seconds, run_papers, ReproduceOptions};
use gp_bench::table::fmt_seconds;
use gp_bench::tables;
use gp_bench::BenchError;
use gp_kernels::{Kernel, Matern, MaternNu, SquaredExponential};

#[derive(Parser)]
#[command(
    name = "gp-bench",
    version,
    about = "gpscale paper reproductions, data sets, demos and scaling tables"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce a paper's experiments (or all papers') and write report.md, results.json
    /// and SVG plots into <out>/<paper>/.
    Reproduce {
        /// Which paper, or `all`.
        paper: PaperArg,
        #[command(flatten)]
        size: SizeArgs,
        /// Data directory with the real CSV data sets (default: $GP_DATA_DIR, else
        /// ../shared/datasets beside the workspace when present).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Output root; each paper writes into <out>/<paper>/ (default
        /// <workspace>/target/gp-bench).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seed of every split, subsample, generator and restart.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Do not draw progress bars.
        #[arg(long)]
        no_progress: bool,
        /// Run only the first K folds of each data set in the experiments that
        /// cross-validate (GRIEF `table1-folds`); default: the size's number.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        folds: Option<u64>,
        /// Run only these data sets in the experiments that cross-validate (GRIEF
        /// `table1-folds`; comma-separated Table 1 names, e.g. `--sets kin40k,keggu`) and
        /// in KMCG's `dense` and `hyperparameters` (e.g. `--sets elevators,pol`) and RTGPS's
        /// `uci-table` (`--sets pol,bike`); default: the size's sets.
        #[arg(long, value_delimiter = ',')]
        sets: Vec<String>,
        /// Keep every finished fold of the cross-validated experiments (GRIEF
        /// `table1-folds`), and every finished problem (data set × kernel) of KMCG's
        /// `dense` and `hyperparameters`, and every finished training (data set × method) of
        /// RTGPS's `uci-table`, in DIR and reuse the ones computed with the same settings, so
        /// a long `--full` run continues where an interrupted one stopped.
        #[arg(long, value_name = "DIR")]
        fold_cache: Option<PathBuf>,
        /// With --fold-cache: skip the folds that are not in the cache instead of running
        /// them (a report of the recorded folds in seconds).
        #[arg(long, requires = "fold_cache")]
        cached_only: bool,
        /// Folds (KMCG: problems; RTGPS: trainings) run at the same time in the experiments
        /// above, each with sequential dense algebra (2 nearly doubles GRIEF's throughput on 2
        /// cores; the times per fold are then taken under that load).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
        jobs: u64,
        /// With --full: also the parts that take hours and tens of GiB (RTGPS's larger
        /// Tables S1/S2 rows: Kin40K, Protein, KEGG, KEGGU, their time per training step and
        /// projected totals).
        #[arg(long)]
        large: bool,
        /// Seeds per data set in RTGPS's `uci-table` (Tables S1/S2; the paper reports the
        /// mean of 3): seeds `--seed`, `--seed + 1`, …, each its own shuffle, split and
        /// random draws, shown as mean ± std. Other experiments use `--seed` alone.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
        seeds: u64,
        /// Run only these experiments (comma-separated names, e.g. `--only gmm,mnist`); the
        /// report then holds only them.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
    },
    /// List every data set gp-bench knows: where it was found, its size, real or stand-in.
    Datasets {
        /// Data directory (default: $GP_DATA_DIR, else ../shared/datasets when present).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Exact GP on data drawn from a known GP: learned vs true hyperparameters, test metrics.
    Demo {
        /// Training points.
        #[arg(long, default_value_t = 1000)]
        n_train: usize,
        /// Test points.
        #[arg(long, default_value_t = 500)]
        n_test: usize,
        /// Seed of the data and of the L-BFGS restarts.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// A scaling table.
    Bench {
        /// Which table.
        name: BenchName,
        /// Problem sizes (comma separated); each table has its own default.
        #[arg(long, value_delimiter = ',')]
        sizes: Vec<usize>,
        /// Input dimension (default: the table's).
        #[arg(long)]
        dim: Option<usize>,
        /// Timed repetitions per size (the median is reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// `gsgp-table1` only: comma-separated, case-insensitive parts of the row labels to
        /// run (e.g. `radar 51.2k` or `sound,precipitation 528k`); default every row.
        #[arg(long, default_value = "")]
        rows: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum PaperArg {
    /// Every paper, plus a top-level README linking the reports.
    All,
    /// GSGP: faster kernel interpolation (Yadav, Sheldon & Musco).
    Gsgp,
    /// GP-GRIEF: grid-structured eigenfunctions (Evans & Nair).
    Grief,
    /// KMCG: conjugate gradients for kernel machines (Bartels & Hennig).
    Kmcg,
    /// IterNCGP: computation-aware non-conjugate GPs (Tatzel et al.).
    Ncgp,
    /// RR-CG / SS-RFF: randomized truncations (Potapczynski et al.).
    Rtgps,
}

#[derive(Args)]
#[group(multiple = false)]
struct SizeArgs {
    /// Small sizes: all registered experiments in under 3 minutes on 2 cores (default).
    #[arg(long)]
    quick: bool,
    /// The papers' sizes (can take hours; an estimate is printed first).
    #[arg(long)]
    full: bool,
    /// Tiny sizes that only prove the harness (seconds, even in a debug build).
    #[arg(long)]
    smoke: bool,
}

impl SizeArgs {
    fn size(&self) -> RunSize {
        if self.full {
            RunSize::Full
        } else if self.smoke {
            RunSize::Smoke
        } else {
            RunSize::Quick
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchName {
    /// Cholesky LML + gradient of the exact GP (default n = 1000,2000,4000; d = 8).
    ExactLml,
    /// A whole L-BFGS fit of the exact GP (default n = 4000; d = 3).
    ExactFit,
    /// Dense kernel matrix assembly, entries per second (default n = 4000; d = 8).
    KernelAssembly,
    /// Matrix-free K + σ²I with 1 and 16 right-hand sides (default n = 20000; d = 3).
    KernelOperator,
    /// faer Cholesky, sequential against rayon (default n = 1000,2000,4000).
    Cholesky,
    /// SKI operator product at n = 10^6, d = 1, m = 10^4,
    /// and a d = 3, n = 10^5, 30³-grid SKI run (default n = 1000000).
    SkiMatvec,
    /// The GSGP very-large run alone: n streamed 3-D points (default 100000000) on the
    /// 160×80×10 entire-US grid, pre-processing and mean-solve time, peak memory.
    GsgpLarge,
    /// Rows of GSGP Table 1 at the paper's sizes (`reproduce gsgp --full`'s), alone: select
    /// them with `--rows` (e.g. `--rows "radar 51.2k"`; the 6.4M radar row needs ~18 GiB).
    GsgpTable1,
}

/// For `bench` tables that run a paper experiment: prints its notes and raw figures and
/// returns its first table.
fn print_notes_and_first_table(
    out: gp_bench::experiment::ExperimentOutput,
) -> gp_bench::table::Table {
    for note in &out.notes {
        println!("- {note}");
    }
    println!("\n{}", out.raw);
    out.tables
        .into_iter()
        .next()
        .map(|t| t.table)
        .unwrap_or_default()
}

fn or_default(sizes: Vec<usize>, default: &[usize]) -> Vec<usize> {
    if sizes.is_empty() {
        default.to_vec()
    } else {
        sizes
    }
}

fn data_dir(explicit: Option<PathBuf>) -> Result<(DataDir, Option<PathBuf>), BenchError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = find_workspace_root(&cwd);
    let env = std::env::var_os(DATA_DIR_ENV);
    let dir = resolve_data_dir(explicit.as_deref(), env.as_deref(), root.as_deref())?;
    Ok((dir, root))
}

// One argument per flag of `reproduce`, passed straight from the parsed command.
#[allow(clippy::too_many_arguments)]
fn reproduce(
    paper: PaperArg,
    size: RunSize,
    explicit_dir: Option<PathBuf>,
    out: Option<PathBuf>,
    seed: u64,
    show_progress: bool,
    folds: Option<usize>,
    sets: &[String],
    only: &[String],
    fold_cache: Option<PathBuf>,
    cached_only: bool,
    jobs: usize,
    large: bool,
    seeds: usize,
) -> Result<bool, BenchError> {
    if large && size != RunSize::Full {
        return Err(BenchError::InvalidArgument {
            name: "--large",
            reason: format!("adds the hours-long parts of --full runs; got --{size}"),
        });
    }
    let (dir, root) = data_dir(explicit_dir)?;
    let out_root = out.unwrap_or_else(|| {
        root.unwrap_or_else(|| PathBuf::from("."))
            .join("target")
            .join("gp-bench")
    });
    let mut selected: Vec<Paper> = match paper {
        PaperArg::All => papers::registry(),
        PaperArg::Gsgp => vec![papers::find("gsgp")?],
        PaperArg::Grief => vec![papers::find("grief")?],
        PaperArg::Kmcg => vec![papers::find("kmcg")?],
        PaperArg::Ncgp => vec![papers::find("ncgp")?],
        PaperArg::Rtgps => vec![papers::find("rtgps")?],
    };
    if !only.is_empty() {
        let known: Vec<String> = selected
            .iter()
            .flat_map(|p| p.experiments.iter().map(|e| e.name().to_string()))
            .collect();
        if let Some(unknown) = only.iter().find(|name| !known.contains(name)) {
            return Err(BenchError::InvalidArgument {
                name: "--only",
                reason: format!(
                    "no experiment `{unknown}` in the selected paper(s); known: {}",
                    known.join(", ")
                ),
            });
        }
        for p in &mut selected {
            p.experiments
                .retain(|e| only.iter().any(|name| name == e.name()));
        }
        selected.retain(|p| !p.experiments.is_empty());
    }
    let fold_cache = fold_cache.map(|dir| FoldCache::new(dir).with_cached_only(cached_only));
    let sets = (!sets.is_empty()).then(|| sets.to_vec());
    let estimate = if cached_only {
        0.0
    } else {
        estimate_seconds(
            &selected,
            size,
            folds,
            sets.as_deref(),
            fold_cache.as_ref(),
            seed,
            seeds,
        )
    };
    println!(
        "gp-bench reproduce --{size}: {} paper(s), {} experiment(s), seed {seed}, estimated {} on 2 cores{}",
        selected.len(),
        selected.iter().map(|p| p.experiments.len()).sum::<usize>(),
        fmt_seconds(estimate),
        if fold_cache.is_some() {
            " (folds already in the fold cache not counted)"
        } else {
            ""
        }
    );
    println!("data directory: {}", dir.describe());
    println!("output: {}\n", out_root.display());
    let options = ReproduceOptions {
        size,
        seed,
        data_dir: dir,
        out_root: out_root.clone(),
        show_progress,
        folds,
        sets,
        fold_cache,
        jobs,
        large,
        seeds,
    };
    let runs = run_papers(&selected, &options)?;
    let mut ok = true;
    for run in &runs {
        println!("## {}\n", run.title);
        if run.records.is_empty() {
            println!("{}\n", run.pending);
        }
        for r in &run.records {
            match &r.outcome {
                Ok(o) => {
                    for t in &o.tables {
                        println!("### {} ({})\n\n{}", r.title, t.title, t.table);
                    }
                }
                Err(e) => {
                    ok = false;
                    println!("### {}: FAILED: {e}\n", r.title);
                }
            }
        }
        println!(
            "report: {} ({})\n",
            run.out_dir.join("report.md").display(),
            fmt_seconds(run.elapsed_seconds)
        );
    }
    if runs.len() > 1 {
        println!("index: {}", out_root.join("README.md").display());
    }
    Ok(ok)
}

fn run(cli: Cli) -> Result<bool, BenchError> {
    match cli.command {
        Command::Reproduce {
            paper,
            size,
            data_dir,
            out,
            seed,
            no_progress,
            folds,
            sets,
            only,
            fold_cache,
            cached_only,
            jobs,
            large,
            seeds,
        } => reproduce(
            paper,
            size.size(),
            data_dir,
            out,
            seed,
            !no_progress,
            folds.map(|k| usize::try_from(k).unwrap_or(usize::MAX)),
            &sets,
            &only,
            fold_cache,
            cached_only,
            usize::try_from(jobs).unwrap_or(1),
            large,
            usize::try_from(seeds).unwrap_or(1),
        ),
        Command::Datasets { data_dir: explicit } => {
            let (dir, _) = data_dir(explicit)?;
            println!("data directory: {}\n", dir.describe());
            println!("## Real data sets\n\n{}", listing::known_datasets(&dir)?);
            println!(
                "## UCI sets with 10 train/test folds (uci/)\n\n{}",
                listing::uci_datasets(&dir)
            );
            println!("## MNIST (mnist/)\n\n{}", listing::mnist_files(&dir));
            println!("## Synthetic generators\n\n{}", listing::generators());
            Ok(true)
        }
        Command::Demo {
            n_train,
            n_test,
            seed,
        } => {
            let options = DemoOptions {
                n_train,
                n_test,
                seed,
                ..DemoOptions::default()
            };
            println!(
                "# Exact GP demo: SE-ARD kernel, {} training / {} test points drawn from a known GP (seed {})\n",
                n_train, n_test, seed
            );
            let report = demo::run(&options)?;
            println!("{}\n{}", report.hyperparameters, report.metrics);
            Ok(true)
        }
        Command::Bench {
            name,
            sizes,
            dim,
            reps,
            rows,
        } => {
            let table = match name {
                BenchName::ExactLml => tables::exact_lml::lml_and_grad(
                    &or_default(sizes, &[1000, 2000, 4000]),
                    dim.unwrap_or(8),
                    reps,
                )?,
                BenchName::ExactFit => {
                    tables::exact_lml::fit(&or_default(sizes, &[4000]), dim.unwrap_or(3))?
                }
                BenchName::KernelAssembly => {
                    let d = dim.unwrap_or(8);
                    let kernels: Vec<(&str, Box<dyn Kernel>)> = vec![
                        ("SE", Box::new(SquaredExponential::isotropic(d, 0.5, 1.0)?)),
                        (
                            "Matérn 1/2",
                            Box::new(Matern::isotropic(MaternNu::Half, d, 0.5, 1.0)?),
                        ),
                        (
                            "Matérn 5/2",
                            Box::new(Matern::isotropic(MaternNu::FiveHalves, d, 0.5, 1.0)?),
                        ),
                    ];
                    let n = or_default(sizes, &[4000])[0];
                    tables::kernel_assembly::run(&kernels, n, reps)?
                }
                BenchName::KernelOperator => {
                    let n = or_default(sizes, &[20000])[0];
                    tables::kernel_operator::run(n, dim.unwrap_or(3), &[1, 16], reps)?
                }
                BenchName::Cholesky => {
                    tables::cholesky::run(&or_default(sizes, &[1000, 2000, 4000]), reps)?
                }
                BenchName::SkiMatvec => tables::ski_matvec::run(&sizes, reps)?,
                BenchName::GsgpLarge => {
                    let n = or_default(sizes, &[100_000_000])[0];
                    print_notes_and_first_table(papers::gsgp::large::streamed_run(
                        n,
                        [160, 80, 10],
                        RunSize::Full,
                        0,
                        &indicatif::ProgressBar::hidden(),
                    )?)
                }
                BenchName::GsgpTable1 => {
                    let (dir, _) = data_dir(None)?;
                    print_notes_and_first_table(papers::gsgp::table1::run_full_rows(&rows, &dir)?)
                }
            };
            println!(
                "threads available: {}\n\n{table}",
                std::thread::available_parallelism().map_or(1, |n| n.get())
            );
            Ok(true)
        }
    }
}

/// Tunes glibc's malloc so that a long run reuses the memory it frees instead of giving it
/// back to the system and faulting it in again.
///
/// By default glibc maps every block above a threshold (128 KiB, raised to the size of the
/// last freed mapped block, up to 32 MiB) on its own, and returns a freed heap top above twice
/// that threshold to the system. A training step allocates and frees a few dozen `n × k`
/// blocks (CG's vectors, probes, RR estimates), so each step touched fresh pages again: on the
/// 3DRoad stand-in (`reproduce rtgps --full --only structured`, blocks of 24.5 MB) about
/// 80 000 page faults per step, 5–10% of its time. With blocks up to 32 MiB taken from the heap
/// and freed memory kept, the process's peak memory stays what it was (`bench gsgp-large`:
/// 915 MB against 972 MB), and the faults are gone after the first step.
///
/// Setting `MALLOC_MMAP_THRESHOLD_` or `MALLOC_TRIM_THRESHOLD_` in the environment keeps
/// glibc's own handling (with those values); other platforms keep their allocator's.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let chosen = ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
        if !chosen {
            #[allow(unsafe_code)]
            // SAFETY: `mallopt` only sets malloc's tuning parameters (glibc accepts both
            // values: 32 MiB is its largest mapping threshold); called once, before any other
            // thread exists.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
                libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
            }
        }
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: some experiments failed; see the reports");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
