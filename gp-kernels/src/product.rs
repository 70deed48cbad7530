//! Separable kernels: a product over input dimensions of one-dimensional stationary kernels.

use std::borrow::Cow;

use faer::reborrow::ReborrowMut;
use faer::{MatMut, MatRef};
use serde::{Deserialize, Serialize};

use crate::ard::{col_slice, write_col, ROW_BLOCK};
use crate::error::{KernelError, Result};
use crate::kernel::{Kernel, SeparableFactors};
use crate::matern::{Matern, MaternNu};
use crate::profile::{Matern12Profile, Matern32Profile, Matern52Profile, RadialProfile, SeProfile};
use crate::se::SquaredExponential;
use crate::stationary::{lengthscale_grad, scaled_diff, ArdParams};
use gp_linalg::simd_dispatch;

/// The one-dimensional kernel used along one input dimension of a [`ProductKernel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FactorKind {
    /// `exp(−t²/2)`, `t = (xᵢ − zᵢ)/ℓᵢ`.
    SquaredExponential,
    /// The Matérn profile of smoothness ν in `|t|` (see [`Matern`]).
    Matern(MaternNu),
}

impl FactorKind {
    /// `(g(t²), g'(t²))`.
    fn value_and_deriv(self, t2: f64) -> (f64, f64) {
        match self {
            FactorKind::SquaredExponential => SeProfile::value_and_deriv(t2),
            FactorKind::Matern(nu) => nu.profile_and_deriv(t2),
        }
    }

    /// `g(t²)`.
    fn value(self, t2: f64) -> f64 {
        match self {
            FactorKind::SquaredExponential => SeProfile::value(t2),
            FactorKind::Matern(nu) => nu.profile(t2),
        }
    }
}

/// `k(x, z) = σ² Πᵢ gᵢ(((xᵢ − zᵢ)/ℓᵢ)²)`: a product over input dimensions of 1-D
/// squared-exponential or Matérn kernels with one output variance. Unlike the ARD
/// [`Matern`] kernel it is separable: [`separable_factors`](Kernel::separable_factors)
/// returns one unit-variance 1-D kernel per dimension (what Kronecker and Toeplitz algebra
/// need). With every factor squared exponential it equals [`SquaredExponential`].
///
/// Hyperparameters, in this order: `[log ℓ₀, …, log ℓ_{d−1}, log σ²]`, named
/// `log_lengthscale_0, …, log_lengthscale_{d−1}, log_variance` (`ℓᵢ` is the length scale of
/// the factor of dimension `i`).
///
/// ```
/// use gp_kernels::{FactorKind, Kernel, MaternNu, ProductKernel};
///
/// let k = ProductKernel::uniform(FactorKind::Matern(MaternNu::Half), vec![1.0, 2.0], 3.0)?;
/// // exp(−|1 − 0|/1) · exp(−|2 − 0|/2) = e^{−2}
/// assert!((k.eval(&[1.0, 2.0], &[0.0, 0.0]) - 3.0 * (-2.0f64).exp()).abs() < 1e-15);
/// assert_eq!(k.separable_factors().map(|f| f.factors.len()), Some(2));
/// # Ok::<(), gp_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProductKernel {
    kinds: Vec<FactorKind>,
    params: ArdParams,
}

impl ProductKernel {
    /// One factor kind and one length scale per input dimension (same length, at least one)
    /// and the output variance; length scales and variance finite and `> 0`.
    pub fn new(kinds: Vec<FactorKind>, lengthscales: Vec<f64>, variance: f64) -> Result<Self> {
        if kinds.len() != lengthscales.len() {
            return Err(KernelError::InvalidArgument {
                name: "kinds",
                reason: format!(
                    "need one factor kind per length scale: got {} kinds and {} length scales",
                    kinds.len(),
                    lengthscales.len()
                ),
            });
        }
        Ok(Self {
            kinds,
            params: ArdParams::new(lengthscales, variance)?,
        })
    }

