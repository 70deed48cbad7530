//! The `gp-bench` command line: `demo` (the README's main job) and `bench <name>` scaling
//! tables. Run `gp-bench --help`.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use gp_bench::demo::{self, DemoOptions};
use gp_bench::tables;
use gp_bench::BenchError;
use gp_kernels::{Kernel, Matern, MaternNu, SquaredExponential};

#[derive(Parser)]
#[command(
    name = "gp-bench",
    version,
    about = "gpscale demos, scaling tables and reproductions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    },
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
}

fn or_default(sizes: Vec<usize>, default: &[usize]) -> Vec<usize> {
    if sizes.is_empty() {
        default.to_vec()
    } else {
        sizes
    }
}

fn run(cli: Cli) -> Result<(), BenchError> {
    match cli.command {
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
        }
        Command::Bench {
            name,
            sizes,
            dim,
            reps,
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
            };
            println!(
                "threads available: {}\n\n{table}",
                std::thread::available_parallelism().map_or(1, |n| n.get())
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
