//! Options of the GP-GRIEF model ([`Grief`](crate::grief::Grief)).

use crate::error::{ModelError, Result};
use crate::grief::grid::GridOptions;

/// The number of eigenfunctions the paper keeps at most, `p = 1000` (Evans & Nair 2018,
/// §6).
pub const DEFAULT_EIGENFUNCTIONS: usize = 1000;

/// Rows of `Φ` formed at a time when the statistics `ΦᵀΦ`, `Φᵀy` and the gradient are
/// streamed (`O(block_rows · p)` memory).
pub const DEFAULT_BLOCK_ROWS: usize = 2048;

/// Options of [`Grief::fit`](crate::grief::Grief::fit).
///
/// ```
/// use gp_models::grief::{GriefOptions, GridOptions};
///
/// let options = GriefOptions {
///     p: 100,
///     grid: GridOptions { points_per_axis: 10, ..GridOptions::default() },
///     ..GriefOptions::default()
/// };
/// assert!(options.validate().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GriefOptions {
    /// The inducing grid built from the training inputs (default: `m̄ = 10` points per axis
    /// evenly over the data range, one per distinct value on axes with fewer).
    pub grid: GridOptions,
    /// The number of eigenfunctions `p` (default [`DEFAULT_EIGENFUNCTIONS`]).
    pub p: usize,
    /// When `p` exceeds the number of grid points `m`: keep all `m` (`true`) or fail
    /// (`false`, the default: the caller asked for more than the grid has).
    pub cap_to_grid: bool,
    /// Rows per block when streaming over the training data (default
    /// [`DEFAULT_BLOCK_ROWS`]).
    pub block_rows: usize,
}

impl Default for GriefOptions {
    fn default() -> Self {
        Self {
            grid: GridOptions::default(),
            p: DEFAULT_EIGENFUNCTIONS,
            cap_to_grid: false,
            block_rows: DEFAULT_BLOCK_ROWS,
        }
    }
}

impl GriefOptions {
    /// Checks the options on their own (the grid's are checked when it is built).
    ///
    /// Errors: [`ModelError::InvalidOption`] for `p = 0` or `block_rows = 0`.
    pub fn validate(&self) -> Result<()> {
        if self.p == 0 {
            return Err(ModelError::InvalidOption {
                name: "GriefOptions::p",
                reason: "must be at least 1 (the number of eigenfunctions kept)".into(),
            });
        }
        if self.block_rows == 0 {
            return Err(ModelError::InvalidOption {
                name: "GriefOptions::block_rows",
                reason: "must be at least 1".into(),
            });
        }
        Ok(())
    }
}
