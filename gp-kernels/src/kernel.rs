//! The [`Kernel`] trait.
//!
//! Data convention for the whole workspace: a set of `n` points in `d` dimensions is an
//! `n × d` faer matrix, one point per row.

use std::fmt::Debug;

use faer::{Col, Mat, MatRef};

use crate::dense;
use crate::error::Result;

/// A product decomposition `k(x, z) = scale · Πᵢ kᵢ(xᵢ, zᵢ)` of a kernel over input
/// dimensions: what Toeplitz and Kronecker algebra need.
#[derive(Debug)]
pub struct SeparableFactors {
    /// The output scale (variance) `σ_f²` in front of the product.
    pub scale: f64,
    /// One 1-D kernel per input dimension, each with unit output scale.
    pub factors: Vec<Box<dyn Kernel>>,
}

/// A covariance function with hyperparameters in log space and their derivatives.
///
/// Hyperparameters are a flat vector of logarithms of positive quantities (length scales,
/// output variance), named by [`param_names`](Self::param_names); derivatives are taken with
/// respect to these logarithms. Points are plain slices of length
/// [`input_dim`](Self::input_dim); matrices of points are `n × d` with one point per row.
///
/// The dense builders ([`matrix`](Self::matrix), [`diag`](Self::diag),
/// [`matrix_and_grads`](Self::matrix_and_grads)) check their inputs and return typed errors.
pub trait Kernel: Send + Sync + Debug {
    /// Input dimension `d`.
    fn input_dim(&self) -> usize;

    /// Names of the hyperparameters, in the order of [`log_params`](Self::log_params), e.g.
    /// `["log_lengthscale_0", "log_lengthscale_1", "log_variance"]`.
    fn param_names(&self) -> Vec<String>;

    /// Number of hyperparameters.
    fn n_params(&self) -> usize {
        self.param_names().len()
    }

    /// Hyperparameters as logarithms.
    fn log_params(&self) -> Vec<f64>;

    /// Sets the hyperparameters from logarithms. Errors on a wrong length or a non-finite
    /// value; the kernel is unchanged on error.
    fn set_log_params(&mut self, log_params: &[f64]) -> Result<()>;

    /// `k(x, z)`. Contract: both slices have length [`input_dim`](Self::input_dim).
    fn eval(&self, x: &[f64], z: &[f64]) -> f64;

    /// `k(x, z)`, writing `∂k/∂θⱼ` (θ the log hyperparameters) into `grad`
    /// (length [`n_params`](Self::n_params)).
    fn eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> f64;

    /// `k(x, x)`.
    fn diag_entry(&self, x: &[f64]) -> f64 {
        self.eval(x, x)
    }

    /// The product decomposition over dimensions, for kernels that have one.
    fn separable_factors(&self) -> Option<SeparableFactors> {
        None
    }

    /// The cross-covariance `K(X, Z)` (`n × m` for `X: n × d`, `Z: m × d`).
    ///
    /// Computed in parallel over tiles (see [`crate::dense`]).
    fn matrix(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
        dense::cross_matrix(self, x, z)
    }

    /// The diagonal `k(xᵢ, xᵢ)` for the rows of `X`.
    fn diag(&self, x: MatRef<'_, f64>) -> Result<Col<f64>> {
        dense::diagonal(self, x)
    }

    /// `K(X, X)` and its derivative with respect to each log hyperparameter.
    fn matrix_and_grads(&self, x: MatRef<'_, f64>) -> Result<(Mat<f64>, Vec<Mat<f64>>)> {
        dense::matrix_and_grads(self, x)
    }
}
