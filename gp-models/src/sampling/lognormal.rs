//! The log-normal distribution, parameterised by `(μ, s)` or by its mode and variance.
//!
//! `X = e^U` with `U ~ N(μ, s²)`:
//!
//! ```text
//! ln p(x) = −ln x − ln(s √(2π)) − (ln x − μ)² / (2 s²),   x > 0,
//! mode = e^{μ − s²},   mean = e^{μ + s²/2},   variance = (e^{s²} − 1) e^{2μ + s²}.
//! ```
//!
//! GP-GRIEF-I (Evans & Nair 2018, §5) states its priors on the weights and the noise variance
//! by mode and variance; [`LogNormal::from_mode_variance`] converts them. Samplers that work in
//! log space use the density of `u = ln x`, which is the normal `N(μ, s²)`
//! ([`LogNormal::ln_pdf_log_space`]): the log-normal density times the Jacobian `dx/du = x`.

use crate::error::{ModelError, Result};

/// `ln √(2π)`.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// A log-normal distribution: `ln X ~ N(μ, s²)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogNormal {
    /// Mean `μ` of `ln X`.
    pub mu: f64,
    /// Standard deviation `s > 0` of `ln X`.
    pub s: f64,
}

impl LogNormal {
    /// The log-normal with `ln X ~ N(mu, s²)`.
    ///
    /// # Errors
    /// [`ModelError::InvalidOption`] if `mu` is not finite or `s` is not finite and positive.
    pub fn new(mu: f64, s: f64) -> Result<Self> {
        if !mu.is_finite() {
            return Err(ModelError::InvalidOption {
                name: "LogNormal::mu",
                reason: format!("must be finite, got {mu}"),
            });
        }
        if !(s > 0.0 && s.is_finite()) {
            return Err(ModelError::InvalidOption {
                name: "LogNormal::s",
                reason: format!(
                    "must be finite and positive (the standard deviation of ln x), got {s}"
                ),
            });
        }
        Ok(Self { mu, s })
    }

    /// The log-normal with the given mode `M` and variance `V`.
    ///
    /// With `t = e^{s²}`, mode `= e^{μ − s²}` and variance `= (t − 1) e^{2μ + s²}` give
    /// `M² t⁴ − M² t³ − V = 0`, whose positive real root is unique and lies in `t > 1`
    /// (`t³ (t − 1)` is negative on `(0, 1)` and increasing on `(1, ∞)`). The root is found as
    /// `z = t − 1 > 0` solving `(1 + z)³ z = V / M²` by Newton's method safeguarded by bisection
    /// on a bracket (to relative `1e-14`), then `s² = ln(1 + z)` (computed as `ln_1p`, accurate
    /// for small variances) and `μ = ln M + s²`.
    ///
    /// # Errors
    /// [`ModelError::InvalidOption`] if the mode or the variance is not finite and positive,
    /// or if `V / M²` over- or underflows (a variance too large or too small to represent
    /// relative to the squared mode).
    pub fn from_mode_variance(mode: f64, variance: f64) -> Result<Self> {
        if !(mode > 0.0 && mode.is_finite()) {
            return Err(ModelError::InvalidOption {
                name: "LogNormal::from_mode_variance (mode)",
                reason: format!(
                    "the mode of a log-normal must be finite and positive, got {mode}; give the \
                     prior's most likely value in natural (not log) units"
                ),
            });
        }
        if !(variance > 0.0 && variance.is_finite()) {
            return Err(ModelError::InvalidOption {
                name: "LogNormal::from_mode_variance (variance)",
                reason: format!(
                    "the variance of a log-normal must be finite and positive, got {variance}; \
                     give a variance (the square of a standard deviation)"
                ),
            });
        }
        let r = variance / mode / mode;
        if !(r.is_finite() && r >= f64::MIN_POSITIVE) {
            return Err(ModelError::InvalidOption {
                name: "LogNormal::from_mode_variance (variance)",
                reason: format!(
                    "variance / mode² = {r:e} for mode {mode:e} and variance {variance:e} is \
                     outside the range of f64; rescale the parameter so its mode and standard \
                     deviation are within a few hundred orders of magnitude of each other"
                ),
            });
        }
        let z = solve_quartic(r);
        let s2 = z.ln_1p();
        let s = s2.sqrt();
        let mu = mode.ln() + s2;
        if !(s > 0.0 && s.is_finite() && mu.is_finite()) {
            return Err(ModelError::InvalidOption {
                name: "LogNormal::from_mode_variance (variance)",
                reason: format!(
                    "mode {mode:e} and variance {variance:e} give a degenerate log-normal \
                     (s = {s:e}, μ = {mu:e}); use a variance that is not negligible next to mode²"
                ),
            });
        }
        Ok(Self { mu, s })
    }

