//! The factorized representation `v = W v̂ + c z₀` (paper Claims 3 and 4): the public
//! [`FactorizedVector`] and the inner product the solvers use.

use faer::{Col, ColRef};
use gp_linalg::LinearOperator;

use super::system::{check_system, StartVector, WeightSpaceSystem};
use crate::cg::kernels::{axpy, dot};
use crate::error::{check_shape, Result};
use crate::krylov::scale::{abs_dot, rounding_bound};

/// A data-space vector `v = W v̂ + c z₀ ∈ ℝⁿ` kept as `(v̂, c)` with `v̂ ∈ ℝᵐ` and the start
/// vector `z₀` of the solve that produced it.
///
/// The representation is not unique when `W` has a null space (more grid points than data,
/// or grid points without data nearby); only `W v̂` matters.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorizedVector {
    /// The grid part `v̂` (length `m`).
    pub hat: Col<f64>,
    /// The coefficient `c` of `z₀`.
    pub coeff: f64,
}

impl FactorizedVector {
    pub(crate) fn from_slice(hat: &[f64], coeff: f64) -> Self {
        Self {
            hat: Col::from_fn(hat.len(), |i| hat[i]),
            coeff,
        }
    }

    /// Expands to `v = W v̂ + c z₀ ∈ ℝⁿ`, given `W` (`n×m`) as an operator and `z₀`.
    ///
    /// Costs one product with `W`. Errors with
    /// [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if `W` is not
    /// `n×m` for `m = v̂.len()` and `n = z₀.len()`.
    pub fn expand(&self, w: &dyn LinearOperator, z0: ColRef<'_, f64>) -> Result<Col<f64>> {
        check_shape(
            w.shape(),
            (z0.nrows(), self.hat.nrows()),
            "FactorizedVector::expand (W must be n×m)",
        )?;
        let mut out = Col::zeros(z0.nrows());
        w.matvec(self.hat.as_ref(), out.as_mut());
        gp_linalg::vector::axpy_col(self.coeff, z0, out.as_mut())?;
        Ok(out)
    }

    /// `Wᵀ v = S v̂ + c g` (`g = Wᵀz₀`), without `W`: one product with `S`. This is what SKI
    /// prediction needs (the grid cache `K_G Wᵀ v`).
    ///
    /// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if the
    /// lengths disagree with the system, and with the product's error if it fails or
    /// returns NaN or infinity.
    pub fn w_transpose(
        &self,
        system: &dyn WeightSpaceSystem,
        start: &StartVector,
    ) -> Result<Col<f64>> {
        let m = check_system(system, Some(start), "FactorizedVector::w_transpose (g)")?;
        check_shape(
            (self.hat.nrows(), 1),
            (m, 1),
            "FactorizedVector::w_transpose (v̂)",
        )?;
        let mut out = Col::zeros(m);
        system.apply_gram(self.hat.as_ref(), out.as_mut())?;
        gp_linalg::validate::check_finite_col(out.as_ref(), "the system's Gram product S v̂")?;
        gp_linalg::vector::axpy_col(self.coeff, start.g(), out.as_mut())?;
        Ok(out)
    }
}

/// `Wᵀ v = s + c g` for `s = S v̂` given.
pub(crate) fn w_transpose_from(s_hat: &[f64], coeff: f64, g: &[f64]) -> Col<f64> {
    let mut out = s_hat.to_vec();
    axpy(coeff, g, &mut out);
    Col::from_fn(out.len(), |i| out[i])
}

/// The factorized inner product `⟨(û, a), (v̂, b)⟩ = ûᵀ (S v̂) + b ûᵀg + a v̂ᵀg + a b ρ`
/// for `S v̂` already computed (`s_v`).
#[inline]
pub(crate) fn inner_with_s(
    u: &[f64],
    a: f64,
    v: &[f64],
    s_v: &[f64],
    b: f64,
    g: &[f64],
    rho: f64,
) -> f64 {
    dot(u, s_v) + b * dot(u, g) + a * dot(v, g) + a * b * rho
}

/// The rounding-error bound (see [`crate::krylov`]) of the factorized squared norm
/// `⟨(r̂, c), (r̂, c)⟩ = r̂ᵀ(S r̂) + 2 c r̂ᵀg + c² ρ` computed from `s_r = fl(S r̂)`.
///
/// Two sources: the sum itself, `m + 3` products whose absolute values add up to
/// `Σ|r̂ᵢ (S r̂)ᵢ| + 2|c| Σ|r̂ᵢ gᵢ| + c² ρ` (these terms are large and nearly cancel when
/// `z₀` lies almost in `range(W)`); and the product `fl(S r̂)`, whose error is up to
/// `γ ‖S‖ ‖r̂‖` and enters `r̂ᵀ(S r̂)` as `γ ‖S‖ ‖r̂‖²`. The second matters when `r̂` has a
/// large component in the null space of `W` (a single data point, identical rows): then
/// `S r̂` is pure rounding noise and `r̂ᵀ(S r̂)` can come out as `−1e-19` for a residual that
/// is zero. `s_norm` is an estimate of `‖S‖` from a product the solver made anyway
/// (`‖S v‖/‖v‖ ≤ ‖S‖`, so the threshold errs towards reporting a breakdown). A real
/// breakdown (`S` or `K_G` not positive semi-definite) gives negative values of the order
/// of the terms themselves, far beyond this bound.
pub(crate) fn squared_norm_bound(
    r: &[f64],
    c: f64,
    s_r: &[f64],
    g: &[f64],
    rho: f64,
    s_norm: f64,
) -> f64 {
    let scale = abs_dot(r, s_r) + 2.0 * c.abs() * abs_dot(r, g) + c * c * rho + s_norm * dot(r, r);
    rounding_bound(r.len() + 3, scale)
}

/// `‖S v‖ / ‖v‖` from a product `s_v = S v` already made: a lower bound on `‖S‖₂` (0 for
/// `v = 0` or non-finite values), the scale of the rounding error of products with `S`.
pub(crate) fn s_norm_estimate(v: &[f64], s_v: &[f64]) -> f64 {
    let ratio = crate::cg::kernels::norm2(s_v) / crate::cg::kernels::norm2(v);
    if ratio.is_finite() {
        ratio
    } else {
        0.0
    }
}
