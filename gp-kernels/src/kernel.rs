//! The [`Kernel`] trait.
//!
//! Data convention for the whole workspace: a set of `n` points in `d` dimensions is an
//! `n × d` faer matrix, one point per row.

use std::fmt::Debug;

use faer::{Col, Mat, MatMut, MatRef};

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

    /// Writes the block `K(X, Z)` into `out`, sequentially and without checks: the building
    /// block of the tiled dense builders and of the matrix-free
    /// [`KernelOperator`](crate::KernelOperator).
    ///
    /// Contract: `x` is `m × d`, `z` is `p × d` (`d` = [`input_dim`](Self::input_dim)), `out`
    /// is `m × p`, all values finite; implementations may panic otherwise. Use
    /// [`matrix`](Self::matrix) for a checked call. The default evaluates
    /// [`eval`](Self::eval) per entry; the stationary kernels of this crate override it with
    /// vectorized loops.
    fn fill_block(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        dense::fill_block_generic(self, x, z, out)
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

/// Forwards every method (including the overridable builders) to the pointee;
/// `set_log_params` is given as `|this, params| body`.
macro_rules! forward_kernel {
    ($ty:ty, |$this:ident, $p:ident| $set:expr) => {
        impl<K: Kernel + ?Sized> Kernel for $ty {
            fn input_dim(&self) -> usize {
                (**self).input_dim()
            }
            fn param_names(&self) -> Vec<String> {
                (**self).param_names()
            }
            fn n_params(&self) -> usize {
                (**self).n_params()
            }
            fn log_params(&self) -> Vec<f64> {
                (**self).log_params()
            }
            fn set_log_params(&mut self, log_params: &[f64]) -> Result<()> {
                let $this = self;
                let $p = log_params;
                $set
            }
            fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
                (**self).eval(x, z)
            }
            fn eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> f64 {
                (**self).eval_with_grad(x, z, grad)
            }
            fn diag_entry(&self, x: &[f64]) -> f64 {
                (**self).diag_entry(x)
            }
            fn separable_factors(&self) -> Option<SeparableFactors> {
                (**self).separable_factors()
            }
            fn fill_block(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>, out: MatMut<'_, f64>) {
                (**self).fill_block(x, z, out)
            }
            fn matrix(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> Result<Mat<f64>> {
                (**self).matrix(x, z)
            }
            fn diag(&self, x: MatRef<'_, f64>) -> Result<Col<f64>> {
                (**self).diag(x)
            }
            fn matrix_and_grads(&self, x: MatRef<'_, f64>) -> Result<(Mat<f64>, Vec<Mat<f64>>)> {
                (**self).matrix_and_grads(x)
            }
        }
    };
}

/// The error of `set_log_params` through a shared pointer.
fn shared_set_error() -> Result<()> {
    Err(crate::error::KernelError::InvalidArgument {
        name: "log_params",
        reason: "cannot set hyperparameters through a shared reference (&K, or an Arc<K> with \
                 other owners); set them on the kernel itself"
            .into(),
    })
}

forward_kernel!(Box<K>, |this, p| (**this).set_log_params(p));
forward_kernel!(&K, |_this, _p| shared_set_error());
forward_kernel!(
    std::sync::Arc<K>,
    |this, p| match std::sync::Arc::get_mut(this) {
        Some(k) => k.set_log_params(p),
        None => shared_set_error(),
    }
);
