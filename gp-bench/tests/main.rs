//! The integration tests of `gp-bench`, one module per file, compiled into one test binary
//! (one link instead of one per file: faster builds and a smaller `target/`).

mod csv_loader;
mod datasets;
mod datasets_command;
mod demo_smoke;
mod discovery;
mod grief_experiments;
mod grief_folds;
mod gsgp_reproduction;
mod index_status;
mod kmcg_data;
mod kmcg_runs;
mod ncgp_experiments;
mod plot_axes;
mod real_data;
mod report_files;
mod reproduce_smoke;
mod rtgps_uci_cache;
mod synthetic;
