//! The value of an estimate of the log marginal likelihood, its two terms and its gradient.

/// `½ log 2π`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// What to compute: the value only (cheaper: no `n × 2F` solve, no inverse) or the value and
/// the gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compute {
    /// The log marginal likelihood and its two terms.
    Value,
    /// The value and the gradient with respect to every log hyperparameter.
    #[default]
    ValueAndGradient,
}

impl Compute {
    /// Whether the gradient is wanted.
    pub fn gradient(self) -> bool {
        self == Compute::ValueAndGradient
    }
}

/// An estimate of `log p(y | X, θ) = −½ yᵀK⁻¹y − ½ log|K| − (n/2) log 2π` (zero prior mean),
/// with the two terms the paper plots separately (Figure 1) and, when asked for, the
/// gradient with respect to the kernel's log hyperparameters followed by `log σ²` (the
/// order of [`ExactGp::lml_and_grad`](crate::ExactGp::lml_and_grad)).
///
/// For a single-sample estimate every field is the same linear combination
/// `f(m₀) + (f(D) − f(D − c)) / p(k)` of the fields of three evaluations, so `lml` is still
/// `−½ data_fit − ½ log_det − (n/2) log 2π`.
#[derive(Debug, Clone, PartialEq)]
pub struct LmlTerms {
    /// The log marginal likelihood estimate.
    pub lml: f64,
    /// The data-fit term `yᵀK⁻¹y`.
    pub data_fit: f64,
    /// The complexity term `log|K|`.
    pub log_det: f64,
    /// `∂ lml / ∂θ` (kernel log hyperparameters, then `log σ²`), if computed.
    pub grad: Option<Vec<f64>>,
}

impl LmlTerms {
    /// Assembles the estimate from the two terms for `n` targets.
    pub(crate) fn from_terms(
        n: usize,
        data_fit: f64,
        log_det: f64,
        grad: Option<Vec<f64>>,
    ) -> Self {
        Self {
            lml: -0.5 * data_fit - 0.5 * log_det - n as f64 * HALF_LN_2PI,
            data_fit,
            log_det,
            grad,
        }
    }

    /// `self + weight · (hi − lo)`, field by field (the gradient only when all three have
    /// one).
    pub(crate) fn plus_weighted_difference(&self, hi: &Self, lo: &Self, weight: f64) -> Self {
        let comb = |b: f64, h: f64, l: f64| b + weight * (h - l);
        let grad = match (&self.grad, &hi.grad, &lo.grad) {
            (Some(b), Some(h), Some(l)) => Some(
                b.iter()
                    .zip(h)
                    .zip(l)
                    .map(|((&b, &h), &l)| comb(b, h, l))
                    .collect(),
            ),
            _ => None,
        };
        Self {
            lml: comb(self.lml, hi.lml, lo.lml),
            data_fit: comb(self.data_fit, hi.data_fit, lo.data_fit),
            log_det: comb(self.log_det, hi.log_det, lo.log_det),
            grad,
        }
    }
}
