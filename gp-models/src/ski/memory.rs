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
//! **Limit.** [`SkiOptions::memory_limit`](crate::SkiOptions::memory_limit) if set;
//! otherwise the `MemAvailable` line of `/proc/meminfo` when it can be read; otherwise a
//! fixed cap of [`DEFAULT_MEMORY_CAP`] (16 GiB). A grid whose estimate exceeds the limit is
//! refused with [`ModelError::GridTooLarge`] before anything of size `m` is allocated.

use crate::error::{ModelError, Result};

/// The fixed cap used when no limit is given and `/proc/meminfo` cannot be read: 16 GiB.
pub const DEFAULT_MEMORY_CAP: u64 = 16 << 30;

/// The memory estimate of a SKI grid and the limit it is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkiMemory {
    /// Grid points `m = Π m_l` (saturating at `u128::MAX`).
    pub grid_points: u128,
    /// Number of `m`-vectors held at the peak, `5 (t + 1) + 1` for `t` probes.
    pub vectors: u128,
    /// `vectors · 8 · m` bytes (saturating).
    pub estimated_bytes: u128,
    /// The limit in bytes.
    pub limit_bytes: u64,
    /// Where the limit came from.
    pub limit_source: &'static str,
}

impl SkiMemory {
    /// The estimate for grid sizes `sizes` and `probes` probe vectors, with the limit from
    /// `memory_limit` (see the [module documentation](self)).
    pub fn estimate(sizes: &[usize], probes: usize, memory_limit: Option<u64>) -> Self {
        let grid_points = sizes
            .iter()
            .try_fold(1u128, |acc, &s| acc.checked_mul(s as u128))
            .unwrap_or(u128::MAX);
        let vectors = 5 * (probes as u128 + 1) + 1;
        let estimated_bytes = grid_points
            .checked_mul(vectors)
            .and_then(|v| v.checked_mul(8))
            .unwrap_or(u128::MAX);
        let (limit_bytes, limit_source) = resolve_limit(memory_limit, "SkiOptions::memory_limit");
        Self {
            grid_points,
            vectors,
            estimated_bytes,
            limit_bytes,
            limit_source,
        }
    }

    /// Whether the estimate fits in the limit.
    pub fn fits(&self) -> bool {
        self.estimated_bytes <= self.limit_bytes as u128
    }

    /// `Ok` if the estimate fits, [`ModelError::GridTooLarge`] otherwise.
    pub fn check(&self) -> Result<()> {
        if self.fits() {
            Ok(())
        } else {
            Err(ModelError::GridTooLarge {
                grid_points: self.grid_points,
                vectors: self.vectors,
                estimated_bytes: self.estimated_bytes,
                limit_bytes: self.limit_bytes,
                limit_source: self.limit_source,
            })
        }
    }
}

/// The limit in bytes and where it came from: `memory_limit` (named `option`) if set,
/// else `MemAvailable` of `/proc/meminfo`, else [`DEFAULT_MEMORY_CAP`]. Shared with GSGP.
pub(crate) fn resolve_limit(
    memory_limit: Option<u64>,
    option: &'static str,
) -> (u64, &'static str) {
    match memory_limit {
        Some(limit) => (limit, option),
        None => match mem_available() {
            Some(bytes) => (bytes, "MemAvailable in /proc/meminfo"),
            None => (DEFAULT_MEMORY_CAP, "the fixed cap of 16 GiB"),
        },
    }
}

/// `MemAvailable` from `/proc/meminfo` in bytes, if readable.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

/// The `MemAvailable:  <kB> kB` line of a `/proc/meminfo` text, in bytes.
fn parse_mem_available(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meminfo() {
        let text = "MemTotal: 100 kB\nMemAvailable:    2048 kB\n";
        assert_eq!(parse_mem_available(text), Some(2048 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
    }

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
