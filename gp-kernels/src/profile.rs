//! Radial profiles `g(r²)` of the stationary kernels, as zero-sized types so that the
//! generic tile builders in [`crate::ard`] are monomorphized with `g` inlined.
//!
//! A stationary ARD kernel is `k(x, z) = σ² g(r²)` with `r² = Σᵢ ((xᵢ − zᵢ)/ℓᵢ)²`. Its
//! derivatives with respect to the log hyperparameters only need `g'(r²)` (derivative with
//! respect to `r²`): `∂k/∂ log ℓᵢ = −2 σ² g'(r²) ((xᵢ − zᵢ)/ℓᵢ)²` and `∂k/∂ log σ² = k`.
//!
//! At `r² = 0` the Matérn-1/2 derivative `g'(r²) = −e^{−r}/(2r)` is unbounded, but it only
//! ever appears multiplied by a `((xᵢ − zᵢ)/ℓᵢ)² ≤ r²`, and the product tends to 0. The
//! profiles therefore return `g'(0) = 0` where the true value is infinite, which gives the
//! correct (zero) hyperparameter derivatives and no `NaN`.

use crate::fastmath::exp_nonpositive;

/// `r²` above which every profile is below `10⁻³⁰⁰` (used to keep `∞ · 0` out of the
/// Matérn formulas when points are astronomically far apart).
const R2_CLAMP: f64 = 1e7;

/// A radial profile `g(r²)` with `g(0) = 1`.
///
/// The `fast_*` variants may use the vectorizable [`exp_nonpositive`] (a few ulp, underflow
/// below `2⁻¹⁰²²` flushed to 0) and are what the tile builders use; the plain variants use
/// the platform `exp` and are what [`Kernel::eval`](crate::Kernel::eval) uses.
pub trait RadialProfile: Copy + Send + Sync + 'static {
    /// `g(r²)`.
    fn value(r2: f64) -> f64;
    /// `(g(r²), g'(r²))`, the derivative taken with respect to `r²` (see the module docs for
    /// the convention at `r² = 0`).
    fn value_and_deriv(r2: f64) -> (f64, f64);
    /// `g(r²)` with the vectorizable `exp`.
    fn fast_value(r2: f64) -> f64;
    /// `(g(r²), g'(r²))` with the vectorizable `exp`.
    fn fast_value_and_deriv(r2: f64) -> (f64, f64);
}

/// Squared exponential: `g(r²) = exp(−r²/2)`, `g' = −g/2`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SeProfile;

impl RadialProfile for SeProfile {
    #[inline(always)]
    fn value(r2: f64) -> f64 {
        (-0.5 * r2).exp()
    }
    #[inline(always)]
    fn value_and_deriv(r2: f64) -> (f64, f64) {
        let g = Self::value(r2);
        (g, -0.5 * g)
    }
    #[inline(always)]
    fn fast_value(r2: f64) -> f64 {
        exp_nonpositive(-0.5 * r2)
    }
    #[inline(always)]
    fn fast_value_and_deriv(r2: f64) -> (f64, f64) {
        let g = Self::fast_value(r2);
        (g, -0.5 * g)
    }
}

/// Matérn ν = 1/2 (exponential): `g = e^{−r}`, `g'(r²) = −e^{−r}/(2r)` (0 at `r = 0`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Matern12Profile;

impl Matern12Profile {
    #[inline(always)]
    fn with_exp(r2: f64, exp: impl Fn(f64) -> f64) -> (f64, f64) {
        let r = r2.min(R2_CLAMP).sqrt();
        let e = exp(-r);
        // Division by r only where r > 0; the select keeps the loop branch-free.
        let dg = if r > 0.0 { -0.5 * e / r } else { 0.0 };
        (e, dg)
    }
}

impl RadialProfile for Matern12Profile {
    #[inline(always)]
    fn value(r2: f64) -> f64 {
        (-r2.min(R2_CLAMP).sqrt()).exp()
    }
    #[inline(always)]
    fn value_and_deriv(r2: f64) -> (f64, f64) {
        Self::with_exp(r2, f64::exp)
    }
    #[inline(always)]
    fn fast_value(r2: f64) -> f64 {
        exp_nonpositive(-r2.min(R2_CLAMP).sqrt())
    }
    #[inline(always)]
    fn fast_value_and_deriv(r2: f64) -> (f64, f64) {
        Self::with_exp(r2, exp_nonpositive)
    }
}

const SQRT3: f64 = 1.732_050_807_568_877_2;
const SQRT5: f64 = 2.236_067_977_499_79;

/// Matérn ν = 3/2: `g = (1 + √3 r) e^{−√3 r}`, `g'(r²) = −(3/2) e^{−√3 r}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Matern32Profile;

impl Matern32Profile {
    #[inline(always)]
    fn with_exp(r2: f64, exp: impl Fn(f64) -> f64) -> (f64, f64) {
        let s = SQRT3 * r2.min(R2_CLAMP).sqrt();
        let e = exp(-s);
        ((1.0 + s) * e, -1.5 * e)
    }
}

impl RadialProfile for Matern32Profile {
    #[inline(always)]
    fn value(r2: f64) -> f64 {
        Self::with_exp(r2, f64::exp).0
    }
    #[inline(always)]
    fn value_and_deriv(r2: f64) -> (f64, f64) {
        Self::with_exp(r2, f64::exp)
    }
    #[inline(always)]
    fn fast_value(r2: f64) -> f64 {
        Self::with_exp(r2, exp_nonpositive).0
    }
    #[inline(always)]
    fn fast_value_and_deriv(r2: f64) -> (f64, f64) {
        Self::with_exp(r2, exp_nonpositive)
    }
}

/// Matérn ν = 5/2: `g = (1 + √5 r + 5r²/3) e^{−√5 r}`, `g'(r²) = −(5/6)(1 + √5 r) e^{−√5 r}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Matern52Profile;

impl Matern52Profile {
    #[inline(always)]
    fn with_exp(r2: f64, exp: impl Fn(f64) -> f64) -> (f64, f64) {
        let r2 = r2.min(R2_CLAMP);
        let s = SQRT5 * r2.sqrt();
        let e = exp(-s);
        (
            (1.0 + s + (5.0 / 3.0) * r2) * e,
            -(5.0 / 6.0) * (1.0 + s) * e,
        )
    }
}

impl RadialProfile for Matern52Profile {
    #[inline(always)]
    fn value(r2: f64) -> f64 {
        Self::with_exp(r2, f64::exp).0
    }
    #[inline(always)]
    fn value_and_deriv(r2: f64) -> (f64, f64) {
        Self::with_exp(r2, f64::exp)
    }
    #[inline(always)]
    fn fast_value(r2: f64) -> f64 {
        Self::with_exp(r2, exp_nonpositive).0
    }
    #[inline(always)]
    fn fast_value_and_deriv(r2: f64) -> (f64, f64) {
        Self::with_exp(r2, exp_nonpositive)
    }
}