    /// The same factor kind in every dimension.
    pub fn uniform(kind: FactorKind, lengthscales: Vec<f64>, variance: f64) -> Result<Self> {
        Self::new(vec![kind; lengthscales.len()], lengthscales, variance)
    }

    /// The factor kind of each input dimension.
    pub fn kinds(&self) -> &[FactorKind] {
        &self.kinds
    }

    /// Length scales and variance.
    pub fn params(&self) -> &ArdParams {
        &self.params
    }

    /// `tᵢ = (xᵢ − zᵢ)/ℓᵢ` of dimension `i`, without spurious overflow.
    #[inline]
    fn t(&self, i: usize, x: &[f64], z: &[f64]) -> f64 {
        scaled_diff(x[i], z[i], self.params.lengthscales()[i])
    }

    /// `t² = ((xᵢ − zᵢ)/ℓᵢ)²` of dimension `i`.
    #[inline]
    fn t2(&self, i: usize, x: &[f64], z: &[f64]) -> f64 {
        let t = self.t(i, x, z);
        t * t
    }
}

/// Multiplies `vals[i]` by `g(((xᵢ − z)·inv_l)²)` over a block of rows.
#[inline(always)]
fn mul_factor<P: RadialProfile>(vals: &mut [f64], x: &[f64], z: f64, inv_l: f64) {
    for (v, &a) in vals.iter_mut().zip(x) {
        let t = (a - z) * inv_l;
        *v *= P::fast_value(t * t);
    }
}

