//! The memory check of the SKI model: refuse a grid whose working set would not fit.
//!
//! **Estimate.** The grid-space working set peaks in the gradient pass of the likelihood
//! estimate: for the `t + 1` right-hand sides `[y | z₁..z_t]` it holds `Wᵀ[α | U]`,
//! `Wᵀ[α | Z]`, the product of a derivative of `K_G` with the latter and the two mode-product
//! buffers of the Kronecker product, i.e. `5 (t + 1)` vectors of length `m`, plus the grid
//! mean cache: **`vectors = 5 (t + 1) + 1`** and **`bytes = vectors · 8 · m`**. (The batched
//! CG solve itself holds `4 (t + 1)` `m`-vectors: `Wᵀ v`, `K_G Wᵀ v` and two mode-product
//! buffers per column.) The `n`-space vectors (`O(n t)`) and `W` (`O(n d)`) are not counted:
//! they scale with the data, not with the grid.
//!
//! **Limit.** [`SkiOptions::grid.memory_limit`](crate::grid::GridSettings::memory_limit) if set;
//! otherwise the `MemAvailable` line of `/proc/meminfo` when it can be read; otherwise a
//! fixed cap of [`DEFAULT_MEMORY_CAP`] (16 GiB). A grid whose estimate exceeds the limit is
//! refused with [`ModelError::GridTooLarge`](crate::ModelError::GridTooLarge) before anything of size `m` is allocated.

use crate::grid::memory::{grid_points, resolve_limit};
pub use crate::grid::memory::{SkiMemory, DEFAULT_MEMORY_CAP};

impl SkiMemory {
    /// The estimate for grid sizes `sizes` and `probes` probe vectors, with the limit from
    /// `memory_limit` (see the [module documentation](self)).
    pub fn estimate(sizes: &[usize], probes: usize, memory_limit: Option<u64>) -> Self {
        let grid_points = grid_points(sizes);
        let vectors = 5 * (probes as u128 + 1) + 1;
        let estimated_bytes = grid_points
            .checked_mul(vectors)
            .and_then(|v| v.checked_mul(8))
            .unwrap_or(u128::MAX);
        let (limit_bytes, limit_source) =
            resolve_limit(memory_limit, "SkiOptions::grid.memory_limit");
        Self {
            grid_points,
            vectors,
            estimated_bytes,
            limit_bytes,
            limit_source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_rule_and_saturation() {
        let est = SkiMemory::estimate(&[10, 20], 3, Some(1 << 20));
        assert_eq!(est.grid_points, 200);
        assert_eq!(est.vectors, 21);
        assert_eq!(est.estimated_bytes, 200 * 21 * 8);
        assert!(est.fits());
        let huge = SkiMemory::estimate(&[usize::MAX, usize::MAX, usize::MAX], 10, Some(1));
        assert_eq!(huge.grid_points, u128::MAX);
        assert!(huge.check().is_err());
    }
}
