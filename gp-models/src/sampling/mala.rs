//! The Metropolis-adjusted Langevin algorithm (MALA; Roberts & Tweedie 1996) over `u ∈ ℝᵏ`.
//!
//! From the current state `u` with log target `ℓ(u)` and gradient `∇ℓ(u)`, one iteration
//! proposes
//!
//! ```text
//! u' = u + ½ h² ∇ℓ(u) + h ξ,   ξ ~ N(0, I),
//! ```
//!
//! and accepts it with probability `min(1, α)`,
//!
//! ```text
//! ln α = ℓ(u') − ℓ(u) + ln q(u | u') − ln q(u' | u),
//! ln q(b | a) = −‖b − a − ½ h² ∇ℓ(a)‖² / (2h²) + const,
//! ```
//!
//! the Metropolis–Hastings correction for the asymmetric Gaussian proposal. This is the plain
//! (identity-metric) special case of the Langevin samplers of Girolami & Calderhead (2011).
//!
//! * A proposal whose target evaluation fails (an `Err`, or a non-finite value or gradient) is
//!   rejected and counted in [`MalaRun::rejected_failures`]; the chain stays where it is.
//! * The step `h` is tuned by an [`AdaptPolicy`]; the default adapts only during burn-in, so
//!   the kept part of the chain is a time-homogeneous, valid MCMC chain.
//! * Sample rule: the state after iteration `i` (0-based) is kept when `i ≥ burn_in` and
//!   `(i − burn_in) % thin == 0`, i.e. `⌈(iterations − burn_in) / thin⌉` samples
//!   ([`MalaOptions::kept_samples`]; 180 for 10 000 / 1000 / 50). The GP-GRIEF reference code
//!   keeps `i > burn_in` with `i % thin == 0`, one fewer (179) for those settings.
//! * Runs are reproducible bit for bit: one [`StdRng`] seeded by [`MalaOptions::seed`] draws
//!   the `k` normals of each proposal, then one uniform for the accept test.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use crate::error::{ModelError, Result};

/// How [`mala`] tunes its step `h`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum AdaptPolicy {
    /// Adapt during burn-in only, then freeze the step (the default; a valid MCMC chain).
    ///
    /// After every `interval` burn-in iterations (when `(i + 1) % interval == 0` and
    /// `i + 1 ≤ burn_in`) the step moves by a Robbins–Monro update on its logarithm,
    ///
    /// ```text
    /// ln h ← ln h + 2 (a_j − target_acceptance) / √(1 + c_j),
    /// ```
    ///
    /// where `a_j` is the mean Metropolis–Hastings acceptance probability `min(1, α)` over the
    /// window (less noisy than the 0/1 accept indicators) and `c_j` counts the sign changes of
    /// `a − target_acceptance` so far (Kesten's rule: the gain stays large while the step is
    /// far from its target, e.g. a factor of about 2.4 per window from a step 1000 times too
    /// small, and decays once the acceptance oscillates around the target). Acceptance above
    /// the target lengthens the step, below shortens it. The step is kept within
    /// `[1e-12, 1e12]`. About 0.574 is optimal for MALA in high dimension (Roberts &
    /// Rosenthal 1998).
    BurnInOnly {
        /// The acceptance probability to aim for, in `(0, 1)` (default 0.57).
        target_acceptance: f64,
        /// Burn-in iterations per adaptation window (default 100).
        interval: usize,
    },
    /// The GP-GRIEF reference code's rule, for comparisons: after every 1000 iterations
    /// (`(i + 1) % 1000 == 0`, burn-in or not) `h ×= 0.7` if the cumulative acceptance rate
    /// (accepted proposals / iterations so far) is below 0.2 and `h ×= 1.2` if it is above
    /// 0.6. It never stops, so the kept samples are not strictly from a Markov chain with the
    /// target as its stationary law.
    CodeFaithful,
    /// Never change the step.
    Fixed,
}

impl Default for AdaptPolicy {
    fn default() -> Self {
        AdaptPolicy::BurnInOnly {
            target_acceptance: 0.57,
            interval: 100,
        }
    }
}

