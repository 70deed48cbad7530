//! The degenerate law: plain truncation at a fixed depth.

use rand::RngCore;

use super::TruncationLaw;
use crate::error::{invalid, Result};

/// `J` is always `depth`: every weight up to it is 1, so the Russian-roulette sum is the
/// plain truncated series (truncated CG with `depth` iterations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    depth: usize,
}

impl Fixed {
    /// The law concentrated on `depth ≥ 1`.
    pub fn new(depth: usize) -> Result<Self> {
        if depth == 0 {
            return Err(invalid("Fixed::depth", "the depth must be at least 1"));
        }
        Ok(Self { depth })
    }
}

impl TruncationLaw for Fixed {
    fn min_support(&self) -> usize {
        self.depth
    }

    fn max_support(&self) -> usize {
        self.depth
    }

    fn pmf(&self, j: usize) -> f64 {
        if j == self.depth {
            1.0
        } else {
            0.0
        }
    }

    fn survival(&self, j: usize) -> f64 {
        if j <= self.depth {
            1.0
        } else {
            0.0
        }
    }

    fn mean(&self) -> f64 {
        self.depth as f64
    }

    fn sd(&self) -> f64 {
        0.0
    }

    fn sample(&self, _rng: &mut dyn RngCore) -> usize {
        self.depth
    }
}
