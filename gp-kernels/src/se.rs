//! The squared-exponential (RBF) kernel with ARD length scales.

use faer::{Mat, MatMut, MatRef};
use serde::{Deserialize, Serialize};

use crate::ard;
use crate::error::Result;
use crate::kernel::{Kernel, SeparableFactors};
use crate::profile::SeProfile;
use crate::stationary::ArdParams;

/// `k(x, z) = σ² exp(−r²/2)`, `r² = Σᵢ ((xᵢ − zᵢ)/ℓᵢ)²`.
///
/// Hyperparameters: `[log ℓ₀, …, log ℓ_{d−1}, log σ²]`.
///
/// ```
/// use gp_kernels::{Kernel, SquaredExponential};
///
/// let k = SquaredExponential::new(vec![1.0, 2.0], 1.5)?;
/// assert_eq!(k.eval(&[0.0, 0.0], &[0.0, 0.0]), 1.5);
/// assert!((k.eval(&[1.0, 0.0], &[0.0, 0.0]) - 1.5 * (-0.5f64).exp()).abs() < 1e-15);
/// # Ok::<(), gp_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SquaredExponential {
    params: ArdParams,
}

impl SquaredExponential {
    /// One length scale per input dimension and the output variance, all `> 0`.
    pub fn new(lengthscales: Vec<f64>, variance: f64) -> Result<Self> {
        Ok(Self {
            params: ArdParams::new(lengthscales, variance)?,
        })
    }

    /// The same length scale `lengthscale` in each of `dim` dimensions.
    pub fn isotropic(dim: usize, lengthscale: f64, variance: f64) -> Result<Self> {
        Self::new(vec![lengthscale; dim], variance)
    }

    /// Length scales and variance.
    pub fn params(&self) -> &ArdParams {
        &self.params
    }
}

impl Kernel for SquaredExponential {
    fn input_dim(&self) -> usize {
        self.params.dim()
    }
    fn param_names(&self) -> Vec<String> {
        self.params.names()
    }
    fn n_params(&self) -> usize {
        self.params.dim() + 1
    }
    fn log_params(&self) -> Vec<f64> {
        self.params.log_params()
    }
    fn set_log_params(&mut self, log_params: &[f64]) -> Result<()> {
        self.params.set_log_params(log_params)
    }
    /// NaN unless both slices have length [`input_dim`](Kernel::input_dim).
    #[inline]
    fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        // `r2` is NaN for slices of the wrong length, and so is the result.
        self.params.variance() * (-0.5 * self.params.r2(x, z)).exp()
    }
    /// NaN (value and every gradient entry) unless `x`, `z` have length `d` and `grad`
    /// length `d + 1`.
    fn eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> f64 {
        let g = (-0.5 * self.params.r2(x, z)).exp();
        let value = self.params.variance() * g;
        self.params.write_grad(x, z, value, -0.5 * g, grad);
        if grad.len() != self.n_params() {
            return f64::NAN;
        }
        value
    }
    fn diag_entry(&self, x: &[f64]) -> f64 {
        if x.len() != self.params.dim() {
            return f64::NAN;
        }
        self.params.variance()
    }
    fn fill_block(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        ard::fill_block::<SeProfile>(&self.params, x, z, out)
    }
    fn matrix_and_grads(&self, x: MatRef<'_, f64>) -> Result<(Mat<f64>, Vec<Mat<f64>>)> {
        ard::matrix_and_grads::<SeProfile>(&self.params, x)
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
        ard::add_weighted_grads::<SeProfile>(&self.params, x, j, first_row, weights, scale, acc)
    }
    fn separable_factors(&self) -> Option<SeparableFactors> {
        let factors = self
            .params
            .lengthscales()
            .iter()
            .map(|&l| {
                // A length scale that passed validation always builds a valid 1-D kernel.
                let params = ArdParams::new(vec![l], 1.0).ok()?;
                Some(Box::new(SquaredExponential { params }) as Box<dyn Kernel>)
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SeparableFactors {
            scale: self.params.variance(),
            factors,
        })
    }
}
