//! Shared machinery of the stationary ARD kernels: one length scale per input dimension and
//! an output variance, `k(x, z) = σ² g(r²)` with `r² = Σᵢ ((xᵢ − zᵢ)/ℓᵢ)²`.

use serde::{Deserialize, Serialize};

use crate::error::{KernelError, Result};

/// Length scales (one per input dimension) and output variance of a stationary ARD kernel,
/// stored in natural space and exposed in log space. Deserialization runs the checks of
/// [`new`](Self::new), so a saved kernel with an invalid value is an error, not a kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ArdParamsRecord")]
pub struct ArdParams {
    lengthscales: Vec<f64>,
    variance: f64,
}

/// [`ArdParams`] as read, before its checks.
#[derive(Deserialize)]
struct ArdParamsRecord {
    lengthscales: Vec<f64>,
    variance: f64,
}

impl TryFrom<ArdParamsRecord> for ArdParams {
    type Error = KernelError;

    fn try_from(record: ArdParamsRecord) -> Result<Self> {
        Self::new(record.lengthscales, record.variance)
    }
}

fn check_positive(name: String, value: f64) -> Result<()> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(KernelError::InvalidHyperparameter {
            name,
            value,
            reason: "must be finite and strictly positive",
        })
    }
}

/// A length scale must also have a finite reciprocal (`ℓ > 1/f64::MAX ≈ 5.6e-309`): the tile
/// builders multiply by `1/ℓ`, and `0 · ∞` would give NaN on the diagonal.
fn check_lengthscale(name: String, value: f64) -> Result<()> {
    check_positive(name.clone(), value)?;
    if (1.0 / value).is_finite() {
        Ok(())
    } else {
        Err(KernelError::InvalidHyperparameter {
            name,
            value,
            reason: "a length scale must be at least 1/f64::MAX (about 5.6e-309, \
                     log length scale above -709.78); rescale the inputs instead",
        })
    }
}

/// `(a − b)/ℓ` without spurious overflow: when `a − b` overflows (coordinates near
/// `±f64::MAX`) it is computed as `2 ((a/2 − b/2)/ℓ)`, which is infinite only when the true
/// value is. Bit-identical to `(a − b)/ℓ` whenever that is finite.
#[inline(always)]
pub(crate) fn scaled_diff(a: f64, b: f64, l: f64) -> f64 {
    let t = (a - b) / l;
    if t.is_finite() {
        t
    } else {
        2.0 * ((0.5 * a - 0.5 * b) / l)
    }
}

/// `−2 σ² g'(r²) t²` (the derivative of `σ² g(r²)` with respect to `log ℓ` of a dimension
/// whose scaled difference is `t`), in an order that cannot form `0 · ∞`: 0 whenever
/// `g'(r²) = 0` (which is the case whenever `t²` overflows), and `(g' t) t` before `σ²` so that
/// the unbounded Matérn-1/2 `g'` near `r = 0` meets `t ≤ r` first.
#[inline(always)]
pub(crate) fn lengthscale_grad(variance: f64, dg: f64, t: f64) -> f64 {
    // The product is formed unconditionally and discarded where `g' = 0` (so `0 · ∞` still
    // never reaches the result): a select, not a branch, so the loops that inline this stay
    // vectorized. With the branch, LLVM left the per-dimension sums of the exact-GP gradient
    // pass (`ard::add_weighted_grads`) scalar.
    let product = -2.0 * (variance * ((dg * t) * t));
    if dg == 0.0 {
        0.0
    } else {
        product
    }
}

impl ArdParams {
    /// Length scales `ℓᵢ > 0` (one per input dimension, at least one) and output variance `σ² > 0`.
    pub fn new(lengthscales: Vec<f64>, variance: f64) -> Result<Self> {
        if lengthscales.is_empty() {
            return Err(KernelError::InvalidArgument {
                name: "lengthscales",
                reason: "need one length scale per input dimension (at least one)".into(),
            });
        }
        for (i, &l) in lengthscales.iter().enumerate() {
            check_lengthscale(format!("lengthscale_{i}"), l)?;
        }
        check_positive("variance".into(), variance)?;
        Ok(Self {
            lengthscales,
            variance,
        })
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.lengthscales.len()
    }

