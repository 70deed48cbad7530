//! The memory check of the GSGP model: refuse a grid whose working set would not fit.
//!
//! **Estimate.** Everything GSGP keeps lives on the grid (no `n`-vector survives the
//! statistics pass). Counted in `m`-vectors of 8-byte entries:
//!
//! * `S = WᵀW` as a stencil matrix: the stored half of its `(2r+1)^d`-entry stencil,
//!   `((2r+1)^d + 1)/2` entries per grid node (172 for cubic at `d = 3`, 14 for linear);
//! * `t = Wᵀy` and the grid mean cache: 2;
//! * one EFCG solve: 10 (`x̂, r̂, p̂, ẑ, ŝ, v̂, û, â, h, S x̂`) plus 3 for `Wᵀx` and the
//!   two mode-product buffers of the Kronecker product;
//! * the log-likelihood with `t` probes: 6 per probe (4 for the batched CG on the
//!   symmetrized operator of the log determinant, the probe and `Wᵀ K̂⁻¹ W ξ` of the
//!   gradient).
//!
//! So **`vectors = ((2r+1)^d + 1)/2 + 15 + 6 t`** and **`bytes = vectors · 8 · m`**, reported as
//! a [`SkiMemory`] (same fields and error as SKI). Not counted: the statistics pass itself
//! (per-thread moment records or a bounded point buffer, whichever path it takes, see
//! [`SufficientStats::plan`](gp_structured::SufficientStats::plan)),
//! and what the log determinant adds (the square roots of the Toeplitz factors: `m_l²` entries
//! per dense eigen factor, `O(M_l)` per circulant one; the probe vectors of dimension `r`
//! beyond `m`; a CSR copy of `S`), checked separately when the log-likelihood is first
//! estimated (see [`log_det`](super::log_det),
//! [`ModelError::LogDetFactorTooLarge`](crate::ModelError::LogDetFactorTooLarge)).
//!
//! **Limit.** [`GsgpOptions::grid.memory_limit`](crate::grid::GridSettings::memory_limit) if set;
//! otherwise `MemAvailable` of `/proc/meminfo`; otherwise
//! [`DEFAULT_MEMORY_CAP`](crate::grid::memory::DEFAULT_MEMORY_CAP) — the same rule as SKI. A grid
//! whose estimate exceeds the limit is refused with
//! [`ModelError::GridTooLarge`](crate::ModelError::GridTooLarge) before anything of size
//! `m` is allocated.

use gp_structured::InterpolationScheme;

use crate::grid::memory::{grid_points, resolve_limit, SkiMemory};

/// The GSGP memory estimate for grid sizes `sizes`, interpolation `scheme` and `probes`
/// probe vectors, with the limit from `memory_limit` (see the [module documentation](self)).
pub fn gsgp_memory(
    sizes: &[usize],
    scheme: InterpolationScheme,
    probes: usize,
    memory_limit: Option<u64>,
) -> SkiMemory {
    let grid_points = grid_points(sizes);
    let q = 2 * scheme.stencil_width() as u128 - 1;
    let stencil = q
        .checked_pow(sizes.len().min(u32::MAX as usize) as u32)
        .map_or(u128::MAX, |k| k.div_ceil(2));
    let vectors = stencil
        .saturating_add(15)
        .saturating_add(6u128.saturating_mul(probes as u128));
    let estimated_bytes = grid_points
        .checked_mul(vectors)
        .and_then(|v| v.checked_mul(8))
        .unwrap_or(u128::MAX);
    let (limit_bytes, limit_source) = resolve_limit(memory_limit, "GsgpOptions::grid.memory_limit");
    SkiMemory {
        grid_points,
        vectors,
        estimated_bytes,
        limit_bytes,
        limit_source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_rule() {
        let est = gsgp_memory(&[10, 20], InterpolationScheme::Cubic, 3, Some(1 << 30));
        assert_eq!(est.grid_points, 200);
        assert_eq!(est.vectors, 25 + 15 + 18);
        assert_eq!(est.estimated_bytes, 200 * 58 * 8);
        assert!(est.fits());
        let lin = gsgp_memory(&[10, 20, 5], InterpolationScheme::Linear, 0, Some(1));
        assert_eq!(lin.vectors, 14 + 15);
        assert!(lin.check().is_err());
        let huge = gsgp_memory(&[usize::MAX; 3], InterpolationScheme::Cubic, 10, None);
        assert_eq!(huge.estimated_bytes, u128::MAX);
        assert!(!huge.fits());
    }
}
