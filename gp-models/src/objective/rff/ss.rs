//! Single-sample randomized truncation of the RFF objective (SS-RFF, spec `rtgps.md` §3).
//!
//! With nested frequencies (the first `D` rows of one set of draws) and
//! `f(D)` = the RFF objective with `D` frequencies, the series
//! `f(m₀ + cH) = f(m₀) + Σ_{k=1}^{H} [f(m₀ + ck) − f(m₀ + c(k − 1))]` is estimated by one
//! term: `k ~ p(k) ∝ k^{−a}`, `D = m₀ + ck`,
//!
//! ```text
//! ψ̄ = f(m₀) + (f(D) − f(D − c)) / p(k),
//! ```
//!
//! unbiased for `f(m₀ + cH)` (for the exact objective when the top term is exact). The
//! increment is `f(D) − f(D − c)`, not the reference code's `f(D) − f(D − 1)`, which does not
//! telescope for `c > 1` (pitfall 8).

use rand::RngCore;

use gp_solvers::truncation::{Categorical, TruncationLaw};

use super::draws::SpectralDraws;
use super::kernel::RffKernel;
use super::objective::RffObjective;
use super::terms::{Compute, LmlTerms};
use crate::error::{ModelError, Result};

/// Options of [`SsRff`]: base `m₀`, step `c`, number of terms `H`, exponent `a` of the law
/// `p(k) ∝ k^{−a}` on `{1, …, H}`, and whether the top term is exact.
///
/// Frequencies drawn: `D = m₀ + ck` (`E[D] = m₀ + c E[k]`). The defaults are the reference
/// code's `OneOverJ(100, 600, 10, 1)`: `m₀ = 100`, `c = 10`, `H = 50`, `a = 1`
/// (`E[D] ≈ 211`), with an RFF top term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SsRffOptions {
    /// `m₀ ≥ 1`: frequencies of the base term, always evaluated.
    pub base_freqs: usize,
    /// `c ≥ 1`: frequencies added per term.
    pub step: usize,
    /// `H ≥ 1`: number of terms; the top term has `m₀ + cH` frequencies.
    pub terms: usize,
    /// `a ≥ 0`: `p(k) ∝ k^{−a}` (1 is the variance-optimal law of Theorem 4).
    pub exponent: f64,
    /// Whether the top term (`k = H`) uses the exact Cholesky objective instead of RFF
    /// with `m₀ + cH` frequencies. Then the estimator is unbiased for the exact log
    /// marginal likelihood, at `O(n³)` cost for the draws with `k = H`; it is most useful
    /// when `m₀ + cH ≥ n/2` (where an RFF matrix costs as much as the exact one). Without
    /// it, the estimator is unbiased for the `(m₀ + cH)`-frequency RFF objective only.
    pub top_exact: bool,
}

impl Default for SsRffOptions {
    fn default() -> Self {
        Self {
            base_freqs: 100,
            step: 10,
            terms: 50,
            exponent: 1.0,
            top_exact: false,
        }
    }
}

/// One SS-RFF estimate and the draw behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct SsRffEstimate {
    /// `f(m₀) + (f(D) − f(D − c)) / p(k)` for every field.
    pub terms: LmlTerms,
    /// The term index `k ∈ {1, …, H}`.
    pub k: usize,
    /// `D = m₀ + ck`, the frequencies of the high term (nominal when it is exact).
    pub num_freqs: usize,
    /// `p(k)`.
    pub prob: f64,
    /// Whether the high term was the exact objective (`k = H` and `top_exact`).
    pub exact_top: bool,
}

