//! Preconditioners: the [`Preconditioner`] trait (apply `P⁻¹`, `log det P`, draw from
//! `N(0, P)`), and the pivoted-Cholesky construction of `P = L Lᵀ + σ²I`
//! ([`pivoted_cholesky`]).
//!
//! The trait is implemented for [`LowRankPlusDiagonal`] (the pivoted-Cholesky
//! preconditioner, Woodbury solve and determinant-lemma log-det), for [`DiagonalOperator`]
//! (Jacobi) and for [`IdentityPreconditioner`].

pub mod pivoted_cholesky;

use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut, MatRef};
use gp_linalg::{DiagonalOperator, LowRankPlusDiagonal};
use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use crate::error::{check_shape, Result};

/// A symmetric positive definite matrix `P ≈ A` that is cheap to invert.
///
/// CG applies [`solve_into`](Self::solve_into) once per iteration to the block of active
/// residuals; stochastic estimators use [`log_det`](Self::log_det) and
/// [`sample`](Self::sample) (probes `z ~ N(0, P)`).
pub trait Preconditioner: Send + Sync {
    /// Order `n` of `P`.
    fn dim(&self) -> usize;

    /// Writes `out = P⁻¹ r` for a block of columns. Errors on a shape mismatch.
    fn solve_into(&self, r: MatRef<'_, f64>, out: MatMut<'_, f64>) -> Result<()>;

    /// `log det P`. Errors if `P` is not positive definite.
    fn log_det(&self) -> Result<f64>;

    /// Draws `count` independent samples of `N(0, P)` as the columns of an `n×count` matrix.
    fn sample(&self, rng: &mut dyn RngCore, count: usize) -> Result<Mat<f64>>;

    /// Returns `P⁻¹ R`. Errors on a shape mismatch.
    fn solve_block(&self, r: MatRef<'_, f64>) -> Result<Mat<f64>> {
        let mut out = Mat::zeros(r.nrows(), r.ncols());
        self.solve_into(r, out.as_mut())?;
        Ok(out)
    }

    /// `P = D + U Uᵀ` in the parts of its Woodbury inverse, when it has that form: CG then
    /// forms `P⁻¹ r` inside its own passes over the residuals (see [`WoodburyParts`])
    /// instead of calling [`solve_into`](Self::solve_into). `None` (the default) for
    /// every other preconditioner.
    fn woodbury_parts(&self) -> Option<WoodburyParts<'_>> {
        None
    }
}

/// `P⁻¹ = D⁻¹ − V C⁻¹ Vᵀ` for `P = D + U Uᵀ`, with `V = D⁻¹U` (`n×k`) and the capacitance
/// `C = I + Uᵀ D⁻¹ U` (`k×k`).
///
/// CG's step computes `Vᵀ r` in the pass that updates the residual `r`, solves with `C`
/// (`k×k`), and forms `s = D⁻¹r − V t` and `rᵀs` in one more pass, so the `n×m` blocks are
/// read about half as often as a separate solve and dot products read them.
#[derive(Debug, Clone, Copy)]
pub struct WoodburyParts<'a> {
    /// The diagonal `D` (positive).
    pub diagonal: &'a [f64],
    /// `V = D⁻¹ U`.
    pub factor_over_diagonal: MatRef<'a, f64>,
    /// The Cholesky factor of `C = I + Uᵀ D⁻¹ U`.
    pub capacitance: &'a gp_linalg::Cholesky,
}

/// Standard-normal `rows×cols` matrix, drawn column by column.
pub(crate) fn standard_normal(rng: &mut dyn RngCore, rows: usize, cols: usize) -> Mat<f64> {
    let mut g = Mat::zeros(rows, cols);
    for j in 0..cols {
        for i in 0..rows {
            g[(i, j)] = StandardNormal.sample(rng);
        }
    }
    g
}

/// `P = I` of order `n` (what CG uses when no preconditioner is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdentityPreconditioner {
    /// Order `n`.
    pub n: usize,
}

impl Preconditioner for IdentityPreconditioner {
    fn dim(&self) -> usize {
        self.n
    }
    fn solve_into(&self, r: MatRef<'_, f64>, mut out: MatMut<'_, f64>) -> Result<()> {
        check_shape((r.nrows(), 1), (self.n, 1), "IdentityPreconditioner::solve")?;
        check_shape(
            out.shape(),
            r.shape(),
            "IdentityPreconditioner::solve (out)",
        )?;
        out.copy_from(r);
        Ok(())
    }
    fn log_det(&self) -> Result<f64> {
        Ok(0.0)
    }
    fn sample(&self, rng: &mut dyn RngCore, count: usize) -> Result<Mat<f64>> {
        Ok(standard_normal(rng, self.n, count))
    }
}

impl Preconditioner for LowRankPlusDiagonal {
    fn dim(&self) -> usize {
        LowRankPlusDiagonal::dim(self)
    }
    fn solve_into(&self, r: MatRef<'_, f64>, out: MatMut<'_, f64>) -> Result<()> {
        Ok(LowRankPlusDiagonal::solve_into(self, r, out)?)
    }
    fn log_det(&self) -> Result<f64> {
        Ok(LowRankPlusDiagonal::log_det(self))
    }
    fn woodbury_parts(&self) -> Option<WoodburyParts<'_>> {
        let diagonal = self.diagonal_part().values().try_as_col_major()?.as_slice();
        Some(WoodburyParts {
            diagonal,
            factor_over_diagonal: self.factor_over_diagonal(),
            capacitance: self.capacitance(),
        })
    }
    /// `z = U g₁ + D^{1/2} g₂` with independent standard normals `g₁ ∈ ℝᵏ`, `g₂ ∈ ℝⁿ`, so
    /// that `Cov z = U Uᵀ + D`.
    fn sample(&self, rng: &mut dyn RngCore, count: usize) -> Result<Mat<f64>> {
        let (n, k) = (self.dim(), self.rank());
        let g1 = standard_normal(rng, k, count);
        let g2 = standard_normal(rng, n, count);
        let d = self.diagonal_part().values();
        let mut z = Mat::from_fn(n, count, |i, j| d[i].sqrt() * g2[(i, j)]);
        faer::linalg::matmul::matmul(
            z.as_mut(),
            faer::Accum::Add,
            self.factor(),
            g1.as_ref(),
            1.0,
            gp_linalg::parallelism(),
        );
        Ok(z)
    }
}

impl Preconditioner for DiagonalOperator {
    fn dim(&self) -> usize {
        DiagonalOperator::dim(self)
    }
    fn solve_into(&self, r: MatRef<'_, f64>, mut out: MatMut<'_, f64>) -> Result<()> {
        check_shape(out.shape(), r.shape(), "DiagonalOperator::solve (out)")?;
        out.copy_from(r);
        self.solve_in_place(out.rb_mut())?;
        Ok(())
    }
    fn log_det(&self) -> Result<f64> {
        Ok(DiagonalOperator::log_det(self)?)
    }
    fn sample(&self, rng: &mut dyn RngCore, count: usize) -> Result<Mat<f64>> {
        self.check_positive()?;
        let d = self.values();
        let g = standard_normal(rng, self.dim(), count);
        Ok(Mat::from_fn(self.dim(), count, |i, j| {
            d[i].sqrt() * g[(i, j)]
        }))
    }
}
