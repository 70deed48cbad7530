//! What happened to one right-hand side.

/// Why a column of a (batched) CG run stopped, or that it is still running.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColumnStatus {
    /// Still iterating (only seen through the step interface).
    Running,
    /// The tolerance was met (or the residual became exactly zero).
    Converged,
    /// `max_iterations` was reached without meeting the tolerance.
    MaxIterations,
    /// The iteration broke down; the solution holds the last valid iterate.
    Breakdown(Breakdown),
}

impl ColumnStatus {
    /// Whether the column still iterates.
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }

    /// Whether the column met the tolerance.
    pub fn is_converged(&self) -> bool {
        matches!(self, Self::Converged)
    }

    /// Whether the column broke down.
    pub fn is_breakdown(&self) -> bool {
        matches!(self, Self::Breakdown(_))
    }
}

/// A numerical breakdown of CG: the operator or the preconditioner is not symmetric
/// positive definite (on the Krylov space reached), or a value became NaN or infinite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Breakdown {
    /// The curvature `dᵀ A d` of a search direction was zero or negative: `A` is not
    /// positive definite.
    NonPositiveCurvature {
        /// The curvature found.
        curvature: f64,
    },
    /// `rᵀ P⁻¹ r` was negative: the preconditioner is not positive definite.
    IndefinitePreconditioner {
        /// The value found.
        value: f64,
    },
    /// A NaN or infinite value appeared (in `A d`, the step length or `P⁻¹ r`).
    NonFinite,
}
