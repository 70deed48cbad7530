//! A line search satisfying the strong Wolfe conditions: bracketing followed by a zoom with
//! safeguarded cubic interpolation (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
//! Algorithms 3.5 and 3.6).
//!
//! Along `φ(a) = f(x + a p)` with `φ'(0) < 0`, a step `a` is accepted when
//!
//! ```text
//! φ(a) ≤ φ(0) + c₁ a φ'(0)          (sufficient decrease)
//! |φ'(a)| ≤ c₂ |φ'(0)|               (strong curvature)
//! ```
//!
//! A failed evaluation (the objective returned an error or a non-finite value, e.g. a
//! Cholesky failure at absurd hyperparameters) is treated as `φ = +∞`: it closes the
//! bracket from above and the next trial bisects towards the last good step, so the step
//! shrinks instead of the run aborting.

use crate::error::{ModelError, Result};
use crate::optim::evaluator::Evaluator;

/// Options of the strong-Wolfe line search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineSearchOptions {
    /// Sufficient-decrease constant `c₁` (default `1e-4`).
    pub c1: f64,
    /// Curvature constant `c₂` (default `0.9`, the usual choice for quasi-Newton methods).
    pub c2: f64,
    /// Maximum objective evaluations per line search (default 30: enough to bisect a
    /// failed unit step down to about `1e-9`).
    pub max_evaluations: usize,
    /// Largest step tried (default `1e10`).
    pub max_step: f64,
    /// The zoom ends, taking its best step with sufficient decrease, once the bracket is
    /// narrower than this fraction of its larger end (default `1e-14`: only when it can
    /// shrink no further). SciPy's L-BFGS-B line search (MINPACK-2 `dcsrch`) uses `0.1`
    /// (`xtol`), which keeps the search short on objectives whose derivative jumps, where
    /// the curvature condition cannot be met near the jump.
    pub bracket_tolerance: f64,
}

impl Default for LineSearchOptions {
    fn default() -> Self {
        Self {
            c1: 1e-4,
            c2: 0.9,
            max_evaluations: 30,
            max_step: 1e10,
            bracket_tolerance: 1e-14,
        }
    }
}

impl LineSearchOptions {
    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |name, reason: &str| {
            Err(ModelError::InvalidOption {
                name,
                reason: reason.to_string(),
            })
        };
        if !(self.c1 > 0.0 && self.c1 < 1.0) {
            return bad("LineSearchOptions::c1", "must lie in (0, 1)");
        }
        if !(self.c2 > self.c1 && self.c2 < 1.0) {
            return bad("LineSearchOptions::c2", "must lie in (c1, 1)");
        }
        if self.max_evaluations == 0 {
            return bad("LineSearchOptions::max_evaluations", "must be at least 1");
        }
        if self.max_step.is_nan() || self.max_step <= 0.0 {
            return bad("LineSearchOptions::max_step", "must be positive");
        }
        if !(self.bracket_tolerance > 0.0 && self.bracket_tolerance < 1.0) {
            return bad("LineSearchOptions::bracket_tolerance", "must lie in (0, 1)");
        }
        Ok(())
    }
}

/// An evaluated trial step.
#[derive(Debug, Clone)]
pub(crate) struct Trial {
    /// Step length.
    pub a: f64,
    /// `φ(a)`.
    pub f: f64,
    /// `φ'(a) = ∇f(x + a p)ᵀ p`.
    pub d: f64,
    /// The point `x + a p`.
    pub x: Vec<f64>,
    /// `∇f(x + a p)`.
    pub g: Vec<f64>,
}

/// The upper end of a bracket: an evaluated point or a failed evaluation.
enum High {
    Point(Trial),
    Failed(f64),
}

impl High {
    fn a(&self) -> f64 {
        match self {
            High::Point(t) => t.a,
            High::Failed(a) => *a,
        }
    }
}

/// How the line search ended.
pub(crate) enum LineSearchOutcome {
    /// A step satisfying the strong Wolfe conditions.
    Wolfe(Trial),
    /// A step with sufficient decrease only (evaluation budget or bracket exhausted).
    SufficientDecrease(Trial),
    /// No step with sufficient decrease was found.
    Failed,
}

/// The minimizer of the cubic interpolating `(a, fa, da)` and `(b, fb, db)`, if it exists.
fn cubic_minimizer(a: f64, fa: f64, da: f64, b: f64, fb: f64, db: f64) -> Option<f64> {
    if a == b {
        return None;
    }
    let d1 = da + db - 3.0 * (fa - fb) / (a - b);
    let disc = d1 * d1 - da * db;
    if disc.is_nan() || disc < 0.0 {
        return None;
    }
    let d2 = (b - a).signum() * disc.sqrt();
    let denom = db - da + 2.0 * d2;
    if denom == 0.0 {
        return None;
    }
    let t = b - (b - a) * (db + d2 - d1) / denom;
    t.is_finite().then_some(t)
}

