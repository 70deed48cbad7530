//! Random-Fourier-feature objectives: plain RFF with its analytic gradient and the
//! single-sample randomized truncation SS-RFF (Potapczynski et al. 2021; spec `rtgps.md`
//! §1.5, §3).
//!
//! * [`RffObjective`]: the log marginal likelihood of `K̃ = ΦΦᵀ + σ²I` for fixed
//!   [`SpectralDraws`] (reparameterised frequencies `ω = t · g ⊘ ℓ`, so the gradient flows
//!   into the length scales), its two terms `yᵀK̃⁻¹y` and `log|K̃|` ([`LmlTerms`]), and its
//!   exact gradient with respect to `[log ℓ, log s, log σ²]`; by Woodbury in `O(n F² + F³)`
//!   for `2F < n`, densely otherwise ([`RffPath`]). Squared exponential (Gaussian spectral
//!   density) and Matérn (Student-t) kernels ([`RffKernel`]). By Theorem 2 it is biased:
//!   `E[yᵀK̃⁻¹y] ≥ yᵀK⁻¹y` and `E[log|K̃|] ≤ log|K|`, by `O(1/F)`.
//! * [`SsRff`]: `f(m₀) + (f(D) − f(D − c)) / p(k)` with `k ~ p(k) ∝ k^{−a}`, `D = m₀ + ck`
//!   and nested frequencies: unbiased for the `(m₀ + cH)`-frequency objective, or for the
//!   exact one with [`SsRffOptions::top_exact`].
//!
//! Every estimate is of `log p(y | X, θ)` with zero prior mean, its gradient in the order
//! of [`ExactGp::lml_and_grad`](crate::ExactGp::lml_and_grad) (kernel, then `log σ²`).
//!
//! ```
//! use gp_kernels::SquaredExponential;
//! use gp_models::faer::{Col, Mat};
//! use gp_models::objective::rff::{
//!     Compute, RffObjective, SpectralDraws, SsRff, SsRffOptions,
//! };
//! use rand::SeedableRng;
//!
//! let x = Mat::from_fn(60, 1, |i, _| i as f64 / 20.0);
//! let y = Col::from_fn(60, |i| (i as f64 / 10.0).sin());
//! let kernel = SquaredExponential::new(vec![0.5], 1.0)?;
//! let objective = RffObjective::new(kernel.clone(), x.as_ref(), y.as_ref(), 0.1)?;
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
//!
//! // Plain RFF with 20 frequencies (40 features): value, terms and gradient.
//! let draws = SpectralDraws::sample(&kernel, 20, &mut rng)?;
//! let rff = objective.rff(&draws, 20, Compute::ValueAndGradient)?;
//! assert_eq!(rff.grad.as_ref().map(Vec::len), Some(3)); // log ℓ, log s, log σ²
//! let exact = objective.exact(Compute::Value)?;
//! println!("data fit {} vs {}, log det {} vs {}", rff.data_fit, exact.data_fit,
//!          rff.log_det, exact.log_det);
//!
//! // SS-RFF: 5 + 5k frequencies, k ∈ 1..=5, exact top term (30 frequencies = n/2).
//! let ss = SsRff::new(SsRffOptions { base_freqs: 5, step: 5, terms: 5, exponent: 1.0,
//!                                    top_exact: true })?;
//! let mean: f64 = (0..200)
//!     .map(|_| ss.estimate(&objective, &mut rng, Compute::Value).map(|e| e.terms.lml))
//!     .sum::<Result<f64, _>>()? / 200.0;
//! println!("SS-RFF mean {mean} vs exact {}", exact.lml);
//! # Ok::<(), gp_models::ModelError>(())
//! ```

mod dense;
mod draws;
mod factor;
mod features;
mod kernel;
mod objective;
mod solve;
mod ss;
mod terms;
mod woodbury;

pub use draws::SpectralDraws;
pub use kernel::RffKernel;
pub use objective::RffObjective;
pub use solve::RffPath;
pub use ss::{SsRff, SsRffEstimate, SsRffOptions};
pub use terms::{Compute, LmlTerms};
