//! # gp-bench
//!
//! The `gp-bench` command line of the gpscale workspace and the harness behind it:
//!
//! * `gp-bench reproduce <paper>|all [--smoke|--quick|--full]`: each paper's registered
//!   [`experiment::Experiment`]s ([`papers`]) run with progress bars and write
//!   `report.md` (the paper's numbers beside ours, machine, threads, versions, seed),
//!   `results.json` and SVG plots ([`report`], [`reproduce`]);
//! * `gp-bench datasets`: the real data sets it knows ([`data::catalog`]), where they were
//!   found, and the synthetic generators ([`synthetic`]);
//! * `gp-bench demo` and `gp-bench bench <name>`: the exact-GP demo and the foundation's
//!   scaling tables ([`tables`]).
//!
//! Data: a CSV loader with typed errors, seeded splits and k folds, standardization with
//! training statistics ([`data`]); the red wine quality data is embedded, so a fresh clone
//! has one real result.
//!
//! ```
//! use gp_bench::data::{k_fold, wine::wine, Standardizer};
//!
//! let data = wine()?;
//! assert_eq!((data.len(), data.dim()), (1599, 11));
//! let folds = k_fold(data.len(), 10, 0)?;
//! let train = data.select_rows(&folds[0].train)?;
//! let st = Standardizer::fit(train.x.as_ref(), train.y.as_ref())?;
//! assert!(st.y_std > 0.0);
//! # Ok::<(), gp_bench::BenchError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod data;
pub mod demo;
pub mod error;
pub mod experiment;
pub mod fold_cache;
pub mod jobs;
pub mod papers;
pub mod report;
pub mod reproduce;
pub mod summary;
pub mod synthetic;
pub mod table;
pub mod tables;
pub mod timing;

pub use error::BenchError;
