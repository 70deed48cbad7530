//! The memory check of the exact GP: its `n × n` matrices are compared with a limit before
//! they are allocated, so that a large `n` is a typed error instead of an aborted process.
//!
//! A fit holds two `n × n` matrices at its peak (the Gram buffer and the Cholesky factor),
//! training three more next to the fitted model's factor (the objective's Gram buffer,
//! factor and `(K + σ²I)⁻¹` for the gradient). The limit is
//! [`FitOptions::memory_limit`](crate::FitOptions::memory_limit) if set, else `MemAvailable`
//! from `/proc/meminfo`, else 16 GiB, as for the grid models.

use crate::error::{ModelError, Result};
use crate::grid::memory::resolve_limit;

/// Errors with [`ModelError::DenseTooLarge`] when `matrices` dense `n × n` matrices of `f64`
/// exceed the limit.
pub(crate) fn check_dense_memory(
    n: usize,
    matrices: u32,
    what: &'static str,
    memory_limit: Option<u64>,
) -> Result<()> {
    let n2 = (n as u128).saturating_mul(n as u128);
    let estimated_bytes = n2.saturating_mul(8 * u128::from(matrices));
    let (limit_bytes, limit_source) = resolve_limit(memory_limit, "FitOptions::memory_limit");
    if estimated_bytes > u128::from(limit_bytes) {
        return Err(ModelError::DenseTooLarge {
            n,
            matrices,
            what,
            estimated_bytes,
            limit_bytes,
            limit_source,
        });
    }
    Ok(())
}
