//! # gp-bench
//!
//! The `gp-bench` command line of the gpscale workspace: the exact-GP demo, scaling tables
//! for the foundation's hot paths, and (growing issue by issue) reproductions of the papers'
//! experiments; plus the data generators and table helpers they share. Library logic a user
//! would call lives in the other crates.
//!
//! ```
//! use gp_bench::demo::{run, DemoOptions};
//!
//! let report = run(&DemoOptions { n_train: 60, n_test: 20, lengthscales: vec![0.3], ..DemoOptions::default() })?;
//! println!("{}", report.hyperparameters);
//! # Ok::<(), gp_bench::BenchError>(())
//! ```
#![warn(missing_docs)]

pub mod demo;
pub mod error;
pub mod synthetic;
pub mod table;
pub mod tables;
pub mod timing;

pub use error::BenchError;
