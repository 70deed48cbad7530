//! Judging a computed value against the scale of the terms that produced it, so that a
//! rounding-level value (a "negative" squared norm of a residual that has underflowed) is
//! not mistaken for a breakdown of the method.
//!
//! **The threshold.** A computed inner product `v = fl(Σᵢ xᵢ yᵢ)` of `n` terms satisfies
//! (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq. (3.5), and §2.1
//! for gradual underflow)
//!
//! ```text
//! |v − xᵀy| ≤ γₙ Σᵢ |xᵢ yᵢ| + n η,    γₙ = n u / (1 − n u),
//! ```
//!
//! with `u = 2⁻⁵³` the unit roundoff and `η = 2⁻¹⁰⁷⁴` the smallest subnormal (each product
//! that underflows is off by at most `η/2`, additions of subnormals are exact). So when the
//! exact value is non-negative (a squared norm, `rᵀP⁻¹r`, `dᵀAd` of an SPD operator), a
//! computed value `v < 0` with `|v| ≤ γₙ Σ|xᵢ yᵢ| + n η` says nothing about the sign of the
//! exact value: it is zero to working precision. Only a negative value beyond that bound is
//! evidence that the operator or preconditioner is not positive definite.
//!
//! For the factorized solvers, a squared norm is a sum of several such inner products
//! (`r̂ᵀS r̂ + 2 c η + c² ρ`); the bound is then the sum of the terms' bounds, with
//! `Σ|xᵢ yᵢ|` of each inner product and the absolute values of the scalar terms (each scalar
//! product adds at most `u` relative error, covered by `γₙ` for `n ≥ 1`).

/// Unit roundoff `u = 2⁻⁵³` of `f64` (round to nearest).
const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// The smallest positive subnormal `η = 2⁻¹⁰⁷⁴`.
const MIN_SUBNORMAL: f64 = f64::from_bits(1);

/// The bound `γₙ · abs_sum + n η` on the rounding error of a computed sum of `n` products
/// whose absolute values sum to `abs_sum` (see the module documentation).
pub(crate) fn rounding_bound(n: usize, abs_sum: f64) -> f64 {
    let nu = n.max(1) as f64 * UNIT_ROUNDOFF;
    // γₙ is defined for n u < 1; beyond that (n > 2⁵²) no bound holds and every value is
    // rounding-level.
    let gamma = if nu < 1.0 {
        nu / (1.0 - nu)
    } else {
        f64::INFINITY
    };
    gamma * abs_sum + n.max(1) as f64 * MIN_SUBNORMAL
}

/// `Σᵢ |xᵢ yᵢ|`: the scale of the inner product `xᵀy` (only computed on the rare path
/// where a value came out negative, so the common path costs nothing extra).
pub(crate) fn abs_dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| (a * b).abs()).sum()
}

/// Whether a computed value of a quantity that is non-negative in exact arithmetic is
/// zero to working precision: `value ≥ −bound` (see [`rounding_bound`]).
pub(crate) fn is_rounding_level(value: f64, bound: f64) -> bool {
    value.is_finite() && value.abs() <= bound
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn underflowed_dot_is_rounding_level() {
        // The issue's case: rᵀP⁻¹r = −5e-324 after the residual underflowed.
        let r = [1e-170, -2e-170];
        let s = [1e-160, 5e-161];
        let v = -5e-324;
        assert!(is_rounding_level(v, rounding_bound(2, abs_dot(&r, &s))));
    }

    #[test]
    fn clearly_negative_is_not() {
        let x = [1.0, 2.0, 3.0];
        let y = [-1.0, -2.0, -3.0];
        let v: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
        assert!(!is_rounding_level(v, rounding_bound(3, abs_dot(&x, &y))));
    }
}
