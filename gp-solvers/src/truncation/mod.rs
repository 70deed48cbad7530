//! Truncation laws for randomized truncation of series (Russian roulette and single-sample
//! estimators, Potapczynski et al. 2021; spec `rtgps.md` §1.6, §2.2, §3.2).
//!
//! A law is a distribution of the truncation depth `J` on `{j_min, …, j_max}`. A series
//! `ψ = Σ_j Δ_j` is estimated without bias by the Russian-roulette sum
//! `Σ_{j ≤ J} Δ_j / P(J ≥ j)` (weights [`TruncationLaw::weight`]) or by the single-sample
//! term `Δ_J / P(J = j)` ([`TruncationLaw::pmf`]), as long as `J` is drawn independently of
//! the `Δ_j`.
//!
//! * [`ExpDecay`]: `P(J) ∝ e^{−λJ}` on `{j_min, …, j_max}` with the closed forms of spec
//!   §2.2 (the law the paper trains with: λ = 0.05, `j_min` = 80, `E[J] ≈ 99.5`);
//!   [`ExpDecay::geometric`] is the same law given by its ratio `q = e^{−λ}`.
//! * [`Categorical`]: any table of probabilities on a contiguous support;
//!   [`Categorical::one_over_j`] is the `P(k) ∝ k^{−a}` law of SS-RFF (spec §3.2).
//! * [`Fixed`]: `J` is always the same (plain truncation: all weights are 1).
//!
//! Survival probabilities are kept accurate where they are tiny (no `1 − cdf`): the
//! weights `1/P(J ≥ j)` grow like `e^{λ (j − j_min)}` and are needed exactly in that tail
//! (spec §8.3).
//!
//! Draws are made by [`TruncationLaw::sample`] from any random source; a caller that
//! wants to fix them (for the exact-expectation identities `Σ_J P(J) ψ̄_J = ψ`) passes
//! its own list to the estimators instead of a law's samples.
//!
//! ```
//! use gp_solvers::truncation::{ExpDecay, TruncationLaw};
//!
//! let law = ExpDecay::new(0.05, 80, 9600)?;
//! assert!((law.mean() - 99.5).abs() < 0.01);
//! assert!((law.sd() - 20.0).abs() < 0.01);
//! assert_eq!(law.survival(80), 1.0);
//! // The Russian-roulette weight 50 steps past j_min is e^{0.05·50}.
//! assert!((law.weight(130) - (2.5f64).exp()).abs() < 1e-9);
//! # Ok::<(), gp_solvers::SolverError>(())
//! ```

mod categorical;
mod exp_decay;
mod fixed;

pub use categorical::Categorical;
pub use exp_decay::ExpDecay;
pub use fixed::Fixed;

use rand::RngCore;

/// A distribution of the truncation depth `J` on the contiguous support
/// `{min_support(), …, max_support()}` (every `J ≥ 1`).
pub trait TruncationLaw: std::fmt::Debug + Send + Sync {
    /// The smallest `J` with positive probability.
    fn min_support(&self) -> usize;

    /// The largest `J` with positive probability.
    fn max_support(&self) -> usize;

    /// `P(J = j)` (zero outside the support).
    fn pmf(&self, j: usize) -> f64;

    /// `P(J ≥ j)`: 1 for `j ≤ min_support()`, 0 past `max_support()`, accurate (not
    /// `1 − cdf`) where it is tiny.
    fn survival(&self, j: usize) -> f64;

    /// The Russian-roulette weight `1 / P(J ≥ j)` of term `j` (1 for `j ≤ min_support()`,
    /// infinite past the support, where no draw reaches).
    fn weight(&self, j: usize) -> f64 {
        1.0 / self.survival(j)
    }

    /// `E[J]`.
    fn mean(&self) -> f64;

    /// The standard deviation of `J`.
    fn sd(&self) -> f64;

    /// One draw of `J`.
    fn sample(&self, rng: &mut dyn RngCore) -> usize;

    /// `E[max(J₁, J₂)]` for two independent draws: the expected number of iterations of an
    /// RR-CG step with two draws (spec §2.5). Computed from the support by
    /// `Σ_j P(max ≥ j) = Σ_j (1 − (1 − S(j))²)`, so it costs `O(max_support())`.
    fn mean_max_of_two(&self) -> f64 {
        (1..=self.max_support())
            .map(|j| {
                let s = self.survival(j);
                s * (2.0 - s)
            })
            .sum()
    }
}

/// A uniform draw in `(0, 1]` from any random source (53 random bits).
pub(crate) fn uniform_open0(rng: &mut dyn RngCore) -> f64 {
    let bits = rng.next_u64() >> 11;
    (bits as f64 + 1.0) * (1.0 / (1u64 << 53) as f64)
}
