//! The scaling tables of `gp-bench bench <name>`.

pub mod cholesky;
pub mod exact_lml;
pub mod kernel_assembly;
pub mod kernel_operator;
pub mod ski_matvec;
pub mod ski_peer;
