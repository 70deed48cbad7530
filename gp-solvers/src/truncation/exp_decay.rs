//! The exponential-decay truncation law of RR-CG (spec §2.2).

use rand::RngCore;

use super::{uniform_open0, TruncationLaw};
use crate::error::{invalid, Result};

/// `P(J) ∝ e^{−λJ}` on `{j_min, …, j_max}` (paper Eq. 17), with `q = e^{−λ}`,
/// `M = j_max − j_min + 1`, `k = J − j_min`:
///
/// ```text
/// P(J = j_min + k) = q^k (1 − q) / (1 − q^M)
/// P(J ≥ j)         = (q^{j − j_min} − q^M) / (1 − q^M)   for j_min < j ≤ j_max
/// ```
///
/// evaluated with `expm1`, so the survival is accurate down to the last term and the
/// weights `1/P(J ≥ j)` stay exact where they are huge. The paper's setting is λ = 0.05,
/// `j_min` = 80 and `j_max` = the number of training points (`E[J] ≈ 99.5`, sd ≈ 20).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExpDecay {
    lambda: f64,
    j_min: usize,
    j_max: usize,
}

impl ExpDecay {
    /// The law with temperature `lambda > 0` on `{j_min, …, j_max}`.
    ///
    /// Errors ([`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions)) unless
    /// `lambda` is finite and positive and `1 ≤ j_min ≤ j_max`.
    pub fn new(lambda: f64, j_min: usize, j_max: usize) -> Result<Self> {
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(invalid(
                "ExpDecay::lambda",
                format!("must be finite and positive, got {lambda}"),
            ));
        }
        check_support("ExpDecay", j_min, j_max)?;
        Ok(Self {
            lambda,
            j_min,
            j_max,
        })
    }

    /// The same law given by its ratio `q = P(J = j + 1) / P(J = j)` in `(0, 1)` (the
    /// "geometric" law of the reference code).
    pub fn geometric(ratio: f64, j_min: usize, j_max: usize) -> Result<Self> {
        if !(ratio > 0.0 && ratio < 1.0) {
            return Err(invalid(
                "ExpDecay::geometric ratio",
                format!("must lie in (0, 1), got {ratio}"),
            ));
        }
        Self::new(-ratio.ln(), j_min, j_max)
    }

    /// The temperature `λ`.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// `M = j_max − j_min + 1`, the size of the support.
    fn support_len(&self) -> f64 {
        (self.j_max - self.j_min + 1) as f64
    }

    /// `1 − q^m` for `m ≥ 0`, without cancellation.
    fn one_minus_q_pow(&self, m: f64) -> f64 {
        -(-self.lambda * m).exp_m1()
    }

    /// `ln P(J ≥ j)` for `j_min ≤ j ≤ j_max`.
    fn log_survival(&self, j: usize) -> f64 {
        let k = (j - self.j_min) as f64;
        let m = self.support_len();
        -self.lambda * k + self.one_minus_q_pow(m - k).ln() - self.one_minus_q_pow(m).ln()
    }
}

impl TruncationLaw for ExpDecay {
    fn min_support(&self) -> usize {
        self.j_min
    }

    fn max_support(&self) -> usize {
        self.j_max
    }

    fn pmf(&self, j: usize) -> f64 {
        if j < self.j_min || j > self.j_max {
            return 0.0;
        }
        let k = (j - self.j_min) as f64;
        (-self.lambda * k).exp() * self.one_minus_q_pow(1.0)
            / self.one_minus_q_pow(self.support_len())
    }

    fn survival(&self, j: usize) -> f64 {
        if j <= self.j_min {
            1.0
        } else if j > self.j_max {
            0.0
        } else {
            self.log_survival(j).exp()
        }
    }

    fn weight(&self, j: usize) -> f64 {
        if j <= self.j_min {
            1.0
        } else if j > self.j_max {
            f64::INFINITY
        } else {
            (-self.log_survival(j)).exp()
        }
    }

    fn mean(&self) -> f64 {
        // E[k] for the truncated geometric law on {0, …, M−1}:
        // q/(1−q) − M q^M/(1−q^M).
        let q = (-self.lambda).exp();
        let m = self.support_len();
        let qm = (-self.lambda * m).exp();
        self.j_min as f64 + q / self.one_minus_q_pow(1.0) - m * qm / self.one_minus_q_pow(m)
    }

    fn sd(&self) -> f64 {
        // Var[k] = q/(1−q)² − M² q^M/(1−q^M)².
        let q = (-self.lambda).exp();
        let m = self.support_len();
        let qm = (-self.lambda * m).exp();
        let a = self.one_minus_q_pow(1.0);
        let b = self.one_minus_q_pow(m);
        (q / (a * a) - m * m * qm / (b * b)).max(0.0).sqrt()
    }

    fn sample(&self, rng: &mut dyn RngCore) -> usize {
        // Inverse CDF: k = ⌊ln(1 − U(1 − q^M)) / ln q⌋ with U ∈ (0, 1].
        let u = uniform_open0(rng);
        let m = self.support_len();
        let k = ((-u * self.one_minus_q_pow(m)).ln_1p() / -self.lambda).floor();
        let k = if k.is_finite() && k >= 0.0 {
            k as usize
        } else {
            0
        };
        (self.j_min + k).min(self.j_max)
    }
}

/// Checks `1 ≤ j_min ≤ j_max`.
pub(super) fn check_support(law: &str, j_min: usize, j_max: usize) -> Result<()> {
    if j_min == 0 || j_min > j_max {
        return Err(invalid(
            "truncation support",
            format!("{law} needs 1 ≤ j_min ≤ j_max, got j_min = {j_min}, j_max = {j_max}"),
        ));
    }
    Ok(())
}
