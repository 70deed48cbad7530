//! The per-iteration record every CG-type solver keeps.

use crate::error::Result;
use crate::tridiagonal::SymTridiagonal;

/// The residual history and the coefficients of a CG-type solve (one column of
/// [`CgResult`](crate::CgResult), or a [`FactorizedCgResult`](crate::FactorizedCgResult)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KrylovRecord {
    /// Relative residual norms `‖r_j‖₂ / ref` for `j = 0..=iterations` (`ref` is `‖b‖` or
    /// the solver's reference norm). A step that ended in a breakdown of its new residual
    /// adds no entry.
    pub residual_norms: Vec<f64>,
    /// Step lengths `α_1..α_J`.
    pub alphas: Vec<f64>,
    /// Ratios `β_j = ‖r_j‖² / ‖r_{j−1}‖²` (in the `P⁻¹` inner product with a
    /// preconditioner), one per completed step with a valid residual.
    pub betas: Vec<f64>,
}

impl KrylovRecord {
    /// The Lanczos tridiagonal `T` implied by the coefficients; see
    /// [`SymTridiagonal::from_cg_coefficients`].
    pub fn tridiagonal(&self) -> Result<SymTridiagonal> {
        SymTridiagonal::from_cg_coefficients(&self.alphas, &self.betas)
    }

    /// The final relative residual norm (NaN if none was recorded).
    pub fn final_residual(&self) -> f64 {
        self.residual_norms.last().copied().unwrap_or(f64::NAN)
    }
}
