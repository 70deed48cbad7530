//! Vector loops of the CG hot path, delegated to `gp_linalg::vector` (sequential below its
//! parallel threshold, chunked and deterministic above it).
//!
//! Lengths always agree inside the solvers; should they ever not, the result is NaN, which
//! the CG state turns into a `Breakdown::NonFinite` status instead of a panic.

#[inline]
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    gp_linalg::vector::dot(x, y).unwrap_or(f64::NAN)
}

#[inline]
pub(crate) fn norm2(x: &[f64]) -> f64 {
    gp_linalg::vector::norm2(x)
}

/// `y += a x`.
#[inline]
pub(crate) fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    if gp_linalg::vector::axpy(a, x, y).is_err() {
        y.fill(f64::NAN);
    }
}