/// The single-sample RFF estimator: options and the law of `k`.
///
/// ```
/// use gp_kernels::SquaredExponential;
/// use gp_models::faer::{Col, Mat};
/// use gp_models::objective::rff::{Compute, RffObjective, SsRff, SsRffOptions};
/// use rand::SeedableRng;
///
/// let x = Mat::from_fn(30, 1, |i, _| i as f64 / 10.0);
/// let y = Col::from_fn(30, |i| (i as f64 / 10.0).sin());
/// let objective = RffObjective::new(SquaredExponential::new(vec![0.5], 1.0)?, x.as_ref(),
///                                   y.as_ref(), 0.1)?;
/// let ss = SsRff::new(SsRffOptions { base_freqs: 2, step: 2, terms: 4, exponent: 1.0,
///                                    top_exact: true })?;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
/// let est = ss.estimate(&objective, &mut rng, Compute::ValueAndGradient)?;
/// assert_eq!(est.num_freqs, 2 + 2 * est.k);
/// assert_eq!(est.terms.grad.map(|g| g.len()), Some(3));
/// # Ok::<(), gp_models::ModelError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SsRff {
    options: SsRffOptions,
    law: Categorical,
    top_freqs: usize,
}

impl SsRff {
    /// Checks the options and builds the law `p(k) ∝ k^{−a}` on `{1, …, H}`.
    ///
    /// Errors: [`ModelError::InvalidOption`] for `m₀ = 0`, `c = 0`, `H = 0`, `m₀ + cH`
    /// overflowing, or an exponent that is not finite and non-negative.
    pub fn new(options: SsRffOptions) -> Result<Self> {
        let invalid = |name, reason: String| ModelError::InvalidOption { name, reason };
        if options.base_freqs == 0 {
            return Err(invalid(
                "SsRffOptions::base_freqs",
                "the base term needs at least one frequency (m₀ ≥ 1), got 0".into(),
            ));
        }
        if options.step == 0 {
            return Err(invalid(
                "SsRffOptions::step",
                "each term must add at least one frequency (c ≥ 1), got 0".into(),
            ));
        }
        if options.terms == 0 {
            return Err(invalid(
                "SsRffOptions::terms",
                "need at least one term (H ≥ 1), got 0".into(),
            ));
        }
        if !(options.exponent.is_finite() && options.exponent >= 0.0) {
            return Err(invalid(
                "SsRffOptions::exponent",
                format!(
                    "the law p(k) ∝ k^(−a) needs a finite a ≥ 0, got {}",
                    options.exponent
                ),
            ));
        }
        let top_freqs = options
            .step
            .checked_mul(options.terms)
            .and_then(|ch| ch.checked_add(options.base_freqs))
            .ok_or_else(|| {
                invalid(
                    "SsRffOptions",
                    format!(
                        "m₀ + cH = {} + {}·{} overflows",
                        options.base_freqs, options.step, options.terms
                    ),
                )
            })?;
        let law = Categorical::one_over_j(options.exponent, 1, options.terms)?;
        Ok(Self {
            options,
            law,
            top_freqs,
        })
    }

    /// The options.
    pub fn options(&self) -> &SsRffOptions {
        &self.options
    }

    /// The law of `k` on `{1, …, H}`.
    pub fn law(&self) -> &Categorical {
        &self.law
    }

    /// `m₀ + cH`: the frequencies of the top term, and the rows of draws that serve every
    /// `k` (for enumeration).
    pub fn top_freqs(&self) -> usize {
        self.top_freqs
    }

    /// `E[D] = m₀ + c E[k]`.
    pub fn expected_num_freqs(&self) -> f64 {
        self.options.base_freqs as f64 + self.options.step as f64 * self.law.mean()
    }

    /// The frequencies the draws must hold for term `k`: `D = m₀ + ck`, or `D − c` when the
    /// high term is exact.
    pub fn freqs_needed(&self, k: usize) -> usize {
        let d = self
            .options
            .base_freqs
            .saturating_add(self.options.step.saturating_mul(k));
        if self.options.top_exact && k == self.options.terms {
            d - self.options.step
        } else {
            d
        }
    }

