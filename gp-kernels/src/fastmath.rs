//! A branch-free `exp` for non-positive arguments that the compiler can vectorize.
//!
//! The dense and matrix-free kernel builders evaluate `exp` once per kernel entry; the
//! platform `exp` is an opaque call that blocks vectorization of the surrounding loop. This
//! version uses the classic reduction `x = n ln 2 + r`, `|r| ≤ ln 2 / 2`, a degree-13 Taylor
//! polynomial for `eʳ` in Estrin form (truncation error below 2·10⁻¹⁶ relative) and rebuilds `2ⁿ` from its
//! bit pattern, with no branches and no integer/float conversions the compiler cannot
//! vectorize.
//!
//! Accuracy: a few ulp for results above `2⁻¹⁰²²` (≈ 2.2·10⁻³⁰⁸); smaller results (arguments
//! below about −708.4) are flushed to `0`, an absolute error below 2.3·10⁻³⁰⁸.

/// `1.5 · 2⁵²`: adding it to a float of magnitude below `2⁵¹` rounds to an integer, whose
/// value sits in the low mantissa bits.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;
const LOG2_E: f64 = std::f64::consts::LOG2_E;
/// `ln 2 = LN2_HI + LN2_LO` (fdlibm's split), with `n · LN2_HI` exact for `|n| < 2¹¹`.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// Below this argument the result would be subnormal; it is flushed to 0.
const MIN_ARG: f64 = -708.0;

/// `eˣ` for `x ≤ 0` (larger arguments are clamped to 0, giving 1; NaN gives an unspecified
/// value). See the module docs for the accuracy.
#[inline(always)]
pub fn exp_nonpositive(x: f64) -> f64 {
    let x = x.min(0.0);
    let underflow = x < MIN_ARG;
    let x = x.max(MIN_ARG);
    // n = round(x / ln 2) both as a float and, through the magic constant, as bits.
    let shifted = x * LOG2_E + ROUND_MAGIC;
    let n = shifted - ROUND_MAGIC;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    // Taylor polynomial of degree 13 in Estrin form: a dependency chain of depth 5 instead
    // of 13 (Horner), so several vectors of the surrounding loop overlap in the pipeline.
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let a0 = 1.0 + r;
    let a1 = 0.5 + r * (1.0 / 6.0);
    let a2 = 1.0 / 24.0 + r * (1.0 / 120.0);
    let a3 = 1.0 / 720.0 + r * (1.0 / 5_040.0);
    let a4 = 1.0 / 40_320.0 + r * (1.0 / 362_880.0);
    let a5 = 1.0 / 3_628_800.0 + r * (1.0 / 39_916_800.0);
    let a6 = 1.0 / 479_001_600.0 + r * (1.0 / 6_227_020_800.0);
    let b0 = a0 + r2 * a1;
    let b1 = a2 + r2 * a3;
    let b2 = a4 + r2 * a5;
    let c0 = b0 + r4 * b1;
    let c1 = b2 + r4 * a6;
    let p = c0 + r8 * c1;
    // The low bits of `shifted` hold n (two's complement relative to the magic constant);
    // 2ⁿ has biased exponent n + 1023, and n ≥ −1022 after the clamp.
    let n_bits = shifted.to_bits().wrapping_sub(ROUND_MAGIC.to_bits());
    let scale = f64::from_bits(n_bits.wrapping_add(1023) << 52);
    let value = p * scale;
    if underflow {
        0.0
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::exp_nonpositive;

    #[test]
    fn matches_std_exp() {
        let mut worst: f64 = 0.0;
        let mut x = 0.0;
        while x > -708.0 {
            let exact = f64::exp(x);
            let rel = (exp_nonpositive(x) - exact).abs() / exact;
            worst = worst.max(rel);
            x -= 0.013_7;
        }
        assert!(worst < 1e-15, "worst relative error {worst:e}");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(-1e6), 0.0);
        assert_eq!(exp_nonpositive(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp_nonpositive(-709.0), 0.0);
    }
}
