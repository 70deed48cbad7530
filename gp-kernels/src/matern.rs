//! Matérn kernels ν = 1/2, 3/2, 5/2 with ARD length scales.

use faer::{Mat, MatMut, MatRef};
use serde::{Deserialize, Serialize};

use crate::ard;
use crate::error::Result;
use crate::kernel::{Kernel, SeparableFactors};
use crate::profile::{Matern12Profile, Matern32Profile, Matern52Profile, RadialProfile};
use crate::stationary::ArdParams;

/// The smoothness ν of a [`Matern`] kernel (the half-integer values with closed forms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MaternNu {
    /// ν = 1/2: `g = e^{−r}` (the exponential / Ornstein–Uhlenbeck kernel).
    Half,
    /// ν = 3/2: `g = (1 + √3 r) e^{−√3 r}`.
    ThreeHalves,
    /// ν = 5/2: `g = (1 + √5 r + 5r²/3) e^{−√5 r}`.
    FiveHalves,
}

impl MaternNu {
    /// ν as a number (0.5, 1.5 or 2.5).
    pub fn value(self) -> f64 {
        match self {
            MaternNu::Half => 0.5,
            MaternNu::ThreeHalves => 1.5,
            MaternNu::FiveHalves => 2.5,
        }
    }

    /// `g(r²)` of this smoothness, with the platform `exp`.
    pub fn profile(self, r2: f64) -> f64 {
        match self {
            MaternNu::Half => Matern12Profile::value(r2),
            MaternNu::ThreeHalves => Matern32Profile::value(r2),
            MaternNu::FiveHalves => Matern52Profile::value(r2),
        }
    }

    /// `(g(r²), g'(r²))` of this smoothness (derivative with respect to `r²`, 0 at `r = 0`
    /// for ν = 1/2; see [`crate::profile`]).
    pub fn profile_and_deriv(self, r2: f64) -> (f64, f64) {
        match self {
            MaternNu::Half => Matern12Profile::value_and_deriv(r2),
            MaternNu::ThreeHalves => Matern32Profile::value_and_deriv(r2),
            MaternNu::FiveHalves => Matern52Profile::value_and_deriv(r2),
        }
    }
}

/// The Matérn kernel `k(x, z) = σ² g_ν(r)`, `r = ‖(x − z) ⊘ ℓ‖`, with
/// `g_{1/2} = e^{−r}`, `g_{3/2} = (1 + √3 r) e^{−√3 r}`,
/// `g_{5/2} = (1 + √5 r + 5r²/3) e^{−√5 r}`.
///
/// Hyperparameters: `[log ℓ₀, …, log ℓ_{d−1}, log σ²]` (names `log_lengthscale_i`,
/// `log_variance`). With more than one input dimension the kernel is not a product over
/// dimensions ([`separable_factors`](Kernel::separable_factors) is `None`); use
/// [`ProductKernel`](crate::ProductKernel) for a separable Matérn-type kernel.
///
/// ```
/// use gp_kernels::{Kernel, Matern, MaternNu};
///
/// let k = Matern::new(MaternNu::ThreeHalves, vec![2.0], 1.5)?;
/// let r = 0.5f64; // |x − z| / ℓ = 1 / 2
/// let expected = 1.5 * (1.0 + 3f64.sqrt() * r) * (-3f64.sqrt() * r).exp();
/// assert!((k.eval(&[1.0], &[0.0]) - expected).abs() < 1e-15);
/// # Ok::<(), gp_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matern {
    nu: MaternNu,
    params: ArdParams,
}

impl Matern {
    /// Smoothness `nu`, one length scale per input dimension and the output variance, all
    /// `> 0` and finite.
    pub fn new(nu: MaternNu, lengthscales: Vec<f64>, variance: f64) -> Result<Self> {
        Ok(Self {
            nu,
            params: ArdParams::new(lengthscales, variance)?,
        })
    }

    /// The same length scale `lengthscale` in each of `dim` dimensions.
    pub fn isotropic(nu: MaternNu, dim: usize, lengthscale: f64, variance: f64) -> Result<Self> {
        Self::new(nu, vec![lengthscale; dim], variance)
    }

    /// The smoothness ν.
    pub fn nu(&self) -> MaternNu {
        self.nu
    }

    /// Length scales and variance.
    pub fn params(&self) -> &ArdParams {
        &self.params
    }
}

impl Kernel for Matern {
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
        if !self.params.lengths_match(x, z) {
            return f64::NAN;
        }
        self.params.variance() * self.nu.profile(self.params.r2(x, z))
    }
    /// NaN (value and every gradient entry) unless `x`, `z` have length `d` and `grad`
    /// length `d + 1`.
    fn eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> f64 {
        let (g, dg) = self.nu.profile_and_deriv(self.params.r2(x, z));
        let value = self.params.variance() * g;
        self.params.write_grad(x, z, value, dg, grad);
        if !self.params.lengths_match(x, z) || grad.len() != self.n_params() {
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
    fn separable_factors(&self) -> Option<SeparableFactors> {
        // A 1-D Matérn is trivially its own factor; in more dimensions it is not separable.
        if self.params.dim() != 1 {
            return None;
        }
        let unit = Matern::new(self.nu, self.params.lengthscales().to_vec(), 1.0).ok()?;
        Some(SeparableFactors {
            scale: self.params.variance(),
            factors: vec![Box::new(unit)],
        })
    }
    fn fill_block(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        let p = &self.params;
        match self.nu {
            MaternNu::Half => ard::fill_block::<Matern12Profile>(p, x, z, out),
            MaternNu::ThreeHalves => ard::fill_block::<Matern32Profile>(p, x, z, out),
            MaternNu::FiveHalves => ard::fill_block::<Matern52Profile>(p, x, z, out),
        }
    }
    fn matrix_and_grads(&self, x: MatRef<'_, f64>) -> Result<(Mat<f64>, Vec<Mat<f64>>)> {
        let p = &self.params;
        match self.nu {
            MaternNu::Half => ard::matrix_and_grads::<Matern12Profile>(p, x),
            MaternNu::ThreeHalves => ard::matrix_and_grads::<Matern32Profile>(p, x),
            MaternNu::FiveHalves => ard::matrix_and_grads::<Matern52Profile>(p, x),
        }
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
        let (p, w) = (&self.params, weights);
        match self.nu {
            MaternNu::Half => {
                ard::add_weighted_grads::<Matern12Profile>(p, x, j, first_row, w, scale, acc)
            }
            MaternNu::ThreeHalves => {
                ard::add_weighted_grads::<Matern32Profile>(p, x, j, first_row, w, scale, acc)
            }
            MaternNu::FiveHalves => {
                ard::add_weighted_grads::<Matern52Profile>(p, x, j, first_row, w, scale, acc)
            }
        }
    }
}
