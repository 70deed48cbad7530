//! The sufficient statistics of GP-GRIEF's weight-space model: `A = ΦᵀΦ`, `r = Φᵀy`, `yᵀy`
//! and `n` (Evans & Nair 2018, eq. 13 / App. A), accumulated in one pass, possibly streamed
//! over row blocks of `Φ` so that the `n × p` basis is never stored.

use faer::linalg::matmul::matmul;
use faer::{Accum, Col, ColRef, Mat, MatRef, Par};
use gp_linalg::validate::{check_finite_col, check_finite_mat};

use crate::error::{ModelError, Result};

/// The sufficient statistics `A = ΦᵀΦ` (`p × p`), `r = Φᵀy` (`p`), `yᵀy` and the number of
/// rows `n` of a basis `Φ` (`n × p`) and targets `y`: everything the weight-space log
/// marginal likelihood, its gradients and the predictions need (Evans & Nair 2018, eq. 13 /
/// App. A). Their size is `O(p²)` whatever `n`.
///
/// Build them with [`from_phi`](Self::from_phi), or with [`new`](Self::new) followed by
/// [`accumulate`](Self::accumulate) over row blocks of `Φ` (the result is the same up to
/// rounding). The fields are public so statistics computed elsewhere can be used; `a` must
/// then be symmetric positive semidefinite (only its lower triangle is read).
#[derive(Debug, Clone, PartialEq)]
pub struct GriefStats {
    /// `A = ΦᵀΦ`, `p × p`, symmetric (the full matrix is stored; only the lower triangle is
    /// read by the fits).
    pub a: Mat<f64>,
    /// `r = Φᵀy`, length `p`.
    pub r: Col<f64>,
    /// `yᵀy`.
    pub yty: f64,
    /// Number of rows of `Φ` (training points) accumulated.
    pub n: usize,
}

impl GriefStats {
    /// Empty statistics for `p` basis functions (`A = 0`, `r = 0`, `yᵀy = 0`, `n = 0`), to be
    /// filled by [`accumulate`](Self::accumulate).
    pub fn new(p: usize) -> Self {
        Self {
            a: Mat::zeros(p, p),
            r: Col::zeros(p),
            yty: 0.0,
            n: 0,
        }
    }

    /// The statistics of a whole basis `Φ` (`n × p`) and targets `y` (`n`).
    ///
    /// Errors: [`ModelError::LengthMismatch`] if `y` does not have one entry per row of `Φ`,
    /// [`ModelError::NonFinite`] for NaN or infinite entries.
    pub fn from_phi(phi: MatRef<'_, f64>, y: ColRef<'_, f64>) -> Result<Self> {
        let mut stats = Self::new(phi.ncols());
        stats.accumulate(phi, y)?;
        Ok(stats)
    }

    /// Number of basis functions `p`.
    pub fn p(&self) -> usize {
        self.r.nrows()
    }

    /// Adds a block of rows: `A += Φ_bᵀΦ_b`, `r += Φ_bᵀy_b`, `yᵀy += y_bᵀy_b`, `n += b`.
    ///
    /// Errors: [`ModelError::LengthMismatch`] if `Φ_b` does not have `p` columns or `y_b` does
    /// not have one entry per row of `Φ_b`, [`ModelError::NonFinite`] for NaN or infinite
    /// entries (the statistics are left unchanged on error).
    pub fn accumulate(
        &mut self,
        phi_block: MatRef<'_, f64>,
        y_block: ColRef<'_, f64>,
    ) -> Result<()> {
        self.accumulate_lower(phi_block, y_block)?;
        gp_linalg::gram::mirror_lower(self.a.as_mut())?;
        Ok(())
    }

    /// As [`accumulate`](Self::accumulate), but `A` gets `Φ_bᵀΦ_b` in its lower triangle
    /// only (`b p²` flops instead of `2 b p²`): mirror it
    /// ([`gp_linalg::gram::mirror_lower`]) after the last block of a streamed pass.
    pub(crate) fn accumulate_lower(
        &mut self,
        phi_block: MatRef<'_, f64>,
        y_block: ColRef<'_, f64>,
    ) -> Result<()> {
        let p = self.p();
        if phi_block.ncols() != p {
            return Err(ModelError::LengthMismatch {
                context:
                    "columns of the basis block Φ_b (one per basis function of the statistics)",
                expected: p,
                found: phi_block.ncols(),
            });
        }
        if y_block.nrows() != phi_block.nrows() {
            return Err(ModelError::LengthMismatch {
                context: "targets of the block y_b (one per row of Φ_b)",
                expected: phi_block.nrows(),
                found: y_block.nrows(),
            });
        }
        check_finite_mat(phi_block, "the basis block Φ_b")
            .map_err(ModelError::from_finite_check)?;
        check_finite_col(y_block, "the targets y_b").map_err(ModelError::from_finite_check)?;
        let par = gp_linalg::parallelism_for(phi_block.nrows() as f64 * p as f64 * p as f64);
        gp_linalg::gram::add_gram_lower(self.a.as_mut(), phi_block, par)?;
        matmul(
            self.r.as_mat_mut(),
            Accum::Add,
            phi_block.transpose(),
            y_block.as_mat(),
            1.0,
            Par::Seq,
        );
        self.yty += y_block.squared_norm_l2();
        self.n += phi_block.nrows();
        Ok(())
    }
}