    /// The mode `e^{μ − s²}`.
    pub fn mode(&self) -> f64 {
        (self.mu - self.s * self.s).exp()
    }

    /// The mean `e^{μ + s²/2}`.
    pub fn mean(&self) -> f64 {
        (self.mu + 0.5 * self.s * self.s).exp()
    }

    /// The variance `(e^{s²} − 1) e^{2μ + s²}`.
    pub fn variance(&self) -> f64 {
        let s2 = self.s * self.s;
        s2.exp_m1() * (2.0 * self.mu + s2).exp()
    }

    /// The log density `ln p(x)` of `x`; `−∞` for `x ≤ 0` (and NaN for NaN).
    pub fn ln_pdf(&self, x: f64) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        if x <= 0.0 {
            return f64::NEG_INFINITY;
        }
        let lx = x.ln();
        self.ln_pdf_log_space(lx) - lx
    }

    /// The derivative of the log density, `d ln p(x)/dx = −(s² + ln x − μ) / (s² x)`
    /// (NaN for `x ≤ 0`).
    pub fn d_ln_pdf(&self, x: f64) -> f64 {
        if x.is_nan() || x <= 0.0 {
            return f64::NAN;
        }
        let s2 = self.s * self.s;
        -(s2 + x.ln() - self.mu) / (s2 * x)
    }

    /// The log density of `u = ln x`, Jacobian included: `ln p_X(e^u) + u`, which is the
    /// normal log density `−(u − μ)²/(2s²) − ln(s √(2π))`.
    pub fn ln_pdf_log_space(&self, u: f64) -> f64 {
        let d = (u - self.mu) / self.s;
        -0.5 * d * d - self.s.ln() - LN_SQRT_2PI
    }

    /// The derivative of [`ln_pdf_log_space`](Self::ln_pdf_log_space): `−(u − μ)/s²`.
    pub fn d_ln_pdf_log_space(&self, u: f64) -> f64 {
        -(u - self.mu) / (self.s * self.s)
    }
}

/// The unique root `z > 0` of `g(z) = (1 + z)³ z − r` for finite `r > 0`.
///
/// `g` is increasing and convex on `z ≥ 0`, with `g(0) = −r < 0`, and
/// `g(min(r, r^{1/4})) ≥ 0` (for `r < 1`, `(1 + r)³ r ≥ r`; for `r ≥ 1`,
/// `(1 + r^{1/4})³ r^{1/4} ≥ r`), so `[0, min(r, r^{1/4})]` brackets the root. Newton steps
/// that leave the bracket are replaced by bisection; the bracket shrinks every step.
fn solve_quartic(r: f64) -> f64 {
    let g = |z: f64| (1.0 + z).powi(3) * z - r;
    let dg = |z: f64| (1.0 + z).powi(2) * (1.0 + 4.0 * z);
    let mut lo = 0.0_f64;
    let mut hi = r.min(r.sqrt().sqrt());
    // Start from the leading-order root of the relevant regime.
    let mut z = hi;
    for _ in 0..200 {
        let gz = g(z);
        if gz == 0.0 {
            return z;
        }
        if gz < 0.0 {
            lo = z;
        } else {
            hi = z;
        }
        let newton = z - gz / dg(z);
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - z).abs() <= 1e-14 * next.abs() || hi - lo <= 1e-14 * hi {
            return next;
        }
        z = next;
    }
    z
}
