//! Shared machinery of the stationary ARD kernels: one length scale per input dimension and
//! an output variance, `k(x, z) = σ² g(r²)` with `r² = Σᵢ ((xᵢ − zᵢ)/ℓᵢ)²`.

use serde::{Deserialize, Serialize};

use crate::error::{KernelError, Result};

/// Length scales (one per input dimension) and output variance of a stationary ARD kernel,
/// stored in natural space and exposed in log space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArdParams {
    lengthscales: Vec<f64>,
    variance: f64,
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
            check_positive(format!("lengthscale_{i}"), l)?;
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
        for (name, (&v, &lv)) in names.iter().zip(natural.iter().zip(p)) {
            if !lv.is_finite() {
                return Err(KernelError::InvalidHyperparameter {
                    name: name.clone(),
                    value: lv,
                    reason: "log hyperparameters must be finite",
                });
            }
            check_positive(name.clone(), v)?;
        }
        let d = self.dim();
        self.lengthscales.copy_from_slice(&natural[..d]);
        self.variance = natural[d];
        Ok(())
    }

    /// Scaled squared distance `r² = Σᵢ ((xᵢ − zᵢ)/ℓᵢ)²`.
    #[inline]
    pub fn r2(&self, x: &[f64], z: &[f64]) -> f64 {
        let mut s = 0.0;
        for ((a, b), l) in x.iter().zip(z).zip(&self.lengthscales) {
            let t = (a - b) / l;
            s += t * t;
        }
        s
    }

    /// Writes `∂k/∂ log ℓᵢ = σ² g'(r²) · (−2 ((xᵢ − zᵢ)/ℓᵢ)²)` and `∂k/∂ log σ² = k` into
    /// `grad`, given `value = σ² g(r²)` and `dg = g'(r²)` (derivative with respect to `r²`).
    #[inline]
    pub fn write_grad(&self, x: &[f64], z: &[f64], value: f64, dg: f64, grad: &mut [f64]) {
        let d = self.dim();
        for i in 0..d {
            let t = (x[i] - z[i]) / self.lengthscales[i];
            grad[i] = -2.0 * self.variance * dg * t * t;
        }
        grad[d] = value;
    }
}