    /// Length scales.
    pub fn lengthscales(&self) -> &[f64] {
        &self.lengthscales
    }

    /// Output variance `σ²`.
    pub fn variance(&self) -> f64 {
        self.variance
    }

    /// `["log_lengthscale_0", …, "log_variance"]`.
    pub fn names(&self) -> Vec<String> {
        (0..self.dim())
            .map(|i| format!("log_lengthscale_{i}"))
            .chain(std::iter::once("log_variance".to_string()))
            .collect()
    }

    /// `[log ℓ₀, …, log σ²]`.
    pub fn log_params(&self) -> Vec<f64> {
        self.lengthscales
            .iter()
            .map(|l| l.ln())
            .chain(std::iter::once(self.variance.ln()))
            .collect()
    }

    /// Sets from `[log ℓ₀, …, log σ²]`; unchanged on error.
    pub fn set_log_params(&mut self, p: &[f64]) -> Result<()> {
        let names = self.names();
        if p.len() != names.len() {
            return Err(KernelError::ParamCount {
                expected: names.len(),
                found: p.len(),
                names: names.join(", "),
            });
        }
        let natural: Vec<f64> = p.iter().map(|v| v.exp()).collect();
        let d = self.dim();
        for (i, (name, (&v, &lv))) in names.iter().zip(natural.iter().zip(p)).enumerate() {
            if !lv.is_finite() {
                return Err(KernelError::InvalidHyperparameter {
                    name: name.clone(),
                    value: lv,
                    reason: "log hyperparameters must be finite",
                });
            }
            if i < d {
                check_lengthscale(name.clone(), v)?;
            } else {
                check_positive(name.clone(), v)?;
            }
        }
        self.lengthscales.copy_from_slice(&natural[..d]);
        self.variance = natural[d];
        Ok(())
    }

    /// Whether `x` and `z` both have length [`dim`](Self::dim) (the contract of the
    /// unchecked evaluations, which return NaN otherwise).
    #[inline]
    pub fn lengths_match(&self, x: &[f64], z: &[f64]) -> bool {
        x.len() == self.lengthscales.len() && z.len() == self.lengthscales.len()
    }

    /// Scaled squared distance `r² = Σᵢ ((xᵢ − zᵢ)/ℓᵢ)²`, with the differences formed so that
    /// coordinates near `±f64::MAX` do not overflow spuriously. NaN unless both slices have
    /// length [`dim`](Self::dim).
    #[inline]
    pub fn r2(&self, x: &[f64], z: &[f64]) -> f64 {
        if !self.lengths_match(x, z) {
            return f64::NAN;
        }
        let mut s = 0.0;
        for ((&a, &b), &l) in x.iter().zip(z).zip(&self.lengthscales) {
            let t = scaled_diff(a, b, l);
            s += t * t;
        }
        s
    }

    /// Writes `∂k/∂ log ℓᵢ = σ² g'(r²) · (−2 ((xᵢ − zᵢ)/ℓᵢ)²)` and `∂k/∂ log σ² = k` into
    /// `grad`, given `value = σ² g(r²)` and `dg = g'(r²)` (derivative with respect to `r²`).
    ///
    /// Never forms `0 · ∞`: a length-scale derivative is exactly 0 where `g'(r²)` underflows
    /// to 0 (for example `ℓ = 1e-308` and `x ≠ z`). Contract: `x` and `z` have length
    /// [`dim`](Self::dim) and `grad` has length `dim + 1`; otherwise every entry of `grad` is
    /// set to NaN.
    #[inline]
    pub fn write_grad(&self, x: &[f64], z: &[f64], value: f64, dg: f64, grad: &mut [f64]) {
        let d = self.dim();
        if !self.lengths_match(x, z) || grad.len() != d + 1 {
            grad.fill(f64::NAN);
            return;
        }
        for i in 0..d {
            let t = scaled_diff(x[i], z[i], self.lengthscales[i]);
            grad[i] = lengthscale_grad(self.variance, dg, t);
        }
        grad[d] = value;
    }
}
