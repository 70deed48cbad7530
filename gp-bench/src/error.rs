//! The error type of `gp-bench`.

use thiserror::Error;

/// What can go wrong while generating data or running an experiment.
#[derive(Debug, Error)]
pub enum BenchError {
    /// From the linear-algebra layer.
    #[error(transparent)]
    Linalg(#[from] gp_linalg::LinalgError),
    /// From a kernel.
    #[error(transparent)]
    Kernel(#[from] gp_kernels::KernelError),
    /// From a model.
    #[error(transparent)]
    Model(#[from] gp_models::ModelError),
    /// A command-line argument is out of range.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// The argument.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}