/// Options of [`mala`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MalaOptions {
    /// Total iterations, burn-in included (default 10 000).
    pub iterations: usize,
    /// Iterations discarded before samples are kept, `< iterations` (default 1000).
    pub burn_in: usize,
    /// Keep every `thin`-th state after burn-in, `≥ 1` (default 50).
    pub thin: usize,
    /// The initial step `h > 0` (default 0.4).
    pub initial_step: f64,
    /// How the step is tuned (default [`AdaptPolicy::BurnInOnly`] at 0.57 every 100).
    pub adapt: AdaptPolicy,
    /// Seed of the [`StdRng`] (default 0).
    pub seed: u64,
}

impl Default for MalaOptions {
    fn default() -> Self {
        Self {
            iterations: 10_000,
            burn_in: 1000,
            thin: 50,
            initial_step: 0.4,
            adapt: AdaptPolicy::default(),
            seed: 0,
        }
    }
}

/// Initial gain of the burn-in adaptation on `ln h` (see [`AdaptPolicy::BurnInOnly`]).
const ADAPT_GAIN: f64 = 2.0;

/// Smallest and largest step the burn-in adaptation may reach.
const STEP_RANGE: (f64, f64) = (1e-12, 1e12);

impl MalaOptions {
    /// How many samples a run keeps: `⌈(iterations − burn_in) / thin⌉` (0 if the options are
    /// invalid).
    pub fn kept_samples(&self) -> usize {
        if self.thin == 0 || self.burn_in >= self.iterations {
            return 0;
        }
        (self.iterations - self.burn_in).div_ceil(self.thin)
    }

    /// Checks every option.
    ///
    /// # Errors
    /// [`ModelError::InvalidOption`] naming the option and what to do.
    pub fn validate(&self) -> Result<()> {
        let bad = |name, reason: String| Err(ModelError::InvalidOption { name, reason });
        if self.thin == 0 {
            return bad(
                "MalaOptions::thin",
                "must be at least 1 (1 keeps every state after burn-in)".to_string(),
            );
        }
        if self.burn_in >= self.iterations {
            return bad(
                "MalaOptions::burn_in",
                format!(
                    "burn_in ({}) must be smaller than iterations ({}); raise iterations or \
                     shorten the burn-in so some samples are kept",
                    self.burn_in, self.iterations
                ),
            );
        }
        if !(self.initial_step > 0.0 && self.initial_step.is_finite()) {
            return bad(
                "MalaOptions::initial_step",
                format!(
                    "must be finite and positive, got {}; 0.4 is a common start when the \
                     target's scale is about 1",
                    self.initial_step
                ),
            );
        }
        if let AdaptPolicy::BurnInOnly {
            target_acceptance,
            interval,
        } = self.adapt
        {
            if !(target_acceptance > 0.0 && target_acceptance < 1.0) {
                return bad(
                    "MalaOptions::adapt (target_acceptance)",
                    format!(
                        "the target acceptance rate must lie strictly between 0 and 1, got \
                         {target_acceptance}; 0.57 is optimal for MALA"
                    ),
                );
            }
            if interval == 0 {
                return bad(
                    "MalaOptions::adapt (interval)",
                    "the adaptation interval must be at least 1 iteration (100 is typical)"
                        .to_string(),
                );
            }
        }
        Ok(())
    }
}

/// One kept sample, as handed to the callback of [`mala_with`].
#[derive(Debug, Clone, Copy)]
pub struct KeptSample<'a> {
    /// Index among the kept samples (0, 1, …).
    pub index: usize,
    /// The iteration (0-based) after which the state was kept.
    pub iteration: usize,
    /// The state `u`.
    pub u: &'a [f64],
    /// The log target `ℓ(u)`.
    pub ln_density: f64,
    /// Its gradient `∇ℓ(u)`.
    pub gradient: &'a [f64],
}