/// The minimizer of the quadratic through `(a, fa)` with slope `da` and through `(b, fb)`,
/// if it is convex.
fn quadratic_minimizer(a: f64, fa: f64, da: f64, b: f64, fb: f64) -> Option<f64> {
    let h = b - a;
    let curv = (fb - fa - da * h) / (h * h);
    if curv.is_nan() || curv <= 0.0 {
        return None;
    }
    let t = a - da / (2.0 * curv);
    t.is_finite().then_some(t)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// State shared by the phases of one line search.
struct Search<'a, F> {
    eval: &'a mut Evaluator<F>,
    x0: &'a [f64],
    p: &'a [f64],
    f0: f64,
    d0: f64,
    opts: &'a LineSearchOptions,
    used: usize,
}

impl<F> Search<'_, F>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    fn budget_left(&self) -> bool {
        self.used < self.opts.max_evaluations
    }

    fn try_step(&mut self, a: f64) -> Result<Option<Trial>> {
        self.used += 1;
        let x: Vec<f64> = self
            .x0
            .iter()
            .zip(self.p)
            .map(|(xi, pi)| xi + a * pi)
            .collect();
        Ok(self.eval.eval(&x)?.map(|(f, g)| {
            let d = dot(&g, self.p);
            Trial { a, f, d, x, g }
        }))
    }

    fn armijo(&self, t: &Trial) -> bool {
        t.f <= self.f0 + self.opts.c1 * t.a * self.d0
    }

    fn curvature(&self, t: &Trial) -> bool {
        t.d.abs() <= -self.opts.c2 * self.d0
    }

    /// Algorithm 3.6: shrinks the bracket `[lo, hi]` (in either order) whose `lo` end
    /// satisfies sufficient decrease and has the lowest value seen.
    fn zoom(&mut self, mut lo: Trial, mut hi: High) -> Result<LineSearchOutcome> {
        while self.budget_left() {
            let (a_lo, a_hi) = (lo.a, hi.a());
            let width = (a_hi - a_lo).abs();
            let tolerance = self.opts.bracket_tolerance;
            if width <= tolerance * a_lo.abs().max(a_hi.abs()).max(f64::MIN_POSITIVE) {
                break;
            }
            let bisect = 0.5 * (a_lo + a_hi);
            let a = match &hi {
                High::Failed(_) => bisect,
                High::Point(h) => {
                    // Cubic, else quadratic through (φ(lo), φ'(lo), φ(hi)), kept at least a
                    // tenth of the bracket away from both ends (clamped, not rejected, so a
                    // wildly overshooting trial shrinks the step tenfold at once).
                    let (lo_end, hi_end) = (a_lo.min(a_hi), a_lo.max(a_hi));
                    cubic_minimizer(lo.a, lo.f, lo.d, h.a, h.f, h.d)
                        .or_else(|| quadratic_minimizer(lo.a, lo.f, lo.d, h.a, h.f))
                        .map_or(bisect, |c| {
                            c.clamp(lo_end + 0.1 * width, hi_end - 0.1 * width)
                        })
                }
            };
            match self.try_step(a)? {
                None => hi = High::Failed(a),
                Some(t) => {
                    if !self.armijo(&t) || t.f >= lo.f {
                        hi = High::Point(t);
                    } else {
                        if self.curvature(&t) {
                            return Ok(LineSearchOutcome::Wolfe(t));
                        }
                        if t.d * (a_hi - a_lo) >= 0.0 {
                            hi = High::Point(lo);
                        }
                        lo = t;
                    }
                }
            }
        }
        Ok(if lo.a > 0.0 {
            LineSearchOutcome::SufficientDecrease(lo)
        } else {
            LineSearchOutcome::Failed
        })
    }

    /// Algorithm 3.5: grows the step from `a_init` until a bracket is found, then zooms.
    fn run(&mut self, a_init: f64) -> Result<LineSearchOutcome> {
        let mut prev = Trial {
            a: 0.0,
            f: self.f0,
            d: self.d0,
            x: self.x0.to_vec(),
            g: Vec::new(),
        };
        let mut a = a_init.min(self.opts.max_step);
        let mut first = true;
        while self.budget_left() {
            let t = match self.try_step(a)? {
                None => return self.zoom(prev, High::Failed(a)),
                Some(t) => t,
            };
            if !self.armijo(&t) || (!first && t.f >= prev.f) {
                return self.zoom(prev, High::Point(t));
            }
            if self.curvature(&t) {
                return Ok(LineSearchOutcome::Wolfe(t));
            }
            if t.d >= 0.0 {
                return self.zoom(t, High::Point(prev));
            }
            if a >= self.opts.max_step {
                return Ok(LineSearchOutcome::SufficientDecrease(t));
            }
            // Extrapolate: the cubic's minimizer beyond `a`, kept within [a + Δ, a + 4Δ].
            let delta = a - prev.a;
            let next = match cubic_minimizer(prev.a, prev.f, prev.d, t.a, t.f, t.d) {
                Some(c) if c > a => c.clamp(a + delta, a + 4.0 * delta),
                _ => a + 4.0 * delta,
            };
            a = next.min(self.opts.max_step);
            prev = t;
            first = false;
        }
        Ok(if prev.a > 0.0 {
            LineSearchOutcome::SufficientDecrease(prev)
        } else {
            LineSearchOutcome::Failed
        })
    }
}

