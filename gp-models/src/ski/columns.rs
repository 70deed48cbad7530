//! The SKI kernel matrix `W K_G Wᵀ` column by column, for the pivoted-Cholesky
//! preconditioner `L Lᵀ + σ²I` of `K̂ = W K_G Wᵀ + σ²I` (GPyTorch preconditions its SKI
//! operator the same way; the RTGPS paper's 3DRoad row trains with a rank-5 one).
//!
//! * The diagonal `w_iᵀ K_G w_i` factorizes over the dimensions (`O(d·16)` per point for cubic
//!   stencils, [`GridKernel::interpolated_diagonal`]), so it is cheap enough to rebuild at
//!   every training step.
//! * Column `j` is `W (K_G (Wᵀ e_j))`: row `j` of `W` scattered onto the grid, one Kronecker
//!   product (FFTs) and one product with `W`, `O(4^d n + m log m)`.
//!
//! A rank-`k` factor then costs `k` such columns and `O(n k²)`.

use faer::{Col, ColMut};
use gp_linalg::{LinearOperator, LowRankPlusDiagonal};
use gp_solvers::{pivoted_cholesky_preconditioner, ColumnAccess, PivotedCholeskyOptions};
use gp_structured::InterpolationWeights;

use crate::error::Result;
use crate::grid::GridKernel;

/// `W K_G Wᵀ` (`n × n`, never formed) as a [`ColumnAccess`] matrix.
pub struct SkiKernelColumns<'a> {
    w: &'a InterpolationWeights,
    grid_kernel: &'a GridKernel,
    diagonal: Col<f64>,
}

impl<'a> SkiKernelColumns<'a> {
    /// The kernel matrix of the interpolated points `w` under the grid kernel `grid_kernel`
    /// (its diagonal is computed here).
    ///
    /// Errors with [`ModelError::Structured`](crate::ModelError::Structured) if the grid
    /// kernel does not match the grid of `w` (dimensions or axis sizes).
    pub fn new(w: &'a InterpolationWeights, grid_kernel: &'a GridKernel) -> Result<Self> {
        Ok(Self {
            w,
            grid_kernel,
            diagonal: grid_kernel.interpolated_diagonal(w)?,
        })
    }

    /// The rank-`rank` pivoted-Cholesky preconditioner `L Lᵀ + σ²I` of `W K_G Wᵀ + σ²I`.
    ///
    /// Errors: a noise variance that is not finite and positive, or a factorization that
    /// fails ([`ModelError::Solver`](crate::ModelError::Solver)).
    pub fn preconditioner(&self, rank: usize, noise_variance: f64) -> Result<LowRankPlusDiagonal> {
        let options = PivotedCholeskyOptions {
            max_rank: rank,
            relative_tolerance: 0.0,
        };
        Ok(pivoted_cholesky_preconditioner(
            self,
            noise_variance,
            &options,
        )?)
    }
}

impl ColumnAccess for SkiKernelColumns<'_> {
    fn dim(&self) -> usize {
        self.w.num_rows()
    }

    fn diagonal(&self) -> Col<f64> {
        self.diagonal.clone()
    }

    fn column(&self, j: usize, out: ColMut<'_, f64>) {
        let m = self.w.num_cols();
        let mut on_grid = Col::<f64>::zeros(m);
        if let Some((cols, values)) = self.w.row(j) {
            for (c, v) in cols.into_iter().zip(values) {
                on_grid[c] += v;
            }
        }
        let mut kernel_on_grid = Col::<f64>::zeros(m);
        self.grid_kernel
            .operator()
            .matvec(on_grid.as_ref(), kernel_on_grid.as_mut());
        self.w.matvec(kernel_on_grid.as_ref(), out);
    }
}