/// What a [`mala`] run did.
#[derive(Debug, Clone, PartialEq)]
pub struct MalaRun {
    /// The kept states, one `Vec` of length `k` each (empty for [`mala_with`], which hands
    /// them to its callback instead).
    pub samples: Vec<Vec<f64>>,
    /// The log target at each kept state (empty for [`mala_with`]).
    pub ln_densities: Vec<f64>,
    /// How many samples were kept ([`MalaOptions::kept_samples`]).
    pub kept: usize,
    /// Fraction of proposals accepted after burn-in (iterations `i ≥ burn_in`).
    pub acceptance_rate: f64,
    /// Fraction of proposals accepted during burn-in (0 if there is none).
    pub burn_in_acceptance_rate: f64,
    /// The step `h` at the end of the run.
    pub final_step: f64,
    /// The step `h` at the end of burn-in (the frozen step of [`AdaptPolicy::BurnInOnly`]).
    pub step_after_burn_in: f64,
    /// Target evaluations: one at the start plus one per iteration.
    pub evaluations: usize,
    /// Proposals rejected because the target failed or was not finite there.
    pub rejected_failures: usize,
    /// The last state of the chain (to continue it).
    pub last: Vec<f64>,
}

/// Runs MALA on the log target `target` (returning `(ℓ(u), ∇ℓ(u))`) from `u0`, keeping the
/// samples in memory (see the [module documentation](self)).
///
/// # Errors
/// * [`ModelError::InvalidOption`] for invalid options, an empty `u0`, or a start point
///   where the target is not finite (start somewhere the density is positive, e.g. at the
///   prior mode);
/// * [`ModelError::NonFinite`] if `u0` holds NaN or infinity;
/// * the target's own error if it fails at `u0`;
/// * [`ModelError::LengthMismatch`] if the target returns a gradient whose length differs from
///   `u0`'s (a bug in the target, not a rejection).
pub fn mala<F>(target: F, u0: &[f64], options: &MalaOptions) -> Result<MalaRun>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    let mut samples = Vec::with_capacity(options.kept_samples());
    let mut ln_densities = Vec::with_capacity(options.kept_samples());
    let mut run = mala_with(target, u0, options, |s| {
        samples.push(s.u.to_vec());
        ln_densities.push(s.ln_density);
        Ok(())
    })?;
    run.samples = samples;
    run.ln_densities = ln_densities;
    Ok(run)
}

