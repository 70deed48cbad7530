//! Counting, checked evaluation of an objective.

use crate::error::{ModelError, Result};

/// Wraps an objective: counts evaluations, checks the gradient length, and turns errors
/// and non-finite values into soft failures (`Ok(None)`) that optimizers answer by
/// shrinking their step.
pub(crate) struct Evaluator<F> {
    objective: F,
    dim: usize,
    /// Evaluations so far, failed ones included.
    pub evaluations: usize,
    /// Evaluations that failed.
    pub failed: usize,
    /// The error of the most recent failed evaluation, if it was an error.
    pub last_error: Option<ModelError>,
}

impl<F> Evaluator<F>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>)>,
{
    pub fn new(objective: F, dim: usize) -> Self {
        Self {
            objective,
            dim,
            evaluations: 0,
            failed: 0,
            last_error: None,
        }
    }

    /// Evaluates at `x`: `Ok(Some((f, g)))` on success, `Ok(None)` when the objective
    /// returned an error or a non-finite value, `Err` for a gradient of the wrong length.
    pub fn eval(&mut self, x: &[f64]) -> Result<Option<(f64, Vec<f64>)>> {
        self.evaluations += 1;
        match (self.objective)(x) {
            Ok((f, g)) => {
                if g.len() != self.dim {
                    return Err(ModelError::Optimizer {
                        reason: format!(
                            "the objective returned a gradient of length {} for a point of length {}",
                            g.len(),
                            self.dim
                        ),
                    });
                }
                if f.is_finite() && g.iter().all(|v| v.is_finite()) {
                    Ok(Some((f, g)))
                } else {
                    self.failed += 1;
                    self.last_error = None;
                    Ok(None)
                }
            }
            Err(e) => {
                self.failed += 1;
                self.last_error = Some(e);
                Ok(None)
            }
        }
    }

    /// Evaluates at the starting point, where a failure is an error.
    pub fn eval_start(&mut self, x: &[f64]) -> Result<(f64, Vec<f64>)> {
        if x.is_empty() {
            return Err(ModelError::Optimizer {
                reason: "the starting point is empty".into(),
            });
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(ModelError::NonFinite {
                context: "the optimizer's starting point",
                row: i,
                col: 0,
                value: x[i],
            });
        }
        match self.eval(x)? {
            Some(fg) => Ok(fg),
            None => Err(match self.last_error.take() {
                Some(e) => e,
                None => ModelError::Optimizer {
                    reason: "the objective or its gradient is not finite at the starting point"
                        .into(),
                },
            }),
        }
    }
}
