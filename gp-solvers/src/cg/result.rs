//! What a CG run returns: per-column reports and the batched solution.

use faer::{Mat, MatRef};

use super::ColumnStatus;
use crate::error::Result;
use crate::krylov::KrylovRecord;
use crate::tridiagonal::SymTridiagonal;

/// The search directions of one column and their products with the operator, in the order
/// they were used: column `j` of [`directions`](Self::directions) is `d_j` (0-based, the
/// direction of step `j + 1`), column `j` of [`operator_directions`](Self::operator_directions)
/// is `A d_j`.
///
/// The directions are `A`-conjugate (in exact arithmetic) and not normalized; with a
/// preconditioner they are `P⁻¹`-preconditioned directions.
#[derive(Debug, Clone, Default)]
pub struct Directions {
    pub(crate) n: usize,
    pub(crate) d: Vec<f64>,
    pub(crate) ad: Vec<f64>,
}

impl Directions {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            n,
            d: Vec::new(),
            ad: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, d: &[f64], ad: &[f64]) {
        self.d.extend_from_slice(d);
        self.ad.extend_from_slice(ad);
    }

    /// Number of directions stored.
    pub fn len(&self) -> usize {
        self.d.len().checked_div(self.n).unwrap_or(0)
    }

    /// Whether no direction is stored.
    pub fn is_empty(&self) -> bool {
        self.d.is_empty()
    }

    /// `S = [d_0, …, d_{j−1}]` (`n×j`).
    pub fn directions(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.d, self.n, self.len())
    }

    /// `A S` (`n×j`).
    pub fn operator_directions(&self) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.ad, self.n, self.len())
    }
}

/// The record of one right-hand side of a (batched) CG run.
#[derive(Debug, Clone)]
pub struct CgColumn {
    /// Why the column stopped ([`ColumnStatus::Running`] only while stepping).
    pub status: ColumnStatus,
    /// Number of completed iterations (step lengths `α` taken).
    pub iterations: usize,
    /// `‖b‖₂` of the right-hand side.
    pub rhs_norm: f64,
    /// `bᵀ P⁻¹ b` (`‖b‖²` without preconditioner): the squared norm of the whitened start
    /// vector `P^{-1/2} b`, the weight of stochastic Lanczos quadrature.
    pub rhs_precond_norm_sq: f64,
    /// The residual history `‖r_j‖₂ / ‖b‖₂` (`j = 0..=iterations`, entry 0 is 1, or 0 for
    /// a zero right-hand side), the step lengths `α` and the ratios
    /// `β_j = r_jᵀ P⁻¹ r_j / r_{j−1}ᵀ P⁻¹ r_{j−1}`.
    pub record: KrylovRecord,
    /// The search directions and their products with `A`, when
    /// [`CgOptions::record_directions`](crate::CgOptions::record_directions) is set.
    pub directions: Option<Directions>,
}

impl CgColumn {
    /// Whether the column met the tolerance.
    pub fn converged(&self) -> bool {
        self.status.is_converged()
    }

    /// The Lanczos tridiagonal `T` (`J×J`, `J` = [`iterations`](Self::iterations)) implied by
    /// the CG coefficients; see [`SymTridiagonal::from_cg_coefficients`].
    pub fn tridiagonal(&self) -> Result<SymTridiagonal> {
        self.record.tridiagonal()
    }

    /// The final relative residual norm.
    pub fn final_residual(&self) -> f64 {
        self.record.final_residual()
    }
}

/// The outcome of a batched CG run on `A X = B`.
#[derive(Debug, Clone)]
pub struct CgResult {
    /// The solution block `X` (`n×m`): the last valid iterate of each column.
    pub solution: Mat<f64>,
    /// One report per right-hand side.
    pub columns: Vec<CgColumn>,
    /// Number of steps of the batch (the largest per-column iteration count, or more if
    /// columns were stepped after they all stopped).
    pub iterations: usize,
}

impl CgResult {
    /// Whether every column met the tolerance.
    pub fn all_converged(&self) -> bool {
        self.columns.iter().all(CgColumn::converged)
    }

    /// Iterations per column.
    pub fn iterations_per_column(&self) -> Vec<usize> {
        self.columns.iter().map(|c| c.iterations).collect()
    }

    /// The Lanczos tridiagonal of every column.
    pub fn tridiagonals(&self) -> Result<Vec<SymTridiagonal>> {
        self.columns.iter().map(CgColumn::tridiagonal).collect()
    }
}