/// Runs MALA like [`mala`], but hands every kept sample to `on_sample` instead of storing it,
/// so a caller can reduce per-sample results (e.g. average predictive means) in `O(1)` memory.
/// [`MalaRun::samples`] and [`MalaRun::ln_densities`] stay empty. An error from `on_sample`
/// stops the run and is returned.
///
/// # Errors
/// Those of [`mala`], and any error of `on_sample`.
pub fn mala_with<F, C>(
    mut target: F,
    u0: &[f64],
    options: &MalaOptions,
    mut on_sample: C,
) -> Result<MalaRun>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
    C: FnMut(KeptSample<'_>) -> Result<()>,
{
    options.validate()?;
    let k = u0.len();
    if k == 0 {
        return Err(ModelError::InvalidOption {
            name: "mala start point",
            reason: "the start point is empty; MALA needs at least one coordinate".to_string(),
        });
    }
    if let Some((i, &v)) = u0.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(ModelError::NonFinite {
            context: "the MALA start point",
            row: i,
            col: 0,
            value: v,
        });
    }
    let (mut ln_p, mut grad) = target(u0)?;
    check_gradient_len(k, grad.len())?;
    if !(ln_p.is_finite() && grad.iter().all(|g| g.is_finite())) {
        return Err(ModelError::InvalidOption {
            name: "mala start point",
            reason: format!(
                "the log target at the start point is {ln_p} with a{} gradient; start where \
                 the density is positive and smooth (e.g. at the prior mode)",
                if grad.iter().all(|g| g.is_finite()) {
                    " finite"
                } else {
                    " non-finite"
                }
            ),
        });
    }

    let mut rng = StdRng::seed_from_u64(options.seed);
    let mut u = u0.to_vec();
    let mut proposal = vec![0.0; k];
    let mut h = options.initial_step;
    let mut step_after_burn_in = h;
    let mut accepted_total = 0usize;
    let mut accepted_burn = 0usize;
    let mut accepted_after = 0usize;
    let mut failures = 0usize;
    let mut window_prob = 0.0;
    let mut window_count = 0usize;
    let mut last_sign: Option<bool> = None;
    let mut sign_changes = 0usize;
    let mut kept = 0usize;

    for i in 0..options.iterations {
        if i == options.burn_in {
            step_after_burn_in = h;
        }
        let h2 = h * h;
        for ((p, &ui), &gi) in proposal.iter_mut().zip(&u).zip(&grad) {
            let xi: f64 = rng.sample(StandardNormal);
            *p = ui + 0.5 * h2 * gi + h * xi;
        }
        // Acceptance probability min(1, α) of this proposal (0 for a failed evaluation).
        let mut accept_prob = 0.0;
        match target(&proposal) {
            Ok((ln_q, grad_q)) => {
                check_gradient_len(k, grad_q.len())?;
                if ln_q.is_finite() && grad_q.iter().all(|g| g.is_finite()) {
                    let log_alpha = ln_q - ln_p + ln_proposal(&u, &proposal, &grad_q, h2)
                        - ln_proposal(&proposal, &u, &grad, h2);
                    if log_alpha.is_finite() || log_alpha == f64::INFINITY {
                        accept_prob = log_alpha.min(0.0).exp();
                        let v: f64 = rng.random();
                        if v.ln() < log_alpha {
                            u.copy_from_slice(&proposal);
                            ln_p = ln_q;
                            grad = grad_q;
                            accepted_total += 1;
                            if i < options.burn_in {
                                accepted_burn += 1;
                            } else {
                                accepted_after += 1;
                            }
                        }
                    } else {
                        failures += 1;
                    }
                } else {
                    failures += 1;
                }
            }
            Err(_) => failures += 1,
        }

        // Step adaptation.
        match options.adapt {
            AdaptPolicy::BurnInOnly {
                target_acceptance,
                interval,
            } if i < options.burn_in => {
                window_prob += accept_prob;
                window_count += 1;
                if (i + 1).is_multiple_of(interval) {
                    let excess = window_prob / window_count as f64 - target_acceptance;
                    let sign = excess > 0.0;
                    if last_sign.is_some_and(|s| s != sign) {
                        sign_changes += 1;
                    }
                    last_sign = Some(sign);
                    let gain = ADAPT_GAIN / ((1 + sign_changes) as f64).sqrt();
                    h = (h * (gain * excess).exp()).clamp(STEP_RANGE.0, STEP_RANGE.1);
                    window_prob = 0.0;
                    window_count = 0;
                }
            }
            AdaptPolicy::CodeFaithful if (i + 1).is_multiple_of(1000) => {
                let rate = accepted_total as f64 / (i + 1) as f64;
                if rate < 0.2 {
                    h *= 0.7;
                } else if rate > 0.6 {
                    h *= 1.2;
                }
            }
            _ => {}
        }

        if i >= options.burn_in && (i - options.burn_in).is_multiple_of(options.thin) {
            on_sample(KeptSample {
                index: kept,
                iteration: i,
                u: &u,
                ln_density: ln_p,
                gradient: &grad,
            })?;
            kept += 1;
        }
    }

    let after = options.iterations - options.burn_in;
    Ok(MalaRun {
        samples: Vec::new(),
        ln_densities: Vec::new(),
        kept,
        acceptance_rate: accepted_after as f64 / after as f64,
        burn_in_acceptance_rate: if options.burn_in > 0 {
            accepted_burn as f64 / options.burn_in as f64
        } else {
            0.0
        },
        final_step: h,
        step_after_burn_in,
        evaluations: options.iterations + 1,
        rejected_failures: failures,
        last: u,
    })
}

/// `ln q(to | from)` up to its constant: `−‖to − from − ½h²∇ℓ(from)‖² / (2h²)`.
fn ln_proposal(to: &[f64], from: &[f64], grad_from: &[f64], h2: f64) -> f64 {
    let sq: f64 = to
        .iter()
        .zip(from)
        .zip(grad_from)
        .map(|((&t, &f), &g)| {
            let d = t - f - 0.5 * h2 * g;
            d * d
        })
        .sum();
    -sq / (2.0 * h2)
}

fn check_gradient_len(expected: usize, found: usize) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(ModelError::LengthMismatch {
            context: "the MALA target's gradient (one entry per coordinate of u)",
            expected,
            found,
        })
    }
}