/// Searches along the descent direction `p` from `x0` (value `f0`, gradient `g0`),
/// starting with step `a_init`.
pub(crate) fn strong_wolfe<F>(
    eval: &mut Evaluator<F>,
    x0: &[f64],
    f0: f64,
    g0: &[f64],
    p: &[f64],
    a_init: f64,
    opts: &LineSearchOptions,
) -> Result<LineSearchOutcome>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    let d0 = dot(g0, p);
    if d0.is_nan() || d0 >= 0.0 || a_init.is_nan() || a_init <= 0.0 {
        return Ok(LineSearchOutcome::Failed);
    }
    Search {
        eval,
        x0,
        p,
        f0,
        d0,
        opts,
        used: 0,
    }
    .run(a_init)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubic_recovers_quadratic_minimum() {
        // φ(a) = (a − 1)²: φ(0) = 1, φ'(0) = −2, φ(2) = 1, φ'(2) = 2.
        let m = cubic_minimizer(0.0, 1.0, -2.0, 2.0, 1.0, 2.0);
        assert!(matches!(m, Some(v) if (v - 1.0).abs() < 1e-14));
    }

    #[test]
    fn cubic_recovers_cubic_minimum() {
        // φ(a) = a³ − 3a: minimum at 1.
        let phi = |a: f64| a * a * a - 3.0 * a;
        let dphi = |a: f64| 3.0 * a * a - 3.0;
        let m = cubic_minimizer(0.0, phi(0.0), dphi(0.0), 3.0, phi(3.0), dphi(3.0));
        assert!(matches!(m, Some(v) if (v - 1.0).abs() < 1e-12));
    }

    #[test]
    fn quadratic_interpolation() {
        // φ(a) = (a − 1)²: φ(0) = 1, φ'(0) = −2, φ(3) = 4.
        let m = quadratic_minimizer(0.0, 1.0, -2.0, 3.0, 4.0);
        assert!(matches!(m, Some(v) if (v - 1.0).abs() < 1e-14));
        assert!(quadratic_minimizer(0.0, 1.0, -2.0, 1.0, -5.0).is_none());
    }

    #[test]
    fn wolfe_step_on_quadratic() {
        let mut ev = Evaluator::new(|x: &[f64]| Ok((x[0] * x[0], vec![2.0 * x[0]])), 1);
        let out = strong_wolfe(
            &mut ev,
            &[3.0],
            9.0,
            &[6.0],
            &[-1.0],
            1e-3,
            &LineSearchOptions::default(),
        );
        match out {
            Ok(LineSearchOutcome::Wolfe(t)) => {
                assert!(t.f <= 9.0 + 1e-4 * t.a * -6.0);
                assert!(t.d.abs() <= 0.9 * 6.0);
            }
            _ => panic!("expected a Wolfe step"),
        }
    }

    #[test]
    fn failed_evaluations_shrink_the_step() {
        // The objective fails for x > 1; the unit step from 0 along +1 goes to 10.
        let mut ev = Evaluator::new(
            |x: &[f64]| {
                if x[0] > 1.0 {
                    Err(ModelError::Optimizer {
                        reason: "out of domain".into(),
                    })
                } else {
                    Ok(((x[0] - 0.9).powi(2), vec![2.0 * (x[0] - 0.9)]))
                }
            },
            1,
        );
        let out = strong_wolfe(
            &mut ev,
            &[0.0],
            0.81,
            &[-1.8],
            &[1.0],
            10.0,
            &LineSearchOptions::default(),
        );
        match out {
            Ok(LineSearchOutcome::Wolfe(t)) | Ok(LineSearchOutcome::SufficientDecrease(t)) => {
                assert!(t.x[0] <= 1.0 && t.f < 0.81);
            }
            _ => panic!("expected a step"),
        }
        assert!(ev.failed >= 1);
    }
}
