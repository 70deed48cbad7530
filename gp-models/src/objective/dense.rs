//! The covariance `K(X, X) + σ²I` stored as a dense matrix, for the CG and RR-CG
//! estimators on data that fit in memory.

use faer::{Mat, MatRef};
use gp_kernels::dense::points_row_major;
use gp_kernels::{Kernel, SquaredExponential};
use gp_linalg::{LinearOperator, LowRankPlusDiagonal};
use gp_solvers::{pivoted_cholesky_preconditioner, PivotedCholeskyOptions, Preconditioner};
use std::any::Any;

use crate::error::{ModelError, Result};
use crate::iterative::derivatives::derivative_quad_forms;
use crate::objective::estimator::KrylovObjectiveOptions;
use crate::objective::krylov::{weighted_rows, KrylovCovariance};
use crate::objective::se_contraction::se_weighted_contraction;
use crate::objective::stored_kernel::SymmetricStored;
use crate::validate::{check_noise, check_training_inputs};

/// `K̂ = K(X, X) + σ²I` stored densely (its lower half, `4n²` bytes), with the rank-`k` pivoted-Cholesky
/// preconditioner `LLᵀ + σ²I` of `K(X, X)` when `n` reaches
/// [`KrylovObjectiveOptions::min_preconditioning_size`]. Products with `K̂` read the stored
/// half once (see [`SymmetricStored`]); the derivative contractions run as dense products on
/// the stored matrix for a [`SquaredExponential`] kernel and matrix-free otherwise (every
/// kernel entry recomputed with its gradient, any [`Kernel`]).
pub struct DenseKernelCovariance<'a, K: ?Sized> {
    kernel: &'a K,
    /// The points and length scales when the kernel is a [`SquaredExponential`]: its
    /// derivative contractions then run as dense products on the stored matrix.
    squared_exponential: Option<(Mat<f64>, Vec<f64>)>,
    xs: Vec<f64>,
    d: usize,
    noise_variance: f64,
    operator: SymmetricStored,
    preconditioner: Option<LowRankPlusDiagonal>,
}

impl<'a, K: Kernel + Any> DenseKernelCovariance<'a, K> {
    /// Builds `K̂` for points `x` (`n × d`) and noise `σ² > 0`.
    ///
    /// Errors: empty or non-finite points, a kernel of another dimension, a noise that is not
    /// finite and positive, and a failed preconditioner.
    pub fn new(
        kernel: &'a K,
        x: MatRef<'_, f64>,
        noise_variance: f64,
        options: &KrylovObjectiveOptions,
    ) -> Result<Self> {
        check_training_inputs(kernel, x, x.nrows(), "building a dense kernel covariance")?;
        check_noise(noise_variance)?;
        let n = x.nrows();
        let mut k = SymmetricStored::from_kernel(kernel, x)?;
        let preconditioner =
            if options.preconditioner_rank > 0 && n >= options.min_preconditioning_size {
                let pc = PivotedCholeskyOptions {
                    max_rank: options.preconditioner_rank,
                    relative_tolerance: 0.0,
                };
                Some(pivoted_cholesky_preconditioner(&k, noise_variance, &pc)?)
            } else {
                None
            };
        k.add_to_diagonal(noise_variance);
        let squared_exponential = (kernel as &dyn Any)
            .downcast_ref::<SquaredExponential>()
            .map(|se| (x.to_owned(), se.params().lengthscales().to_vec()));
        Ok(Self {
            kernel,
            squared_exponential,
            xs: points_row_major(kernel, x, "the training points X")?,
            d: x.ncols(),
            noise_variance,
            operator: k,
            preconditioner,
        })
    }
}

impl<K: ?Sized> DenseKernelCovariance<'_, K> {
    /// The order `n`.
    pub fn dim(&self) -> usize {
        self.operator.nrows()
    }

    fn check_blocks(&self, left: MatRef<'_, f64>, right: MatRef<'_, f64>) -> Result<()> {
        if left.nrows() != self.dim() || left.shape() != right.shape() {
            return Err(ModelError::LengthMismatch {
                context: "derivative contractions (two n × r blocks)",
                expected: self.dim(),
                found: left.nrows(),
            });
        }
        Ok(())
    }
}

impl<K: Kernel + ?Sized> KrylovCovariance for DenseKernelCovariance<'_, K> {
    fn kernel_derivative_weighted(
        &self,
        left: MatRef<'_, f64>,
        right: MatRef<'_, f64>,
        weights: &[f64],
    ) -> Result<Vec<f64>> {
        self.check_blocks(left, right)?;
        match &self.squared_exponential {
            Some((x, lengthscales)) => Ok(se_weighted_contraction(
                &self.operator,
                self.noise_variance,
                x.as_ref(),
                lengthscales,
                left,
                right,
                weights,
            )),
            None => Ok(weighted_rows(
                self.kernel_derivative_contractions(left, right)?.as_ref(),
                weights,
            )),
        }
    }

    fn operator(&self) -> &dyn LinearOperator {
        &self.operator
    }

    fn preconditioner(&self) -> Option<&dyn Preconditioner> {
        self.preconditioner
            .as_ref()
            .map(|p| p as &dyn Preconditioner)
    }

    fn noise_variance(&self) -> f64 {
        self.noise_variance
    }

    fn kernel_derivative_contractions(
        &self,
        left: MatRef<'_, f64>,
        right: MatRef<'_, f64>,
    ) -> Result<Mat<f64>> {
        self.check_blocks(left, right)?;
        Ok(derivative_quad_forms(
            self.kernel,
            &self.xs,
            self.d,
            left,
            right,
        ))
    }
}
