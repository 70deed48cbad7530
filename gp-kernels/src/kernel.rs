//! The [`Kernel`] trait.
//!
//! Data convention for the whole workspace: a set of `n` points in `d` dimensions is an
//! `n × d` faer matrix, one point per row.

use std::fmt::Debug;

use faer::{Col, Mat, MatMut, MatRef};

use crate::dense;
use crate::error::{KernelError, Result};

/// Checks that a point has length `d` and finite entries.
fn check_point(d: usize, x: &[f64], context: &'static str) -> Result<()> {
    if x.len() != d {
        return Err(KernelError::PointLength {
            context,
            expected: d,
            found: x.len(),
        });
    }
    if let Some((i, v)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(KernelError::InvalidArgument {
            name: "x",
            reason: format!("{context}: entry {i} is {v}; points must be finite"),
        });
    }
    Ok(())
}

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

    /// `k(x, z)`, unchecked: the fast path for callers that already know their slices are
    /// right (the dense builders, model hot loops).
    ///
    /// Contract: both slices have length [`input_dim`](Self::input_dim). The kernels of this
    /// crate return NaN otherwise (one length comparison, never a value computed from
    /// truncated slices); implementations elsewhere must do the same. Use
    /// [`try_eval`](Self::try_eval) for a typed error instead.
    fn eval(&self, x: &[f64], z: &[f64]) -> f64;

    /// `k(x, z)`, writing `∂k/∂θⱼ` (θ the log hyperparameters) into `grad`
    /// (length [`n_params`](Self::n_params)); unchecked like [`eval`](Self::eval).
    ///
    /// Contract: `x` and `z` have length [`input_dim`](Self::input_dim) and `grad` length
    /// [`n_params`](Self::n_params); otherwise the kernels of this crate return NaN and fill
    /// `grad` with NaN. Use [`try_eval_with_grad`](Self::try_eval_with_grad) for a typed error.
    fn eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> f64;

    /// `k(x, x)`, unchecked like [`eval`](Self::eval) (NaN for a slice of the wrong length
    /// in the kernels of this crate); [`try_diag_entry`](Self::try_diag_entry) is checked.
    fn diag_entry(&self, x: &[f64]) -> f64 {
        self.eval(x, x)
    }

    /// `k(x, z)`, checked: errors with [`KernelError::PointLength`] if a slice's length is not
    /// [`input_dim`](Self::input_dim) and with [`KernelError::InvalidArgument`] if it holds
    /// NaN or infinity.
    fn try_eval(&self, x: &[f64], z: &[f64]) -> Result<f64> {
        check_point(self.input_dim(), x, "Kernel::try_eval, x")?;
        check_point(self.input_dim(), z, "Kernel::try_eval, z")?;
        Ok(self.eval(x, z))
    }

    /// [`eval_with_grad`](Self::eval_with_grad), checked: the errors of
    /// [`try_eval`](Self::try_eval), and [`KernelError::ParamCount`] if `grad` does not have
    /// length [`n_params`](Self::n_params).
    fn try_eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> Result<f64> {
        check_point(self.input_dim(), x, "Kernel::try_eval_with_grad, x")?;
        check_point(self.input_dim(), z, "Kernel::try_eval_with_grad, z")?;
        let names = self.param_names();
        if grad.len() != names.len() {
            return Err(KernelError::ParamCount {
                expected: names.len(),
                found: grad.len(),
                names: names.join(", "),
            });
        }
        Ok(self.eval_with_grad(x, z, grad))
    }

    /// `k(x, x)`, checked: the errors of [`try_eval`](Self::try_eval).
    fn try_diag_entry(&self, x: &[f64]) -> Result<f64> {
        check_point(self.input_dim(), x, "Kernel::try_diag_entry, x")?;
        Ok(self.diag_entry(x))
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

    /// `acc[q] += Σᵢ weights[i − i₀] · (∂k(xᵢ, xⱼ)/∂θ_q · scale)` for every hyperparameter
    /// `q`, over the rows `i₀ = first_row .. first_row + weights.len()` of `x` (`xᵢ` its rows):
    /// one column of `Σᵢⱼ Wᵢⱼ ∂Kᵢⱼ/∂θ`, the gradient pass of exact-GP training, without
    /// forming any derivative matrix. `scale` multiplies each derivative before its weight
    /// (exact-GP training passes a power of two that keeps `W` and `∂K` in range).
    ///
    /// Contract (unchecked, may panic otherwise): `x` has [`input_dim`](Self::input_dim)
    /// columns, `j` and the rows are rows of `x`, `acc` has [`n_params`](Self::n_params)
    /// entries. The default calls [`eval_with_grad`](Self::eval_with_grad) row by row and adds
    /// in row order; the stationary ARD kernels of this crate override it with vectorized
    /// loops over a column-major `x` (partial sums in a fixed order: deterministic, but not
    /// the default's bits).
    fn add_weighted_grads(
        &self,
        x: MatRef<'_, f64>,
        j: usize,
        first_row: usize,
        weights: &[f64],
        scale: f64,
        acc: &mut [f64],
    ) {
        dense::add_weighted_grads_generic(self, x, j, first_row, weights, scale, acc)
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
            fn add_weighted_grads(
                &self,
                x: MatRef<'_, f64>,
                j: usize,
                first_row: usize,
                weights: &[f64],
                scale: f64,
                acc: &mut [f64],
            ) {
                (**self).add_weighted_grads(x, j, first_row, weights, scale, acc)
            }
        }
    };
}

/// The error of `set_log_params` through a shared pointer.
fn shared_set_error() -> Result<()> {
    Err(KernelError::InvalidArgument {
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
