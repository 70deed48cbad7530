//! Step control of the Newton iteration: the paper's undamped steps, or backtracking on the
//! log posterior `Ψ` (spec §7.1, decided here: undamped by default).

use faer::{Col, ColRef};

use super::likelihood::LaplaceLikelihood;
use crate::error::{ModelError, Result};

/// How a Newton step `g → g⁺` is taken (`g = f − m = K v`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum StepControl {
    /// The full step, as the paper (default): reproduces its figures, including the
    /// overshoot of large Poisson counts (spec §7.1).
    #[default]
    Undamped,
    /// Backtracking on `Ψ(f) = log p(y | f) − ½ vᵀK v` along `v(α) = v + α(v⁺ − v)`: halve
    /// `α` (from 1) until `Ψ` does not decrease, at most `max_halvings` times (then the last
    /// `α` is taken, and the outer test uses the proposed step's change, so that a stalled
    /// run is not reported as converged). Costs no product with `K`: `K v(α)` is the same combination of `K v`
    /// and `K v⁺`. An extension, not in the paper.
    Backtracking {
        /// At most this many halvings (e.g. 30).
        max_halvings: usize,
    },
}

/// `Ψ = log p(y | m + K v) − ½ vᵀ(K v)` from `v` and `K v`.
pub(crate) fn log_posterior<L: LaplaceLikelihood>(
    likelihood: &L,
    prior_mean: ColRef<'_, f64>,
    y: ColRef<'_, f64>,
    v: ColRef<'_, f64>,
    kv: ColRef<'_, f64>,
) -> f64 {
    let f = prior_mean.to_owned() + kv;
    likelihood.log_likelihood(f.as_ref(), y) - 0.5 * (v.transpose() * kv)
}

/// The accepted step: `(v, K v, α)`.
pub(crate) struct Accepted {
    pub v: Col<f64>,
    pub kv: Col<f64>,
    pub step_length: f64,
    /// `‖g⁺ − g‖ / ‖g⁺‖` of the proposed (full) step.
    pub proposed_change: f64,
    /// Backtracking ran out of halvings without an increase of `Ψ`.
    pub exhausted: bool,
}

/// `‖new − old‖ / ‖new‖`: 0 when neither moved, `∞` when only `new = 0`.
fn relative_change(new: ColRef<'_, f64>, old: ColRef<'_, f64>) -> f64 {
    let change = (new.to_owned() - old).norm_l2();
    let norm = new.norm_l2();
    if norm > 0.0 {
        change / norm
    } else if change == 0.0 {
        0.0
    } else {
        f64::INFINITY
    }
}

impl Accepted {
    /// The outer stopping quantity `‖g⁺ − g‖ / ‖g⁺‖` (`g = K v`) against the previous `K v`.
    /// When backtracking ran out of halvings the accepted step is tiny and says nothing about
    /// convergence: the proposed step's change is returned instead, so a stalled run is
    /// never reported as converged.
    pub(crate) fn relative_change(&self, kv_old: ColRef<'_, f64>) -> f64 {
        if self.exhausted {
            self.proposed_change
        } else {
            relative_change(self.kv.as_ref(), kv_old)
        }
    }
}

/// Applies `control` to the step from `(v, K v)` to `(v⁺, K v⁺)`.
///
/// Errors: [`ModelError::NewtonDiverged`] when the accepted iterate is not finite.
#[allow(clippy::too_many_arguments)]
pub(crate) fn take_step<L: LaplaceLikelihood>(
    control: StepControl,
    step: usize,
    likelihood: &L,
    prior_mean: ColRef<'_, f64>,
    y: ColRef<'_, f64>,
    (v, kv): (ColRef<'_, f64>, ColRef<'_, f64>),
    (v_new, kv_new): (Col<f64>, Col<f64>),
) -> Result<Accepted> {
    let proposed_change = relative_change(kv_new.as_ref(), kv);
    let accepted = match control {
        StepControl::Undamped => Accepted {
            v: v_new,
            kv: kv_new,
            step_length: 1.0,
            proposed_change,
            exhausted: false,
        },
        StepControl::Backtracking { max_halvings } => {
            let psi0 = log_posterior(likelihood, prior_mean, y, v, kv);
            let (dv, dkv) = (&v_new - v, &kv_new - kv);
            let mut alpha = 1.0;
            let mut halvings = 0;
            loop {
                // v(α) = v + α(v⁺ − v); K v(α) is the same combination.
                let trial_v = v + &dv * alpha;
                let trial_kv = kv + &dkv * alpha;
                let psi = log_posterior(
                    likelihood,
                    prior_mean,
                    y,
                    trial_v.as_ref(),
                    trial_kv.as_ref(),
                );
                let increased = psi.is_finite() && psi >= psi0;
                if increased || halvings >= max_halvings {
                    break Accepted {
                        v: trial_v,
                        kv: trial_kv,
                        step_length: alpha,
                        proposed_change,
                        exhausted: !increased,
                    };
                }
                alpha *= 0.5;
                halvings += 1;
            }
        }
    };
    if accepted.kv.iter().any(|x| !x.is_finite()) || accepted.v.iter().any(|x| !x.is_finite()) {
        return Err(ModelError::NewtonDiverged {
            step,
            reason: "the latent iterate is not finite".to_string(),
        });
    }
    Ok(accepted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gaussian;
    use faer::Col;

    /// A proposal along which `Ψ` decreases for every `α > 0` exhausts the halvings: the
    /// accepted step is tiny, and the outer test sees the proposed step's change (1), not
    /// the accepted one's (≈ 0), so the run is not reported as converged.
    #[test]
    fn exhausted_backtracking_reports_the_proposed_change() {
        let lik = Gaussian::new(1.0).unwrap();
        let (m, y) = (Col::<f64>::zeros(1), Col::from_fn(1, |_| 1.0));
        let (v, kv) = (Col::<f64>::zeros(1), Col::<f64>::zeros(1));
        // K = 1: Ψ(α) = −½(1 + α)² − ½α² decreases for all α > 0 along v⁺ = −1.
        let proposal = (Col::from_fn(1, |_| -1.0), Col::from_fn(1, |_| -1.0));
        let accepted = take_step(
            StepControl::Backtracking { max_halvings: 20 },
            0,
            &lik,
            m.as_ref(),
            y.as_ref(),
            (v.as_ref(), kv.as_ref()),
            proposal,
        )
        .unwrap();
        assert!(accepted.exhausted);
        assert_eq!(accepted.step_length, 0.5f64.powi(20));
        assert_eq!(accepted.relative_change(kv.as_ref()), 1.0);
        // An ascent proposal (toward y) is taken whole.
        let good = (Col::from_fn(1, |_| 0.5), Col::from_fn(1, |_| 0.5));
        let accepted = take_step(
            StepControl::Backtracking { max_halvings: 20 },
            0,
            &lik,
            m.as_ref(),
            y.as_ref(),
            (v.as_ref(), kv.as_ref()),
            good,
        )
        .unwrap();
        assert!(!accepted.exhausted);
        assert_eq!(accepted.step_length, 1.0);
    }
}
