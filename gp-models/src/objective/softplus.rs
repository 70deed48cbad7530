//! GPyTorch's parameterisation of positive hyperparameters: `θ = softplus(r) + floor`.

use crate::error::{ModelError, Result};

/// `softplus(r) = log(1 + eʳ)`, without overflow.
pub fn softplus(r: f64) -> f64 {
    r.max(0.0) + (-r.abs()).exp().ln_1p()
}

/// The inverse of [`softplus`] on `(0, ∞)`: `r = v + log(1 − e^{−v})`.
pub fn inverse_softplus(v: f64) -> f64 {
    v + (-(-v).exp_m1()).ln()
}

/// `θ_i = softplus(r_i) + floor_i` for every hyperparameter, mapped to and from the log
/// hyperparameters the kernels and models use. The paper's training (GPyTorch defaults)
/// starts from `r = 0` (θ ≈ 0.693) with a noise floor of `1e-4` and learning rates meant
/// for the loss `−log p / n` in `r`.
#[derive(Debug, Clone, PartialEq)]
pub struct SoftplusParameterization {
    floors: Vec<f64>,
}

impl SoftplusParameterization {
    /// One floor per hyperparameter (each finite and `≥ 0`).
    pub fn new(floors: Vec<f64>) -> Result<Self> {
        if let Some(f) = floors.iter().find(|f| !(f.is_finite() && **f >= 0.0)) {
            return Err(ModelError::InvalidOption {
                name: "SoftplusParameterization floors",
                reason: format!("each floor must be finite and non-negative, got {f}"),
            });
        }
        Ok(Self { floors })
    }

    /// GPyTorch's defaults for a kernel with `kernel_params` hyperparameters followed by the
    /// noise: floor 0 for the kernel's, `1e-4` for the noise variance.
    pub fn gpytorch(kernel_params: usize) -> Self {
        let mut floors = vec![0.0; kernel_params];
        floors.push(1e-4);
        Self { floors }
    }

    /// Number of hyperparameters.
    pub fn len(&self) -> usize {
        self.floors.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.floors.is_empty()
    }

    /// `log θ` from the raw parameters.
    pub fn log_params(&self, raw: &[f64]) -> Vec<f64> {
        raw.iter()
            .zip(&self.floors)
            .map(|(&r, &f)| (softplus(r) + f).ln())
            .collect()
    }

    /// The raw parameters of `log θ`; errors if a value is not above its floor.
    pub fn raw_params(&self, log_params: &[f64]) -> Result<Vec<f64>> {
        self.check_len(log_params.len())?;
        log_params
            .iter()
            .zip(&self.floors)
            .enumerate()
            .map(|(i, (&l, &f))| {
                let v = l.exp() - f;
                if v > 0.0 && v.is_finite() {
                    Ok(inverse_softplus(v))
                } else {
                    Err(ModelError::InvalidOption {
                        name: "hyperparameter",
                        reason: format!(
                            "hyperparameter {i} = {} is not above its floor {f}",
                            l.exp()
                        ),
                    })
                }
            })
            .collect()
    }

    /// The gradient in the raw parameters from the gradient in `log θ`:
    /// `∂/∂r = ∂/∂log θ · sigmoid(r) / θ`.
    pub fn raw_gradient(&self, raw: &[f64], log_gradient: &[f64]) -> Vec<f64> {
        raw.iter()
            .zip(&self.floors)
            .zip(log_gradient)
            .map(|((&r, &f), &g)| {
                let sigmoid = 1.0 / (1.0 + (-r).exp());
                g * sigmoid / (softplus(r) + f)
            })
            .collect()
    }

    fn check_len(&self, len: usize) -> Result<()> {
        if len != self.floors.len() {
            return Err(ModelError::LengthMismatch {
                context: "hyperparameters of a softplus parameterisation",
                expected: self.floors.len(),
                found: len,
            });
        }
        Ok(())
    }
}
