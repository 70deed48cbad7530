//! The SKI covariance `W K_G Wᵀ + σ²I` for the CG and RR-CG estimators: RR-CG training of a
//! structured model without truncation bias.

use faer::{Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{LinearOperator, TransposeOperator};
use gp_solvers::Preconditioner;
use gp_structured::Kronecker;

use crate::error::{ModelError, Result};
use crate::objective::krylov::KrylovCovariance;
use crate::ski::{Ski, SkiOperator};

/// A fitted [`Ski`] model as a [`KrylovCovariance`]: products with `W K_G Wᵀ + σ²I` (no
/// preconditioner, as the SKI model itself), contractions
/// `Lᵀ W (∂K_G/∂θ) Wᵀ R = (WᵀL)ᵀ (∂K_G/∂θ) (WᵀR)` with the Kronecker derivatives of the
/// grid kernel.
pub struct SkiCovariance<'a, K> {
    ski: &'a Ski<K>,
    operator: SkiOperator<'a>,
    derivatives: Vec<Kronecker>,
}

impl<'a, K: Kernel> SkiCovariance<'a, K> {
    /// The covariance of `ski` at its current hyperparameters.
    ///
    /// Errors with [`ModelError::UnsupportedKernel`] when the grid kernel has no Kronecker
    /// derivatives (a kernel that is not separable on the grid).
    pub fn new(ski: &'a Ski<K>) -> Result<Self> {
        Ok(Self {
            ski,
            operator: ski.operator(),
            derivatives: ski.grid_kernel.derivatives()?,
        })
    }
}

impl<K: Kernel> KrylovCovariance for SkiCovariance<'_, K> {
    fn operator(&self) -> &dyn LinearOperator {
        &self.operator
    }

    fn preconditioner(&self) -> Option<&dyn Preconditioner> {
        None
    }

    fn noise_variance(&self) -> f64 {
        self.ski.noise_variance
    }

    fn kernel_derivative_contractions(
        &self,
        left: MatRef<'_, f64>,
        right: MatRef<'_, f64>,
    ) -> Result<Mat<f64>> {
        let n = self.ski.n_train();
        if left.nrows() != n || left.shape() != right.shape() {
            return Err(ModelError::LengthMismatch {
                context: "SKI derivative contractions (two n × r blocks)",
                expected: n,
                found: left.nrows(),
            });
        }
        let a = self.ski.w.transposed().apply_block(left)?;
        let b = self.ski.w.transposed().apply_block(right)?;
        let r = left.ncols();
        let mut q = Mat::<f64>::zeros(self.derivatives.len(), r);
        for (k, dk) in self.derivatives.iter().enumerate() {
            let db = dk.apply_block(b.as_ref())?;
            for c in 0..r {
                q[(k, c)] = a.col(c).transpose() * db.col(c);
            }
        }
        Ok(q)
    }
}
