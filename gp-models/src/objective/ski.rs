//! The SKI covariance `W K_G Wᵀ + σ²I` for the CG and RR-CG estimators: RR-CG training of a
//! structured model without truncation bias, with the pivoted-Cholesky preconditioner of
//! [`SkiKernelColumns`] from [`KrylovObjectiveOptions::min_preconditioning_size`] points on.

use faer::{Mat, MatRef};
use gp_kernels::Kernel;
use gp_linalg::{LinearOperator, LowRankPlusDiagonal, TransposeOperator};
use gp_solvers::Preconditioner;
use gp_structured::Kronecker;

use crate::error::{ModelError, Result};
use crate::objective::estimator::KrylovObjectiveOptions;
use crate::objective::krylov::KrylovCovariance;
use crate::ski::{Ski, SkiKernelColumns, SkiOperator};

/// A fitted [`Ski`] model as a [`KrylovCovariance`]: products with `W K_G Wᵀ + σ²I`,
/// optionally preconditioned by the rank-`k` pivoted Cholesky `L Lᵀ + σ²I` of `W K_G Wᵀ`
/// ([`with_options`](Self::with_options)), contractions
/// `Lᵀ W (∂K_G/∂θ) Wᵀ R = (WᵀL)ᵀ (∂K_G/∂θ) (WᵀR)` with the Kronecker derivatives of the
/// grid kernel.
pub struct SkiCovariance<'a, K> {
    ski: &'a Ski<K>,
    operator: SkiOperator<'a>,
    derivatives: Vec<Kronecker>,
    preconditioner: Option<LowRankPlusDiagonal>,
}

impl<'a, K: Kernel> SkiCovariance<'a, K> {
    /// The covariance of `ski` at its current hyperparameters, without a preconditioner
    /// (as the SKI model's own [`lml_and_grad_estimate`](Ski::lml_and_grad_estimate) at the
    /// default [`SkiOptions::preconditioner_rank`](crate::SkiOptions::preconditioner_rank)
    /// of 0; this covariance takes its preconditioner from
    /// [`with_options`](Self::with_options), not from the model's options).
    ///
    /// Errors with [`ModelError::UnsupportedKernel`] when the grid kernel has no Kronecker
    /// derivatives (a kernel that is not separable on the grid).
    pub fn new(ski: &'a Ski<K>) -> Result<Self> {
        Ok(Self {
            ski,
            operator: ski.operator(),
            derivatives: ski.grid_kernel.derivatives()?,
            preconditioner: None,
        })
    }

    /// The covariance of `ski` with the rank-[`preconditioner_rank`](KrylovObjectiveOptions::preconditioner_rank)
    /// pivoted-Cholesky preconditioner of `W K_G Wᵀ` when `n` reaches
    /// [`min_preconditioning_size`](KrylovObjectiveOptions::min_preconditioning_size) (the
    /// rule of the dense covariance and of GPyTorch), none otherwise or at rank 0.
    ///
    /// Errors as [`new`](Self::new), and a failed factorization
    /// ([`ModelError::Solver`]).
    pub fn with_options(ski: &'a Ski<K>, options: &KrylovObjectiveOptions) -> Result<Self> {
        let mut covariance = Self::new(ski)?;
        if options.preconditioner_rank > 0 && ski.n_train() >= options.min_preconditioning_size {
            let columns = SkiKernelColumns::new(&ski.w, &ski.grid_kernel)?;
            covariance.preconditioner =
                Some(columns.preconditioner(options.preconditioner_rank, ski.noise_variance)?);
        }
        Ok(covariance)
    }
}

impl<K: Kernel> KrylovCovariance for SkiCovariance<'_, K> {
    fn operator(&self) -> &dyn LinearOperator {
        &self.operator
    }

    fn preconditioner(&self) -> Option<&dyn Preconditioner> {
        self.preconditioner
            .as_ref()
            .map(|p| p as &dyn Preconditioner)
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
