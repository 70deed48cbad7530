//! Stochastic Lanczos quadrature (SLQ) for `log det A`, from tridiagonals that CG (or
//! Lanczos) already produced.
//!
//! For a probe `z` with `E[zzᵀ] = P` let `w = P^{-1/2} z` (so `E[wwᵀ] = I`) and `T` the
//! Lanczos tridiagonal of `Â = P^{-1/2} A P^{-1/2}` started at `w/‖w‖` — exactly what
//! preconditioned CG on `A x = z` records. Then
//!
//! ```text
//! log det A = log det P + tr log Â = log det P + E[ ‖w‖² e₁ᵀ log(T) e₁ ],
//! ‖w‖² = zᵀ P⁻¹ z,   e₁ᵀ log(T) e₁ = Σ_m V[0,m]² log λ_m   (T = V Λ Vᵀ).
//! ```

use crate::cg::CgColumn;
use crate::error::{check_shape, invalid, Result};
use crate::estimate::Estimate;
use crate::tridiagonal::SymTridiagonal;

/// The factor in front of `e₁ᵀ log(T) e₁` in each probe's term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlqScaling {
    /// `‖w‖² = zᵀP⁻¹z`, the squared norm of the whitened probe: unbiased for the depth-`J`
    /// quadrature value. The default.
    #[default]
    ProbeNorm,
    /// `n`, the expectation of `‖w‖²` (GPyTorch, which normalizes its probes): a ratio
    /// estimator, slightly biased for Gaussian probes; identical to `ProbeNorm` for
    /// Rademacher probes without preconditioner.
    Dimension,
}

impl SlqScaling {
    /// The factor in front of `e₁ᵀ log(T) e₁` for a probe column of a CG run on a system of
    /// order `n` (0 for a zero probe).
    pub fn factor(self, column: &CgColumn, n: usize) -> f64 {
        match self {
            Self::ProbeNorm => column.rhs_precond_norm_sq,
            Self::Dimension if column.rhs_norm == 0.0 => 0.0,
            Self::Dimension => n as f64,
        }
    }
}

/// `log det P + (1/t) Σ_i c_i e₁ᵀ log(T_i) e₁` for tridiagonals `T_i` and weights `c_i`
/// (`‖w_i‖²` or `n`).
///
/// Errors with [`SolverError::ShapeMismatch`](crate::SolverError::ShapeMismatch) if the two
/// slices differ in length, [`SolverError::InvalidOptions`](crate::SolverError::InvalidOptions)
/// (option `probes`) if there are none (an estimate from no probes is undefined), and
/// [`SolverError::NonPositiveRitzValue`](crate::SolverError) if a tridiagonal has a
/// non-positive eigenvalue.
pub fn slq_log_det(
    tridiagonals: &[SymTridiagonal],
    weights: &[f64],
    preconditioner_log_det: f64,
) -> Result<Estimate> {
    check_shape(
        (weights.len(), 1),
        (tridiagonals.len(), 1),
        "slq_log_det (one weight per tridiagonal)",
    )?;
    if tridiagonals.is_empty() {
        return Err(invalid(
            "probes",
            "stochastic Lanczos quadrature needs at least one probe (tridiagonal), got 0",
        ));
    }
    let terms = tridiagonals
        .iter()
        .zip(weights)
        .map(|(t, &c)| {
            if c == 0.0 {
                Ok(0.0)
            } else {
                Ok(c * t.log_quadrature()?)
            }
        })
        .collect::<Result<Vec<f64>>>()?;
    Ok(Estimate::from_terms(terms, preconditioner_log_det))
}

/// SLQ from the probe columns of a (preconditioned) CG run: the tridiagonal of each column
/// from its `α`/`β`, the weight from [`CgColumn::rhs_precond_norm_sq`] or `n`.
/// `n` is the order of the system.
pub fn slq_log_det_from_cg(
    columns: &[CgColumn],
    n: usize,
    preconditioner_log_det: f64,
    scaling: SlqScaling,
) -> Result<Estimate> {
    let tridiagonals = columns
        .iter()
        .map(CgColumn::tridiagonal)
        .collect::<Result<Vec<_>>>()?;
    let weights: Vec<f64> = columns.iter().map(|c| scaling.factor(c, n)).collect();
    slq_log_det(&tridiagonals, &weights, preconditioner_log_det)
}