    /// The estimate for a given `k` and given draws (at least
    /// [`freqs_needed(k)`](Self::freqs_needed) rows; the base, low and high terms use nested
    /// prefixes of them). For tests and for enumeration over `k`.
    ///
    /// Errors: [`ModelError::InvalidOption`] for `k` outside `{1, …, H}` or draws with too
    /// few rows, and the errors of [`RffObjective::rff`] and [`RffObjective::exact`].
    pub fn estimate_with<K: RffKernel>(
        &self,
        objective: &RffObjective<K>,
        k: usize,
        draws: &SpectralDraws,
        compute: Compute,
    ) -> Result<SsRffEstimate> {
        let h = self.options.terms;
        if !(1..=h).contains(&k) {
            return Err(ModelError::InvalidOption {
                name: "k",
                reason: format!("the SS-RFF term index must lie in 1..={h}, got {k}"),
            });
        }
        let needed = self.freqs_needed(k);
        if draws.num_freqs() < needed {
            return Err(ModelError::InvalidOption {
                name: "draws",
                reason: format!(
                    "SS-RFF term k = {k} needs {needed} frequencies, the draws have {}",
                    draws.num_freqs()
                ),
            });
        }
        let (m0, c) = (self.options.base_freqs, self.options.step);
        let d = m0 + c * k;
        let exact_top = self.options.top_exact && k == h;
        // Base, low and high terms share the draws' leading rows (nested frequencies); for
        // k = 1 the low term is the base term.
        let lo_freqs = d - c;
        let mut levels = vec![m0];
        if lo_freqs != m0 {
            levels.push(lo_freqs);
        }
        if !exact_top {
            levels.push(d);
        }
        let terms = objective.rff_nested(draws, &levels, compute)?;
        let level = |i: usize| terms.get(i).ok_or_else(missing_level);
        let base = level(0)?;
        let lo = if lo_freqs != m0 { level(1)? } else { base };
        let exact;
        let hi = if exact_top {
            exact = objective.exact(compute)?;
            &exact
        } else {
            level(levels.len() - 1)?
        };
        let prob = self.law.pmf(k);
        Ok(SsRffEstimate {
            terms: base.plus_weighted_difference(hi, lo, 1.0 / prob),
            k,
            num_freqs: d,
            prob,
            exact_top,
        })
    }

    /// One estimate: `k` from the law, then [`freqs_needed(k)`](Self::freqs_needed) fresh
    /// frequencies for `objective`'s kernel, both from `rng`.
    ///
    /// Errors: those of [`estimate_with`](Self::estimate_with).
    pub fn estimate<K: RffKernel>(
        &self,
        objective: &RffObjective<K>,
        rng: &mut dyn RngCore,
        compute: Compute,
    ) -> Result<SsRffEstimate> {
        let k = self.law.sample(rng);
        let draws = SpectralDraws::sample(objective.kernel(), self.freqs_needed(k), rng)?;
        self.estimate_with(objective, k, &draws, compute)
    }

    /// What the estimator is unbiased for, given the draws (at least
    /// [`top_freqs`](Self::top_freqs) rows unless the top term is exact): the exact
    /// objective when the top term is exact, otherwise the RFF objective with `m₀ + cH`
    /// frequencies. `Σ_k p(k) ψ̄_k` equals this up to rounding.
    ///
    /// Errors: those of [`RffObjective::rff`] and [`RffObjective::exact`].
    pub fn target<K: RffKernel>(
        &self,
        objective: &RffObjective<K>,
        draws: &SpectralDraws,
        compute: Compute,
    ) -> Result<LmlTerms> {
        if self.options.top_exact {
            objective.exact(compute)
        } else {
            objective.rff(draws, self.top_freqs, compute)
        }
    }
}

/// The error for a nested evaluation that returned fewer estimates than asked for (not
/// reachable: `rff_nested` returns one per entry or an error).
fn missing_level() -> ModelError {
    ModelError::InvalidOption {
        name: "SsRff",
        reason: "a nested RFF evaluation returned fewer estimates than asked for".into(),
    }
}
