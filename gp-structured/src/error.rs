//! The error type of `gp-structured`.

use gp_linalg::LinalgError;
use thiserror::Error;

/// Everything that can go wrong in `gp-structured`.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StructuredError {
    /// An argument is outside its valid range or shapes disagree.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// What is wrong with it and what would be valid.
        reason: String,
    },
    /// An error from the linear-algebra layer (shapes, non-finite values, factorizations).
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// A point lies outside the region of a grid where its interpolation stencil fits.
    #[error(
        "point {point} is outside the interpolation grid in dimension {dim}: coordinate {value} is not in \
         [{lo}, {hi}], the region where the {scheme} stencil fits; build the grid with more padding \
         (RegularGrid::from_data) or choose OutOfGrid::Clamp"
    )]
    OutsideGrid {
        /// Row of the offending point.
        point: usize,
        /// Dimension in which it is outside.
        dim: usize,
        /// Its coordinate.
        value: f64,
        /// Lower end of the valid region in that dimension.
        lo: f64,
        /// Upper end of the valid region in that dimension.
        hi: f64,
        /// Interpolation scheme (`"linear"` or `"cubic"`).
        scheme: &'static str,
    },
}

/// Result type of `gp-structured`.
pub type Result<T, E = StructuredError> = std::result::Result<T, E>;
