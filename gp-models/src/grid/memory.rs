//! The memory check of the grid-interpolation models: the report both fill in
//! ([`SkiMemory`]) and the limit both check against. Each model has its own estimate
//! ([`SkiMemory::estimate`] for SKI, [`gsgp_memory`](crate::gsgp::gsgp_memory) for GSGP).
//!
//! **Limit.** The model's `memory_limit` option if set; otherwise the `MemAvailable` line of
//! `/proc/meminfo` when it can be read; otherwise a fixed cap of [`DEFAULT_MEMORY_CAP`]
//! (16 GiB). A grid whose estimate exceeds the limit is refused with
//! [`ModelError::GridTooLarge`] before anything of size `m` is allocated.

use crate::error::{ModelError, Result};

/// The fixed cap used when no limit is given and `/proc/meminfo` cannot be read: 16 GiB.
pub const DEFAULT_MEMORY_CAP: u64 = 16 << 30;

/// The memory estimate of a SKI or GSGP grid and the limit it is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkiMemory {
    /// Grid points `m = Π m_l` (saturating at `u128::MAX`).
    pub grid_points: u128,
    /// Number of `m`-vectors held at the peak (`5 (t + 1) + 1` for SKI with `t` probes).
    pub vectors: u128,
    /// `vectors · 8 · m` bytes (saturating).
    pub estimated_bytes: u128,
    /// The limit in bytes.
    pub limit_bytes: u64,
    /// Where the limit came from.
    pub limit_source: &'static str,
}

impl SkiMemory {
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

/// The number of grid points `m = Π m_l` of grid sizes `sizes`, saturating at `u128::MAX`
/// (so that an absurd grid is refused by the check instead of overflowing).
pub(crate) fn grid_points(sizes: &[usize]) -> u128 {
    sizes
        .iter()
        .try_fold(1u128, |acc, &s| acc.checked_mul(s as u128))
        .unwrap_or(u128::MAX)
}

/// The limit in bytes and where it came from: `memory_limit` (named `option`) if set,
/// else `MemAvailable` of `/proc/meminfo`, else [`DEFAULT_MEMORY_CAP`].
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
}
