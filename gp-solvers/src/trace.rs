//! Hutchinson trace estimation.
//!
//! With probes `z` such that `E[zzᵀ] = P` (Rademacher or `N(0, I)` for `P = I`; `N(0, P)`
//! with a preconditioner), `E[(P⁻¹z)ᵀ M z] = tr(P⁻¹ M P) = tr(M)`, hence
//!
//! ```text
//! tr(M)          = E[ (P⁻¹z)ᵀ M z ]
//! tr(A⁻¹ ∂A)     = E[ (A⁻¹z)ᵀ ∂A (P⁻¹z) ]      (the right factor is P⁻¹z, not z)
//! ```
//!
//! so the derivative terms of the GP marginal likelihood come from the probe solves `A⁻¹z`
//! that the log-determinant estimate already needed.

use faer::MatRef;
use gp_linalg::LinearOperator;

use crate::cg::kernels::dot;
use crate::error::{check_shape, invalid, Result};
use crate::estimate::Estimate;
use crate::probes::Probes;

/// `(1/t) Σ_i left_iᵀ right_i` over the columns of two `n×t` blocks: the estimator when the
/// caller already has both factors (for example `A⁻¹Z` and `∂A P⁻¹Z` from a fused kernel
/// pass).
///
/// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if the
/// blocks differ in shape and with
/// [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions) (option `probes`) if
/// they have no columns (an estimate from no probes is undefined, not 0).
pub fn hutchinson_from_products(left: MatRef<'_, f64>, right: MatRef<'_, f64>) -> Result<Estimate> {
    check_shape(right.shape(), left.shape(), "hutchinson_from_products")?;
    if left.ncols() == 0 {
        return Err(invalid(
            "probes",
            "a Hutchinson estimate needs at least one probe column, got 0",
        ));
    }
    let left = left.to_owned();
    let right = right.to_owned();
    let terms = (0..left.ncols())
        .map(|i| dot(left.col_as_slice(i), right.col_as_slice(i)))
        .collect();
    Ok(Estimate::from_terms(terms, 0.0))
}

/// `tr(M) ≈ (1/t) Σ_i (P⁻¹z_i)ᵀ M z_i`.
pub fn hutchinson_trace(op: &dyn LinearOperator, probes: &Probes) -> Result<Estimate> {
    check_shape(
        op.shape(),
        (probes.dim(), probes.dim()),
        "hutchinson_trace (operator)",
    )?;
    let mz = op.apply_block(probes.matrix())?;
    hutchinson_from_products(probes.preconditioned(), mz.as_ref())
}

/// `tr(A⁻¹ ∂A) ≈ (1/t) Σ_i (A⁻¹z_i)ᵀ ∂A (P⁻¹z_i)` from the probe solves `A⁻¹Z` (`n×t`).
pub fn hutchinson_inverse_trace(
    solves: MatRef<'_, f64>,
    derivative: &dyn LinearOperator,
    probes: &Probes,
) -> Result<Estimate> {
    check_shape(
        solves.shape(),
        probes.matrix().shape(),
        "hutchinson_inverse_trace (probe solves)",
    )?;
    check_shape(
        derivative.shape(),
        (probes.dim(), probes.dim()),
        "hutchinson_inverse_trace (derivative operator)",
    )?;
    let right = derivative.apply_block(probes.preconditioned())?;
    hutchinson_from_products(solves, right.as_ref())
}