impl Kernel for ProductKernel {
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
    fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        if !self.params.lengths_match(x, z) {
            return f64::NAN;
        }
        let mut value = self.params.variance();
        for (i, kind) in self.kinds.iter().enumerate() {
            value *= kind.value(self.t2(i, x, z));
        }
        value
    }
    /// NaN (value and every gradient entry) unless `x`, `z` have length `d` and `grad`
    /// length `d + 1`.
    fn eval_with_grad(&self, x: &[f64], z: &[f64], grad: &mut [f64]) -> f64 {
        // ∂k/∂ log ℓᵢ = σ² (Π_{j≠i} gⱼ) gᵢ'(tᵢ²) (−2tᵢ²). Prefix products first (into grad),
        // then a backward sweep with the suffix product; no division by a gⱼ that may be 0.
        let d = self.params.dim();
        if !self.params.lengths_match(x, z) || grad.len() != d + 1 {
            grad.fill(f64::NAN);
            return f64::NAN;
        }
        let var = self.params.variance();
        let mut prefix = 1.0;
        for (i, kind) in self.kinds.iter().enumerate() {
            grad[i] = prefix;
            prefix *= kind.value(self.t2(i, x, z));
        }
        let mut suffix = 1.0;
        for (i, kind) in self.kinds.iter().enumerate().rev() {
            let t = self.t(i, x, z);
            let (g, dg) = kind.value_and_deriv(t * t);
            // 0 where dg = 0 (t² overflowing included), never 0 · ∞.
            grad[i] = lengthscale_grad(var, dg, t) * (grad[i] * suffix);
            suffix *= g;
        }
        let value = var * prefix;
        grad[d] = value;
        value
    }
    fn diag_entry(&self, x: &[f64]) -> f64 {
        if x.len() != self.params.dim() {
            return f64::NAN;
        }
        self.params.variance()
    }
    fn separable_factors(&self) -> Option<SeparableFactors> {
        let factors = self
            .kinds
            .iter()
            .zip(self.params.lengthscales())
            .map(|(kind, &l)| -> Option<Box<dyn Kernel>> {
                // Validated length scales always build valid 1-D kernels.
                Some(match kind {
                    FactorKind::SquaredExponential => {
                        Box::new(SquaredExponential::new(vec![l], 1.0).ok()?)
                    }
                    FactorKind::Matern(nu) => Box::new(Matern::new(*nu, vec![l], 1.0).ok()?),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SeparableFactors {
            scale: self.params.variance(),
            factors,
        })
    }
    fn fill_block(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>, out: MatMut<'_, f64>) {
        product_fill_block::<ProductKernel>(self, x, z, out)
    }
}

simd_dispatch! {
    fn product_fill_block<K: AsProduct>(
        kernel: &K,
        x: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        out: MatMut<'_, f64>,
    ) = product_fill_block_body, avx2_fma via product_fill_block_avx2;
}

/// Access to the product kernel from the generic (dispatch) tile function.
trait AsProduct {
    fn product(&self) -> &ProductKernel;
}

impl AsProduct for ProductKernel {
    fn product(&self) -> &ProductKernel {
        self
    }
}

#[inline(always)]
fn product_fill_block_body<K: AsProduct>(
    kernel: &K,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    mut out: MatMut<'_, f64>,
) {
    let this = kernel.product();
    let d = this.params.dim();
    let var = this.params.variance();
    let inv_l: Vec<f64> = this.params.lengthscales().iter().map(|l| 1.0 / l).collect();
    let xcols: Vec<Cow<'_, [f64]>> = (0..d).map(|k| col_slice(x.col(k))).collect();
    let (m, p) = (x.nrows(), z.nrows());
    let mut vals = [0.0; ROW_BLOCK];
    for i0 in (0..m).step_by(ROW_BLOCK) {
        let len = ROW_BLOCK.min(m - i0);
        let vals = &mut vals[..len];
        for j in 0..p {
            vals.fill(var);
            for (k, kind) in this.kinds.iter().enumerate() {
                let xk = &xcols[k][i0..i0 + len];
                let (zk, il) = (z[(j, k)], inv_l[k]);
                match kind {
                    FactorKind::SquaredExponential => mul_factor::<SeProfile>(vals, xk, zk, il),
                    FactorKind::Matern(MaternNu::Half) => {
                        mul_factor::<Matern12Profile>(vals, xk, zk, il)
                    }
                    FactorKind::Matern(MaternNu::ThreeHalves) => {
                        mul_factor::<Matern32Profile>(vals, xk, zk, il)
                    }
                    FactorKind::Matern(MaternNu::FiveHalves) => {
                        mul_factor::<Matern52Profile>(vals, xk, zk, il)
                    }
                }
            }
            write_col(out.rb_mut(), j, i0, vals);
        }
    }
}

#[cfg(test)]
mod simd_tests {
    use super::*;
    use faer::Mat;

    #[test]
    fn dispatched_fill_equals_the_baseline_build_bit_for_bit() {
        let kernel = ProductKernel::new(
            vec![
                FactorKind::SquaredExponential,
                FactorKind::Matern(MaternNu::Half),
                FactorKind::Matern(MaternNu::FiveHalves),
            ],
            vec![0.8, 1.1, 0.5],
            1.4,
        )
        .unwrap();
        let (n, p) = (ROW_BLOCK + 45, 60);
        let pts = |rows: usize, seed: usize| {
            Mat::from_fn(rows, 3, |i, k| {
                ((i * 7919 + k * 104_729 + seed * 31) % 10_007) as f64 / 10_007.0 * 3.0
            })
        };
        let (x, z) = (pts(n, 1), pts(p, 2));
        let (mut a, mut b) = (Mat::<f64>::zeros(n, p), Mat::<f64>::zeros(n, p));
        product_fill_block::<ProductKernel>(&kernel, x.as_ref(), z.as_ref(), a.as_mut());
        product_fill_block_body::<ProductKernel>(&kernel, x.as_ref(), z.as_ref(), b.as_mut());
        for j in 0..p {
            for i in 0..n {
                assert_eq!(a[(i, j)].to_bits(), b[(i, j)].to_bits(), "({i}, {j})");
            }
        }
    }
}
