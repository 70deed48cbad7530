//! A lean Cholesky factorization for the RFF objective's symmetric positive definite
//! matrices (`A = σ²I + ΦᵀΦ` or `K̃ = ΦΦᵀ + σ²I`), built in place from their lower triangle:
//! no copy, no jitter (the objective is that of `K̃` itself), no finiteness pass over the
//! input (a non-finite entry shows up as a non-finite pivot).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::reborrow::ReborrowMut;
use faer::{Mat, MatMut};
use gp_linalg::{parallelism_for, LinalgError};

use crate::error::Result;

/// `M = L Lᵀ`; only the lower triangle of `l` is meaningful.
pub(crate) struct Llt {
    l: Mat<f64>,
}

impl Llt {
    /// Factors `m` (its lower triangle) in place.
    ///
    /// Errors: [`LinalgError::NotPositiveDefinite`] on a non-positive or non-finite pivot.
    pub fn factor(mut m: Mat<f64>) -> Result<Self> {
        let n = m.nrows();
        let par = parallelism_for((n as f64).powi(3) / 3.0);
        let mut mem = MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, Default::default()));
        let ok = cholesky_in_place(
            m.as_mut(),
            Default::default(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .is_ok();
        if !ok || (0..n).any(|i| !(m[(i, i)] > 0.0 && m[(i, i)].is_finite())) {
            return Err(LinalgError::NotPositiveDefinite {
                n,
                largest_jitter: 0.0,
            }
            .into());
        }
        Ok(Self { l: m })
    }

    /// `log|M| = 2 Σ log Lᵢᵢ`.
    pub fn log_det(&self) -> f64 {
        2.0 * (0..self.l.nrows())
            .map(|i| self.l[(i, i)].ln())
            .sum::<f64>()
    }

    /// Overwrites `b` (`n × k`) with `M⁻¹ b`.
    pub fn solve_in_place(&self, mut b: MatMut<'_, f64>) {
        let n = self.l.nrows();
        let par = parallelism_for(2.0 * (n * n * b.ncols()) as f64);
        solve_lower_triangular_in_place(self.l.as_ref(), b.rb_mut(), par);
        solve_upper_triangular_in_place(self.l.transpose(), b, par);
    }

    /// `tr M⁻¹ = ‖L⁻¹‖²_F` (`n³/3` flops).
    pub fn trace_inverse(&self) -> f64 {
        let n = self.l.nrows();
        let mut w = Mat::<f64>::identity(n, n);
        let par = parallelism_for((n as f64).powi(3) / 3.0);
        solve_lower_triangular_in_place(self.l.as_ref(), w.as_mut(), par);
        // L⁻¹ is lower triangular: sum the squares of each column below the diagonal.
        (0..n)
            .map(|j| w.col_as_slice(j)[j..].iter().map(|v| v * v).sum::<f64>())
            .sum()
    }

    /// `M⁻¹` (`n × n`, both triangles).
    pub fn inverse(&self) -> Mat<f64> {
        let n = self.l.nrows();
        let mut x = Mat::<f64>::identity(n, n);
        self.solve_in_place(x.as_mut());
        x
    }
}
