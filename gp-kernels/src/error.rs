//! The error type of `gp-kernels`.

use gp_linalg::LinalgError;
use thiserror::Error;

/// Everything that can go wrong in `gp-kernels`.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum KernelError {
    /// A hyperparameter is out of its valid range (non-positive, NaN, infinite).
    #[error("hyperparameter `{name}` = {value} is invalid: {reason}")]
    InvalidHyperparameter {
        /// Name of the hyperparameter (as in [`Kernel::param_names`](crate::Kernel::param_names)).
        name: String,
        /// The value given (in natural, not log, space where that is what was passed).
        value: f64,
        /// What a valid value looks like.
        reason: &'static str,
    },
    /// A flat hyperparameter vector has the wrong length.
    #[error("expected {expected} hyperparameters ({names}), got {found}")]
    ParamCount {
        /// How many the kernel has.
        expected: usize,
        /// How many were given.
        found: usize,
        /// Their names, comma separated.
        names: String,
    },
    /// Inputs have a different number of columns than the kernel's input dimension.
    #[error("{context}: the kernel takes {expected}-dimensional inputs but the matrix has {found} columns")]
    InputDim {
        /// What was being computed.
        context: &'static str,
        /// The kernel's input dimension.
        expected: usize,
        /// Columns of the input matrix.
        found: usize,
    },
    /// A point (a slice passed to a checked evaluation such as
    /// [`Kernel::try_eval`](crate::Kernel::try_eval)) has the wrong length.
    #[error("{context}: the kernel takes {expected}-dimensional points but the slice has length {found}; pass one value per input dimension")]
    PointLength {
        /// What was being computed.
        context: &'static str,
        /// The kernel's input dimension.
        expected: usize,
        /// Length of the slice.
        found: usize,
    },
    /// An argument other than a hyperparameter is invalid.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An error from the linear-algebra layer (non-finite inputs, shapes).
    #[error(transparent)]
    Linalg(#[from] LinalgError),
}

/// Result type of `gp-kernels`.
pub type Result<T, E = KernelError> = std::result::Result<T, E>;
