//! Truncation laws given by a table of probabilities.

use rand::RngCore;

use super::exp_decay::check_support;
use super::{uniform_open0, TruncationLaw};
use crate::error::{invalid, Result};

/// A law given by its probabilities on `{j_min, …, j_min + len − 1}`, normalised on
/// construction. Survival probabilities are suffix sums (accurate in the tail); draws
/// invert the cumulative table by binary search.
#[derive(Debug, Clone, PartialEq)]
pub struct Categorical {
    j_min: usize,
    pmf: Vec<f64>,
    /// `survival[i] = P(J ≥ j_min + i)`, with a trailing 0.
    survival: Vec<f64>,
}

impl Categorical {
    /// The law with `P(J = j_min + i) ∝ weights[i]`.
    ///
    /// Errors unless `j_min ≥ 1`, `weights` is non-empty, every weight is finite and
    /// non-negative, and their sum is positive.
    pub fn new(j_min: usize, weights: &[f64]) -> Result<Self> {
        if weights.is_empty() {
            return Err(invalid("Categorical::weights", "need at least one weight"));
        }
        check_support("Categorical", j_min, j_min + weights.len() - 1)?;
        if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(invalid(
                "Categorical::weights",
                format!("weights must be finite and non-negative, got {w}"),
            ));
        }
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return Err(invalid("Categorical::weights", "the weights sum to zero"));
        }
        let pmf: Vec<f64> = weights.iter().map(|w| w / total).collect();
        let mut survival = vec![0.0; pmf.len() + 1];
        for i in (0..pmf.len()).rev() {
            survival[i] = survival[i + 1] + pmf[i];
        }
        // The suffix sum of the normalised table is 1 up to rounding; make it exact so that
        // terms up to j_min have weight exactly 1.
        survival[0] = 1.0;
        Ok(Self {
            j_min,
            pmf,
            survival,
        })
    }

    /// `P(J = j) ∝ (j − j_min + 1)^{−exponent}` on `{j_min, …, j_max}`: the `1/J` law of
    /// SS-RFF (exponent 1, spec §3.2) and its `1/√J` variant (exponent ½).
    pub fn one_over_j(exponent: f64, j_min: usize, j_max: usize) -> Result<Self> {
        if !(exponent.is_finite() && exponent >= 0.0) {
            return Err(invalid(
                "Categorical::one_over_j exponent",
                format!("must be finite and non-negative, got {exponent}"),
            ));
        }
        check_support("Categorical::one_over_j", j_min, j_max)?;
        let weights: Vec<f64> = (1..=j_max - j_min + 1)
            .map(|k| (k as f64).powf(-exponent))
            .collect();
        Self::new(j_min, &weights)
    }

    /// The uniform law on `{j_min, …, j_max}`.
    pub fn uniform(j_min: usize, j_max: usize) -> Result<Self> {
        check_support("Categorical::uniform", j_min, j_max)?;
        Self::new(j_min, &vec![1.0; j_max - j_min + 1])
    }

    fn index(&self, j: usize) -> Option<usize> {
        j.checked_sub(self.j_min).filter(|&i| i < self.pmf.len())
    }
}

impl TruncationLaw for Categorical {
    fn min_support(&self) -> usize {
        // The first index with positive mass (a table may start with zeros).
        self.j_min + self.pmf.iter().position(|&p| p > 0.0).unwrap_or(0)
    }

    fn max_support(&self) -> usize {
        self.j_min + self.pmf.iter().rposition(|&p| p > 0.0).unwrap_or(0)
    }

    fn pmf(&self, j: usize) -> f64 {
        self.index(j).map_or(0.0, |i| self.pmf[i])
    }

    fn survival(&self, j: usize) -> f64 {
        if j <= self.min_support() {
            1.0
        } else {
            self.index(j).map_or(0.0, |i| self.survival[i])
        }
    }

    fn mean(&self) -> f64 {
        self.pmf
            .iter()
            .enumerate()
            .map(|(i, p)| p * (self.j_min + i) as f64)
            .sum()
    }

    fn sd(&self) -> f64 {
        let mean = self.mean();
        self.pmf
            .iter()
            .enumerate()
            .map(|(i, p)| p * ((self.j_min + i) as f64 - mean).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    fn sample(&self, rng: &mut dyn RngCore) -> usize {
        // Smallest i with P(J ≤ j_min + i) ≥ u, i.e. with survival[i + 1] ≤ 1 − u.
        let tail = 1.0 - uniform_open0(rng);
        let i = self.survival[1..].partition_point(|&s| s > tail);
        (self.j_min + i).clamp(self.min_support(), self.max_support())
    }
}
